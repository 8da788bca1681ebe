#!/bin/sh
# Runs the HIP backend on an NVIDIA GPU (target hip:nvidia: the HIP source
# compiled by nvcc behind kgen's compatibility prelude, run by the CUDA
# runner): kgen test on every example, then kgen bench of every example
# for hip:nvidia and, in the same run, for cuda:sm_90 (the CUDA backend as
# the baseline). Build bin/kgen first (go build -o bin/kgen ./cmd/kgen).
# Logs go to $OUT; a summary table is printed last.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader > "$OUT/gpu.txt" 2>&1
nvcc --version | tail -1 >> "$OUT/gpu.txt"

./bin/kgen test --target hip:nvidia --seeds 3 --max-work 3e7 examples/*.kg > "$OUT/test-hip-nvidia.log" 2>&1
test_rc=$?
echo "kgen test exit $test_rc" >> "$OUT/test-hip-nvidia.log"

bench_rc=skipped
if [ "${BENCH:-1}" = 1 ]; then
	./bin/kgen bench --target hip:nvidia --json "$OUT/bench-hip-nvidia.json" --md "$OUT/bench-hip-nvidia.md" examples/*.kg > "$OUT/bench-hip-nvidia.log" 2>&1
	bench_rc=$?
	./bin/kgen bench --target cuda:sm_90 --json "$OUT/bench-cuda-sm90.json" --md "$OUT/bench-cuda-sm90.md" examples/*.kg > "$OUT/bench-cuda-sm90.log" 2>&1
	echo "kgen bench exit $bench_rc (hip:nvidia), $? (cuda:sm_90)" >> "$OUT/bench-hip-nvidia.log"
fi

cat "$OUT/gpu.txt"
echo
echo "== kgen test --target hip:nvidia: lines other than ok (first 60)"
grep -v "^ok " "$OUT/test-hip-nvidia.log" | head -60
echo
echo "== summary"
printf '%-34s %s\n' "hip:nvidia test: plans ok" "$(grep -c '^ok ' "$OUT/test-hip-nvidia.log")"
printf '%-34s %s\n' "hip:nvidia test: plans FAIL" "$(grep -c '^FAIL ' "$OUT/test-hip-nvidia.log")"
printf '%-34s %s\n' "hip:nvidia test: plans SKIP" "$(grep -c '^SKIP ' "$OUT/test-hip-nvidia.log")"
printf '%-34s %s\n' "hip:nvidia test: exit" "$test_rc"
grep "plans:" "$OUT/test-hip-nvidia.log" | tail -1
printf '%-34s %s\n' "hip:nvidia bench: exit" "$bench_rc"
if [ -f "$OUT/bench-hip-nvidia.md" ] && [ -f "$OUT/bench-cuda-sm90.md" ]; then
	echo "(bench tables: $OUT/bench-hip-nvidia.md and $OUT/bench-cuda-sm90.md, same run)"
fi
