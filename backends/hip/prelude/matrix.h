#ifndef KGEN_HOST_EMULATION
#define KG_DYNAMIC_SMEM(name) extern __shared__ __attribute__((aligned(16))) unsigned char name[]
#else
#define KG_DYNAMIC_SMEM(name) alignas(16) static unsigned char name[64 << 10]
#endif

// ---- Matrix cores (template matmul-mfma: CDNA2, gfx90a) ----
#if defined(__HIP__) && !defined(KGEN_HOST_EMULATION)
// KgF32x16 is the 16 f32 accumulators a lane holds of a 32 x 32 block.
typedef float KgF32x16 __attribute__((ext_vector_type(16)));

// kg_mfma32 is c += a b for the 32 x 8 block of A and the 8 x 32 block of
// B that the wavefront holds: lane l holds A (l % 32, 4 (l / 32) + e) and
// B (4 (l / 32) + e, l % 32), e = 0..3, as the four 16-bit values of a and
// b, and element v of c is D (8 (v / 4) + 4 (l / 32) + v % 4, l % 32)
// (v_mfma_f32_32x32x8f16 and v_mfma_f32_32x32x8bf16_1k; AMD's CDNA2 ISA
// reference and the layouts of IREE's MFMA_F32_32x32x8_F16 and Composable
// Kernel). Templates, so that the builtins are compiled only where the
// tile is used (gfx90a).
template <int = 0>
__device__ __forceinline__ void kg_mfma32(__half, KgF32x16& c, uint64_t a, uint64_t b) {
#if defined(__HIP_DEVICE_COMPILE__)
  typedef _Float16 H4 __attribute__((ext_vector_type(4)));
  H4 av, bv;
  memcpy(&av, &a, 8);
  memcpy(&bv, &b, 8);
  c = __builtin_amdgcn_mfma_f32_32x32x8f16(av, bv, c, 0, 0, 0);
#endif
}
template <int = 0>
__device__ __forceinline__ void kg_mfma32(kg_bf16, KgF32x16& c, uint64_t a, uint64_t b) {
#if defined(__HIP_DEVICE_COMPILE__)
  typedef short S4 __attribute__((ext_vector_type(4)));
  S4 av, bv;
  memcpy(&av, &a, 8);
  memcpy(&bv, &b, 8);
  c = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(av, bv, c, 0, 0, 0);
#endif
}
#endif

#if defined(__HIP__) || defined(KGEN_HOST_EMULATION)
// KgMfma is the matrix-core tile: WAVES_M x WAVES_N wavefronts of 64
// lanes, each computing a (BM / WAVES_M) x (BN / WAVES_N) sub-tile as
// 32 x 32 blocks (kg_mfma32, 8 k at a time). Each BK-deep slice of A and
// B is staged in LDS K-major (rows of BK + 8 elements, transposed on the
// way in for an operand stored K x M or K x N), so that a lane's four
// consecutive k are one 8-byte read. Slices are read from global memory
// in 8-element chunks along the operand's contiguous dimension, one
// 16-byte load each where VEC holds (rows 16-byte aligned, contiguous
// extent a multiple of 8), element by element otherwise; zero past M, N
// and K.
template <class T, int BM, int BN, int BK, int WAVES_M, int WAVES_N, bool AK, bool BKM>
struct KgMfma {
  static constexpr int THREADS = 64 * WAVES_M * WAVES_N;
  static constexpr int WTM = BM / WAVES_M, WTN = BN / WAVES_N;
  static constexpr int MT = WTM / 32, NT = WTN / 32;
  static constexpr int ACC = MT * NT * 16;
  static constexpr int P = BK + 8;  // LDS row pitch, elements
  static_assert(sizeof(T) == 2, "16-bit operands");
  static_assert(WTM % 32 == 0 && WTN % 32 == 0 && BK % 8 == 0, "tile shape");

