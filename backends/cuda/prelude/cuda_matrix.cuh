#ifndef KGEN_HOST_EMULATION
#define KG_DYNAMIC_SMEM(name) extern __shared__ __align__(16) unsigned char name[]

__device__ __forceinline__ void kg_cp_async16(void* dst, const void* src, bool pred) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(pred ? 16 : 0));
}
__device__ __forceinline__ void kg_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void kg_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
__device__ __forceinline__ void kg_ldmatrix_x4(unsigned* r, const void* p) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}
__device__ __forceinline__ void kg_ldmatrix_x4_trans(unsigned* r, const void* p) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}
// kg_mma is d += a b for a 16xK A fragment, a Kx8 B fragment and a 16x8
// f32 accumulator (mma.sync, sm_80 and later): K = 16 for 16-bit operands,
// 8 for tf32 ones (f32 registers already rounded to tf32).
__device__ __forceinline__ void kg_mma(__nv_bfloat16, float* c, const unsigned* a, const unsigned* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void kg_mma(__half, float* c, const unsigned* a, const unsigned* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void kg_mma(float, float* c, const unsigned* a, const unsigned* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
// kg_wgmma_fence_acc keeps the compiler from moving accumulators that an
// in-flight wgmma owns (an empty asm that reads and writes each).
template <int N>
__device__ __forceinline__ void kg_wgmma_fence_acc(float* acc) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(acc[i])::"memory");
}

// ---- mbarriers and the tensor memory accelerator (TMA, sm_90) ----

__device__ __forceinline__ unsigned kg_smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void kg_mbar_init(uint64_t* b, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(kg_smem_addr(b)), "r"(count) : "memory");
}
// kg_mbar_expect arrives on b and adds bytes to the transactions its
// current phase waits for.
__device__ __forceinline__ void kg_mbar_expect(uint64_t* b, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(kg_smem_addr(b)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void kg_mbar_arrive(uint64_t* b) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(kg_smem_addr(b)) : "memory");
}
// kg_mbar_wait returns once b's phase of parity `phase` has completed (a
// fresh barrier counts the phase before its first, parity 1, as done).
__device__ __forceinline__ void kg_mbar_wait(uint64_t* b, unsigned phase) {
  unsigned done;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(kg_smem_addr(b)), "r"(phase)
        : "memory");
  } while (!done);
}

// kg_tmap_2d writes to map (128 bytes of global memory, 128-byte aligned)
// the tensor map of a matrix of 16-bit elements at base: rows of `inner`
// contiguous elements, `outer` of them `stride` bytes apart, copied in
// boxes of bi x bo elements with the 128-byte swizzle and zeros outside
// the matrix. A whole warp calls it: the map is built in stage (128 bytes
// of shared memory) field by field (tensormap.replace, sm_90a) and copied
// out with a release to the tensor-map proxy; the thread that uses it
// then calls kg_tmap_acquire. (sm_90a's PTX builds maps on the device, so
// kernels keep kgen's ABI of plain pointers: no host-made map is passed.)
__device__ __forceinline__ void kg_tmap_2d(void* map, unsigned char* stage, const void* base, uint64_t inner,
                                           uint64_t outer, uint64_t stride, unsigned bi, unsigned bo) {
  const unsigned s = kg_smem_addr(stage);
  ((unsigned*)stage)[threadIdx.x % 32] = 0u;
  __syncwarp();
  if (threadIdx.x % 32 == 0) {
#if __CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ < 7
    stride >>= 4;  // ptxas before CUDA 12.7 (PTX ISA 8.5) takes the stride in 16-byte units
#endif
    asm volatile(
        "tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;\n"
        "tensormap.replace.tile.rank.shared::cta.b1024.b32 [%0], 1;\n"  // rank - 1
        "tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 0, %2;\n"
        "tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 1, %3;\n"
        "tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], 0, %4;\n"
        "tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 0, %5;\n"
        "tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 1, %6;\n"
        "tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 0, 1;\n"
        "tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 1, 1;\n"
        "tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%0], 1;\n"  // u16: copied bit for bit
        "tensormap.replace.tile.interleave_layout.shared::cta.b1024.b32 [%0], 0;\n"
        "tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%0], 3;\n"  // 128-byte swizzle
        "tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [%0], 0;\n"     // zeros outside
        ::"r"(s), "l"(base), "r"((unsigned)inner), "r"((unsigned)outer), "l"(stride), "r"(bi), "r"(bo)
        : "memory");
  }
  __syncwarp();
  asm volatile(
      "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%0], [%1], 128;\n" ::"l"(
          map),
      "r"(s)
      : "memory");
}
__device__ __forceinline__ void kg_tmap_acquire(const void* map) {
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;\n" ::"l"(map) : "memory");
  // Triton's workaround for ptxas omitting a fence after the acquire.
  asm volatile("cp.async.bulk.commit_group;\ncp.async.bulk.wait_group.read 0;\n" ::: "memory");
}
// kg_tma_2d copies the box at element (c0, c1) of map's matrix (c0 along
// its rows) to dst in shared memory, completing bytes on bar.
__device__ __forceinline__ void kg_tma_2d(void* dst, const void* map, uint64_t* bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          kg_smem_addr(dst)),
      "l"(map), "r"(c0), "r"(c1), "r"(kg_smem_addr(bar))
      : "memory");
}
#else
// Blocks run one after another: one static buffer serves them all.
#define KG_DYNAMIC_SMEM(name) alignas(16) static unsigned char name[256 << 10]
#endif

