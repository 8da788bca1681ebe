// Experiment (session 33; measured in three versions, each kept beside
// its output in testsuite/results/2026-12-06-h200-s33-resident/): can a
// normalization over rows too long for a
// block or a cluster read its input once? kgen computes groupnorm_kb
// (128 rows of 2 MiB: 16 x 8 groups of 8 x 256 x 256 f32) as a statistics
// launch that reads X, then an elementwise launch that reads X again and
// writes Y: three passes over 256 MiB against a copy's two (64% of the
// copy's bandwidth on the H200), and the L2 serves none of the second read
// (testsuite/exp/l2_reuse.cu). Here the rows are held on chip instead: one
// block a multiprocessor, launched cooperatively so that all are resident,
// each block keeps a 128 KiB piece of a row in shared memory (16 blocks a
// row, 8 rows a wave), adds up its piece's sum and sum of squares, waits
// at a barrier of the whole grid, reads its row's 16 partial sums, and
// writes its piece normalized from shared memory; 16 waves. Y = (X - mean)
// * rsqrt(var + 1e-5) per row, as groupnorm without its weights. Timed, in
// one program and 25 rounds interleaved after a 256 MiB memset that
// flushes the L2, by CUDA events around each plan:
//   copy       X to Y, the yardstick;
//   two-pass   kgen's plan: a block of 1024 threads a 128 KiB piece
//              (2048 blocks) writes its piece's partial sums, then an
//              elementwise launch reads each row's 16 partials and X;
//   resident   the persistent kernel above;
//   resident2  the same with two buffers of 64 KiB a block: the piece of
//              the next wave loads (cp.async) while the current one is
//              normalized and stored, so that the reads and the writes
//              overlap across the barrier;
//   clustered  a cluster of 16 blocks a row (non-portable), the partial
//              sums exchanged through distributed shared memory, the
//              clusters independent of one another (no grid barrier);
//   clustered2 the same with half of each piece in registers, two blocks
//              a multiprocessor;
//   clustered-two  clustered with a second cluster reduction a row (session
//              36), as kgen's mean-then-variance plan has: what does the
//              second barrier cost?
// The outputs of the six are compared with two-pass's (max |diff|).
//   nvcc -O3 -arch=sm_90 -o grid_resident testsuite/exp/grid_resident.cu && ./grid_resident
#include <algorithm>
#include <cmath>
#include <vector>
#include <cooperative_groups.h>
#include "common.cuh"
namespace cg = cooperative_groups;

constexpr long kRow = 512L * 1024;       // floats a row (2 MiB)
constexpr int kRows = 128;               // 256 MiB
constexpr int kPieces = 16;              // blocks a row
constexpr long kPiece = kRow / kPieces;  // 32768 floats, 128 KiB
constexpr int kThreads = 1024;

// The block's sums of each thread's (s, q), in thread 0; red is the
// block's scratch.
__device__ float2 block_sum2(float s, float q, float (*red)[32]) {
  for (int o = 16; o > 0; o /= 2) {
    s += __shfl_xor_sync(~0u, s, o);
    q += __shfl_xor_sync(~0u, q, o);
  }
  if (threadIdx.x % 32 == 0) {
    red[0][threadIdx.x / 32] = s;
    red[1][threadIdx.x / 32] = q;
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    s = red[0][threadIdx.x];
    q = red[1][threadIdx.x];
    for (int o = 16; o > 0; o /= 2) {
      s += __shfl_xor_sync(~0u, s, o);
      q += __shfl_xor_sync(~0u, q, o);
    }
  }
  return make_float2(s, q);
}

// The block's sums of each thread's (s, q), into part[2 * slot].
__device__ void block_sums(float s, float q, float* __restrict__ part, long slot) {
  __shared__ float red[2][32];
  float2 t = block_sum2(s, q, red);
  if (threadIdx.x == 0) {
    part[2 * slot] = t.x;
    part[2 * slot + 1] = t.y;
  }
  __syncthreads();
}

