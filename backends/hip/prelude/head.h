// kgen HIP prelude: the language's scalar semantics as device functions.
// Every generated kernel source includes it verbatim. hipcc compiles it
// for AMD GPUs with HIP's own headers; for target hip:nvidia, nvcc
// compiles it behind the small compatibility layer below, which kgen owns
// (HIP's nvidia_detail headers are not used). KG_WARP, the wavefront size
// of the target the source was generated for, is defined above.
#if defined(KGEN_HOST_EMULATION)
// kgen's tests run this code on the CPU; their shim provides the names.
#elif defined(__HIP__)  // hip-clang: AMD GPUs
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#if defined(__HIP_DEVICE_COMPILE__) && __AMDGCN_WAVEFRONT_SIZE != KG_WARP
#error "this source was generated for another wavefront size than its --offload-arch"
#endif
// kg_bf16 is bfloat16 as CUDA's __nv_bfloat16 behaves: conversions round
// to nearest even, arithmetic rounds each result to bfloat16.
struct kg_bf16 {
  uint16_t x;
  kg_bf16() = default;
  __host__ __device__ explicit kg_bf16(float f);
  __host__ __device__ explicit kg_bf16(double d) : kg_bf16((float)d) {}
  __host__ __device__ explicit kg_bf16(int i) : kg_bf16((float)i) {}
};
__host__ __device__ inline float __bfloat162float(kg_bf16 h) {
  const uint32_t u = (uint32_t)h.x << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
__host__ __device__ inline kg_bf16 __float2bfloat16_rn(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  kg_bf16 h;
  if ((u & 0x7fffffffu) > 0x7f800000u) h.x = (uint16_t)((u >> 16) | 0x40);  // NaN stays NaN (quiet)
  else h.x = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
  return h;
}
__host__ __device__ inline kg_bf16::kg_bf16(float f) : x(__float2bfloat16_rn(f).x) {}
// d as a float rounded to odd: toward zero, with inexactness marked in
// the last bit. Rounding that to a type of at most 22 significant bits
// (bfloat16, half) rounds d once, as a direct conversion would.
__host__ __device__ inline float kg_float_round_odd(double d) {
  float f = (float)d;
  if (f == f && (double)f != d) {
    if (fabs((double)f) > fabs(d)) f = nextafterf(f, 0.0f);
    uint32_t u;
    memcpy(&u, &f, 4);
    u |= 1;
    memcpy(&f, &u, 4);
  }
  return f;
}
__host__ __device__ inline kg_bf16 __double2bfloat16(double d) { return __float2bfloat16_rn(kg_float_round_odd(d)); }
// HIP 5.2 has no __double2half (CUDA's, which the shared emitter uses).
__host__ __device__ inline __half __double2half(double d) { return __float2half_rn(kg_float_round_odd(d)); }
#define KG_BF16_OP(op) \
  __host__ __device__ inline kg_bf16 operator op(kg_bf16 a, kg_bf16 b) { return __float2bfloat16_rn(__bfloat162float(a) op __bfloat162float(b)); }
KG_BF16_OP(+)
KG_BF16_OP(-)
KG_BF16_OP(*)
KG_BF16_OP(/)
#undef KG_BF16_OP
#define KG_BF16_CMP(op) \
  __host__ __device__ inline bool operator op(kg_bf16 a, kg_bf16 b) { return __bfloat162float(a) op __bfloat162float(b); }
KG_BF16_CMP(<)
KG_BF16_CMP(>)
KG_BF16_CMP(<=)
KG_BF16_CMP(>=)
KG_BF16_CMP(==)
KG_BF16_CMP(!=)
#undef KG_BF16_CMP
__host__ __device__ inline kg_bf16 operator-(kg_bf16 a) {
  a.x ^= 0x8000;
  return a;
}
#elif defined(__CUDACC__)  // nvcc: target hip:nvidia
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#if KG_WARP != 32
#error "NVIDIA GPUs have warps of 32 threads"
#endif
typedef __nv_bfloat16 kg_bf16;
// HIP's shuffles take no mask: every lane of the wavefront takes part.
#define __shfl_xor(v, lane, width) __shfl_xor_sync(0xffffffffu, (v), (lane), (width))
#else
#error "compile kgen's HIP sources with hipcc (AMD) or nvcc (target hip:nvidia)"
#endif
#include <stdint.h>
#include <math.h>

