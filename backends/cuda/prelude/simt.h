// KgSimt is the CUDA-core tile: BM x BN outputs computed by (BM / 8) x
// (BN / 8) threads, each an 8 x 8 block (rows ty*4 + {0..3} and BM/2 +
// ty*4 + {0..3}, likewise columns with tx), from BK-deep slices of A and B
// staged through double-buffered shared memory stored K-major-transposed
// ([k][m]); the next slice is fetched into registers while the current
// one is multiplied. mul is the statement's product of one A and one B
// element in the accumulation type. BM and BN are 64 or 128: 256 threads
// for the 128 x 128 tile, 64 for 64 x 64, which products with few tiles
// take so that more multiprocessors work.
//
// An operand whose flag (VA, VB) is set is a KgRows whose base and rows are
// 16-byte aligned and whose contiguous extent is whole 16-byte chunks (the
// caller checks at run time): it moves in chunks of VW elements, one
// vector load each, from addresses computed once a tile and stepped by the
// slice, where the other path loads and bounds-checks every element.
template <class TA, class TB, class Acc, int BK, bool AK, bool BKM, int BM_, int BN_>
struct KgSimt {
  static constexpr int BM = BM_, BN = BN_, TX = BN / 8, THREADS = BM / 8 * TX, ACC = 64;
  static constexpr int LA = BM * BK / THREADS, LB = BN * BK / THREADS;
  static_assert((BM == 64 || BM == 128) && (BN == 64 || BN == 128), "KgSimt tiles are 64 or 128 wide");

  // at is the row (of a tile side of n) of a thread's i-th accumulator
  // along it, t the thread's position along the side.
  static __device__ __forceinline__ int at(int i, int t, int n) { return i < 4 ? t * 4 + i : n / 2 + t * 4 + i - 4; }
  static __device__ __forceinline__ void coord(int f, int* row, int* col) {
    *row = at(f / 8, threadIdx.x / TX, BM);
    *col = at(f % 8, threadIdx.x % TX, BN);
  }

  // Stage moves one operand's BK-deep slices of the tile (ROWS rows of M
  // or N, LOADS elements a thread) from memory to registers (fetch) and on
  // to shared memory stored [k][row] (stash). KM: the operand is stored
  // K-major (its rows run along K). VEC: chunks of VW elements, as above.
  template <class T, int ROWS, int LOADS, bool KM, bool VEC>
  struct Stage {
    static constexpr int VW = VEC ? (16 / (int)sizeof(T) < LOADS ? 16 / (int)sizeof(T) : LOADS) : 1;
    static constexpr int CHUNKS = LOADS / VW;
    // Chunks along the contiguous dimension: K for a K-major operand,
    // the rows otherwise.
    static constexpr int ACROSS = (KM ? BK : ROWS) / VW;
    T r[LOADS];
    const T* p[CHUNKS];  // VEC: chunk i's address at k0 = 0
    bool in[CHUNKS];     // VEC: chunk i's row is inside the operand

    // row and k of chunk i within the slice.
    static __device__ __forceinline__ void place(int i, int* row, int* k) {
      const int e = threadIdx.x + i * THREADS;
      *row = KM ? e / ACROSS : (e % ACROSS) * VW;
      *k = KM ? (e % ACROSS) * VW : e / ACROSS;
    }

    template <class G>
    __device__ __forceinline__ void start(const G& g, int64_t rows, int64_t r0) {
      if constexpr (VEC) {
#pragma unroll
        for (int i = 0; i < CHUNKS; ++i) {
          int row, k;
          place(i, &row, &k);
          in[i] = r0 + row < rows;
          p[i] = g.p + (KM ? (r0 + row) * g.ld + k : k * g.ld + r0 + row);
        }
      }
    }

