// ---- Matrix products (templates matmul-wgmma, matmul-mma, matmul-simt, igemm-mma, igemm-simt) ----
//
// Both compute one BM x BN output tile of C = A B with C's rows from A and
// columns from B. An operand is "K-major" when its rows run along K (A
// stored M x K, B stored N x K) and is otherwise stored K x M (K x N).
// Tiles read an operand g as g(r, c), element (r, c) of it as stored
// (K-major or not), inside M, N and K, or as g.fill<n>(d, r, c, rlim,
// clim), which writes elements (r, c) to (r, c + n - 1) to d, zero outside
// rlim x clim: a KgRows for a matrix in memory, or a KgGather for an implicit
// GEMM's operand gathered from the statement's own load. Tiles are
// zero-filled past M, N and K. After run, the caller reads accumulator f
// at tile position coord(f) and applies the statement's epilogue.

template <class T>
__device__ __forceinline__ T kg_zero() {
  T z;
  memset(&z, 0, sizeof z);
  return z;
}

