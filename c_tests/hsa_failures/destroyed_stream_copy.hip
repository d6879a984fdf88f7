// destroyed_stream_copy: a stream-ordered copy waits behind a running kernel, and its
// stream is destroyed before the copy can start; then starting it fails (HSASIM_FAIL makes
// every async copy fail). The failure belongs to a stream nobody can name any more, so the
// next device-wide synchronise must report it (hipErrorOutOfMemory), never hipSuccess with
// the copy silently missing. Repeated, since the report used to race with the copy's
// completion count reaching zero. Prints "reported N of N" and exits 0 when every round
// reported the failure; exits 1 otherwise.
#include <hip/hip_runtime.h>

#include <cstdio>

// Long enough (~10^5 iterations per lane on the simulator) that the copy behind it has to
// wait for it.
__global__ void busy(unsigned* out, unsigned rounds) {
    unsigned v = threadIdx.x;
    for (unsigned i = 0; i < rounds; ++i) v = v * 1664525u + 1013904223u;
    out[threadIdx.x] = v;
}

int main() {
    const int rounds = 12;
    const size_t bytes = 64 * sizeof(unsigned);
    unsigned* device = nullptr;
    unsigned* host = nullptr;
    if (hipMalloc(&device, bytes) != hipSuccess || hipHostMalloc(&host, bytes) != hipSuccess) {
        std::printf("allocation failed\n");
        return 1;
    }
    int reported = 0;
    for (int r = 0; r < rounds; ++r) {
        hipStream_t s;
        if (hipStreamCreateWithFlags(&s, hipStreamNonBlocking) != hipSuccess) return 1;
        busy<<<1, 64, 0, s>>>(device, 100000);
        hipError_t queued = hipMemcpyAsync(host, device, bytes, hipMemcpyDeviceToHost, s);
        hipError_t destroyed = hipStreamDestroy(s);
        hipError_t synced = hipDeviceSynchronize();
        std::printf("round %d: hipMemcpyAsync %s, hipStreamDestroy %s, hipDeviceSynchronize %s\n", r,
                    hipGetErrorName(queued), hipGetErrorName(destroyed), hipGetErrorName(synced));
        // A copy that could not even be queued reports at once; one that waited reports at
        // the synchronise.
        if (queued == hipErrorOutOfMemory || synced == hipErrorOutOfMemory) ++reported;
        (void)hipGetLastError();
    }
    std::printf("reported %d of %d\n", reported, rounds);
    return reported == rounds ? 0 : 1;
}
