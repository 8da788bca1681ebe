// ---- Rows shared by groups of threads (row-reduce, BLOCK_ROWS > 1) ----

// kg_group_reduce combines v with op across each aligned group of G
// threads of a warp (G a power of two, at most 32): butterfly shuffles
// that stay within the group. Every thread of the warp must call it; every
// thread gets its group's result, combined in the same order run to run.
template <int G, class T, class Op>
__device__ __forceinline__ T kg_group_reduce(T v, Op op) {
  static_assert(G >= 2 && G <= 32 && (G & (G - 1)) == 0, "a group is 2 to 32 threads, a power of two");
#pragma unroll
  for (int o = G / 2; o > 0; o >>= 1) v = op(v, kg_shfl_xor(v, o));
  return v;
}

