#!/bin/bash
# The fortieth session's call, cuda:sm_90: the thirty-ninth session's call
# (never run: no machine could be started), widened.
# bin/kgen is main at b152455: (a) a split row's loads read a chunk at a
# time, each row's alignment checked (chunkLoads, kg_pvec); (b) the stores
# written as a cast of a chunk's first address (tensor-core and SIMT matmul
# epilogues, transposes, column groups, a cached row's outputs) indexed as
# vectors (vecAt). bin/kgen-base is main before them (12cb7cb).
# bin/kgen-sv is branch s38-stores-vec on b152455: a staged row's outputs
# written as its copy reads it.
#  1. kgen test of the files whose loads changed;
#  2. kgen-base and kgen timed on the changed kernels and kb_matvec_nominal
#     (changed by neither: the control), kgen with PyTorch eager beside it;
#  3. testsuite/exp/l2_pipeline.cu (a normalization's rows in groups
#     whose second read the L2 may serve);
#  4. bin/kgen-rw (branch s40-rowregs: a window's rows up to 80 registers,
#     so that dw_s2_5x5 reads them as vectors of 4) on the depthwise
#     convolutions, tested, then timed against kgen; and
#     testsuite/exp/dw_waves.kg, dw_s2_5x5 over 4 to 16 images (0.74 to
#     2.97 waves);
#  5. kgen and kgen-sv on the staged rows, kgen-sv tested first;
#  6. softmax_vocab staged across clusters (testsuite/sweep-vocab-clusters.txt);
#  7. kgen test of the files whose stores changed.
# Results go straight to $OUT, most needed first; the call's limit may cut
# the last steps.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
W=${OUT:-/tmp/out}
mkdir -p "$W/correct" "$W/time"
t() { # name, timeout, kgen, args...
	local n=$1 s=$2 k=$3
	shift 3
	timeout -k 5 "$s" ./bin/$k test --target cuda:sm_90 --seeds 3 "$@" > "$W/correct/$n.log" 2>&1
	echo "test $n ($k): exit $? $(grep -E 'passed' "$W/correct/$n.log" | tail -1)"
}
b() { # name, timeout, kgen, kernels, args...
	local n=$1 s=$2 k=$3 ks=$4
	shift 4
	timeout -k 5 "$s" ./bin/$k bench --target cuda:sm_90 --kernel "$ks" --json "$W/time/$n.json" "$@" > "$W/time/$n.log" 2>&1
	echo "bench $n ($k): exit $?"
}
t chunks 35 kgen examples/l2norm.kg examples/matvec.kg examples/reductions.kg backends/cuda/testdata/rows.kg
K=frobenius_kb,dot_1m,sum_all_1k,vector_norm_1m,gemv_8k,rmsnorm_features_kb,transpose_last2_kb,softmax_dim1_big,matmul_bf16_4k,gemm_bias_relu_4k,matmul_f16_8k,kb_matmul_bf16_4k,conv1x1_nhwc_mbv2,kb_matvec_nominal
F="examples/l2norm.kg examples/matvec.kg examples/reductions.kg examples/rmsnorm.kg examples/transpose.kg examples/softmax.kg examples/matmul_lowp.kg examples/fused_gemm.kg examples/conv1x1.kg testsuite/kernelbench/level1.kg"
b kgen-base 110 kgen-base "$K" $F
b kgen 140 kgen "$K" --baseline eager $F
./bin/kgen bench --compare "$W/time/kgen-base.json" "$W/time/kgen.json" > "$W/time/compare-kgen.txt" 2>&1
echo "== kgen-base against kgen"
grep -hE "^[a-z]" "$W/time/compare-kgen.txt" | grep -v "^old:\|^new:\|^noise:\|^instance" | cut -c1-120
grep -E "matmul_bf16_4k|gemm_bias_relu_4k|matmul_f16_8k|conv1x1_nhwc|eager" "$W/time/kgen.log" | cut -c1-200
nvcc -O3 -arch=sm_90 -o "$W/l2_pipeline" testsuite/exp/l2_pipeline.cu > "$W/l2_pipeline.log" 2>&1 && timeout 90 "$W/l2_pipeline" > "$W/l2_pipeline.txt" 2>&1
echo "== l2_pipeline: exit $?"; cat "$W/l2_pipeline.txt"; rm -f "$W/l2_pipeline"
t dw-rw 40 kgen-rw examples/depthwise_conv.kg
b dw-main 30 kgen dw_s2_5x5,dw_mobilenet examples/depthwise_conv.kg
b dw-rw 30 kgen-rw dw_s2_5x5,dw_mobilenet examples/depthwise_conv.kg
b dw-rw128 30 kgen-rw dw_s2_5x5 --config THREADS=128,UNROLL=1,VEC=4 examples/depthwise_conv.kg
./bin/kgen bench --compare "$W/time/dw-main.json" "$W/time/dw-rw.json" > "$W/time/compare-dw.txt" 2>&1
echo "== kgen against kgen-rw"
grep -hE "^[a-z]" "$W/time/compare-dw.txt" | grep -v "^old:\|^new:\|^noise:\|^instance" | cut -c1-120
grep -h "^dw_s2_5x5" "$W/time/dw-rw128.log" | cut -c1-160
b dw-waves 60 kgen dw_n4,dw_n5,dw_n6,dw_n8,dw_n10,dw_n11,dw_n12,dw_n16 testsuite/exp/dw_waves.kg
grep -hE "^dw_n" "$W/time/dw-waves.log" | cut -c1-150
S=softmax_vocab,kb_softmax_wide,softmax_256k,center_2m
G="examples/softmax.kg testsuite/kernelbench/level1.kg testsuite/cluster_rows.kg"
t staged-sv 60 kgen-sv testsuite/cluster_rows.kg
b main-rows 50 kgen "$S" $G
b sv-rows 50 kgen-sv "$S" $G
./bin/kgen bench --compare "$W/time/main-rows.json" "$W/time/sv-rows.json" > "$W/time/compare-sv.txt" 2>&1
echo "== kgen against kgen-sv"
grep -hE "^[a-z]" "$W/time/compare-sv.txt" | grep -v "^old:\|^new:\|^noise:\|^instance" | cut -c1-120
OUT="$W/sweep" bash testsuite/gpu_sweep.sh testsuite/sweep-vocab-clusters.txt | cut -c1-160
t epilogues 60 kgen examples/matmul.kg examples/fused_gemm.kg examples/matmul_lowp.kg examples/attention.kg examples/conv1x1.kg
t groups 30 kgen examples/transpose.kg examples/rmsnorm.kg examples/softmax.kg
