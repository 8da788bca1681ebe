#!/bin/sh
# The portability run on a GPU machine (issue 4): every example built for
# every target whose toolchain is there, tested on each target that runs on
# the GPU, each instance run on all of them and compared, and timed
# (--time). Build bin/kgen first. The matrix goes to $OUT/NAME.md and
# .json (NAME defaults to portability), logs beside it; the matrix is
# printed last.
#   TARGETS (default all), then the spec files (default examples/*.kg).
#   A whole run of every example on the H100's four runnable targets takes
#   longer than one 10-minute call: run parts of the files under
#   different NAMEs, then join them here with
#     kgen test --merge-matrix A.json B.json ... --matrix-md F --matrix-json F
#   (a compile-only run of the AMD targets on a machine with hipcc joins
#   the same way; testsuite/gpu_portability_parts.sh runs the parts).
#   LIMIT: seconds kgen may take (default 0, no limit).
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
NAME=${NAME:-portability}
mkdir -p "$OUT"
[ $# -gt 0 ] || set -- examples/*.kg
start=$(date +%s)
timeout -k 10 "${LIMIT:-0}" ./bin/kgen test --target "${TARGETS:-all}" --seeds 2 --max-work 3e7 --time \
	--matrix-md "$OUT/$NAME.md" --matrix-json "$OUT/$NAME.json" "$@" \
	> "$OUT/$NAME.log" 2> "$OUT/$NAME.err"
echo "kgen test --target ${TARGETS:-all} ($NAME) exit $?, $(( $(date +%s) - start )) s"
grep -v -e "^cross-check: " "$OUT/$NAME.err" | tail -15
grep -e "^FAIL" "$OUT/$NAME.log" | head -20
cat "$OUT/$NAME.md"
