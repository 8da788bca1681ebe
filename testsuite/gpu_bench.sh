#!/bin/sh
# Times every example instance on a GPU machine beside PyTorch eager: the
# benchmark half of issue 3. Build bin/kgen first (go build -o bin/kgen
# ./cmd/kgen). Results go to $OUT (bench.json, bench.md, bench.log).
# BASELINE sets the PyTorch baselines (default eager; e.g. eager,compile).
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
./bin/kgen bench --target "${TARGET:-cuda:sm_90}" --baseline "${BASELINE:-eager}" --json "$OUT/bench.json" --md "$OUT/bench.md" "$@" > "$OUT/bench.log" 2> "$OUT/bench.err"
echo "kgen bench exit $?" >> "$OUT/bench.log"
grep -v "^bench: " "$OUT/bench.err" | tail -20
cat "$OUT/bench.log"
