#!/bin/bash
# The thirty-first session's third call, on nvidia-h200-x4. GPU 0:
# Triton's short-row and small elementwise defaults before and after,
# three times in turn (bin/kgen-base at c01016d, before them, then
# bin/kgen, then again), for the instances the first call's single
# before/after found slower (scores_small, causal_small,
# l2_normalize_small, layernorm_small, leaky_relu_kb, hardswish_kb) and
# some it found faster or the same; then cuda:sm_90's and hip:nvidia's
# window instances tested for correctness after the window template's
# 10-tap threshold (GPU 2). GPU 1: Nsight Compute on dw_mobilenet (point
# by point), dw_s2_5x5 and moving_average_kb (window) on cuda:sm_90.
# GPU 3: kgen tune of the two window instances, 24 evaluations each.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
OUT=$FINAL/w
mkdir -p "$OUT"
(
	export CUDA_VISIBLE_DEVICES=1
	OUT="$OUT/ncu" TARGET=cuda:sm_90 sh testsuite/gpu_ncu.sh examples/depthwise_conv.kg:dw_mobilenet examples/depthwise_conv.kg:dw_s2_5x5 examples/pad_concat.kg:moving_average_kb > "$OUT/ncu.txt" 2>&1
) &
(
	mkdir -p "$OUT/tune"
	CUDA_VISIBLE_DEVICES=3 timeout -k 5 240 ./bin/kgen tune --target cuda:sm_90 --gpus all --db "$OUT/tune/tune.jsonl" --strategy model --budget 24 --time 60s \
		--kernel dw_s2_5x5,moving_average_kb examples > "$OUT/tune/tune.txt" 2> "$OUT/tune/tune.log"
	echo "kgen tune: exit $?" >> "$OUT/tune/tune.txt"
) &
(
	export CUDA_VISIBLE_DEVICES=2
	mkdir -p "$OUT/correct"
	for t in cuda:sm_90 hip:nvidia; do
		timeout -k 5 120 ./bin/kgen test --target $t --seeds 3 examples/depthwise_conv.kg examples/pooling.kg examples/pad_concat.kg > "$OUT/correct/$(echo $t | tr : _).log" 2>&1
		echo "test $t: exit $?" >> "$OUT/correct/exits.txt"
	done
) &
export CUDA_VISIBLE_DEVICES=0
K=scores_small,causal_small,l2_normalize_small,layernorm_small,instancenorm_small,leaky_relu_kb,hardswish_kb,gelu_kb,mish_kb,mean_dim2_kb,cross_entropy_kb,mse_small
for r in 1 2 3; do
	mkdir -p "$OUT/ba-$r"
	OUT="$OUT/ba-$r" BASELINE= TARGETS=triton:sm_90 KERNELS=$K timeout -k 5 140 sh testsuite/gpu_before_after.sh examples > "$OUT/ba-$r.txt" 2>&1
done
wait
echo "== table"
python3 - "$OUT" <<'PY'
import json, sys, os
out = sys.argv[1]
rows = {}
for r in (1, 2, 3):
    for k in ("kgen-base", "kgen"):
        f = os.path.join(out, f"ba-{r}", k + ".json")
        if not os.path.exists(f):
            continue
        for row in json.load(open(f))["rows"]:
            t = row.get("time") or {}
            if "median_us" in t:
                rows.setdefault(row["name"], {}).setdefault(k, []).append(t["median_us"])
print(f"{'instance':22} {'before (3 runs)':24} {'after (3 runs)':24}")
for n, v in rows.items():
    f = lambda xs: " ".join(f"{x:6.2f}" for x in xs)
    print(f"{n:22} {f(v.get('kgen-base', [])):24} {f(v.get('kgen', [])):24}")
PY
cat "$OUT/correct/exits.txt"; grep -h 'plans' "$OUT"/correct/*.log
cat "$OUT/tune/tune.txt"
grep -E "^== |Duration|DRAM Throughput|Achieved Occupancy|Registers Per|L1/TEX Hit|L2 Hit" "$OUT/ncu.txt" | head -40
tar czf "$FINAL/s31-third.tgz" -C "$OUT" . && rm -rf "$OUT"
