// The HIP names that kgen's HIP prelude uses, for running its sources on
// the CPU on top of shim.h: kgen's bfloat16 is the shim's, and HIP's
// maskless shuffle is the shim's shuffle over a warp of KG_EMU_WARP
// threads (the sources' KG_WARP; width is always the whole wavefront).
#pragma once
#include <type_traits>
typedef __nv_bfloat16 kg_bf16;
template <class T> T __shfl_xor(T v, int lane, int width) {
  if (width != KG_EMU_WARP) std::abort();
  return __shfl_xor_sync(0xffffffffu, v, lane);
}

// KgF32x16 and kg_mfma32 emulate AMD's v_mfma_f32_32x32x8 (f16, bf16_1k)
// from the ISA's documented operand layout, independently of kgen's tile:
// every lane of the wavefront deposits its a and b, and each lane then
// computes its 16 elements of D: element v is D (8 (v / 4) + 4 (l / 32) +
// v % 4, l % 32), A (i, k) is element k % 4 of lane i + 32 (k / 4)'s a, B
// (k, j) element k % 4 of lane j + 32 (k / 4)'s b. Products are exact and
// summed in f32.
struct KgF32x16 {
  float v[16];
  float& operator[](int i) { return v[i]; }
};
inline uint64_t kg_mfma_a[1024], kg_mfma_b[1024];
template <class T> float kg_mfma_elem(uint64_t x, int e) {
  T h;
  uint16_t u = (uint16_t)(x >> (16 * e));
  std::memcpy(&h, &u, 2);
  if constexpr (std::is_same_v<T, __half>) return __half2float(h);
  else return __bfloat162float(h);
}
template <class T> void kg_mfma32(T, KgF32x16& c, uint64_t a, uint64_t b) {
  if (KG_EMU_WARP != 64) std::abort();  // CDNA's wavefronts only
  std::barrier<>* wave = kg_warp_barriers[threadIdx.x / 64];
  kg_mfma_a[threadIdx.x] = a;
  kg_mfma_b[threadIdx.x] = b;
  wave->arrive_and_wait();
  const unsigned l = threadIdx.x % 64, base = threadIdx.x - l;
  for (int v = 0; v < 16; ++v) {
    const unsigned i = 8 * (v / 4) + 4 * (l / 32) + v % 4, j = l % 32;
    float d = c.v[v];
    for (int k = 0; k < 8; ++k)
      d += kg_mfma_elem<T>(kg_mfma_a[base + i + 32 * (k / 4)], k % 4) * kg_mfma_elem<T>(kg_mfma_b[base + j + 32 * (k / 4)], k % 4);
    c.v[v] = d;
  }
  wave->arrive_and_wait();
}