// A row's mean and 1 / sqrt(var + eps) from its sum and sum of squares.
__device__ float2 stats_of(float s, float q) {
  float mean = s / kRow;
  float var = fmaxf(q / kRow - mean * mean, 0.0f);
  return make_float2(mean, rsqrtf(var + 1e-5f));
}

// The same from the row's partial sums, pieces of them.
__device__ float2 row_stats(const float* __restrict__ part, long row, int pieces = kPieces) {
  float s = 0, q = 0;
  for (int p = 0; p < pieces; ++p) {
    s += part[2 * (row * pieces + p)];
    q += part[2 * (row * pieces + p) + 1];
  }
  return stats_of(s, q);
}

__global__ void __launch_bounds__(kThreads) partial_sums(const float4* __restrict__ x, float* __restrict__ part) {
  const float4* c = x + (long)blockIdx.x * (kPiece / 4);
  float s = 0, q = 0;
  for (long i = threadIdx.x; i < kPiece / 4; i += blockDim.x) {
    float4 v = c[i];
    s += v.x + v.y + v.z + v.w;
    q += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
  }
  block_sums(s, q, part, blockIdx.x);
}

__global__ void __launch_bounds__(256) apply(const float4* __restrict__ x, const float* __restrict__ part, float4* __restrict__ y) {
  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  long row = i * 4 / kRow;
  float2 st = row_stats(part, row);
  float4 v = x[i];
  y[i] = make_float4((v.x - st.x) * st.y, (v.y - st.x) * st.y, (v.z - st.x) * st.y, (v.w - st.x) * st.y);
}

__device__ __forceinline__ void cp_async16(void* dst, const void* src) {
  unsigned s = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src));
}
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory"); }

// One block a multiprocessor; block b takes piece b % (blocks / kPieces *
// kPieces) of the wave's rows, waves of blocks / kPieces rows.
__global__ void __launch_bounds__(kThreads) resident(const float4* __restrict__ x, float* __restrict__ part, float4* __restrict__ y) {
  extern __shared__ float4 buf[];
  const int rowsAWave = gridDim.x / kPieces;
  const int used = rowsAWave * kPieces;
  for (int wave = 0; wave * rowsAWave < kRows; ++wave) {
    long row = (long)wave * rowsAWave + blockIdx.x / kPieces;
    bool live = blockIdx.x < used && row < kRows;
    long piece = row * kPieces + blockIdx.x % kPieces;
    float s = 0, q = 0;
    if (live) {
      // A thread's 8 chunks of 16 bytes all in flight at once (the whole
      // piece: 128 KiB a multiprocessor), then stored and summed.
      const float4* c = x + piece * (kPiece / 4);
      float4 v[kPiece / 4 / kThreads];
#pragma unroll
      for (int k = 0; k < kPiece / 4 / kThreads; ++k) v[k] = c[threadIdx.x + k * kThreads];
#pragma unroll
      for (int k = 0; k < kPiece / 4 / kThreads; ++k) {
        buf[threadIdx.x + k * kThreads] = v[k];
        s += v[k].x + v[k].y + v[k].z + v[k].w;
        q += v[k].x * v[k].x + v[k].y * v[k].y + v[k].z * v[k].z + v[k].w * v[k].w;
      }
      block_sums(s, q, part, piece);
    }
    grid_barrier(gridDim.x);
    if (live) {
      float2 st = row_stats(part, row);
      float4* o = y + piece * (kPiece / 4);
#pragma unroll
      for (int k = 0; k < kPiece / 4 / kThreads; ++k) {
        float4 v = buf[threadIdx.x + k * kThreads];
        o[threadIdx.x + k * kThreads] = make_float4((v.x - st.x) * st.y, (v.y - st.x) * st.y, (v.z - st.x) * st.y, (v.w - st.x) * st.y);
      }
    }
    __syncthreads();
  }
}

