// Experiment (session 40): can the L2 serve a normalization's second read
// when the rows go through in groups small enough for it? kgen computes a
// normalization whose rows are too long for a block or a cluster
// (layernorm_3d_kb: 16 rows of 16 MiB; groupnorm_kb: 128 rows of 2 MiB)
// in two launches: every row's partial statistics, then every output,
// reading X again. X is 256 MiB, so the second launch reads it from memory:
// 3 x 256 MiB against a copy's 2 (l2_reuse.cu found that reading X's tail
// first in the second launch gains nothing, at 64 and 256 MiB).
//
// Here the rows go through in groups of G rows of 2 MiB, so that a group
// is 2G MiB, and each group's outputs are computed right after its
// statistics, while the L2 may still hold it:
//   two-pass   kgen's plan: all statistics, then all outputs (2 launches);
//   split G    per group, a statistics launch and an outputs launch;
//   fused G    launch k takes group k's statistics and group k-1's outputs
//              (blocks alternate between the two), one launch more than
//              there are groups;
//   ... hint   the same with the statistics' loads marked L2::evict_last
//              and the outputs' loads and stores evict-first, so that the
//              group waiting for its outputs is the last thing dropped.
// Each plan is timed whole by CUDA events after a 256 MiB memset that
// flushes the L2, 25 rounds interleaved: median and p20-p80, and the
// fraction of the time of a copy of X to Y in the same rounds. Every
// plan's output is compared with the two-pass plan's (max |diff|).
//   nvcc -O3 -arch=sm_90 -o l2_pipeline testsuite/exp/l2_pipeline.cu && ./l2_pipeline
#include <algorithm>
#include <cmath>
#include <vector>
#include "common.cuh"

constexpr int THREADS = 256;
constexpr int PER = 8;  // float4s a thread a block: a block takes 32 KiB
constexpr long PIECE = (long)THREADS * PER;  // float4s a block

__device__ __forceinline__ unsigned long long policy(bool last) {
  unsigned long long p;
  if (last) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  else asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}