// KgMma is the tensor-core tile: WARPS_M x WARPS_N warps, each computing a
// (BM / WARPS_M) x (BN / WARPS_N) sub-tile as 16x8 mma fragments; A and B
// tiles pass through a STAGES-deep ring in dynamic shared memory, filled
// by cp.async (16-byte chunks, zero-filled out of bounds) for an operand
// whose VEC flag holds: a KgRows whose rows start 16-byte aligned and
// whose contiguous extent is a multiple of 8 (4 for f32). Otherwise plain
// predicated loads (or gathers) fill the same ring, a 16-byte chunk at a
// time. Shared rows are padded by 8 elements, so that ldmatrix's eight
// 16-byte row reads fall on distinct banks. f32 operands are multiplied as
// tf32 (the statement rounds them with tf32()), k 8 at a time, their
// fragments read element by element and rounded: K-major rows are padded
// by 4 and the others by 8, which puts the 32 reads of a fragment on
// distinct banks. FRAGS is 1 to load each k-step's
// fragments just before its mma, 2 to double-buffer them across steps and
// stages (more registers, no wait for ldmatrix at a stage's start).
template <class T, int BM, int BN, int BK, int WARPS_M, int WARPS_N, int STAGES, int FRAGS, bool AK, bool BKM>
struct KgMma {
  static constexpr int THREADS = 32 * WARPS_M * WARPS_N;
  static constexpr int WTM = BM / WARPS_M, WTN = BN / WARPS_N;
  static constexpr int MT = WTM / 16, NT = WTN / 8;
  static constexpr int ACC = MT * NT * 4;
  static constexpr bool TF32 = sizeof(T) == 4;
  static constexpr int EL = 16 / sizeof(T);  // elements a 16-byte chunk
  static constexpr int KS = TF32 ? 8 : 16;   // k an mma
  static constexpr int AR = AK ? BM : BK, AC = AK ? BK : BM, AP = AC + (TF32 && AK ? 4 : 8);
  static constexpr int BR = BKM ? BN : BK, BC = BKM ? BK : BN, BP = BC + (TF32 && BKM ? 4 : 8);
  static constexpr int ASZ = AR * AP, BSZ = BR * BP;
  static_assert(sizeof(T) == 2 || TF32, "16-bit or tf32 operands");
  static_assert(WTM % 16 == 0 && WTN % 16 == 0 && BK % 16 == 0, "tile shape");

  // coord is accumulator f's row and column in the tile: fragment (i, j)
  // of the warp's sub-tile, element h of the thread's four.
  static __device__ __forceinline__ void coord(int f, int* row, int* col) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;
    const int h = f % 4, i = f / 4 / NT, j = f / 4 % NT;
    *row = wm * WTM + i * 16 + lane / 4 + (h / 2) * 8;
    *col = wn * WTN + j * 8 + (lane % 4) * 2 + h % 2;
  }

