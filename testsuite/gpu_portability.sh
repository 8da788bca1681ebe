#!/bin/sh
# The portability run on a GPU machine (issue 4): every example built for
# every target whose toolchain is there, tested on each target that runs on
# the GPU, each instance run on all of them and compared, and timed
# (--time). Build bin/kgen first. The matrix goes to $OUT/portability.md and
# .json, logs beside it; the matrix is printed last.
#   TARGETS (default all), then the spec files (default examples/*.kg).
#   A whole run of every example on four runnable targets takes longer than
#   one 10-minute call: split it by files or by TARGETS.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
[ $# -gt 0 ] || set -- examples/*.kg
./bin/kgen test --target "${TARGETS:-all}" --seeds 2 --max-work 3e7 --time \
	--matrix-md "$OUT/portability.md" --matrix-json "$OUT/portability.json" "$@" \
	> "$OUT/portability.log" 2> "$OUT/portability.err"
echo "kgen test --target ${TARGETS:-all} exit $?"
grep -v -e "^cross-check: " "$OUT/portability.err" | tail -15
grep -e "^FAIL" "$OUT/portability.log" | head -20
cat "$OUT/portability.md"
