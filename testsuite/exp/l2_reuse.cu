// Experiment (session 32; measured as first written, in
// testsuite/results/2026-11-28-h200-s32-first/l2/; since then only its
// block sums share one function, and its CHECK, device line and copy come
// from common.cuh): how much of a reduce-then-apply plan's second
// read can the L2 serve? kgen computes frobenius_kb (Y = X / ||X||, X of
// 4096 x 4096 f32, 64 MiB) as a reduction of 256 chunks of X, a block a
// chunk, then an elementwise launch that reads X again in order: 3 x 64
// MiB through memory against a copy's 2, and the H200's L2 (about 50-60
// MiB) holds most of X when the second launch starts, but its first
// blocks read X's head, which the reduction read first and the L2 has
// dropped. This times, in one program, the reduction and the scaling of
// X in several orders:
//   chunked  the reduction as kgen's: block b reads chunk b (of 256);
//   swept    the reduction grid-stride: all blocks sweep X from its head
//            to its tail together, so that the L2 ends holding the tail;
//   fwd/rev  the scaling from X's head, or from its tail backwards;
//   cs       the scaling's stores with st.global.cs (evict-first), so
//            that the output it writes does not evict the X it has yet
//            to read.
// Each plan's two launches are timed together by CUDA events after a 256
// MiB memset that flushes the L2, 25 rounds interleaved; the median and
// p20-p80 of each, at 64 MiB (frobenius_kb) and 256 MiB (layernorm_3d_kb,
// groupnorm_kb: one row of statistics per 16 MiB or 2 MiB). A copy of the
// same bytes (X to Y) is the yardstick.
//   nvcc -O3 -arch=sm_90 -o l2_reuse testsuite/exp/l2_reuse.cu && ./l2_reuse
#include <algorithm>
#include <vector>
#include "common.cuh"

// The block's sum of each thread's s, into part[blockIdx.x].
__device__ void block_sum(float s, float* __restrict__ part) {
  __shared__ float red[32];
  for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(~0u, s, o);
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x < 32) {
    s = threadIdx.x < blockDim.x / 32 ? red[threadIdx.x] : 0;
    for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(~0u, s, o);
    if (threadIdx.x == 0) part[blockIdx.x] = s;
  }
}

// Sum of squares of chunk blockIdx.x (n4 float4s in chunks of n4/gridDim.x).
__global__ void __launch_bounds__(1024) reduce_chunked(const float4* __restrict__ x, long n4, float* __restrict__ part) {
  long per = n4 / gridDim.x;
  const float4* c = x + (long)blockIdx.x * per;
  float s = 0;
  for (long i = threadIdx.x; i < per; i += blockDim.x) {
    float4 v = c[i];
    s += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
  }
  block_sum(s, part);
}

// The same sum, every block striding over all of x.
__global__ void __launch_bounds__(1024) reduce_swept(const float4* __restrict__ x, long n4, float* __restrict__ part) {
  float s = 0;
  for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += (long)gridDim.x * blockDim.x) {
    float4 v = x[i];
    s += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
  }
  block_sum(s, part);
}

__global__ void finish(const float* __restrict__ part, int n, float* __restrict__ norm) {
  float s = 0;
  for (int i = threadIdx.x; i < n; i += 32) s += part[i];
  for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(~0u, s, o);
  if (threadIdx.x == 0) *norm = sqrtf(s);
}

// y = x / norm, two float4s a thread a block apart (kgen's VEC 4, UNROLL 2),
// blocks from x's head (rev 0) or its tail (rev 1); cs: evict-first stores.
template <bool rev, bool cs>
__global__ void __launch_bounds__(256) scale(const float4* __restrict__ x, long n4, const float* __restrict__ norm, float4* __restrict__ y) {
  long b = rev ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
  float r = 1.0f / *norm;
  float4 v[2];
  long i[2];
#pragma unroll
  for (int u = 0; u < 2; ++u) {
    i[u] = b * blockDim.x * 2 + u * blockDim.x + threadIdx.x;
    if (i[u] < n4) v[u] = x[i[u]];
  }
#pragma unroll
  for (int u = 0; u < 2; ++u) {
    if (i[u] < n4) {
      float4 o = make_float4(v[u].x * r, v[u].y * r, v[u].z * r, v[u].w * r);
      if (cs) __stcs(&y[i[u]], o); else y[i[u]] = o;
    }
  }
}