// resident with two buffers of a 64 KiB piece each (32 blocks a row, 4
// rows a wave): the next wave's piece loads by cp.async into the other
// buffer while this wave's waits at the barrier and is normalized.
constexpr int kPieces2 = 32;
constexpr long kPiece2 = kRow / kPieces2;  // 16384 floats, 64 KiB
__global__ void __launch_bounds__(kThreads) resident2(const float4* __restrict__ x, float* __restrict__ part, float4* __restrict__ y) {
  extern __shared__ float4 buf[];
  const int rowsAWave = gridDim.x / kPieces2;
  const int used = rowsAWave * kPieces2;
  const int waves = (kRows + rowsAWave - 1) / rowsAWave;
  auto pieceOf = [&](int wave, long* row) {
    *row = (long)wave * rowsAWave + blockIdx.x / kPieces2;
    return *row * kPieces2 + blockIdx.x % kPieces2;
  };
  auto load = [&](int wave) {
    long row;
    long piece = pieceOf(wave, &row);
    if (blockIdx.x >= used || row >= kRows) return;
    float4* b = buf + (wave % 2) * (kPiece2 / 4);
    const float4* c = x + piece * (kPiece2 / 4);
    for (long i = threadIdx.x; i < kPiece2 / 4; i += blockDim.x) cp_async16(&b[i], &c[i]);
  };
  load(0);
  for (int wave = 0; wave < waves; ++wave) {
    long row;
    long piece = pieceOf(wave, &row);
    bool live = blockIdx.x < used && row < kRows;
    cp_async_wait_all();
    __syncthreads();
    float4* b = buf + (wave % 2) * (kPiece2 / 4);
    if (live) {
      float s = 0, q = 0;
      for (long i = threadIdx.x; i < kPiece2 / 4; i += blockDim.x) {
        float4 v = b[i];
        s += v.x + v.y + v.z + v.w;
        q += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
      }
      block_sums(s, q, part, piece);
    }
    if (wave + 1 < waves) load(wave + 1);  // in flight across the barrier and the stores
    grid_barrier(gridDim.x);
    if (live) {
      float2 st = row_stats(part, row, kPieces2);
      float4* o = y + piece * (kPiece2 / 4);
      for (long i = threadIdx.x; i < kPiece2 / 4; i += blockDim.x) {
        float4 v = b[i];
        o[i] = make_float4((v.x - st.x) * st.y, (v.y - st.x) * st.y, (v.z - st.x) * st.y, (v.w - st.x) * st.y);
      }
    }
  }
}