#ifndef KGEN_HOST_EMULATION
  // load stages rows [r0, r0 + R) x columns [c0, c0 + C) of operand g,
  // bounded by rlim x clim, into s (row pitch P).
  template <bool VEC, int R, int C, int P, class G>
  static __device__ __forceinline__ void load(T* s, const G& g, int64_t r0, int64_t c0, int64_t rlim, int64_t clim) {
    constexpr int CHUNKS = R * C / EL;
    static_assert(CHUNKS % THREADS == 0, "whole chunks per thread");
#pragma unroll
    for (int q0 = 0; q0 < CHUNKS; q0 += THREADS) {
      const int q = q0 + threadIdx.x;
      const int r = q / (C / EL), c = q % (C / EL) * EL;
      const int64_t gr = r0 + r, gc = c0 + c;
      T* d = s + r * P + c;
      if constexpr (VEC) {
        bool ok;
        const T* from = g.src(gr, gc, rlim, clim, &ok);
        kg_cp_async16(d, from, ok);
      } else {
        g.template fill<EL>(d, gr, gc, rlim, clim);
      }
    }
  }

  // frags loads the warp's A and B fragments of k-step kk (a multiple of
  // KS) from the stage at a and b.
  static __device__ __forceinline__ void frags(unsigned (&af)[MT][4], unsigned (&bf)[NT][2], const T* a, const T* b,
                                               int kk, int wm, int wn, int lane) {
    if constexpr (TF32) {
      // Thread (g, t) of the warp holds A (g, t), (g + 8, t), (g, t + 4),
      // (g + 8, t + 4) and B (t, g), (t + 4, g) (PTX ISA, m16n8k8 .tf32).
      const int g = lane / 4, t = lane % 4;
      auto bits = [](float x) { return __float_as_uint(kg_tf32(x)); };
#pragma unroll
      for (int i = 0; i < MT; ++i) {
        const int m = wm * WTM + i * 16;
        auto at = [&](int r, int k) { return bits(AK ? a[(m + r) * AP + kk + k] : a[(kk + k) * AP + m + r]); };
        af[i][0] = at(g, t), af[i][1] = at(g + 8, t), af[i][2] = at(g, t + 4), af[i][3] = at(g + 8, t + 4);
      }
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        const int n = wn * WTN + j * 8;
        auto bt = [&](int k, int c) { return bits(BKM ? b[(n + c) * BP + kk + k] : b[(kk + k) * BP + n + c]); };
        bf[j][0] = bt(t, g), bf[j][1] = bt(t + 4, g);
      }
    } else {
#pragma unroll
      for (int i = 0; i < MT; ++i) {
        const int m = wm * WTM + i * 16;
        if (AK)
          kg_ldmatrix_x4(af[i], a + (m + lane % 16) * AP + kk + lane / 16 * 8);
        else
          kg_ldmatrix_x4_trans(af[i], a + (kk + lane % 8 + lane / 16 * 8) * AP + m + lane / 8 % 2 * 8);
      }
#pragma unroll
      for (int j = 0; j < NT; j += 2) {
        const int n = wn * WTN + j * 8;
        unsigned r[4];
        if (BKM)
          kg_ldmatrix_x4(r, b + (n + lane % 8 + lane / 16 * 8) * BP + kk + lane / 8 % 2 * 8);
        else
          kg_ldmatrix_x4_trans(r, b + (kk + lane % 8 + lane / 8 % 2 * 8) * BP + n + lane / 16 * 8);
        bf[j][0] = r[0];
        bf[j][1] = r[1];
        bf[j + 1][0] = r[2];
        bf[j + 1][1] = r[3];
      }
    }
  }

  // run computes the tile at (m0, n0) from operands A and B, with
  // cp.async for the one whose VA or VB holds.
  template <bool VA, bool VB, class GA, class GB>
  static __device__ __forceinline__ void run(const GA& A, const GB& B, int64_t M, int64_t N, int64_t K, int64_t m0,
                                             int64_t n0, float* acc, unsigned char* smem) {
    T* sA = (T*)smem;
    T* sB = sA + STAGES * ASZ;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;
#pragma unroll
    for (int f = 0; f < ACC; ++f) acc[f] = 0.0f;
    const int KT = (int)((K + BK - 1) / BK);
    auto stage = [&](int s, int kt) {
      const int64_t k0 = (int64_t)kt * BK;
      if (AK)
        load<VA, AR, AC, AP>(sA + s * ASZ, A, m0, k0, M, K);
      else
        load<VA, AR, AC, AP>(sA + s * ASZ, A, k0, m0, K, M);
      if (BKM)
        load<VB, BR, BC, BP>(sB + s * BSZ, B, n0, k0, N, K);
      else
        load<VB, BR, BC, BP>(sB + s * BSZ, B, k0, n0, K, N);
    };
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < KT) stage(s, s);
      kg_cp_async_commit();
    }
    if (FRAGS == 1) {
      // The ring: tile kt is in stage rd; tile kt + STAGES - 1 goes to wr.
      int rd = 0, wr = STAGES - 1;
      for (int kt = 0; kt < KT; ++kt) {
        kg_cp_async_wait<STAGES - 2>();  // tile kt has landed (this thread's part)
        __syncthreads();                 // everyone's part; stage wr (tile kt - 1) is free
        if (kt + STAGES - 1 < KT) stage(wr, kt + STAGES - 1);
        kg_cp_async_commit();
        wr = wr + 1 == STAGES ? 0 : wr + 1;
        unsigned af[MT][4], bf[NT][2];
#pragma unroll
        for (int kk = 0; kk < BK; kk += KS) {
          frags(af, bf, sA + rd * ASZ, sB + rd * BSZ, kk, wm, wn, lane);
#pragma unroll
          for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int j = 0; j < NT; ++j) kg_mma(T(), acc + (i * NT + j) * 4, af[i], bf[j]);
        }
        rd = rd + 1 == STAGES ? 0 : rd + 1;
      }
    } else {
      kg_cp_async_wait<STAGES - 2>();
      __syncthreads();
      // The ring: tile kt is read from stage rd while tile kt + STAGES - 1
      // goes to stage wr, which held tile kt - 1. Fragments are double
      // buffered: step kk's mma runs while step kk + 1's fragments load, and
      // the last step's loads read the next tile's stage, made ready by the
      // barrier one step earlier (which also frees stage wr: every warp has
      // its last fragments of tile kt - 1 in registers by then).
      constexpr int KK = BK / KS;
      static_assert(KK >= 2, "the pipeline needs BK >= 32");
      int rd = 0, wr = STAGES - 1;
      unsigned af[2][MT][4], bf[2][NT][2];
      frags(af[0], bf[0], sA, sB, 0, wm, wn, lane);
      for (int kt = 0; kt < KT; ++kt) {
  #pragma unroll
        for (int kk = 0; kk < KK; ++kk) {
          frags(af[(kk + 1) % 2], bf[(kk + 1) % 2], sA + rd * ASZ, sB + rd * BSZ, (kk + 1) % KK * KS, wm, wn, lane);
          if (kk == 0 && kt + STAGES - 1 < KT) stage(wr, kt + STAGES - 1);
  #pragma unroll
          for (int i = 0; i < MT; ++i)
  #pragma unroll
            for (int j = 0; j < NT; ++j) kg_mma(T(), acc + (i * NT + j) * 4, af[kk % 2][i], bf[kk % 2][j]);
          if (kk == KK - 2) {
            kg_cp_async_commit();
            kg_cp_async_wait<STAGES - 2>();  // tile kt + 1 has landed (this thread's part)
            __syncthreads();                 // everyone's part, and everyone is done with tile kt - 1
            rd = rd + 1 == STAGES ? 0 : rd + 1;
            wr = wr + 1 == STAGES ? 0 : wr + 1;
          }
        }
      }
    }
    kg_cp_async_wait<0>();
    __syncthreads();  // the ring is free for the block's next tile
  }
