#!/bin/bash
# The thirtieth session's second call, on nvidia-h200-x4. bin/kgen at
# d943a33 (the elementwise default of one vector a step for small
# launches, and TimeShortAsGraphs), bin/kgen-base at 52e6c65 (before the
# default's change, with the probe).
#   GPU 0: the 24 launches whose default changed, before and after, on
#          cuda:sm_90 and hip:nvidia; their files tested on cuda:sm_90
#          and hip:nvidia; log_softmax.kg under specials on triton:sm_90.
#   GPUs 1, 2, 3: kgen tune of testsuite/other-instances.txt resumed from
#          the first call's databases, one target a GPU, until DEADLINE.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
OUT=$FINAL/w
mkdir -p "$OUT"
DEADLINE=${DEADLINE:-540}
prev=testsuite/results/2026-11-28-h200-s30-first
others=$(grep -v '^#' testsuite/other-instances.txt)
for t in cuda:sm_90 triton:sm_90 hip:nvidia; do
	n=$(echo "$t" | tr ':' '_')
	d="$OUT/tune-$n"
	mkdir -p "$d"
	case $t in cuda*) g=1 ;; triton*) g=2 ;; hip*) g=3 ;; esac
	CUDA_VISIBLE_DEVICES=$g OUT="$d" DB=$prev/tune-$n/tune.jsonl DEADLINE=$DEADLINE TARGET=$t KERNELS=$others \
		bash testsuite/gpu_tune_examples.sh > "$d/run.txt" 2>&1 &
done

(
	export CUDA_VISIBLE_DEVICES=0
	mkdir -p "$OUT/small-default"
	OUT="$OUT/small-default" KGENS="kgen-base kgen" BASELINE= TARGETS=cuda:sm_90,hip:nvidia KERNELS=batchnorm_small,bucketize_small,causal_mask_small,chain_small,concat_small,elu_kb,exp2_log2_sign_small,gelu_kb,gelu_small,gelu_tanh_kb,groupnorm_small,hardswish_kb,leaky_relu_kb,masked_fill_zero,mish_kb,pad2d_none,pad2d_small,quantize_small,relu_i32_small,roll_back,roll_small,silu_kb,tanh_sigmoid_relu_kb,tile_rows_small \
		sh testsuite/gpu_before_after.sh examples > "$OUT/small-default.txt" 2>&1
	mkdir -p "$OUT/correct"
	for t in cuda:sm_90 hip:nvidia; do
		./bin/kgen test --target $t --kernel batchnorm_small,bucketize_small,causal_mask_small,chain_small,concat_small,elu_kb,exp2_log2_sign_small,gelu_kb,gelu_small,gelu_tanh_kb,groupnorm_small,hardswish_kb,leaky_relu_kb,masked_fill_zero,mish_kb,pad2d_none,pad2d_small,quantize_small,relu_i32_small,roll_back,roll_small,silu_kb,tanh_sigmoid_relu_kb,tile_rows_small --seeds 3 examples/{activations,elementwise,masked,norms,pad_concat,quantize,transpose}.kg > "$OUT/correct/$(echo "$t" | tr ':' '_').log" 2>&1
		echo "test $t: exit $?" >> "$OUT/correct/exits.txt"
	done
	timeout -k 5 $((DEADLINE - SECONDS - 10)) ./bin/kgen test --target triton:sm_90 --dists specials --seeds 1 --max-work 3e7 examples/log_softmax.kg > "$OUT/specials-log_softmax.log" 2>&1
	echo "specials log_softmax: exit $?" >> "$OUT/correct/exits.txt"
) &
wait
echo "== table"
tail -30 "$OUT/small-default.txt"
cat "$OUT/correct/exits.txt"; grep -h 'plans' "$OUT"/correct/*.log "$OUT/specials-log_softmax.log"
for d in "$OUT"/tune-*; do echo "$d: $(grep -h '^kgen tune:' $d/run.txt)"; done
tar czf "$FINAL/s30-second.tgz" -C "$OUT" . && rm -rf "$OUT"
