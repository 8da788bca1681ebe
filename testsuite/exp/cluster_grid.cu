// Experiment (session 35): what holds kgen's rows staged across clusters
// of 16 blocks (STAGE=1, CLUSTER=16) at 400 us over center_2m (128 rows of
// 2 MiB f32, testsuite/cluster_rows.kg) when the hand-written clusters of
// testsuite/exp/grid_resident.cu take 225? The hand version launches only
// the clusters that fit at once (7 on the H100) and loops them over the
// rows; kgen's grid is a cluster a row (128 clusters of 16), so that a
// cluster launches, loads, reduces, stores and leaves 128 times. Here
// kgen's own kernel, included from the CUDA that kgen emitted (GEN), is
// timed both ways: its row loop strides by the clusters launched, so any
// grid of whole clusters computes every row. KERNEL is any f32 kernel of
// one input X[KROWS, KROW] and one output Y of its shape, launched by
// clusters of KCLUSTER blocks of KTHREADS threads with KSMEM bytes of
// dynamic shared memory (the manifest's figures); CENTER checks row 0
// against the host as center's.
//   kgen build --emit-only --db off --target cuda:sm_90 -o gen \
//     --config row-reduce.STAGE=1,row-reduce.CLUSTER=16,row-reduce.PREFETCH=0,row-reduce.THREADS=1024 \
//     testsuite/cluster_rows.kg
//   nvcc -O3 -arch=sm_90 -Igen -DGEN='"cluster_rows.cu"' -DKERNEL=center_2m -DCENTER \
//     -DKROWS=128 -DKROW=524288 -DKCLUSTER=16 -DKTHREADS=1024 -DKSMEM=131088 \
//     -o cluster_grid testsuite/exp/cluster_grid.cu && ./cluster_grid
// Timed in 25 rounds interleaved, each after a 256 MiB memset that flushes
// the L2, by CUDA events: the copy of X to Y; the kernel a cluster a row;
// the kernel with the clusters that fit at once. The two launches' outputs
// are compared (they must be identical, bit for bit).
#include <algorithm>
#include <cmath>
#include <vector>
#include GEN
#include "common.cuh"

constexpr long kRow = KROW;
constexpr int kRows = KROWS;
constexpr int kCluster = KCLUSTER;
constexpr int kSmem = KSMEM;
#define STR2(x) #x
#define STR(x) STR2(x)

int main() {
  print_device();
  const long n = kRow * kRows;
  const long flushBytes = 256L << 20;
  char* flush;
  float *x, *y, *ref;
  CHECK(cudaMalloc(&flush, flushBytes));
  CHECK(cudaMalloc(&x, n * 4));
  CHECK(cudaMalloc(&y, n * 4));
  CHECK(cudaMalloc(&ref, n * 4));
  std::vector<float> h(n);
  for (long k = 0; k < n; ++k) h[k] = (float)((k * 2654435761u) % 1000) / 1000.0f - 0.5f + (float)(k / kRow) * 0.01f;
  CHECK(cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice));
  CHECK(cudaFuncSetAttribute(KERNEL, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  CHECK(cudaFuncSetAttribute(KERNEL, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  cudaLaunchConfig_t lc = {};
  lc.gridDim = dim3(kCluster * kRows);
  lc.blockDim = dim3(KTHREADS);
  lc.dynamicSmemBytes = kSmem;
  int clusters = 0;
  CHECK(cudaOccupancyMaxActiveClusters(&clusters, (void*)KERNEL, &lc));
  cudaFuncAttributes fa;
  CHECK(cudaFuncGetAttributes(&fa, KERNEL));
  printf("" STR(KERNEL) ", %d threads: %d clusters of %d at once, %d registers, %zu bytes of local memory\n", KTHREADS, clusters, kCluster, fa.numRegs, fa.localSizeBytes);
  const int grids[2] = {kCluster * kRows, kCluster * clusters};
  const char* names[] = {"copy", "a cluster a row", "clusters at once"};
  const int plans = 3;
  std::vector<std::vector<float>> ts(plans);
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int round = 0; round < 26; ++round) {
    for (int p = 0; p < plans; ++p) {
      float* out = p == 1 ? ref : y;
      CHECK(cudaMemset(out, 0, n * 4));
      CHECK(cudaMemset(flush, round, flushBytes));
      CHECK(cudaEventRecord(a));
      if (p == 0) copy<<<n / 4 / 256, 256>>>((const float4*)x, n / 4, (float4*)out);
      else KERNEL<<<grids[p - 1], KTHREADS, kSmem>>>(x, out);
      CHECK(cudaGetLastError());
      CHECK(cudaEventRecord(b));
      CHECK(cudaEventSynchronize(b));
      float ms;
      CHECK(cudaEventElapsedTime(&ms, a, b));
      if (round > 0) ts[p].push_back(ms * 1000);
    }
  }
  std::vector<float> got(n), want(n);
  CHECK(cudaMemcpy(want.data(), ref, n * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(got.data(), y, n * 4, cudaMemcpyDeviceToHost));
  long differ = 0;
  for (long k = 0; k < n; ++k) differ += memcmp(&got[k], &want[k], 4) != 0;
  double err = NAN;
#ifdef CENTER
  // Row 0 against the host, in double.
  double s = 0, q = 0;
  for (long k = 0; k < kRow; ++k) s += h[k];
  const double mean = s / kRow;
  for (long k = 0; k < kRow; ++k) q += (h[k] - mean) * (h[k] - mean);
  const double inv = 1 / std::sqrt(q / kRow + 1e-5);
  err = 0;
  for (long k = 0; k < kRow; ++k) err = std::max(err, std::fabs(got[k] - (h[k] - mean) * inv));
#endif
  printf("%ld MiB: plan, median us, p20-p80, GB/s of X read + Y written (outputs of the two grids differing: %ld; row 0's max |error|: %.3g)\n", n * 4 >> 20, differ, err);
  for (int p = 0; p < plans; ++p) {
    auto& t = ts[p];
    std::sort(t.begin(), t.end());
    float med = t[t.size() / 2], p20 = t[t.size() / 5], p80 = t[t.size() * 4 / 5];
    printf("  %-18s %9.2f  %9.2f-%-9.2f %6.0f\n", names[p], med, p20, p80, 2.0 * n * 4 / med / 1e3);
  }
  return 0;
}