  // coord: accumulator f is element v of block (i, j) of the wavefront's
  // sub-tile.
  static __device__ __forceinline__ void coord(int f, int* row, int* col) {
    const int lane = threadIdx.x % 64, wave = threadIdx.x / 64;
    const int wm = wave / WAVES_N, wn = wave % WAVES_N;
    const int v = f % 16, i = f / 16 / NT, j = f / 16 % NT;
    *row = wm * WTM + i * 32 + 8 * (v / 4) + 4 * (lane / 32) + v % 4;
    *col = wn * WTN + j * 32 + lane % 32;
  }

  // stage stores the X x BK slice of operand g at (x0, k0), bounded by
  // xlim x klim, K-major into s. KM: g's rows run along K (stored X x K).
  template <bool VEC, bool KM, int X>
  static __device__ __forceinline__ void stage(T* s, const KgRows<T>& g, int64_t x0, int64_t k0, int64_t xlim,
                                               int64_t klim) {
    constexpr int C = KM ? BK : X;  // g's contiguous extent in the slice
    constexpr int CHUNKS = X * BK / 8;
    static_assert(CHUNKS % THREADS == 0, "whole chunks per thread");
    const int64_t rlim = KM ? xlim : klim, clim = KM ? klim : xlim;
#pragma unroll
    for (int q0 = 0; q0 < CHUNKS; q0 += THREADS) {
      const int q = q0 + threadIdx.x;
      const int r = q / (C / 8), c = q % (C / 8) * 8;
      const int64_t gr = (KM ? x0 : k0) + r, gc = (KM ? k0 : x0) + c;
      KgVec<T, 8> v;
      if (VEC) {
        if (gr < rlim && gc < clim) {
          v = *(const KgVec<T, 8>*)g.ptr(gr, gc);
        } else {
#pragma unroll
          for (int e = 0; e < 8; ++e) v.v[e] = kg_zero<T>();
        }
      } else {
        g.template fill<8>(v.v, gr, gc, rlim, clim);
      }
      if (KM) {
        *(KgVec<T, 8>*)(s + r * P + c) = v;
      } else {
#pragma unroll
        for (int e = 0; e < 8; ++e) s[(c + e) * P + r] = v.v[e];
      }
    }
  }

  template <bool VEC>
  static __device__ __forceinline__ void run(const T* A, const T* B, int64_t lda, int64_t ldb, int64_t M, int64_t N,
                                             int64_t K, int64_t m0, int64_t n0, float* acc, unsigned char* smem) {
    T* sA = (T*)smem;
    T* sB = sA + BM * P;
    const int lane = threadIdx.x % 64, wave = threadIdx.x / 64;
    const int wm = wave / WAVES_N, wn = wave % WAVES_N;
    const KgRows<T> ga{A, lda}, gb{B, ldb};
    KgF32x16 c[MT][NT];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int v = 0; v < 16; ++v) c[i][j][v] = 0.0f;
    for (int64_t k0 = 0; k0 < K; k0 += BK) {
      __syncthreads();  // every wavefront is done with the previous slice
      stage<VEC, AK, BM>(sA, ga, m0, k0, M, K);
      stage<VEC, BKM, BN>(sB, gb, n0, k0, N, K);
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < BK; kk += 8) {
        uint64_t a[MT], b[NT];
        const int k = kk + 4 * (lane / 32);
#pragma unroll
        for (int i = 0; i < MT; ++i) memcpy(&a[i], sA + (wm * WTM + i * 32 + lane % 32) * P + k, 8);
#pragma unroll
        for (int j = 0; j < NT; ++j) memcpy(&b[j], sB + (wn * WTN + j * 32 + lane % 32) * P + k, 8);
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
          for (int j = 0; j < NT; ++j) kg_mfma32(T(), c[i][j], a[i], b[j]);
      }
    }
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int v = 0; v < 16; ++v) acc[(i * NT + j) * 16 + v] = c[i][j][v];
  }
};
#endif

