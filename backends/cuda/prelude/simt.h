// KgSimt is the CUDA-core tile: 256 threads as 16 x 16, each computing an
// 8 x 8 block of the 128 x 128 tile (rows ty*4 + {0..3} and 64 + ty*4 +
// {0..3}, likewise columns with tx), from BK-deep slices of A and B staged
// through double-buffered shared memory stored K-major-transposed
// ([k][m]); the next slice is fetched into registers while the current
// one is multiplied. mul is the statement's product of one A and one B
// element in the accumulation type.
template <class TA, class TB, class Acc, int BK, bool AK, bool BKM>
struct KgSimt {
  static constexpr int BM = 128, BN = 128, THREADS = 256, ACC = 64;
  static constexpr int LA = BM * BK / THREADS, LB = BN * BK / THREADS;

  static __device__ __forceinline__ int at(int i, int t) { return i < 4 ? t * 4 + i : 64 + t * 4 + i - 4; }
  static __device__ __forceinline__ void coord(int f, int* row, int* col) {
    *row = at(f / 8, threadIdx.x / 16);
    *col = at(f % 8, threadIdx.x % 16);
  }

  // run computes the tile at (m0, n0) from operands A and B.
  template <class GA, class GB, class Mul>
  static __device__ __forceinline__ void run(const GA& A, const GB& B, int64_t M, int64_t N, int64_t K, int64_t m0,
                                             int64_t n0, Acc* acc, Mul mul) {
    __shared__ TA sA[2][BK][BM + 4];
    __shared__ TB sB[2][BK][BN + 4];
    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    TA ra[LA];
    TB rb[LB];
#pragma unroll
    for (int f = 0; f < ACC; ++f) acc[f] = kg_zero<Acc>();
    // Consecutive threads take consecutive elements of the operand's
    // contiguous dimension, so that global reads coalesce.
    auto fetch = [&](int64_t k0) {
#pragma unroll
      for (int i = 0; i < LA; ++i) {
        const int e = tid + i * THREADS;
        const int m = AK ? e / BK : e % BM, k = AK ? e % BK : e / BM;
        const int64_t gm = m0 + m, gk = k0 + k;
        ra[i] = gm < M && gk < K ? (AK ? A(gm, gk) : A(gk, gm)) : kg_zero<TA>();
      }
#pragma unroll
      for (int i = 0; i < LB; ++i) {
        const int e = tid + i * THREADS;
        const int n = BKM ? e / BK : e % BN, k = BKM ? e % BK : e / BN;
        const int64_t gn = n0 + n, gk = k0 + k;
        rb[i] = gn < N && gk < K ? (BKM ? B(gn, gk) : B(gk, gn)) : kg_zero<TB>();
      }
    };
    auto stash = [&](int buf) {
#pragma unroll
      for (int i = 0; i < LA; ++i) {
        const int e = tid + i * THREADS;
        sA[buf][AK ? e % BK : e / BM][AK ? e / BK : e % BM] = ra[i];
      }
#pragma unroll
      for (int i = 0; i < LB; ++i) {
        const int e = tid + i * THREADS;
        sB[buf][BKM ? e % BK : e / BN][BKM ? e / BK : e % BN] = rb[i];
      }
    };
    const int64_t KT = (K + BK - 1) / BK;
    if (KT > 0) {
      fetch(0);
      stash(0);
    }
    __syncthreads();
    for (int64_t kt = 0; kt < KT; ++kt) {
      const int buf = kt & 1;
      if (kt + 1 < KT) fetch((kt + 1) * BK);
#pragma unroll
      for (int k = 0; k < BK; ++k) {
        TA a[8];
        TB b[8];
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          a[i] = sA[buf][k][at(i, ty)];
          b[i] = sB[buf][k][at(i, tx)];
        }
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
          for (int j = 0; j < 8; ++j) acc[i * 8 + j] += mul(a[i], b[j]);
      }
      if (kt + 1 < KT) stash(buf ^ 1);
      __syncthreads();
    }
  }

  // run for a matrix product of two matrices in memory, lda and ldb
  // elements to a stored row.
  template <class Mul>
  static __device__ __forceinline__ void run(const TA* A, const TB* B, int64_t lda, int64_t ldb, int64_t M, int64_t N,
                                             int64_t K, int64_t m0, int64_t n0, Acc* acc, Mul mul) {
    run(KgRows<TA>{A, lda}, KgRows<TB>{B, ldb}, M, N, K, m0, n0, acc, mul);
  }
};