// Clusters of kPieces (16, a non-portable size) blocks a row instead of
// the whole grid: each block keeps its 128 KiB piece on chip, the
// cluster's blocks exchange their partial sums through distributed shared
// memory, and clusters take rows one after another independently, so that
// some load while others store; no grid barrier. R of a thread's 8 chunks
// stay in registers and the rest in shared memory: clustered (R = 0) takes
// a multiprocessor a block; clustered2 (R = 4, 64 KiB of shared memory,
// at most 32 registers a thread) two, so that one block's loads overlap
// the other's barrier and stores.
//
// Two (clustered-two) reduces the row twice, as kgen's plan for a mean and
// a variance does: the sum first, its mean, then each block's squares of
// the deviations from it (S2 - 2 m S1 + n m^2 of the block's own sums),
// two cluster barriers a row where the others have one.
template <int R, bool Two = false>
__global__ void __launch_bounds__(kThreads, R ? 2 : 1) clustered(const float4* __restrict__ x, float4* __restrict__ y) {
  constexpr int kChunks = kPiece / 4 / kThreads;  // 8 a thread
  extern __shared__ float4 buf[];
  __shared__ float2 mine[2];  // this block's (sum, sum of squares), by row parity
  __shared__ float2 stats;
  __shared__ float red[2][32];
  cg::cluster_group cl = cg::this_cluster();
  const int rank = (int)cl.block_rank();
  const int clusters = gridDim.x / kPieces;
  int n = 0;
  for (long row = blockIdx.x / kPieces; row < kRows; row += clusters, ++n) {
    const long piece = row * kPieces + rank;
    const float4* c = x + piece * (kPiece / 4);
    float4 v[kChunks];
#pragma unroll
    for (int k = 0; k < kChunks; ++k) v[k] = c[threadIdx.x + k * kThreads];
    float s = 0, q = 0;
#pragma unroll
    for (int k = 0; k < kChunks; ++k) {
      if (k >= R) buf[threadIdx.x + (k - R) * kThreads] = v[k];
      s += v[k].x + v[k].y + v[k].z + v[k].w;
      q += v[k].x * v[k].x + v[k].y * v[k].y + v[k].z * v[k].z + v[k].w * v[k].w;
    }
    const float2 t = block_sum2(s, q, red);
    if (threadIdx.x == 0) mine[n % 2] = Two ? make_float2(t.x, 0) : t;
    cl.sync();  // every block's partial sums of this row are in place
    if (threadIdx.x < 32) {
      float2 p = threadIdx.x < kPieces ? *cl.map_shared_rank(&mine[n % 2], threadIdx.x) : make_float2(0, 0);
      for (int o = 16; o > 0; o /= 2) {
        p.x += __shfl_xor_sync(~0u, p.x, o);
        p.y += __shfl_xor_sync(~0u, p.y, o);
      }
      if (threadIdx.x == 0) stats = stats_of(p.x, p.y);
    }
    __syncthreads();
    if (Two) {  // the second reduction: the block's squares of the deviations from the mean
      __shared__ float dev[2];
      const float m = stats.x;
      if (threadIdx.x == 0) dev[n % 2] = t.y - 2 * m * t.x + (float)kPiece * m * m;
      cl.sync();
      if (threadIdx.x < 32) {
        float d = threadIdx.x < kPieces ? *cl.map_shared_rank(&dev[n % 2], threadIdx.x) : 0.0f;
        for (int o = 16; o > 0; o /= 2) d += __shfl_xor_sync(~0u, d, o);
        if (threadIdx.x == 0) stats = make_float2(m, rsqrtf(fmaxf(d / kRow, 0.0f) + 1e-5f));
      }
      __syncthreads();
    }
    const float2 st = stats;
    float4* o = y + piece * (kPiece / 4);
#pragma unroll
    for (int k = 0; k < kChunks; ++k) {
      float4 w = k < R ? v[k] : buf[threadIdx.x + (k - R) * kThreads];
      o[threadIdx.x + k * kThreads] = make_float4((w.x - st.x) * st.y, (w.y - st.x) * st.y, (w.z - st.x) * st.y, (w.w - st.x) * st.y);
    }
    __syncthreads();  // the piece and stats are read before the next row's replace them
  }
  cl.sync();  // no block leaves while another may read its partial sums
}

