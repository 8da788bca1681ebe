#!/bin/bash
# The twenty-sixth session's kgen tune on cuda:sm_90, resuming the
# twenty-fifth session's database: first this session's new launches
# (threshold_any_kb and add_rmsnorm_llama, one launch each now, and the
# 2-D transposed convolution convt2d_up2), then the example instances not
# yet tuned there (testsuite/untuned-cuda.txt) until the deadline.
# Run from the repository root with bin/kgen built (bash: $SECONDS);
# writes $OUT. DB is the database to resume (default the twenty-fifth
# session's); with PART=untuned only the second search runs.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
cp "${DB:-testsuite/results/2026-11-28-h100-s25-tune/tune.jsonl}" "$OUT/tune.jsonl"
tune() {
	lim=$1
	shift
	timeout -k 10 "$lim" ./bin/kgen tune --target cuda:sm_90 --db "$OUT/tune.jsonl" --strategy model --budget 8 --time 30s "$@"
	echo "kgen tune: exit $? after $SECONDS s (limit $lim s)"
}
if [ "${PART:-}" != untuned ]; then
	tune 200 --kernel threshold_any_kb,add_rmsnorm_llama,convt2d_up2 examples/masked.kg examples/rmsnorm.kg examples/conv2d.kg > "$OUT/tune-new.txt" 2> "$OUT/tune-new.log"
	cat "$OUT/tune-new.txt"
fi
tune $((${DEADLINE:-380} - SECONDS)) --kernel "$(grep -v '^#' testsuite/untuned-cuda.txt)" examples > "$OUT/tune-untuned.txt" 2> "$OUT/tune-untuned.log"
cat "$OUT/tune-untuned.txt"
wc -l "$OUT/tune.jsonl"
