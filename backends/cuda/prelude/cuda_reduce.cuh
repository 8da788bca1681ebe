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
// cluster (sm_90): kg_block_reduce within each block, then each warp of
// every block reads the C blocks' results from their shared memory
// (distributed shared memory), a lane a block, combines them with the
// butterfly and takes lane 0's result, so that all the cluster's threads
// get the same value, run after run. Every thread of the cluster must
// make the same calls, turn counting them (0, 1, 2, ... over the whole
// kernel, whatever the rows): the blocks' results alternate between two
// slots by the turn's parity, so that one cluster barrier a call is enough
// (a block that writes turn t's slot has passed turn t - 1's barrier,
// which every block reaches only after reading turn t - 2's, the same
// slot). Two calls under one turn would share a slot: a block could
// overwrite its first result while another still reads it. A kernel that
// calls it ends with kg_cluster_sync, so that no block leaves while
// another may still read its results.
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
__device__ __forceinline__ T kg_cluster_reduce(T v, T identity, Op op, T* smem, int turn) {
  static_assert(C >= 2 && C <= 32, "a cluster of 2 to 32 blocks");
  __shared__ T kg_total[2];  // the block's results, by the turn's parity
  const T b = kg_block_reduce(v, identity, op, smem);
  if (threadIdx.x == 0) kg_total[turn & 1] = b;
  kg_cluster_sync();  // every block's result of this turn is written
  const int lane = threadIdx.x & 31;
  T r = lane < C ? kg_cluster_load(&kg_total[turn & 1], lane) : identity;
  constexpr int half = C > 16 ? 16 : C > 8 ? 8 : C > 4 ? 4 : C > 2 ? 2 : 1;  // half the power of 2 at or above C
  for (int o = half; o > 0; o >>= 1) r = op(r, __shfl_xor_sync(0xffffffffu, r, o));
  return __shfl_sync(0xffffffffu, r, 0);  // lanes at and above C combined only identities
}
#endif