#else
  // On the CPU: each thread stages every BK-deep slice of A and B as the
  // block does, in 16-byte chunks (unpadded, no cp.async), then sums its
  // accumulators' products in f32: tests the layouts, offsets, gathers and
  // epilogue around the mma.
  template <bool VA, bool VB, class GA, class GB>
  static void run(const GA& A, const GB& B, int64_t M, int64_t N, int64_t K, int64_t m0, int64_t n0, float* acc,
                  unsigned char*) {
    alignas(16) T a[AR * AC], b[BR * BC];
    for (int f = 0; f < ACC; ++f) acc[f] = 0.0f;
    // A chunk as the GPU stages it: copied from the operand's src (what
    // cp.async reads, zeros where it reads nothing) or filled.
    auto chunk = [](auto vec, T* d, const auto& g, int64_t r, int64_t c, int64_t rlim, int64_t clim) {
      if constexpr (decltype(vec)::value) {
        bool ok;
        const T* from = g.src(r, c, rlim, clim, &ok);
        if (ok)
          memcpy(d, from, 16);
        else
          memset(d, 0, 16);
      } else {
        g.template fill<EL>(d, r, c, rlim, clim);
      }
    };
    for (int64_t k0 = 0; k0 < K; k0 += BK) {
      for (int r = 0; r < AR; ++r)
        for (int c = 0; c < AC; c += EL)
          chunk(std::bool_constant<VA>(), a + r * AC + c, A, (AK ? m0 : k0) + r, (AK ? k0 : m0) + c, AK ? M : K, AK ? K : M);
      for (int r = 0; r < BR; ++r)
        for (int c = 0; c < BC; c += EL)
          chunk(std::bool_constant<VB>(), b + r * BC + c, B, (BKM ? n0 : k0) + r, (BKM ? k0 : n0) + c, BKM ? N : K, BKM ? K : N);
      for (int f = 0; f < ACC; ++f) {
        int i, j;
        coord(f, &i, &j);
        for (int k = 0; k < BK; ++k)
          acc[f] += kg_widen(AK ? a[i * AC + k] : a[k * AC + i]) * kg_widen(BKM ? b[j * BC + k] : b[k * BC + j]);
      }
    }
  }
