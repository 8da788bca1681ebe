#!/bin/bash
# Experiment (session 29): do the row-reduce kernels lose time to loading
# their rows through the non-coherent path? kgen's CUDA declares inputs
# `const T* __restrict__`, so nvcc loads them with LDG.E.128.CONSTANT
# (ld.global.nc); Triton's programs load with plain ld.global.v4, and
# Triton's layernorm_bf16_llm took 39.55 us against CUDA's 45.86 on the
# H200 with the same registers (40), the same loads and the same two block
# reductions in its SASS (testsuite/results/2026-11-28-h200-s28-registers/,
# -s29-maxnan/). This times kgen's own kernels for layernorm_bf16_llm and
# rmsnorm_bf16_llama (bf16 rows of 4096, 8192 rows) as emitted and with
# `__restrict__` dropped from their pointers (plain loads), in one
# program: 21 rounds of A B, each launch after a 256 MiB memset that
# flushes the L2, timed by CUDA events; the median and p20-p80 of each.
# Build bin/kgen first.
#   testsuite/exp/nc_loads.sh [OUTDIR]
set -eu
export PATH="/usr/local/cuda/bin:$PATH"
out=${1:-${OUT:-/tmp/out}/nc_loads}
mkdir -p "$out"
./bin/kgen build --target cuda:sm_90 --emit-only -o "$out" examples/layernorm.kg examples/rmsnorm.kg

# kernel FILE NAME: the emitted kernel NAME of FILE, from its comment to
# its closing brace.
kernel() { awk -v k="// $2:" 'index($0, k) == 1 {on = 1} on {print} on && /^}/ {exit}' "$1"; }
# prelude FILE: FILE up to its first kernel's comment.
prelude() { awk '/^\/\/ [a-z_0-9]+: launch [0-9]+ of [0-9]+, template/ {exit} {print}' "$1"; }
# plain: the kernel renamed NAME_plain, its pointers without __restrict__
# (with the output's kept, nvcc still proves the inputs read-only and
# loads them through the non-coherent path).
plain() { sed -e "s/void __launch_bounds__(\([0-9]*\)) \([a-z_0-9]*\)(/void __launch_bounds__(\1) \2_plain(/" -e 's/\* __restrict__/*/'; }

src="$out/nc_loads.cu"
{
	prelude "$out/layernorm.cu"
	for k in "layernorm.cu layernorm_bf16_llm" "rmsnorm.cu rmsnorm_bf16_llama"; do
		set -- $k
		kernel "$out/$1" "$2"
		kernel "$out/$1" "$2" | plain
	done
	cat <<'EOF'

#include <algorithm>
#include <cstdio>
#include <vector>

__global__ void kg_fill(__nv_bfloat16* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    p[i] = __float2bfloat16((float)(h & 0xffff) / 32768.0f - 1.0f);
  }
}

typedef void (*launch_t)(void**);
static void* args_ln[4];
static void* args_rms[3];
static void ln(void**) { layernorm_bf16_llm<<<8192, 256>>>((const __nv_bfloat16*)args_ln[0], (const __nv_bfloat16*)args_ln[1], (const __nv_bfloat16*)args_ln[2], (__nv_bfloat16*)args_ln[3]); }
static void lnp(void**) { layernorm_bf16_llm_plain<<<8192, 256>>>((const __nv_bfloat16*)args_ln[0], (const __nv_bfloat16*)args_ln[1], (const __nv_bfloat16*)args_ln[2], (__nv_bfloat16*)args_ln[3]); }
static void rms(void**) { rmsnorm_bf16_llama<<<8192, 256>>>((const __nv_bfloat16*)args_rms[0], (const __nv_bfloat16*)args_rms[1], (__nv_bfloat16*)args_rms[2]); }
static void rmsp(void**) { rmsnorm_bf16_llama_plain<<<8192, 256>>>((const __nv_bfloat16*)args_rms[0], (const __nv_bfloat16*)args_rms[1], (__nv_bfloat16*)args_rms[2]); }

int main() {
  const size_t R = 8192, D = 4096;
  __nv_bfloat16 *x, *g, *b, *y;
  char* flush;
  cudaMalloc(&x, R * D * 2); cudaMalloc(&y, R * D * 2); cudaMalloc(&g, D * 2); cudaMalloc(&b, D * 2);
  cudaMalloc(&flush, 256 << 20);
  kg_fill<<<1024, 256>>>(x, R * D, 1); kg_fill<<<16, 256>>>(g, D, 2); kg_fill<<<16, 256>>>(b, D, 3);
  args_ln[0] = x; args_ln[1] = g; args_ln[2] = b; args_ln[3] = y;
  args_rms[0] = x; args_rms[1] = g; args_rms[2] = y;
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0); cudaEventCreate(&e1);
  struct { const char* name; launch_t f; } ks[] = {{"layernorm_bf16_llm", ln}, {"layernorm_bf16_llm_plain", lnp}, {"rmsnorm_bf16_llama", rms}, {"rmsnorm_bf16_llama_plain", rmsp}};
  std::vector<float> t[4];
  for (int round = 0; round < 23; round++) {
    for (int k = 0; k < 4; k++) {
      cudaMemsetAsync(flush, round + k, 256 << 20);
      cudaEventRecord(e0);
      ks[k].f(nullptr);
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      float ms;
      cudaEventElapsedTime(&ms, e0, e1);
      if (round >= 2) t[k].push_back(ms * 1000);
    }
  }
  if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) { printf("CUDA error: %s\n", cudaGetErrorString(err)); return 1; }
  // The plain kernels must write what the emitted ones do.
  std::vector<__nv_bfloat16> ya(R * D), yb(R * D);
  for (int pair = 0; pair < 2; pair++) {
    ks[2 * pair].f(nullptr); cudaMemcpy(ya.data(), y, R * D * 2, cudaMemcpyDeviceToHost);
    ks[2 * pair + 1].f(nullptr); cudaMemcpy(yb.data(), y, R * D * 2, cudaMemcpyDeviceToHost);
    if (memcmp(ya.data(), yb.data(), R * D * 2) != 0) { printf("%s: the plain kernel's output differs\n", ks[2 * pair].name); return 1; }
  }
  printf("%-26s %9s %9s %9s  (us, 21 samples each, interleaved, L2 flushed before each)\n", "kernel", "median", "p20", "p80");
  for (int k = 0; k < 4; k++) {
    std::sort(t[k].begin(), t[k].end());
    size_t n = t[k].size();
    printf("%-26s %9.2f %9.2f %9.2f\n", ks[k].name, t[k][n / 2], t[k][n / 5], t[k][4 * n / 5]);
  }
  return 0;
}
EOF
} > "$src"
nvcc -O3 -std=c++17 -arch=sm_90 -o "$out/nc_loads" "$src"
cuobjdump -sass "$out/nc_loads" | grep -E 'Function|LDG' | grep -oE 'Function : [a-z_0-9]+|LDG[.A-Z0-9]*' | uniq -c > "$out/loads.txt" || true
"$out/nc_loads" | tee "$out/times.txt"
