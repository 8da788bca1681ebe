// kgen's matrix-rate probes: kernels that keep one of the GPU's arithmetic
// units busy with operands already in registers or shared memory, and so
// measure its dense rate, the ceiling of compute-bound kernels (as the
// device-to-device copy is the ceiling of memory-bound ones). kgen
// (runtime/peak.go) compiles this file with nvcc for the GPU it runs on,
// loads it into the runner and times each probe with the timing protocol;
// the grids and the floating-point operations of a launch are computed
// there. Every probe computes a value that a never-true test could store,
// so that the compiler keeps all of its work.
//
//   kg_peak_ffma         f32 fused multiply-adds, 8 chains a thread
//   kg_peak_mma_{bf16,f16,tf32}
//                        mma.sync m16n8k16 (tf32: m16n8k8), 8 a warp an
//                        iteration on 4 accumulators (sm_80 and later)
//   kg_peak_wgmma_{bf16,f16,tf32}
//                        wgmma.mma_async m64n256k16 (tf32: m64n256k8), 4 an
//                        iteration, both operands from shared memory
//                        (sm_90a, built with -DKGEN_PEAK_WGMMA)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

// keep stores v to out when it equals a value no probe computes.
__device__ __forceinline__ void keep(float* out, float v) {
  if (v == -1234.5f) out[0] = v;
}

extern "C" __global__ void __launch_bounds__(256) kg_peak_ffma(float* out, int iters) {
  float x[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) x[i] = (float)(threadIdx.x + i) * 1e-3f;
  const float a = 0.999f, b = 1e-3f;
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < 16; ++u)
#pragma unroll
      for (int i = 0; i < 8; ++i) x[i] = fmaf(x[i], a, b);
  }
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 8; ++i) s += x[i];
  keep(out, s);
}

// Register fragments for mma.sync: what the values are does not matter
// to the rate, only that they are not all zero (zeros draw less power).
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *(uint32_t*)&v;
}
__device__ __forceinline__ uint32_t pack_f16(float lo, float hi) {
  __half2 v = __floats2half2_rn(lo, hi);
  return *(uint32_t*)&v;
}

#define KG_MMA_PROBE(NAME, INSTR, PACK)                                                              \
  extern "C" __global__ void __launch_bounds__(256) NAME(float* out, int iters) {                   \
    const float t = (float)(threadIdx.x % 32) * 1e-2f;                                               \
    uint32_t a[4], b[2];                                                                             \
    for (int i = 0; i < 4; ++i) a[i] = PACK(t + i * 0.25f, 0.5f - t);                               \
    for (int i = 0; i < 2; ++i) b[i] = PACK(0.125f * i - t, t + 0.0625f);                           \
    float d[4][4] = {};                                                                              \
    for (int it = 0; it < iters; ++it) {                                                             \
      _Pragma("unroll") for (int u = 0; u < 2; ++u) _Pragma("unroll") for (int c = 0; c < 4; ++c)    \
          asm volatile(INSTR " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"     \
                       : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])                  \
                       : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));          \
    }                                                                                                \
    float s = 0.0f;                                                                                  \
    for (int c = 0; c < 4; ++c)                                                                      \
      for (int i = 0; i < 4; ++i) s += d[c][i];                                                      \
    keep(out, s);                                                                                    \
  }

__device__ __forceinline__ uint32_t pack_tf32(float lo, float) { return __float_as_uint(lo); }

KG_MMA_PROBE(kg_peak_mma_bf16, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", pack_bf16)
KG_MMA_PROBE(kg_peak_mma_f16, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", pack_f16)
KG_MMA_PROBE(kg_peak_mma_tf32, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", pack_tf32)

#ifdef KGEN_PEAK_WGMMA
// A warpgroup's m64n256 accumulator: 128 f32 registers a thread, each an
// operand of the instruction.
#define KG_ACC128 \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, " \

#define KG_ACC128_OPS \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
  "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
  "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
  "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), \
  "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
  "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
  "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
  "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
  "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
  "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
  "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
  "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

// The wgmma probes: one warpgroup a block, A (64 rows) and B (256 rows) as
// K-major tiles of 128-byte rows in shared memory under the 128-byte
// swizzle (the layout kgen's own wgmma kernels use: backends/cuda's
// KgWgmma), filled once; each iteration issues four k-steps of 32 bytes
// and keeps one group in flight, as a main loop does. All three fill the
// tiles with the same bits, pairs of bf16 values under 0.2 in magnitude,
// which read as f16 are finite values under 2 and as tf32 the upper
// value of each pair: ordinary operands for each type, as the rate (and
// the power the tensor cores draw) depends somewhat on the data.
__device__ __forceinline__ uint64_t kg_desc(const unsigned char* p) {
  const unsigned a = (unsigned)__cvta_generic_to_shared(p);
  return (uint64_t)((a & 0x3FFFF) >> 4) | (uint64_t)(16 >> 4) << 16 | (uint64_t)(1024 >> 4) << 32 | 1ull << 62;
}

#define KG_WGMMA_PROBE(NAME, INSTR, TAIL)                                                             \
  extern "C" __global__ void __launch_bounds__(128) NAME(float* out, int iters) {                   \
    extern __shared__ unsigned char smem_raw[];                                                      \
    const unsigned base = (unsigned)__cvta_generic_to_shared(smem_raw);                              \
    unsigned char* a = smem_raw + ((1024 - (base & 1023)) & 1023);                                   \
    unsigned char* b = a + 64 * 128;                                                                 \
    for (int i = threadIdx.x; i < (64 + 256) * 128 / 4; i += 128)                                    \
      ((uint32_t*)a)[i] = pack_bf16((float)(i % 13) * 0.015625f - 0.09375f, (float)(i % 7) * 0.03125f); \
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");                                   \
    __syncthreads();                                                                                 \
    float d[128];                                                                                    \
    _Pragma("unroll") for (int i = 0; i < 128; ++i) d[i] = 0.0f;                                     \
    for (int it = 0; it < iters; ++it) {                                                             \
      _Pragma("unroll") for (int i = 0; i < 128; ++i) asm volatile("" : "+f"(d[i])::"memory");       \
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");                                      \
      _Pragma("unroll") for (int kk = 0; kk < 4; ++kk) asm volatile(                                 \
          INSTR " " KG_ACC128 "%128, %129, 1, 1, 1" TAIL ";\n"                                       \
          : KG_ACC128_OPS                                                                            \
          : "l"(kg_desc(a + kk * 32)), "l"(kg_desc(b + kk * 32)));                                   \
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");                               \
      _Pragma("unroll") for (int i = 0; i < 128; ++i) asm volatile("" : "+f"(d[i])::"memory");       \
      asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");                               \
    }                                                                                                \
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");                                 \
    float s = 0.0f;                                                                                  \
    _Pragma("unroll") for (int i = 0; i < 128; ++i) {                                                \
      asm volatile("" : "+f"(d[i])::"memory");                                                       \
      s += d[i];                                                                                     \
    }                                                                                                \
    keep(out, s);                                                                                    \
  }

KG_WGMMA_PROBE(kg_peak_wgmma_bf16, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", ", 0, 0")
KG_WGMMA_PROBE(kg_peak_wgmma_f16, "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16", ", 0, 0")
KG_WGMMA_PROBE(kg_peak_wgmma_tf32, "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32", "")
#endif
