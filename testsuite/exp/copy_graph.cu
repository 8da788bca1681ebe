// Experiment (session 24): kgen bench's same-size copy of 256 MiB + 256
// bytes (groupnorm_kb's) took 224.96 us under kgen's protocol, of 256 MiB
// (gelu_64m's) 181.79, while torch's copy_ took 184.64 and 181.70
// (testsuite/exp/copy_sizes.py). kgen's protocol times CUDA graphs: does
// a memcpy node of a byte count off a round size run slower than the
// same copy issued to a stream? Each sample: a 200 MiB memset (outside
// the events), then the copy, timed by events; the median of 50.
//   nvcc -O2 -o /tmp/copy_graph testsuite/exp/copy_graph.cu -lcuda && /tmp/copy_graph
#include <cuda.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <vector>

static float timeIt(bool graph, size_t n, char* src, char* dst, char* flush, cudaStream_t s) {
  cudaGraphExec_t exec = nullptr;
  if (graph) {
    cudaGraph_t g;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, s);
    cudaStreamEndCapture(s, &g);
    cudaGraphInstantiateWithFlags(&exec, g, 0);
    cudaGraphDestroy(g);
  }
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> ms;
  for (int i = 0; i < 55; i++) {
    cudaMemsetAsync(flush, i, 200 << 20, s);
    cudaEventRecord(a, s);
    if (graph)
      cudaGraphLaunch(exec, s);
    else
      cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, s);
    cudaEventRecord(b, s);
    cudaEventSynchronize(b);
    float t;
    cudaEventElapsedTime(&t, a, b);
    if (i >= 5) ms.push_back(t);
  }
  if (exec) cudaGraphExecDestroy(exec);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2] * 1000;
}

int main() {
  size_t base = 256u << 20;
  long extras[] = {0, 256, 512, 4096, 65536, 1 << 20, -256};
  char *src, *dst, *flush;
  cudaMalloc(&src, base + (2 << 20));
  cudaMalloc(&dst, base + (2 << 20));
  cudaMalloc(&flush, 200 << 20);
  cudaMemset(src, 1, base + (2 << 20));
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  for (long e : extras) {
    size_t n = base + e;
    float st = timeIt(false, n, src, dst, flush, s), gr = timeIt(true, n, src, dst, flush, s);
    printf("bytes %zu (256 MiB %+ld): stream %.2f us, graph %.2f us\n", n, e, st, gr);
  }
  cudaError_t err = cudaGetLastError();
  printf("last error: %s\n", cudaGetErrorString(err));
  return 0;
}