int main() {
  const int sms = print_device();
  const long flushBytes = 256L << 20;
  char* flush;
  CHECK(cudaMalloc(&flush, flushBytes));
  for (long mib : {64L, 256L}) {
    long n4 = (mib << 20) / 16;
    float4 *x, *y;
    float *part, *norm;
    CHECK(cudaMalloc(&x, n4 * 16));
    CHECK(cudaMalloc(&y, n4 * 16));
    CHECK(cudaMalloc(&part, 4096 * 4));
    CHECK(cudaMalloc(&norm, 4));
    std::vector<float> h(n4 * 4);
    for (size_t k = 0; k < h.size(); ++k) h[k] = (float)((k * 2654435761u) % 1000) / 1000.0f - 0.5f;
    CHECK(cudaMemcpy(x, h.data(), n4 * 16, cudaMemcpyHostToDevice));
    const int chunks = 256, swept = 2 * sms;
    const int sblocks = (int)((n4 + 511) / 512);
    struct Plan { const char* name; int kind; };
    // kind: 0 copy; 1 chunked+fwd; 2 chunked+rev; 3 swept+fwd; 4 swept+rev; 5 swept+rev+cs; 6 chunked+rev+cs
    std::vector<Plan> plans = {{"copy", 0}, {"chunked fwd (kgen)", 1}, {"chunked rev", 2}, {"swept fwd", 3}, {"swept rev", 4}, {"swept rev cs", 5}, {"chunked rev cs", 6}};
    std::vector<std::vector<float>> ts(plans.size());
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<float> check(plans.size());
    for (int round = 0; round < 26; ++round) {
      for (size_t p = 0; p < plans.size(); ++p) {
        CHECK(cudaMemset(flush, round, flushBytes));
        CHECK(cudaMemset(y, 0, n4 * 16));
        CHECK(cudaMemset(flush, round + 1, flushBytes));
        CHECK(cudaEventRecord(a));
        int k = plans[p].kind;
        if (k == 0) {
          copy<<<(n4 + 255) / 256, 256>>>(x, n4, y);
        } else {
          bool sw = k == 3 || k == 4 || k == 5;
          if (sw) reduce_swept<<<swept, 1024>>>(x, n4, part); else reduce_chunked<<<chunks, 1024>>>(x, n4, part);
          finish<<<1, 32>>>(part, sw ? swept : chunks, norm);
          if (k == 1 || k == 3) scale<false, false><<<sblocks, 256>>>(x, n4, norm, y);
          else if (k == 2 || k == 4) scale<true, false><<<sblocks, 256>>>(x, n4, norm, y);
          else scale<true, true><<<sblocks, 256>>>(x, n4, norm, y);
        }
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        if (round > 0) ts[p].push_back(ms * 1000);
        float last;
        CHECK(cudaMemcpy(&last, (float*)y + n4 * 4 - 1, 4, cudaMemcpyDeviceToHost));
        check[p] = last;
      }
    }
    printf("%ld MiB: plan, median us, p20-p80, GB/s of X read + Y written, last output\n", mib);
    for (size_t p = 0; p < plans.size(); ++p) {
      auto& t = ts[p];
      std::sort(t.begin(), t.end());
      float med = t[t.size() / 2], p20 = t[t.size() / 5], p80 = t[t.size() * 4 / 5];
      printf("  %-20s %9.2f  %9.2f-%-9.2f %6.0f  %g\n", plans[p].name, med, p20, p80, 2.0 * n4 * 16 / med / 1e3, check[p]);
    }
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
    CHECK(cudaFree(part));
    CHECK(cudaFree(norm));
  }
  return 0;
}
