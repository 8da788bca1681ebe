// kg_block_reduce combines v across the block with op: butterfly shuffles
// within each warp, then the warps' results through smem (32 slots) in
// every warp. Every thread of the block must call it, with blockDim.x a
// multiple of 32; every thread gets the result. The order of combination
// is fixed for a block size, so results repeat run to run.
template <class T, class Op>
__device__ __forceinline__ T kg_block_reduce(T v, T identity, Op op, T* smem) {
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
  __syncthreads();  // the previous call's readers of smem are done
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  // Every warp combines the warps' results itself, each the same way
  // (the butterfly pairs the same values in every lane, and op commutes),
  // rather than warp 0 for all through a third barrier.
  v = lane < warps ? smem[lane] : identity;
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// kg_cluster_reduce combines v across the C blocks of a thread block
// cluster (sm_90): kg_block_reduce within each block, then every block
// reads the C blocks' results from their shared memory (distributed shared
// memory) and combines them in rank order, so that all the cluster's
// threads get the same value, run after run. Every thread of the cluster
// must call it.
#ifndef KGEN_HOST_EMULATION
// (arrive releases and wait acquires by default.)
__device__ __forceinline__ void kg_cluster_sync() {
  asm volatile("barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;\n" ::: "memory");
}
// kg_cluster_load reads *p in the shared memory of the cluster's block of
// the given rank.
template <class T>
__device__ __forceinline__ T kg_cluster_load(const T* p, unsigned rank) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "a scalar");
  unsigned a = (unsigned)__cvta_generic_to_shared(p), r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(a), "r"(rank));
  T v;
  if constexpr (sizeof(T) == 8) {
    unsigned long long u;
    asm volatile("ld.shared::cluster.u64 %0, [%1];\n" : "=l"(u) : "r"(r) : "memory");
    memcpy(&v, &u, 8);
  } else {
    unsigned u;
    if constexpr (sizeof(T) == 4)
      asm volatile("ld.shared::cluster.u32 %0, [%1];\n" : "=r"(u) : "r"(r) : "memory");
    else if constexpr (sizeof(T) == 2)
      asm volatile("{\n.reg .u16 h;\nld.shared::cluster.u16 h, [%1];\ncvt.u32.u16 %0, h;\n}\n" : "=r"(u) : "r"(r) : "memory");
    else
      asm volatile("{\n.reg .u16 h;\nld.shared::cluster.u8 h, [%1];\ncvt.u32.u16 %0, h;\n}\n" : "=r"(u) : "r"(r) : "memory");
    memcpy(&v, &u, sizeof(T));
  }
  return v;
}
template <int C, class T, class Op>
__device__ __forceinline__ T kg_cluster_reduce(T v, T identity, Op op, T* smem) {
  __shared__ T kg_total;  // the block's result, which the cluster's blocks read
  const T b = kg_block_reduce(v, identity, op, smem);
  if (threadIdx.x == 0) kg_total = b;
  kg_cluster_sync();  // every block's total is written
  T r = kg_cluster_load(&kg_total, 0);
#pragma unroll
  for (int q = 1; q < C; ++q) r = op(r, kg_cluster_load(&kg_total, q));
  kg_cluster_sync();  // every block has read before its total is written again
  return r;
}
#endif