#endif

  // run for a matrix product of two matrices in memory, lda and ldb
  // elements to a stored row, cp.async for both where VEC holds.
  template <bool VEC>
  static __device__ __forceinline__ void run(const T* A, const T* B, int64_t lda, int64_t ldb, int64_t M, int64_t N,
                                             int64_t K, int64_t m0, int64_t n0, float* acc, unsigned char* smem) {
    run<VEC, VEC>(KgRows<T>{A, lda}, KgRows<T>{B, ldb}, M, N, K, m0, n0, acc, smem);
  }
};

// KgWgmma is the Hopper tensor-core tile (wgmma.mma_async, sm_90a only):
// WGS warpgroups of 128 threads, each computing BM / WGS rows of the
// BM x BN tile as m64nBNk16 products whose operands the tensor cores read
// straight from shared memory through matrix descriptors. K advances 64 at
// a time: a 16-bit K-major row of 64 is one 128-byte swizzle row. Tiles are
// stored in the 128-byte swizzled layouts the descriptors describe (16-byte
// chunk c of a 128-byte row r sits at chunk c ^ (r % 8)), K-major operands
// as rows of 64 k, MN-major ones as 1024-byte atoms of 8 k by 64 m or n,
// the 8-k groups of a 64-wide block adjacent. All threads fill a
// STAGES-deep ring with cp.async (VEC) or plain predicated stores; tile kt
// + STAGES - 2 is fetched while tile kt multiplies and tile kt - 1's
// products may still be in flight.
//
// With TMA, one more warpgroup produces: a thread of it copies each tile
// into the ring with the tensor memory accelerator, whose 128-byte swizzle
// is the layout above, and the WGS warpgroups consume, each stage guarded
// by two mbarriers (full: its bytes have landed; empty: every consumer warp
// is done with it). The producer runs ahead across the block's output
// tiles, so the next tile's loads overlap this one's epilogue, and takes
// few registers (setmaxnreg) so that the consumers have more. Operands
// that TMA cannot copy (rows not 16-byte aligned) take run's plain loads.
template <class T, int BM, int BN, int WGS, int STAGES, bool TMA, bool AK, bool BKM, class Op>
struct KgWgmma {
  static constexpr int BK = 64;
  static constexpr int THREADS = 128 * WGS;  // the consumers, with TMA
  static constexpr int WM = BM / WGS;  // rows per warpgroup
  static constexpr int MI = WM / 64;   // m64 products per warpgroup and k-step
  static constexpr int ACC = MI * BN / 2;
  static constexpr int ABYTES = BM * BK * 2, BBYTES = BN * BK * 2;
  static_assert(sizeof(T) == 2, "16-bit operands");
  static_assert(WM % 64 == 0 && BN % 64 == 0 && BN <= 256 && STAGES >= 3, "tile shape");

  // coord: accumulator f holds row i * 64 + 16 * warp + lane / 4 (+ 8) of
  // the warpgroup's rows, columns j * 8 + 2 * (lane % 4) (+ 1).
  static __device__ __forceinline__ void coord(int f, int* row, int* col) {
    const int lane = threadIdx.x % 32, w = threadIdx.x / 32 % 4, g = threadIdx.x / 128;
    const int h = f % 4, i = f / (BN / 2), j = f % (BN / 2) / 4;
    *row = g * WM + i * 64 + w * 16 + lane / 4 + (h / 2) * 8;
    *col = j * 8 + (lane % 4) * 2 + h % 2;
  }

