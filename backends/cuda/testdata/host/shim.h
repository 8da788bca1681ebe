// A CPU stand-in for the parts of CUDA that kgen's generated kernels use,
// so that tests can run them without a GPU: every CUDA thread of a block
// is a std::thread, __syncthreads is a barrier of the block and a warp
// shuffle a barrier of its warp (so a shuffle inside `if (warp == 0)` works
// as on the GPU), and
// __shared__ variables are statics (blocks run one after another). The
// half and bfloat16 conversions round to nearest even from the exact
// value, as the CUDA intrinsics do.
#pragma once
#define KGEN_HOST_EMULATION 1
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <algorithm>
#include <thread>
#include <type_traits>
#include <vector>

// KG_EMU_WARP is the threads of a warp that shuffle together: 32, or a
// HIP target's wavefront size (64 on CDNA).
#ifndef KG_EMU_WARP
#define KG_EMU_WARP 32
#endif

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __cluster_dims__(...)
#define __restrict__
#define __shared__ static

struct kg_dim3 { unsigned x = 0, y = 0, z = 0; };
inline thread_local kg_dim3 threadIdx, blockIdx;
inline kg_dim3 blockDim, gridDim;
inline std::barrier<>* kg_block_barrier;
inline std::vector<std::barrier<>*> kg_warp_barriers;
inline unsigned char kg_exchange[1024][8];

inline void __syncthreads() { kg_block_barrier->arrive_and_wait(); }

template <class T> T __shfl_xor_sync(unsigned, T v, int o) {
  std::barrier<>* warp = kg_warp_barriers[threadIdx.x / KG_EMU_WARP];
  std::memcpy(kg_exchange[threadIdx.x], &v, sizeof(T));
  warp->arrive_and_wait();
  T r;
  std::memcpy(&r, kg_exchange[threadIdx.x ^ o], sizeof(T));
  warp->arrive_and_wait();
  return r;
}

// Round x to a binary format with ebits exponent and mbits fraction bits,
// to nearest even, straight from double.
inline uint32_t kg_round_bits(double x, int ebits, int mbits) {
  uint32_t sign = std::signbit(x) ? 1u : 0u;
  uint32_t expmax = (1u << ebits) - 1, bias = expmax >> 1;
  uint32_t out;
  if (std::isnan(x)) {
    out = (expmax << mbits) | (1u << (mbits - 1));
  } else if (std::isinf(x)) {
    out = expmax << mbits;
  } else {
    double a = std::fabs(x);
    if (a == 0) {
      out = 0;
    } else {
      int e;
      std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
      int exp = e - 1;     // a = 1.f * 2^exp
      int emin = 1 - (int)bias;
      int shift = exp < emin ? emin : exp;  // subnormals share emin's scale
      double scaled = std::ldexp(a, mbits - shift);  // units of the last place
      double q = std::nearbyint(scaled);              // ties to even (default mode)
      uint64_t m = (uint64_t)q;
      if (m >= (2ull << mbits)) { m >>= 1; shift++; }
      if (m < (1ull << mbits)) {
        out = (uint32_t)m;  // subnormal (or rounded up into the normal range below)
      } else {
        int be = shift + (int)bias;
        if (be >= (int)expmax) out = expmax << mbits;  // overflow to infinity
        else out = ((uint32_t)be << mbits) | (uint32_t)(m & ((1ull << mbits) - 1));
      }
    }
  }
  return (sign << (ebits + mbits)) | out;
}

inline double kg_bits_value(uint32_t b, int ebits, int mbits) {
  uint32_t expmax = (1u << ebits) - 1, bias = expmax >> 1;
  int sign = (b >> (ebits + mbits)) & 1;
  uint32_t e = (b >> mbits) & expmax, m = b & ((1u << mbits) - 1);
  double v;
  if (e == expmax) v = m ? NAN : INFINITY;
  else if (e == 0) v = std::ldexp((double)m, 1 - (int)bias - mbits);
  else v = std::ldexp((double)(m | (1u << mbits)), (int)e - (int)bias - mbits);
  return sign ? -v : v;
}

struct __half { uint16_t x; };
struct __nv_bfloat16 { uint16_t x; };
inline float __half2float(__half h) { return (float)kg_bits_value(h.x, 5, 10); }
inline float __bfloat162float(__nv_bfloat16 h) { return (float)kg_bits_value(h.x, 8, 7); }
inline __half __double2half(double x) { return __half{(uint16_t)kg_round_bits(x, 5, 10)}; }
inline __half __float2half_rn(float x) { return __double2half(x); }
inline __nv_bfloat16 __double2bfloat16(double x) { return __nv_bfloat16{(uint16_t)kg_round_bits(x, 8, 7)}; }
inline __nv_bfloat16 __float2bfloat16_rn(float x) { return __double2bfloat16(x); }
inline float __ll2float_rn(long long x) { return (float)x; }
inline double __ll2double_rn(long long x) { return (double)x; }
inline float __int2float_rn(int x) { return (float)x; }
inline double __int2double_rn(int x) { return (double)x; }
inline float __double2float_rn(double x) { return (float)x; }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }

// Device half arithmetic rounds every operation to half.
inline __half operator+(__half a, __half b) { return __float2half_rn(__half2float(a) + __half2float(b)); }
inline __half operator*(__half a, __half b) { return __float2half_rn(__half2float(a) * __half2float(b)); }
inline bool operator<(__half a, __half b) { return __half2float(a) < __half2float(b); }
inline bool operator>(__half a, __half b) { return __half2float(a) > __half2float(b); }
inline bool operator!=(__half a, __half b) { return __half2float(a) != __half2float(b); }
inline __nv_bfloat16 operator+(__nv_bfloat16 a, __nv_bfloat16 b) { return __float2bfloat16_rn(__bfloat162float(a) + __bfloat162float(b)); }
inline __nv_bfloat16 operator*(__nv_bfloat16 a, __nv_bfloat16 b) { return __float2bfloat16_rn(__bfloat162float(a) * __bfloat162float(b)); }
inline bool operator<(__nv_bfloat16 a, __nv_bfloat16 b) { return __bfloat162float(a) < __bfloat162float(b); }
inline bool operator>(__nv_bfloat16 a, __nv_bfloat16 b) { return __bfloat162float(a) > __bfloat162float(b); }
inline bool operator!=(__nv_bfloat16 a, __nv_bfloat16 b) { return __bfloat162float(a) != __bfloat162float(b); }

// kg_emulate runs a launch of `blocks` blocks of `threads` threads, one
// block at a time.
inline void kg_emulate(unsigned blocks, unsigned threads, const std::function<void()>& kernel) {
  gridDim.x = blocks;
  blockDim.x = threads;
  for (unsigned b = 0; b < blocks; b++) {
    std::barrier<> bar(threads);
    kg_block_barrier = &bar;
    std::vector<std::unique_ptr<std::barrier<>>> warps;
    kg_warp_barriers.clear();
    for (unsigned w = 0; w * KG_EMU_WARP < threads; w++) {
      warps.push_back(std::make_unique<std::barrier<>>(std::min((unsigned)KG_EMU_WARP, threads - w * KG_EMU_WARP)));
      kg_warp_barriers.push_back(warps.back().get());
    }
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; t++) {
      ts.emplace_back([&, b, t] {
        blockIdx.x = b;
        threadIdx.x = t;
        kernel();
      });
    }
    for (auto& th : ts) th.join();
  }
}