    template <class G>
    __device__ __forceinline__ void fetch(const G& g, int64_t rows, int64_t r0, int64_t K, int64_t k0) {
#pragma unroll
      for (int i = 0; i < CHUNKS; ++i) {
        int row, k;
        place(i, &row, &k);
        const int64_t gr = r0 + row, gk = k0 + k;
        if constexpr (VEC) {
          KgVec<T, VW> v;
          if (in[i] && gk < K) {
            v = *(const KgVec<T, VW>*)(p[i] + (KM ? k0 : k0 * g.ld));
          } else {
#pragma unroll
            for (int j = 0; j < VW; ++j) v.v[j] = kg_zero<T>();
          }
#pragma unroll
          for (int j = 0; j < VW; ++j) r[i * VW + j] = v.v[j];
        } else {
          r[i] = gr < rows && gk < K ? (KM ? g(gr, gk) : g(gk, gr)) : kg_zero<T>();
        }
      }
    }

    __device__ __forceinline__ void stash(T (*s)[ROWS + 4]) const {
#pragma unroll
      for (int i = 0; i < CHUNKS; ++i) {
        int row, k;
        place(i, &row, &k);
#pragma unroll
        for (int j = 0; j < VW; ++j) {
          if (KM)
            s[k + j][row] = r[i * VW + j];
          else
            s[k][row + j] = r[i * VW + j];
        }
      }
    }
  };

  // smem is the tile's shared memory: one for every instantiation of run
  // in a kernel (a kernel may take both paths), which static arrays
  // declared in run would each have of their own.
  struct Smem {
    TA a[2][BK][BM + 4];
    TB b[2][BK][BN + 4];
  };
  static __device__ __forceinline__ Smem& smem() {
    __shared__ Smem s;
    return s;
  }

  // run computes the tile at (m0, n0) from operands A and B.
  template <bool VA = false, bool VB = false, class GA, class GB, class Mul>
  static __device__ __forceinline__ void run(const GA& A, const GB& B, int64_t M, int64_t N, int64_t K, int64_t m0,
                                             int64_t n0, Acc* acc, Mul mul) {
    TA(*sA)[BK][BM + 4] = smem().a;
    TB(*sB)[BK][BN + 4] = smem().b;
    const int tid = threadIdx.x, tx = tid % TX, ty = tid / TX;
    // Consecutive threads take consecutive elements (or chunks) of the
    // operand's contiguous dimension, so that global reads coalesce.
    Stage<TA, BM, LA, AK, VA> a;
    Stage<TB, BN, LB, BKM, VB> b;
    a.start(A, M, m0);
    b.start(B, N, n0);
#pragma unroll
    for (int f = 0; f < ACC; ++f) acc[f] = kg_zero<Acc>();
    const int64_t KT = (K + BK - 1) / BK;
    if (KT > 0) {
      a.fetch(A, M, m0, K, 0);
      b.fetch(B, N, n0, K, 0);
      a.stash(sA[0]);
      b.stash(sB[0]);
    }
    __syncthreads();
    for (int64_t kt = 0; kt < KT; ++kt) {
      const int buf = kt & 1;
      if (kt + 1 < KT) {
        a.fetch(A, M, m0, K, (kt + 1) * BK);
        b.fetch(B, N, n0, K, (kt + 1) * BK);
      }
#pragma unroll
      for (int k = 0; k < BK; ++k) {
        TA x[8];
        TB y[8];
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          x[i] = sA[buf][k][at(i, ty, BM)];
          y[i] = sB[buf][k][at(i, tx, BN)];
        }
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
          for (int j = 0; j < 8; ++j) acc[i * 8 + j] += mul(x[i], y[j]);
      }
      if (kt + 1 < KT) {
        a.stash(sA[buf ^ 1]);
        b.stash(sB[buf ^ 1]);
      }
      __syncthreads();
    }
  }

  // run for a matrix product of two matrices in memory, lda and ldb
  // elements to a stored row.
  template <bool VA = false, bool VB = false, class Mul>
  static __device__ __forceinline__ void run(const TA* A, const TB* B, int64_t lda, int64_t ldb, int64_t M, int64_t N,
                                             int64_t K, int64_t m0, int64_t n0, Acc* acc, Mul mul) {
    run<VA, VB>(KgRows<TA>{A, lda}, KgRows<TB>{B, ldb}, M, N, K, m0, n0, acc, mul);
  }
};
