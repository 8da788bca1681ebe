#!/bin/sh
# The benchmark suite's report on a GPU machine (issue 6): kgen bench of
# the nominal instance of every task in testsuite/kernelbench/ beside
# PyTorch eager and torch.compile, each instance also checked against the
# PyTorch program kgen emits; then (with SUITE_ALL=1) every instance,
# eager only, for the full-size PyTorch check of the _odd and _small
# shapes. Build bin/kgen first. Results go to $OUT (suite.json, suite.md,
# suite.html and logs); the tables are printed last.
#   TARGET (default cuda:sm_90a), LEVELS (default "1 2"), LIMIT (seconds
#   per kgen bench, default 600)
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
TARGET=${TARGET:-cuda:sm_90a}
mkdir -p "$OUT"
dir=$(dirname "$0")/kernelbench
for level in ${LEVELS:-1 2}; do
	file=$dir/level$level.kg
	# Nominal instances: those not named *_odd or *_small.
	names=$(sed -n 's/^instance \([a-z0-9_]*\) = .*/\1/p' "$file" | grep -v -e '_odd$' -e '_small$' | paste -sd, -)
	timeout -k 10 "${LIMIT:-600}" ./bin/kgen bench --target "$TARGET" --baseline "${BASELINES:-eager,compile}" --kernel "$names" \
		--json "$OUT/suite-l$level.json" --md "$OUT/suite-l$level.md" --html "$OUT/suite-l$level.html" \
		"$file" > "$OUT/suite-l$level.log" 2> "$OUT/suite-l$level.err"
	echo "level $level: kgen bench exit $?" >> "$OUT/suite-l$level.log"
	if [ "${SUITE_ALL:-0}" = 1 ]; then
		./bin/kgen bench --target "$TARGET" --baseline eager --json "$OUT/suite-all-l$level.json" \
			"$file" > "$OUT/suite-all-l$level.log" 2> "$OUT/suite-all-l$level.err"
		echo "level $level, all instances: kgen bench exit $?" >> "$OUT/suite-all-l$level.log"
	fi
done
for f in "$OUT"/suite-*.err; do grep -v "^bench: " "$f" | tail -5; done
for f in "$OUT"/suite-*.log; do cat "$f"; done
