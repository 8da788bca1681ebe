// kg_shfl_xor is __shfl_xor over the whole wavefront for any type of at
// most 8 bytes, moved as a 32- or 64-bit integer (HIP has no __half
// shuffles).
template <class T>
__device__ __forceinline__ T kg_shfl_xor(T v, int o) {
  static_assert(sizeof(T) <= 8, "at most 8 bytes");
  if constexpr (sizeof(T) <= 4) {
    int u = 0;
    memcpy(&u, &v, sizeof(T));
    u = __shfl_xor(u, o, KG_WARP);
    memcpy(&v, &u, sizeof(T));
  } else {
    long long u = 0;
    memcpy(&u, &v, sizeof(T));
    u = __shfl_xor(u, o, KG_WARP);
    memcpy(&v, &u, sizeof(T));
  }
  return v;
}

// kg_block_reduce combines v across the block with op: butterfly shuffles
// within each wavefront, then the wavefronts' results through smem (32
// slots: at most 1024 threads of at least 32 a wavefront) in every
// wavefront.
// Every thread of the block must call it, with blockDim.x a multiple of
// KG_WARP; every thread gets the result. The order of combination is
// fixed for a block size, so results repeat run to run.
template <class T, class Op>
__device__ __forceinline__ T kg_block_reduce(T v, T identity, Op op, T* smem) {
  for (int o = KG_WARP / 2; o > 0; o >>= 1) v = op(v, kg_shfl_xor(v, o));
  const int lane = threadIdx.x % KG_WARP, warp = threadIdx.x / KG_WARP, warps = (blockDim.x + KG_WARP - 1) / KG_WARP;
  __syncthreads();  // the previous call's readers of smem are done
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  // Every warp combines the warps' results itself, each the same way
  // (the butterfly pairs the same values in every lane, and op commutes),
  // rather than warp 0 for all through a third barrier.
  v = lane < warps ? smem[lane] : identity;
  for (int o = KG_WARP / 2; o > 0; o >>= 1) v = op(v, kg_shfl_xor(v, o));
  return v;
}

