#!/bin/bash
# Issue 5's tuned-versus-default evidence for the memory-bound instances:
# kgen tune (cost-model-guided, BUDGET evaluations a launch, default 12,
# each search under SEARCH, default 12s) of KERNELS on each of TARGETS into
# $OUT/tune.jsonl, whose report gives each instance's default and tuned
# times (the winner confirmed interleaved with the runners-up); then, if
# time is left, kgen bench with the tuned database on every target beside
# PyTorch eager (bench-tuned.*: fractions of the copy bandwidth). Every kgen
# call has a limit and the whole ends by DEADLINE seconds (default 540).
# NOBENCH=1 leaves the bench out and gives its time to the tuning (each
# search's report still has the default's and the winner's times, timed
# interleaved at confirmation).
# With DB set (a committed tune.jsonl), tuning resumes from its records:
# what was measured is not measured again. Build bin/kgen first and carry
# bin.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
[ -n "${DB:-}" ] && cp "$DB" "$OUT/tune.jsonl"
DEADLINE=${DEADLINE:-540}
TARGETS=${TARGETS:-cuda:sm_90 triton:sm_90}
KERNELS=${KERNELS:-sum_rows_kb,sum_cols_kb,sum_cols_bf16_kb,logsumexp_4k,softplus_softsign_kb,transpose_last2_kb,vecmat_4k,matvec_256x131072,maxpool_2x2,maxpool_3x3_s2_p1,quantize_kb,instancenorm_kb,layernorm_bf16_llm,rmsnorm_bf16_llama,rmsnorm_features_kb,cross_entropy_vocab,softmax_vocab,softmax_dim1_big,dw_relu6_s2}
left() { echo $((DEADLINE - SECONDS)); }
# Each target's tuning shares what is left, less 150 s for the bench.
reserve=150
[ "${NOBENCH:-0}" = 1 ] && reserve=0
todo=$(echo $TARGETS | wc -w)
for t in $TARGETS; do
	n=$(echo "$t" | tr ':' '_')
	lim=$(( ($(left) - reserve) / todo ))
	todo=$((todo - 1))
	[ "$lim" -gt 20 ] || { echo "no time left for $t"; continue; }
	timeout -k 10 "$lim" ./bin/kgen tune --target "$t" --db "$OUT/tune.jsonl" --strategy model --budget "${BUDGET:-12}" \
		--time "${SEARCH:-12s}" --kernel "$KERNELS" examples > "$OUT/tune-$n.txt" 2> "$OUT/tune-$n.log"
	echo "kgen tune $t: exit $? after $SECONDS s (limit $lim s)"
	cat "$OUT/tune-$n.txt"
done
lim=$(( $(left) ))
if [ "$lim" -gt 60 ] && [ "${NOBENCH:-0}" != 1 ]; then
	timeout -k 10 "$lim" ./bin/kgen bench --target "$(echo $TARGETS | tr ' ' ',')" --db "$OUT/tune.jsonl" --baseline eager \
		--kernel "$KERNELS" --json "$OUT/bench-tuned.json" --md "$OUT/bench-tuned.md" examples > "$OUT/bench-tuned.log" 2> "$OUT/bench-tuned.err"
	echo "kgen bench (tuned): exit $? after $SECONDS s"
	cat "$OUT/bench-tuned.log"
fi
echo "records: $(cat "$OUT/tune.jsonl" 2>/dev/null | wc -l)"