template <bool HINT>
__device__ __forceinline__ float4 load(const float4* p, unsigned long long pol) {
  if (!HINT) return *p;
  float4 v;
  asm volatile("ld.global.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p), "l"(pol));
  return v;
}

template <bool HINT>
__device__ __forceinline__ void store(float4* p, float4 v, unsigned long long pol) {
  if (!HINT) {
    *p = v;
    return;
  }
  asm volatile("st.global.L2::cache_hint.v4.f32 [%0], {%1, %2, %3, %4}, %5;"
               :: "l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w), "l"(pol) : "memory");
}

// The block's sums of a and b, in thread 0.
__device__ void block_sum2(float& a, float& b) {
  __shared__ float red[2][32];
  for (int o = 16; o > 0; o /= 2) {
    a += __shfl_xor_sync(~0u, a, o);
    b += __shfl_xor_sync(~0u, b, o);
  }
  if (threadIdx.x % 32 == 0) red[0][threadIdx.x / 32] = a, red[1][threadIdx.x / 32] = b;
  __syncthreads();
  if (threadIdx.x < 32) {
    a = threadIdx.x < THREADS / 32 ? red[0][threadIdx.x] : 0;
    b = threadIdx.x < THREADS / 32 ? red[1][threadIdx.x] : 0;
    for (int o = 16; o > 0; o /= 2) {
      a += __shfl_xor_sync(~0u, a, o);
      b += __shfl_xor_sync(~0u, b, o);
    }
  }
}

// Piece p (of the pieces from first) of x: its sum and sum of squares
// into part[2p], part[2p + 1].
template <bool HINT>
__device__ void stats_piece(const float4* __restrict__ x, long p, float* __restrict__ part) {
  const unsigned long long pol = HINT ? policy(true) : 0;
  const float4* c = x + p * PIECE;
  float4 v[PER];
#pragma unroll
  for (int i = 0; i < PER; i++) v[i] = load<HINT>(c + i * THREADS + threadIdx.x, pol);
  float s = 0, q = 0;
#pragma unroll
  for (int i = 0; i < PER; i++) {
    s += v[i].x + v[i].y + v[i].z + v[i].w;
    q += v[i].x * v[i].x + v[i].y * v[i].y + v[i].z * v[i].z + v[i].w * v[i].w;
  }
  block_sum2(s, q);
  if (threadIdx.x == 0) part[2 * p] = s, part[2 * p + 1] = q;
}

// Piece p of y = (x - mean) * rsqrt(var + 1e-5), its row's statistics
// from the row's rp pieces' partial sums.
template <bool HINT>
__device__ void out_piece(const float4* __restrict__ x, long p, long rp, const float* __restrict__ part, float4* __restrict__ y) {
  __shared__ float mr[2];
  const unsigned long long pol = HINT ? policy(false) : 0;
  const long row = p / rp;
  float s = 0, q = 0;
  for (long i = threadIdx.x; i < rp; i += THREADS) s += part[2 * (row * rp + i)], q += part[2 * (row * rp + i) + 1];
  block_sum2(s, q);
  if (threadIdx.x == 0) {
    const float n = (float)(rp * PIECE * 4);
    const float mean = s / n;
    mr[0] = mean, mr[1] = rsqrtf(fmaxf(q / n - mean * mean, 0.f) + 1e-5f);
  }
  __syncthreads();
  const float mean = mr[0], r = mr[1];
  const float4* c = x + p * PIECE;
  float4* d = y + p * PIECE;
  float4 v[PER];
#pragma unroll
  for (int i = 0; i < PER; i++) v[i] = load<HINT>(c + i * THREADS + threadIdx.x, pol);
#pragma unroll
  for (int i = 0; i < PER; i++) {
    float4 o = {(v[i].x - mean) * r, (v[i].y - mean) * r, (v[i].z - mean) * r, (v[i].w - mean) * r};
    store<HINT>(d + i * THREADS + threadIdx.x, o, pol);
  }
}

template <bool HINT>
__global__ void __launch_bounds__(THREADS) stats(const float4* __restrict__ x, long first, float* __restrict__ part) {
  stats_piece<HINT>(x, first + blockIdx.x, part);
}

template <bool HINT>
__global__ void __launch_bounds__(THREADS) outputs(const float4* __restrict__ x, long first, long rp, const float* __restrict__ part, float4* __restrict__ y) {
  out_piece<HINT>(x, first + blockIdx.x, rp, part, y);
}

// Blocks alternate: the even ones take piece sfirst + b/2 of the
// statistics (while there are ns), the odd ones piece ofirst + b/2 of the
// outputs (while there are no); the rest of whichever is longer follows.
template <bool HINT>
__global__ void __launch_bounds__(THREADS) fused(const float4* __restrict__ x, long sfirst, long ns, long ofirst, long no, long rp, float* __restrict__ part, float4* __restrict__ y) {
  const long b = blockIdx.x, both = 2 * (ns < no ? ns : no);
  long si = -1, oi = -1;
  if (b < both) (b % 2 == 0 ? si : oi) = b / 2;
  else (ns > no ? si : oi) = both / 2 + (b - both);
  if (si >= 0) stats_piece<HINT>(x, sfirst + si, part);
  else out_piece<HINT>(x, ofirst + oi, rp, part, y);
}

int main() {
  print_device();
  const long rows = 128, rowBytes = 2l << 20;
  const long n4 = rows * rowBytes / 16, rp = rowBytes / 16 / PIECE;  // float4s; pieces a row
  float4 *x, *y, *ref, *junk;
  float* part;
  CHECK(cudaMalloc(&x, n4 * 16));
  CHECK(cudaMalloc(&y, n4 * 16));
  CHECK(cudaMalloc(&ref, n4 * 16));
  CHECK(cudaMalloc(&junk, 256l << 20));
  CHECK(cudaMalloc(&part, 2 * rows * rp * sizeof(float)));
  {
    std::vector<float> h(n4 * 4);
    unsigned s = 12345;
    for (long i = 0; i < n4 * 4; i++) {
      s = s * 1664525u + 1013904223u;
      h[i] = (float)(s >> 8) / (1 << 24) * 4.f - 1.f + (float)((i / (rowBytes / 4)) % 7);
    }
    CHECK(cudaMemcpy(x, h.data(), n4 * 16, cudaMemcpyHostToDevice));
  }
  struct Plan {
    const char* name;
    long g;  // rows a group (0: the copy, -1: the two passes)
    bool fusedPlan, hint;
  };
  std::vector<Plan> plans = {{"copy", 0, false, false}, {"two-pass (kgen)", -1, false, false}};
  for (long g : {1, 2, 4, 8, 16}) {
    plans.push_back({"split", g, false, false});
    plans.push_back({"fused", g, true, false});
    plans.push_back({"fused hint", g, true, true});
  }
  plans.push_back({"split hint", 4, false, true});
  auto run = [&](const Plan& p, float4* out) {
    const long pieces = rows * rp;
    if (p.g == 0) {
      copy<<<(n4 + 255) / 256, 256>>>(x, n4, out);
    } else if (p.g < 0) {
      stats<false><<<pieces, THREADS>>>(x, 0, part);
      outputs<false><<<pieces, THREADS>>>(x, 0, rp, part, out);
    } else {
      const long gp = p.g * rp, groups = rows / p.g;
      if (!p.fusedPlan) {
        for (long k = 0; k < groups; k++) {
          if (p.hint) {
            stats<true><<<gp, THREADS>>>(x, k * gp, part);
            outputs<true><<<gp, THREADS>>>(x, k * gp, rp, part, out);
          } else {
            stats<false><<<gp, THREADS>>>(x, k * gp, part);
            outputs<false><<<gp, THREADS>>>(x, k * gp, rp, part, out);
          }
        }
      } else {
        for (long k = 0; k <= groups; k++) {
          const long ns = k < groups ? gp : 0, no = k > 0 ? gp : 0;
          if (p.hint) fused<true><<<ns + no, THREADS>>>(x, k * gp, ns, (k - 1) * gp, no, rp, part, out);
          else fused<false><<<ns + no, THREADS>>>(x, k * gp, ns, (k - 1) * gp, no, rp, part, out);
        }
      }
    }
    CHECK(cudaGetLastError());
  };
  // The reference: the two passes.
  run(plans[1], ref);
  CHECK(cudaDeviceSynchronize());
  std::vector<float> hr(n4 * 4), hy(n4 * 4);
  CHECK(cudaMemcpy(hr.data(), ref, n4 * 16, cudaMemcpyDeviceToHost));
  std::vector<double> diff(plans.size());
  for (size_t i = 2; i < plans.size(); i++) {
    CHECK(cudaMemset(y, 0xff, n4 * 16));
    run(plans[i], y);
    CHECK(cudaMemcpy(hy.data(), y, n4 * 16, cudaMemcpyDeviceToHost));
    double d = 0;
    for (long j = 0; j < n4 * 4; j++) d = std::max(d, (double)std::fabs(hy[j] - hr[j]) + (hy[j] != hy[j] ? 1e30 : 0));
    diff[i] = d;
  }
  const int rounds = 25;
  std::vector<std::vector<float>> ms(plans.size());
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int r = 0; r < rounds + 2; r++) {
    for (size_t i = 0; i < plans.size(); i++) {
      CHECK(cudaMemset(junk, r, 256l << 20));
      CHECK(cudaEventRecord(a));
      run(plans[i], y);
      CHECK(cudaEventRecord(b));
      CHECK(cudaEventSynchronize(b));
      float t;
      CHECK(cudaEventElapsedTime(&t, a, b));
      if (r >= 2) ms[i].push_back(t * 1000);
    }
  }
  printf("%ld rows of %ld MiB f32 (%ld MiB): plan, rows a group, median us, p20-p80, of the copy, max |diff| from two-pass\n", rows, rowBytes >> 20, (n4 * 16) >> 20);
  double copyMed = 0;
  for (size_t i = 0; i < plans.size(); i++) {
    auto& v = ms[i];
    std::sort(v.begin(), v.end());
    const double med = v[v.size() / 2], p20 = v[v.size() / 5], p80 = v[v.size() * 4 / 5];
    if (i == 0) copyMed = med;
    printf("  %-16s %3ld %9.2f %9.2f-%-9.2f %5.0f%%  %.3g\n", plans[i].name, plans[i].g, med, p20, p80, 100 * copyMed / med, diff[i]);
  }
  return 0;
}
