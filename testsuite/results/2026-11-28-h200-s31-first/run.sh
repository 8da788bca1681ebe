#!/bin/bash
# The thirty-first session's first call, on nvidia-h200-x4. bin/kgen at
# fac985d, bin/kgen-base at c01016d (before the window template, the
# row-reduce defaults for few short rows and Triton's small elementwise
# default).
#   GPU 0: before/after of the window instances and the 22 row launches on
#          cuda:sm_90 and hip:nvidia; then their files tested on all three
#          targets (correctness only, side by side).
#   GPU 1: before/after of the 22 row launches, mean_dim2_kb and the 9
#          elementwise launches on triton:sm_90; then kgen tune of Triton's
#          untuned instances (the thirtieth session's untuned.txt).
#   GPU 2: kgen tune of the window instances on cuda:sm_90, then CUDA's
#          untuned instances, resuming the thirtieth session's database.
#   GPU 3: the same on hip:nvidia.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
OUT=$FINAL/w
mkdir -p "$OUT"
DEADLINE=${DEADLINE:-530}
prev=testsuite/results/2026-11-28-h200-s30-third
W=dw_mobilenet,dw_s2_5x5,dw_small,dw_relu6_tiny,avgpool_3x3_p1,moving_average_kb,moving_average_small
R=add_rmsnorm_small,causal_small,cross_entropy_kb,dot_1m,dot_one,frobenius_kb,hinge_kb,instancenorm_small,l2_normalize_small,layernorm_3d_small,layernorm_small,log_softmax_small,mse_kb,mse_small,prod_rows_small,rmsnorm_small,scores_small,smooth_l1_kb,softmax_one_col,sum_all_1k,sum_rows_small,vector_norm_1m
T=mean_dim2_kb,elu_kb,gelu_kb,gelu_tanh_kb,hardswish_kb,leaky_relu_kb,mish_kb,roll_back,silu_kb,tanh_sigmoid_relu_kb
files="activations attention depthwise_conv l2norm layernorm log_softmax losses matvec norms pad_concat pooling reductions rmsnorm softmax transpose"
untuned() { grep "^$1: " $prev/untuned.txt | cut -d' ' -f2; }

tune() { # target gpu kernels
	local n d
	n=$(echo "$1" | tr ':' '_')
	d="$OUT/tune-$n"
	mkdir -p "$d"
	CUDA_VISIBLE_DEVICES=$2 OUT="$d" DB=$prev/tune-$n/tune.jsonl DEADLINE=$DEADLINE TARGET=$1 KERNELS=$3 \
		bash testsuite/gpu_tune_examples.sh > "$d/run.txt" 2>&1
}
tune cuda:sm_90 2 "$W,$(untuned cuda:sm_90)" &
tune hip:nvidia 3 "$W,$(untuned hip:nvidia)" &

(
	export CUDA_VISIBLE_DEVICES=1
	mkdir -p "$OUT/ba-triton"
	OUT="$OUT/ba-triton" BASELINE= TARGETS=triton:sm_90 KERNELS=$R,$T \
		sh testsuite/gpu_before_after.sh examples > "$OUT/ba-triton.txt" 2>&1
	tune triton:sm_90 1 "$(untuned triton:sm_90)"
) &

(
	export CUDA_VISIBLE_DEVICES=0
	mkdir -p "$OUT/ba-cuda-hip"
	OUT="$OUT/ba-cuda-hip" BASELINE= TARGETS=cuda:sm_90,hip:nvidia KERNELS=$W,$R \
		sh testsuite/gpu_before_after.sh examples > "$OUT/ba-cuda-hip.txt" 2>&1
	mkdir -p "$OUT/correct"
	for t in cuda:sm_90 hip:nvidia triton:sm_90; do
		( timeout -k 5 $((DEADLINE - SECONDS - 10)) ./bin/kgen test --target $t --kernel $W,$R,$T --seeds 3 \
			$(for f in $files; do echo examples/$f.kg; done) > "$OUT/correct/$(echo "$t" | tr ':' '_').log" 2>&1
		  echo "test $t: exit $?" >> "$OUT/correct/exits.txt" ) &
	done
	wait
) &
wait
echo "== table"
tail -45 "$OUT/ba-cuda-hip.txt"
tail -36 "$OUT/ba-triton.txt"
cat "$OUT/correct/exits.txt"; grep -h 'plans' "$OUT"/correct/*.log
for d in "$OUT"/tune-*; do echo "$d: $(grep -h '^kgen tune:' $d/run.txt)"; done
tar czf "$FINAL/s31-first.tgz" -C "$OUT" . && rm -rf "$OUT"
