#!/bin/sh
# Issue 5's wall time of a whole GEMM search with compilation parallel
# against serial: kgen tune of testsuite/tune_spaces.kg's gemm_bf16_mma_4k
# (176 valid configurations) exhaustively on cuda:sm_90, with -j J (16 for
# every core of the H100 machine, 1 for serial) into $OUT/NAME.jsonl.
# A search stopped at LIMIT seconds resumes from DB0 (its database, from
# the stopped call's $OUT) without measuring again what it measured; the
# wall times of the calls then add up. Build bin/kgen first.
#   J=16 NAME=par testsuite/gpu_tune_jobs.sh
#   J=1 NAME=ser [DB0=path] [LIMIT=560] testsuite/gpu_tune_jobs.sh
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
J=${J:-16}
NAME=${NAME:-j$J}
db="$OUT/$NAME.jsonl"
[ -n "${DB0:-}" ] && cp "$DB0" "$db"
before=$(grep -c . "$db" 2>/dev/null || echo 0)
{
	date -u +%Y-%m-%dT%H:%M:%SZ
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
	nvcc --version | tail -1
	echo "cpus $(nproc)"
} > "$OUT/$NAME.machine.txt" 2>&1
start=$(date +%s.%N)
timeout -k 10 "${LIMIT:-560}" ./bin/kgen tune --target cuda:sm_90 --db "$db" --strategy exhaustive --confirm 1 -j "$J" \
	--kernel gemm_bf16_mma_4k testsuite/tune_spaces.kg > "$OUT/$NAME.txt" 2> "$OUT/$NAME.log"
code=$?
wall=$(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $start }")
after=$(grep -c . "$db" 2>/dev/null || echo 0)
echo "$NAME: -j $J, exit $code, $wall s, database records $before -> $after" | tee "$OUT/$NAME.summary.txt"
tail -3 "$OUT/$NAME.txt"
