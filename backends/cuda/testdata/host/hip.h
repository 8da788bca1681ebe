// The HIP names that kgen's HIP prelude uses, for running its sources on
// the CPU on top of shim.h: kgen's bfloat16 is the shim's, and HIP's
// maskless shuffle is the shim's shuffle over a warp of KG_EMU_WARP
// threads (the sources' KG_WARP; width is always the whole wavefront).
#pragma once
typedef __nv_bfloat16 kg_bf16;
template <class T> T __shfl_xor(T v, int lane, int width) {
  if (width != KG_EMU_WARP) std::abort();
  return __shfl_xor_sync(0xffffffffu, v, lane);
}
