#!/bin/sh
# Correctness of every example on every target that runs on the H100
# (issues 3 and 4), in one call: kgen test for cuda:sm_90, triton:sm_90 and
# hip:nvidia run side by side (correctness only, so sharing the GPU is
# harmless; nothing here is timed), plus cuda:sm_90a for the files whose
# plans differ there. Each run has a time limit (LIMIT seconds, default
# 500). Build bin/kgen first and carry bin. Logs go to $OUT
# (correct-TARGET.log); a table of counts is printed last.
#   TARGETS (default "cuda:sm_90 triton:sm_90 hip:nvidia"), then the spec
#   files (default examples/*.kg).
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
LIMIT=${LIMIT:-500}
mkdir -p "$OUT"
[ $# -gt 0 ] || set -- examples/*.kg
{
	date -u +%Y-%m-%dT%H:%M:%SZ
	nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
	nvcc --version | tail -1
	python3 -c 'import sys, torch, triton; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__)'
	./bin/kgen version
} > "$OUT/correct-machine.txt" 2>&1

logname() { echo "$OUT/correct-$(echo "$1" | tr ':' '_').log"; }

for t in ${TARGETS:-cuda:sm_90 triton:sm_90 hip:nvidia}; do
	log=$(logname "$t")
	( timeout -k 10 "$LIMIT" ./bin/kgen test --target "$t" --seeds 3 --max-work 3e7 "$@" > "$log" 2>&1
	  echo "kgen test exit $?" >> "$log" ) &
done
if [ -z "${TARGETS:-}" ]; then
	log=$(logname cuda:sm_90a)
	( timeout -k 10 "$LIMIT" ./bin/kgen test --target cuda:sm_90a --seeds 3 --max-work 3e7 examples/matmul.kg examples/matmul_lowp.kg \
		examples/batched_matmul.kg examples/fused_gemm.kg examples/attention.kg > "$log" 2>&1
	  echo "kgen test exit $?" >> "$log" ) &
fi
wait

cat "$OUT/correct-machine.txt"
for f in "$OUT"/correct-*.log; do
	echo "== $(basename "$f"): lines other than ok (first 40)"
	grep -v "^ok " "$f" | head -40
done
echo "== summary"
printf '%-28s %6s %6s %6s  %s\n' log ok FAIL SKIP last
for f in "$OUT"/correct-*.log; do
	printf '%-28s %6d %6d %6d  %s\n' "$(basename "$f")" "$(grep -c '^ok ' "$f")" "$(grep -c '^FAIL' "$f")" "$(grep -c '^SKIP' "$f")" "$(tail -1 "$f")"
done