  // The byte offset of element (r, k) of a K-major tile, and of element
  // (k, x) of an MN-major one.
  static __device__ __forceinline__ int kmajor(int r, int k) { return r * 128 + (((k >> 3) ^ r) & 7) * 16 + (k & 7) * 2; }
  static __device__ __forceinline__ int mnmajor(int k, int x) {
    return ((x >> 6) * (BK / 8) + (k >> 3)) * 1024 + (k & 7) * 128 + (((x >> 3) ^ k) & 7) * 16 + (x & 7) * 2;
  }

#ifndef KGEN_HOST_EMULATION
  // load copies the X x BK tile of operand g at (x0, k0), bounded by xlim
  // and klim, into s: the block's threads, 16-byte chunks, each thread
  // the same column of every R-th stored row (consecutive threads along
  // the contiguous dimension). KM: g's rows run along K (stored X x K). g
  // is a KgRows or a gather (see KgMma): cp.async from g.src with VEC,
  // else g.fill.
  template <bool VEC, bool KM, int X, class G>
  static __device__ __forceinline__ void load(unsigned char* s, const G& g, int64_t x0, int64_t k0, int64_t xlim,
                                              int64_t klim) {
    constexpr int PER = KM ? BK / 8 : X / 8;  // chunks a stored row
    constexpr int R = THREADS / PER;              // stored rows a step
    constexpr int STEPS = X * BK / 8 / THREADS;
    static_assert(THREADS % PER == 0 && STEPS * THREADS == X * BK / 8, "whole chunks per thread");
    const int r0 = threadIdx.x / PER, c = threadIdx.x % PER * 8;
    const int64_t gr = (KM ? x0 : k0) + r0, gc = (KM ? k0 : x0) + c;
    const int64_t rlim = KM ? xlim : klim, clim = KM ? klim : xlim;
#pragma unroll
    for (int i = 0; i < STEPS; ++i) {
      const int r = r0 + i * R;
      T* d = (T*)(s + (KM ? kmajor(r, c) : mnmajor(r, c)));
      if constexpr (VEC) {
        bool ok;
        const T* from = g.src(gr + i * R, gc, rlim, clim, &ok);
        kg_cp_async16(d, from, ok);
      } else {
        g.template fill<8>(d, gr + i * R, gc, rlim, clim);
      }
    }
  }

  // desc is the matrix descriptor of a swizzled tile at p (128-byte
  // swizzle; lbo and sbo in bytes).
  static __device__ __forceinline__ uint64_t desc(const unsigned char* p, int lbo, int sbo) {
    const unsigned a = (unsigned)__cvta_generic_to_shared(p);
    return (uint64_t)((a & 0x3FFFF) >> 4) | (uint64_t)(lbo >> 4) << 16 | (uint64_t)(sbo >> 4) << 32 | 1ull << 62;
  }
  // Operand descriptors of k-step kk (of 16) for m64 product i: K-major
  // tiles step 32 bytes along their rows, MN-major ones two 8-k groups.
  // In an MN-major tile the leading offset is between 64-wide blocks, the
  // stride offset between 8-k groups (measured on the H100: the other way
  // round gives wrong products).
  static __device__ __forceinline__ uint64_t adesc(const unsigned char* a, int row, int kk) {
    if (AK) return desc(a + row * 128 + kk * 32, 16, 1024);
    return desc(a + (row / 64) * (BK / 8) * 1024 + kk * 2048, (BK / 8) * 1024, 1024);
  }
  static __device__ __forceinline__ uint64_t bdesc(const unsigned char* b, int kk) {
    if (BKM) return desc(b + kk * 32, 16, 1024);
    return desc(b + kk * 2048, (BK / 8) * 1024, 1024);
  }

