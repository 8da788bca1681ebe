#!/bin/sh
# Runs the HIP backend on an NVIDIA GPU (target hip:nvidia: the HIP source
# compiled by nvcc behind kgen's compatibility prelude, run by the CUDA
# runner): kgen test on every example. With BENCH=1 (a second run: each
# takes minutes), kgen bench of every example for hip:nvidia and, in the
# same run, for cuda:sm_90 (the CUDA backend as the baseline), joined into
# one table. Build bin/kgen first (go build -o bin/kgen ./cmd/kgen). Logs
# go to $OUT; a summary table is printed last.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader > "$OUT/gpu.txt" 2>&1
nvcc --version | tail -1 >> "$OUT/gpu.txt"

bench_rc=skipped
test_rc=skipped
if [ "${BENCH:-0}" = 1 ]; then
	./bin/kgen bench --target hip:nvidia --json "$OUT/bench-hip-nvidia.json" --md "$OUT/bench-hip-nvidia.md" examples/*.kg > "$OUT/bench-hip-nvidia.log" 2>&1
	bench_rc=$?
	./bin/kgen bench --target cuda:sm_90 --json "$OUT/bench-cuda-sm90.json" --md "$OUT/bench-cuda-sm90.md" examples/*.kg > "$OUT/bench-cuda-sm90.log" 2>&1
	echo "kgen bench exit $bench_rc (hip:nvidia), $? (cuda:sm_90)" >> "$OUT/bench-hip-nvidia.log"
else
	./bin/kgen test --target hip:nvidia --seeds 3 --max-work 3e7 examples/*.kg > "$OUT/test-hip-nvidia.log" 2>&1
	test_rc=$?
	echo "kgen test exit $test_rc" >> "$OUT/test-hip-nvidia.log"
fi

cat "$OUT/gpu.txt"
if [ -f "$OUT/bench-hip-nvidia.json" ] && [ -f "$OUT/bench-cuda-sm90.json" ]; then
	echo
	echo "== bench, same run: median us, hip:nvidia against cuda:sm_90"
	python3 - "$OUT/bench-hip-nvidia.json" "$OUT/bench-cuda-sm90.json" <<'PY' | tee "$OUT/bench-hip-vs-cuda.txt"
import json, sys
hip, cuda = (json.load(open(p)) for p in sys.argv[1:3])
base = {r["name"]: r for r in cuda["rows"]}
print(f'{"instance":32} {"hip templates":22} {"hip us":>10} {"cuda us":>10} {"hip/cuda":>9}')
for r in hip["rows"]:
    c = base.get(r["name"])
    h_us = r["time"].get("median_us") if not r.get("error") else None
    c_us = c["time"].get("median_us") if c and not c.get("error") else None
    ratio = f'{h_us / c_us:9.2f}' if h_us and c_us else f'{"-":>9}'
    fmt = lambda v: f'{v:10.1f}' if v else f'{"error" if v is None else "-":>10}'
    print(f'{r["name"]:32} {r["templates"][:22]:22} {fmt(h_us)} {fmt(c_us)} {ratio}')
PY
fi
if [ -f "$OUT/test-hip-nvidia.log" ]; then
	echo
	echo "== kgen test --target hip:nvidia: lines other than ok (first 60)"
	grep -v "^ok " "$OUT/test-hip-nvidia.log" | head -60
fi
echo
echo "== summary"
if [ -f "$OUT/test-hip-nvidia.log" ]; then
	printf '%-34s %s\n' "hip:nvidia test: plans ok" "$(grep -c '^ok ' "$OUT/test-hip-nvidia.log")"
	printf '%-34s %s\n' "hip:nvidia test: plans FAIL" "$(grep -c '^FAIL ' "$OUT/test-hip-nvidia.log")"
	printf '%-34s %s\n' "hip:nvidia test: plans SKIP" "$(grep -c '^SKIP ' "$OUT/test-hip-nvidia.log")"
	grep "plans:" "$OUT/test-hip-nvidia.log" | tail -1
fi
printf '%-34s %s\n' "hip:nvidia test: exit" "$test_rc"
printf '%-34s %s\n' "hip:nvidia bench: exit" "$bench_rc"
if [ -f "$OUT/bench-hip-nvidia.md" ] && [ -f "$OUT/bench-cuda-sm90.md" ]; then
	echo "(bench tables: $OUT/bench-hip-nvidia.md and $OUT/bench-cuda-sm90.md, same run)"
fi
