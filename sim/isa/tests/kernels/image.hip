// gfx90a image instructions through the device library's image functions, as HIP's
// texture and surface functions call them (tests/image.rs fills the descriptors).
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define CONSTANT __attribute__((address_space(4)))

typedef float float4_t __attribute__((ext_vector_type(4)));
typedef float float2_t __attribute__((ext_vector_type(2)));
typedef int int2_t __attribute__((ext_vector_type(2)));

extern "C" __device__ float4_t __ockl_image_load_2D(CONSTANT unsigned *t, int2_t c);
extern "C" __device__ void __ockl_image_store_2D(CONSTANT unsigned *t, int2_t c, float4_t v);
extern "C" __device__ float4_t __ockl_image_sample_2D(CONSTANT unsigned *t, CONSTANT unsigned *s,
                                                      float2_t c);

// `src` and `dst` each hold a T# (8 dwords) and, at dword 12, an S#. Lane i reads texel
// (i % 8, i / 8) of src, samples src at that texel's center (normalized coordinates),
// and stores twice the texel into dst.
extern "C" __global__ void image_kernel(const unsigned *src, const unsigned *dst, float4_t *loaded,
                                        float4_t *sampled) {
  CONSTANT unsigned *s = (CONSTANT unsigned *)src;
  CONSTANT unsigned *d = (CONSTANT unsigned *)dst;
  int i = __builtin_amdgcn_workitem_id_x();
  int2_t c = {i % 8, i / 8};
  float4_t v = __ockl_image_load_2D(s, c);
  loaded[i] = v;
  float2_t u = {((float)(i % 8) + 0.5f) / 8.0f, ((float)(i / 8) + 0.5f) / 8.0f};
  sampled[i] = __ockl_image_sample_2D(s, s + 12, u);
  __ockl_image_store_2D(d, c, v * 2.0f);
}
