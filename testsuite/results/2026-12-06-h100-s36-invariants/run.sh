#!/bin/bash
# The thirty-sixth session's fourth call, on nvidia-h100-x1: a row's costly
# output parts that are the same at every point (rsqrt(var[r] + eps))
# computed once a row (hoistRowInvariants, hoist.diff against fa9a8d3;
# not merged; bin/kgen-inv), and that with a
# staged copy's batch wholly in the block's piece loaded and taken with no
# test a chunk (bin/kgen, the one tested), against fa9a8d3 (bin/kgen-base),
# cuda:sm_90, no PyTorch:
# 1. testsuite/gpu_row_launches.sh: the staged and cluster correctness
#    set, then the three kgens on every example instance with a staged or
#    cluster launch, the layernorms whose code changed (EXTRA), and
#    center_2m and layernorm_2m staged by clusters of 16 blocks of 1024
#    threads;
# 2. center_2m and layernorm_2m staged by 16 blocks of 512 threads.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
W=$FINAL/w
mkdir -p "$W"
OUT=$W KGENS="kgen-base kgen-inv kgen" EXTRA=layernorm_8kx4k,layernorm_bert,layernorm_bf16_llm,layernorm_small,kb_layernorm_nominal,kb_layernorm_odd,kb_layernorm_small,instancenorm_small \
	bash testsuite/gpu_row_launches.sh
staged="row-reduce.STAGE=1,row-reduce.CLUSTER=16,row-reduce.PREFETCH=0,row-reduce.THREADS=512"
for k in kgen-base kgen-inv kgen; do
	timeout 60 ./bin/$k bench --target cuda:sm_90 --kernel center_2m,layernorm_2m --config "$staged" --json "$W/time/$k-512.json" testsuite/cluster_rows.kg > "$W/time/$k-512.log" 2>&1
	echo "bench $k, staged by 16 blocks of 512: exit $?"
done
for k in kgen-inv kgen; do
	./bin/kgen bench --compare "$W/time/kgen-base-512.json" "$W/time/$k-512.json" > "$W/time/compare-$k-512.txt" 2>&1
	echo "== kgen-base against $k, staged by 16 blocks of 512"
	grep -E "^(center|layernorm)_2m|^summary" "$W/time/compare-$k-512.txt" | cut -c1-110
done
rm -rf "$W/emit"
tar czf "$FINAL/s36-invariants.tgz" -C "$W" . && rm -rf "$W"
