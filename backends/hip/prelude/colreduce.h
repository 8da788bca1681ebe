// ---- Column reductions (template col-reduce) ----

// kg_col_combine combines with op, across the TY rows of threads of a
// col-reduce block, each thread's partial results acc for its VEC columns:
// thread tx + TX * ty holds columns tx * VEC .. tx * VEC + VEC - 1 of a
// strip of W = TX * VEC. The threads of a wavefront that share columns
// combine by shuffles; the wavefronts' results (every row's, when TX >=
// KG_WARP) go to smem, PARTS rows of W; then thread i (and i +
// blockDim.x, ...) combines column i's rows in order into smem[i], where
// the caller reads it from the same thread. Every thread of the block must
// call it. The order of combination is fixed by the configuration, so
// results repeat run to run.
template <class T, int TX, int TY, int VEC, class Op>
__device__ __forceinline__ void kg_col_combine(T (&acc)[VEC], T* smem, Op op) {
  constexpr int SHARE = TX < KG_WARP ? KG_WARP / TX : 1;  // threads of a wavefront with the same columns
  constexpr int PARTS = TY / SHARE, W = TX * VEC;
  static_assert(TX * TY % KG_WARP == 0 && PARTS >= 1, "whole wavefronts");
  const int tx = threadIdx.x % TX, ty = threadIdx.x / TX;
#pragma unroll
  for (int o = KG_WARP / 2; o >= TX; o >>= 1)
#pragma unroll
    for (int v = 0; v < VEC; ++v) acc[v] = op(acc[v], kg_shfl_xor(acc[v], o));
  __syncthreads();  // the previous tile's readers of smem are done
  if (ty % SHARE == 0)
#pragma unroll
    for (int v = 0; v < VEC; ++v) smem[ty / SHARE * W + tx * VEC + v] = acc[v];
  __syncthreads();
  for (int i = threadIdx.x; i < W; i += blockDim.x) {
    T r = smem[i];
    for (int p = 1; p < PARTS; ++p) r = op(r, smem[p * W + i]);
    smem[i] = r;
  }
}