  // multiply issues the warpgroup's products of one stage (A's tile at a,
  // B's at b) into acc, then waits until only these are in flight: the
  // previous stage's are done.
  static __device__ __forceinline__ void multiply(float* acc, const unsigned char* a, const unsigned char* b) {
    const int g = threadIdx.x / 128;
    kg_wgmma_fence_acc<ACC>(acc);
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk)
#pragma unroll
      for (int i = 0; i < MI; ++i) Op::mma(acc + i * (BN / 2), adesc(a, g * WM + i * 64, kk), bdesc(b, kk));
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    kg_wgmma_fence_acc<ACC>(acc);
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
  }

  // run computes the tile at (m0, n0) of matrices A and B in memory, lda
  // and ldb elements to a stored row, cp.async for both where VEC holds.
  template <bool VEC>
  static __device__ __forceinline__ void run(const T* A, const T* B, int64_t lda, int64_t ldb, int64_t M, int64_t N,
                                             int64_t K, int64_t m0, int64_t n0, float* acc, unsigned char* smem) {
    run<VEC, VEC>(KgRows<T>{A, lda}, KgRows<T>{B, ldb}, M, N, K, m0, n0, acc, smem);
  }

  // run computes the tile at (m0, n0) from operands A and B (KgRows or
  // gathers), with cp.async for the one whose VA or VB holds.
  template <bool VA, bool VB, class GA, class GB>
  static __device__ __forceinline__ void run(const GA& A, const GB& B, int64_t M, int64_t N, int64_t K, int64_t m0,
                                             int64_t n0, float* acc, unsigned char* smem) {
    // The swizzle is on address bits: align the ring to its 1024-byte atom.
    const unsigned base = (unsigned)__cvta_generic_to_shared(smem);
    unsigned char* ring = smem + ((1024 - (base & 1023)) & 1023);
#pragma unroll
    for (int f = 0; f < ACC; ++f) acc[f] = 0.0f;
    const int KT = (int)((K + BK - 1) / BK);
    auto stage = [&](int kt) {
      unsigned char* s = ring + (kt % STAGES) * (ABYTES + BBYTES);
      const int64_t k0 = (int64_t)kt * BK;
      load<VA, AK, BM>(s, A, m0, k0, M, K);
      load<VB, BKM, BN>(s + ABYTES, B, n0, k0, N, K);
    };
#pragma unroll
    for (int s = 0; s < STAGES - 2; ++s) {
      if (s < KT) stage(s);
      kg_cp_async_commit();
    }
    for (int kt = 0; kt < KT; ++kt) {
      kg_cp_async_wait<STAGES - 3>();  // tile kt has landed (this thread's part)
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // visible to the tensor cores
      sync();  // everyone's part; tile kt - 2's products are done everywhere
      if (kt + STAGES - 2 < KT) stage(kt + STAGES - 2);
      kg_cp_async_commit();
      const unsigned char* a = ring + (kt % STAGES) * (ABYTES + BBYTES);
      const unsigned char* b = a + ABYTES;
      multiply(acc, a, b);  // tile kt - 1's products are done
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    kg_wgmma_fence_acc<ACC>(acc);
    kg_cp_async_wait<0>();
    sync();  // the ring is free for the block's next tile
  }

  // sync is a barrier of the threads that multiply: the block, or with TMA
  // the consumers (named barrier 1).
  static __device__ __forceinline__ void sync() {
    if (TMA)
      asm volatile("bar.sync 1, %0;\n" ::"n"(THREADS) : "memory");
    else
      __syncthreads();
  }

  // Ring is the ring, each stage's full and empty barriers after it, then
  // 256 bytes to build two tensor maps in (TMA only).
  struct Ring {
    unsigned char* ring;
    uint64_t *full, *empty;
    unsigned char* stage;
  };
  static constexpr int RING = STAGES * (ABYTES + BBYTES);

  // setup lays out the ring and, with TMA, initializes its barriers; every
  // thread of the block calls it.
  static __device__ __forceinline__ Ring setup(unsigned char* smem) {
    const unsigned base = (unsigned)__cvta_generic_to_shared(smem);
    unsigned char* ring = smem + ((1024 - (base & 1023)) & 1023);
    Ring r{ring, (uint64_t*)(ring + RING), (uint64_t*)(ring + RING) + STAGES, ring + RING + 256};
    if (TMA) {
      if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
          kg_mbar_init(&r.full[s], 1);
          kg_mbar_init(&r.empty[s], THREADS / 32);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
      }
      __syncthreads();
    }
    return r;
  }
  static __device__ __forceinline__ bool producer() { return TMA && threadIdx.x >= THREADS; }
  // consumer takes the registers the producer gave back: two consumer
  // warpgroups and the producer would get 168 each.
  static __device__ __forceinline__ void consumer() {
    if (TMA && WGS > 1) asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
  }

  // produce is the producer warpgroup's part: with vec, one thread loads
  // every k-step of the block's tiles (t = blockIdx.x, + gridDim.x, ...
  // below tiles, placed by kg_tile_of) through two tensor maps that its
  // warp builds in maps (256 bytes of global memory a block); otherwise
  // nothing (the consumers load).
  static __device__ __forceinline__ void produce(bool vec, const T* A, const T* B, int64_t lda, int64_t ldb,
                                                 int64_t M, int64_t N, int64_t K, int64_t tm, int64_t tn,
                                                 int64_t tiles, Ring r, char* maps) {
    if (WGS > 1) asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
    if (!vec || threadIdx.x - THREADS >= 32) return;
    char* ma = maps + blockIdx.x * 256;
    char* mb = ma + 128;
    kg_tmap_2d(ma, r.stage, A, AK ? K : M, AK ? M : K, lda * 2, 64, AK ? BM : 64);
    kg_tmap_2d(mb, r.stage + 128, B, BKM ? K : N, BKM ? N : K, ldb * 2, 64, BKM ? BN : 64);
    if (threadIdx.x % 32 != 0) return;
    kg_tmap_acquire(ma);
    kg_tmap_acquire(mb);
    const int KT = (int)((K + BK - 1) / BK);
    int s = 0;
    unsigned phase = 0;
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
      int64_t tr, tc;
      kg_tile_of(t, tm, tn, &tr, &tc);
      const int m0 = (int)(tr * BM), n0 = (int)(tc * BN);
      for (int kt = 0; kt < KT; ++kt) {
        kg_mbar_wait(&r.empty[s], phase ^ 1);
        unsigned char* a = r.ring + s * (ABYTES + BBYTES);
        unsigned char* b = a + ABYTES;
        kg_mbar_expect(&r.full[s], ABYTES + BBYTES);
        const int k0 = kt * BK;
        if (AK) {
          kg_tma_2d(a, ma, &r.full[s], k0, m0);
        } else {
#pragma unroll
          for (int j = 0; j < BM / 64; ++j) kg_tma_2d(a + j * 8192, ma, &r.full[s], m0 + j * 64, k0);
        }
        if (BKM) {
          kg_tma_2d(b, mb, &r.full[s], k0, n0);
        } else {
#pragma unroll
          for (int j = 0; j < BN / 64; ++j) kg_tma_2d(b + j * 8192, mb, &r.full[s], n0 + j * 64, k0);
        }
        if (++s == STAGES) s = 0, phase ^= 1;
      }
    }
  }

  // consume multiplies one tile from the ring that produce fills, from
  // stage s of phase `phase` on, and advances both past the tile's
  // k-steps. Each consumer warp frees a stage once its products are done.
  static __device__ __forceinline__ void consume(const T*, const T*, int64_t, int64_t, int64_t, int64_t, int64_t K,
                                                 int64_t, int64_t, float* acc, Ring r, int& s, unsigned& phase) {
    const bool lead = threadIdx.x % 32 == 0;
#pragma unroll
    for (int f = 0; f < ACC; ++f) acc[f] = 0.0f;
    const int KT = (int)((K + BK - 1) / BK);
    int prev = -1;
    for (int kt = 0; kt < KT; ++kt) {
      kg_mbar_wait(&r.full[s], phase);
      const unsigned char* a = r.ring + s * (ABYTES + BBYTES);
      const unsigned char* b = a + ABYTES;
      multiply(acc, a, b);  // the previous stage's products are done
      if (prev >= 0 && lead) kg_mbar_arrive(&r.empty[prev]);
      prev = s;
      if (++s == STAGES) s = 0, phase ^= 1;
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    kg_wgmma_fence_acc<ACC>(acc);
    if (prev >= 0 && lead) kg_mbar_arrive(&r.empty[prev]);
  }
#else
  // On the CPU: the same tile, accumulator for accumulator, by a plain
  // loop in f32 (tests the layouts, offsets and epilogue around wgmma).
  template <bool VEC>
  static void run(const T* A, const T* B, int64_t lda, int64_t ldb, int64_t M, int64_t N, int64_t K, int64_t m0,
                  int64_t n0, float* acc, unsigned char* smem) {
    run<VEC, VEC>(KgRows<T>{A, lda}, KgRows<T>{B, ldb}, M, N, K, m0, n0, acc, smem);
  }
  template <bool VA, bool VB, class GA, class GB>
  static void run(const GA& A, const GB& B, int64_t M, int64_t N, int64_t K, int64_t m0, int64_t n0, float* acc,
                  unsigned char*) {
    for (int f = 0; f < ACC; ++f) {
      int r, c;
      coord(f, &r, &c);
      const int64_t m = m0 + r, n = n0 + c;
      acc[f] = 0.0f;
      if (m >= M || n >= N) continue;
      for (int64_t k = 0; k < K; ++k) {
        const float a = kg_widen(AK ? A(m, k) : A(k, m));
        const float b = kg_widen(BKM ? B(n, k) : B(k, n));
        acc[f] += a * b;
      }
    }
  }
  // With TMA the producer does nothing and each consumer computes its
  // accumulators as run does.
  struct Ring {};
  static Ring setup(unsigned char*) { return Ring{}; }
  static bool producer() { return TMA && threadIdx.x >= THREADS; }
  static void consumer() {}
  static void produce(bool, const T*, const T*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                      int64_t, Ring, char*) {}
  static void consume(const T* A, const T* B, int64_t lda, int64_t ldb, int64_t M, int64_t N, int64_t K, int64_t m0,
                      int64_t n0, float* acc, Ring, int&, unsigned&) {
    run<true>(A, B, lda, ldb, M, N, K, m0, n0, acc, nullptr);
  }
#endif
};

