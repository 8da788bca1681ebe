#!/bin/sh
# The Triton backend on a GPU machine (issue 4): kgen test of every example
# on triton:sm_90, then kgen bench of testsuite/targets.txt on
# triton:sm_90 beside PyTorch eager. Needs bin/kgen (go build -o bin/kgen
# ./cmd/kgen) and a python3 with torch and triton (PYTHON, default python3
# on PATH). Logs go to $OUT; the bench table is printed last.
#
#   testsuite/gpu_triton.sh [test|bench|all]   (default all; each half
#                                               fits in 10 minutes)
#   KERNELS: the instances to bench (default testsuite/targets.txt's)
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT"
phase=${1:-all}
{
	nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
	"$PYTHON" -c 'import sys, torch, triton; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__)'
} > "$OUT/triton-gpu.txt" 2>&1
cat "$OUT/triton-gpu.txt"
if [ "$phase" = test ] || [ "$phase" = all ]; then
	./bin/kgen test --target triton:sm_90 --python "$PYTHON" --seeds 2 --max-work 3e7 examples/*.kg > "$OUT/triton-test.log" 2>&1
	echo "kgen test exit $?" >> "$OUT/triton-test.log"
	grep -v "^ok " "$OUT/triton-test.log" | head -80
	tail -2 "$OUT/triton-test.log"
fi
if [ "$phase" = bench ] || [ "$phase" = all ]; then
	timeout -k 10 "${LIMIT:-600}" ./bin/kgen bench --target triton:sm_90 --python "$PYTHON" --baseline eager --kernel "${KERNELS:-$(cat "$(dirname "$0")/targets.txt")}" \
		--json "$OUT/triton-bench.json" --md "$OUT/triton-bench.md" examples/*.kg > "$OUT/triton-bench.log" 2> "$OUT/triton-bench.err"
	echo "kgen bench exit $?" >> "$OUT/triton-bench.log"
	grep -v "^bench: " "$OUT/triton-bench.err" | tail -20
	cat "$OUT/triton-bench.log"
fi
