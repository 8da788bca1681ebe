// What the experiments' programs share: CHECK, a device line, and the
// copy that is their yardstick.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

// Prints the GPU's name, multiprocessors and L2, and returns the
// multiprocessors.
inline int print_device() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("%s, %d SMs, L2 %d MiB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);
  return prop.multiProcessorCount;
}

// y = x, a float4 a thread.
__global__ void copy(const float4* __restrict__ x, long n4, float4* __restrict__ y) {
  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) y[i] = x[i];
}

// A barrier of the whole grid (every block resident: a cooperative
// launch): a counter and a generation, thread 0 of each block.
__device__ unsigned int g_count;
__device__ unsigned int g_gen;
__device__ void grid_barrier(unsigned int blocks) {
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned int gen = atomicAdd(&g_gen, 0);
    __threadfence();
    if (atomicAdd(&g_count, 1) == blocks - 1) {
      atomicExch(&g_count, 0);
      __threadfence();
      atomicAdd(&g_gen, 1);
    } else {
      while (atomicAdd(&g_gen, 0) == gen) __nanosleep(32);
    }
    __threadfence();
  }
  __syncthreads();
}