int main() {
  const int sms = print_device();
  const long n4 = kRow * kRows / 4;
  const long flushBytes = 256L << 20;
  char* flush;
  float4 *x, *y, *ref;
  float* part;
  CHECK(cudaMalloc(&flush, flushBytes));
  CHECK(cudaMalloc(&x, n4 * 16));
  CHECK(cudaMalloc(&y, n4 * 16));
  CHECK(cudaMalloc(&ref, n4 * 16));
  CHECK(cudaMalloc(&part, 2L * kRows * kPieces2 * 4));
  std::vector<float> h(n4 * 4);
  for (size_t k = 0; k < h.size(); ++k) h[k] = (float)((k * 2654435761u) % 1000) / 1000.0f - 0.5f + (float)(k / kRow) * 0.01f;
  CHECK(cudaMemcpy(x, h.data(), n4 * 16, cudaMemcpyHostToDevice));
  const int smem1 = (int)(kPiece * 4), smem2 = (int)(2 * kPiece2 * 4);
  CHECK(cudaFuncSetAttribute(resident, cudaFuncAttributeMaxDynamicSharedMemorySize, smem1));
  CHECK(cudaFuncSetAttribute(resident2, cudaFuncAttributeMaxDynamicSharedMemorySize, smem2));
  int per1, per2;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per1, resident, kThreads, smem1));
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per2, resident2, kThreads, smem2));
  printf("resident: %d block(s) a multiprocessor, %d rows a wave; resident2: %d, %d rows a wave\n", per1, sms / kPieces, per2, sms / kPieces2);
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = kPieces;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cudaLaunchConfig_t lcs[3] = {};
  void* kernels[3] = {(void*)clustered<0>, (void*)clustered<4>, (void*)clustered<0, true>};
  for (int v = 0; v < 3; ++v) {
    const int smem = v == 1 ? smem1 / 2 : smem1;
    CHECK(cudaFuncSetAttribute(kernels[v], cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    CHECK(cudaFuncSetAttribute(kernels[v], cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    cudaLaunchConfig_t& lc = lcs[v];
    lc.blockDim = dim3(kThreads);
    lc.dynamicSmemBytes = smem;
    lc.attrs = attr;
    lc.numAttrs = 1;
    lc.gridDim = dim3(kPieces * 64);
    int clusters = 0;
    CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernels[v], &lc));
    cudaFuncAttributes fa;
    CHECK(cudaFuncGetAttributes(&fa, kernels[v]));
    lc.gridDim = dim3(kPieces * clusters);
    printf("clustered%s: %d clusters of %d at once, %d registers, %zu bytes of local memory\n", v == 1 ? "2" : v == 2 ? "-two" : "", clusters, kPieces, fa.numRegs, fa.localSizeBytes);
  }
  const char* names[] = {"copy", "two-pass (kgen)", "resident", "resident2", "clustered", "clustered2", "clustered-two"};
  const int plans = 7;
  std::vector<std::vector<float>> ts(plans);
  std::vector<float> diff(plans, 0);
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<float> got(n4 * 4), want(n4 * 4);
  for (int round = 0; round < 26; ++round) {
    for (int p = 0; p < plans; ++p) {
      float4* out = p == 1 ? ref : y;
      CHECK(cudaMemset(out, 0, n4 * 16));
      CHECK(cudaMemset(flush, round, flushBytes));
      CHECK(cudaEventRecord(a));
      if (p == 0) {
        copy<<<(n4 + 255) / 256, 256>>>(x, n4, out);
      } else if (p == 1) {
        partial_sums<<<kRows * kPieces, kThreads>>>(x, part);
        apply<<<n4 / 256, 256>>>(x, part, out);
      } else {
        void* args[] = {&x, &part, &out};
        if (p == 2) CHECK(cudaLaunchCooperativeKernel((void*)resident, sms, kThreads, args, smem1, 0));
        else if (p == 3) CHECK(cudaLaunchCooperativeKernel((void*)resident2, sms, kThreads, args, smem2, 0));
        else if (p == 4) CHECK(cudaLaunchKernelEx(&lcs[0], clustered<0>, (const float4*)x, out));
        else if (p == 5) CHECK(cudaLaunchKernelEx(&lcs[1], clustered<4>, (const float4*)x, out));
        else CHECK(cudaLaunchKernelEx(&lcs[2], clustered<0, true>, (const float4*)x, out));
      }
      CHECK(cudaEventRecord(b));
      CHECK(cudaEventSynchronize(b));
      float ms;
      CHECK(cudaEventElapsedTime(&ms, a, b));
      if (round > 0) ts[p].push_back(ms * 1000);
      if (round == 25 && p >= 1) {
        CHECK(cudaMemcpy(p == 1 ? want.data() : got.data(), out, n4 * 16, cudaMemcpyDeviceToHost));
        if (p >= 2)
          for (size_t k = 0; k < got.size(); ++k) diff[p] = std::max(diff[p], std::fabs(got[k] - want[k]));
      }
    }
  }
  printf("256 MiB: plan, median us, p20-p80, GB/s of X read + Y written, max |diff| from two-pass\n");
  for (int p = 0; p < plans; ++p) {
    auto& t = ts[p];
    std::sort(t.begin(), t.end());
    float med = t[t.size() / 2], p20 = t[t.size() / 5], p80 = t[t.size() * 4 / 5];
    printf("  %-16s %9.2f  %9.2f-%-9.2f %6.0f  %g\n", names[p], med, p20, p80, 2.0 * n4 * 16 / med / 1e3, diff[p]);
  }
  return 0;
}
