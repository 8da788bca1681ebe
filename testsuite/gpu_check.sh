#!/bin/sh
# Runs kgen test on every example on a GPU machine: the device half of
# issue 3. Build bin/kgen first (go build -o bin/kgen ./cmd/kgen).
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader > "$OUT/gpu.txt" 2>&1
nvcc --version | tail -1 >> "$OUT/gpu.txt"
./bin/kgen devices >> "$OUT/gpu.txt" 2>&1
./bin/kgen test --target "${TARGET:-cuda:sm_90}" --seeds 3 --max-work 3e7 examples/*.kg > "$OUT/test.log" 2>&1
echo "kgen test exit $?" >> "$OUT/test.log"
cat "$OUT/gpu.txt"
grep -v "^ok " "$OUT/test.log" | head -60
tail -1 "$OUT/test.log"
