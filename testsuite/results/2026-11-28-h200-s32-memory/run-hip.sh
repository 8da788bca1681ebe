#!/bin/bash
# The rest of the memory-bound table: the first half's instances that the
# first call's hip:nvidia run did not reach before its limit (run.sh's
# part 1 timed out after its cuda:sm_90 and triton:sm_90 runs and 12 of
# hip:nvidia's 27).
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
OUT=$FINAL/w
mkdir -p "$OUT"
K=layernorm_3d_kb,layernorm_bf16_llm,layernorm_8kx4k,logsumexp_4k,cross_entropy_vocab,masked_fill_kb,causal_mask_kb,threshold_any_kb,dropout_mask_kb,matvec_256x131072,vecmat_4k,outer_4k,gemv_8k,batchnorm_kb,instancenorm_kb
timeout -k 5 220 ./bin/kgen bench --target hip:nvidia --kernel "$K" --json "$OUT/part-1-hip.json" --md "$OUT/part-1-hip.md" examples > "$OUT/part-1-hip.log" 2> "$OUT/part-1-hip.err"
echo "part 1 hip: exit $?"
grep "^bench: [a-z_0-9]* [0-9.]* us" "$OUT/part-1-hip.err"
tar czf "$FINAL/s32-memory-hip.tgz" -C "$OUT" . && rm -rf "$OUT"
