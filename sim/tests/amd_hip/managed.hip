// Managed memory through AMD's HIP runtime: hipMallocManaged, hipMemAdvise and
// hipMemPrefetchAsync map to hsa_amd_svm_attributes_set/get and hsa_amd_svm_prefetch_async.
#include <hip/hip_runtime.h>
#include <cstdio>
__global__ void inc(int* p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] += i; }
int main() {
  int n = 1000; int* p = nullptr;
  hipError_t e = hipMallocManaged(&p, n * sizeof(int));
  if (e != hipSuccess) { printf("hipMallocManaged: %s\n", hipGetErrorName(e)); return 1; }
  for (int i = 0; i < n; i++) p[i] = 1;
  e = hipMemAdvise(p, n * sizeof(int), hipMemAdviseSetPreferredLocation, 0);
  printf("advise: %s\n", hipGetErrorName(e));
  e = hipMemPrefetchAsync(p, n * sizeof(int), 0, 0);
  printf("prefetch: %s\n", hipGetErrorName(e));
  inc<<<(n + 255) / 256, 256>>>(p, n);
  e = hipDeviceSynchronize();
  if (e != hipSuccess) { printf("sync: %s\n", hipGetErrorName(e)); return 1; }
  for (int i = 0; i < n; i++) if (p[i] != 1 + i) { printf("bad %d: %d\n", i, p[i]); return 1; }
  hipFree(p); printf("managed: PASSED\n"); return 0;
}
