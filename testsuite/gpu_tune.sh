#!/bin/bash
# The autotuner's evidence run (issue 5) on one H100, in two calls of at
# most ~9 minutes each: gpu_tune.sh spaces, then gpu_tune.sh rest with
# DB= the first call's tune.jsonl (default: both, one after the other). Needs a prebuilt bin/kgen (go build -o bin/kgen
# ./cmd/kgen) and nvcc in /usr/local/cuda/bin. Everything goes to $OUT:
#
#   (a) exhaustive tuning of three spaces into $OUT/tune.jsonl: the bf16
#       GEMM 4096^3 on cuda:sm_90a (testsuite/tune_spaces.kg, 48 valid
#       configurations), softmax 128 x 50257 (examples/softmax.kg,
#       softmax_vocab, 40) and the ResNet 3x3 NHWC convolution
#       (testsuite/tune_spaces.kg, 108), each under a wall-time limit, and
#       the bf16 GEMM 4096^3 on triton:sm_90 (examples/matmul_lowp.kg,
#       cost-model-guided, 48 evaluations of its thousands);
#   (b) simulation of every strategy over those spaces, 20 seeds, with
#       batches of 1 and of 16 (the compile parallelism of a real run);
#   (c) wall time of tuning the same 16 GEMM configurations (random
#       strategy, seed 1, fresh databases) with compilation parallel (-j
#       16) and serial (-j 1);
#   (d) if time is left, kgen bench of the examples' three instances with
#       the tuned database beside PyTorch eager, on both targets.
#
# Every kgen call has a time limit, and the parts do not depend on each
# other's success (the database is appended record by record, so a part
# cut short keeps what it measured). The table printed last summarizes.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
KGEN=./bin/kgen
phase=${1:-all}
DB0=${DB:-}
DB="$OUT/tune.jsonl"
# rest continues from the spaces phase's database (a copy: $OUT's comes back).
[ -n "$DB0" ] && cp "$DB0" "$DB"
DEADLINE=${DEADLINE:-520} # seconds from the start for the last kgen call to end
T=cuda:sm_90a
SUMMARY="$OUT/summary.txt"
: > "$SUMMARY"

# limit SECS: SECS, or what is left before the deadline if less.
limit() {
	left=$((DEADLINE - SECONDS))
	if [ "$1" -lt "$left" ]; then echo "$1"; else echo "$((left > 5 ? left : 5))"; fi
}

# run NAME SECS ARGS...: kgen ARGS under a limit, stdout to $OUT/NAME.txt,
# stderr to $OUT/NAME.log, a line of exit status and seconds to the summary.
run() {
	name=$1 secs=$(limit "$2")
	shift 2
	start=$(date +%s.%N)
	timeout -k 10 "$secs" "$KGEN" "$@" > "$OUT/$name.txt" 2> "$OUT/$name.log"
	code=$?
	wall=$(awk "BEGIN { print $(date +%s.%N) - $start }")
	printf '%-22s exit %3d  %7.1f s (limit %d s)\n' "$name" "$code" "$wall" "$secs" >> "$SUMMARY"
	echo "$wall" > "$OUT/$name.seconds"
}

{
	date -u +%Y-%m-%dT%H:%M:%SZ
	nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
	nvcc --version | tail -2
	"$KGEN" version
	nproc
} > "$OUT/machine.txt" 2>&1

# (a) Three spaces, exhaustively, each search under a wall-time limit
# (--time bounds the search; the confirmation follows it).
if [ "$phase" = spaces ] || [ "$phase" = all ]; then
run tune-gemm 170 tune --target $T --db "$DB" --strategy exhaustive --time 110s --kernel gemm_bf16_4k testsuite/tune_spaces.kg
run tune-softmax 75 tune --target $T --db "$DB" --strategy exhaustive --time 50s --kernel softmax_vocab examples/softmax.kg
run tune-conv 105 tune --target $T --db "$DB" --strategy exhaustive --time 70s --kernel conv_nhwc_resnet testsuite/tune_spaces.kg
run tune-triton-gemm 140 tune --target triton:sm_90 --db "$DB" --strategy model --budget 48 --time 90s --kernel matmul_bf16_4k examples/matmul_lowp.kg

# (b) Strategies replayed over the measured spaces.
run simulate 40 tune --simulate --db "$DB" --seeds 20
run simulate-batch16 40 tune --simulate --db "$DB" --seeds 20 --batch 16
fi

# (c) The same 16 GEMM candidates, compiled in parallel, then serially,
# each into a fresh database so that nothing is answered from records.
if [ "$phase" = rest ] || [ "$phase" = all ]; then
run par-j16 90 tune --target $T --db "$OUT/par.jsonl" --strategy random --seed 1 --budget 16 --confirm 1 -j 16 --kernel gemm_bf16_4k testsuite/tune_spaces.kg
run ser-j1 150 tune --target $T --db "$OUT/ser.jsonl" --strategy random --seed 1 --budget 16 --confirm 1 -j 1 --kernel gemm_bf16_4k testsuite/tune_spaces.kg

# (d) The tuned configurations beside PyTorch, if there is time.
# The examples' instances: their kernels hash as the tuned ones (@tune
# is not in the hash), so bench takes the tuned configurations, and
# PyTorch has their baselines.
if [ $((DEADLINE - SECONDS)) -gt 60 ]; then
	run bench-tuned 90 bench --target $T --db "$DB" --baseline eager --json "$OUT/bench-tuned.json" \
		--kernel matmul_bf16_4k,softmax_vocab,conv_nhwc_resnet examples/matmul_lowp.kg examples/softmax.kg examples/conv2d.kg
fi
if [ $((DEADLINE - SECONDS)) -gt 60 ]; then
	run bench-tuned-triton 90 bench --target triton:sm_90 --db "$DB" --baseline eager --json "$OUT/bench-tuned-triton.json" \
		--kernel matmul_bf16_4k,softmax_vocab examples/matmul_lowp.kg examples/softmax.kg
fi
fi

echo "== machine"; cat "$OUT/machine.txt"
echo "== tuning (default vs tuned, confirmed interleaved)"
for p in tune-gemm tune-softmax tune-conv tune-triton-gemm; do
	cat "$OUT/$p.txt" 2>/dev/null
	grep -h "kgen tune:" "$OUT/$p.log" 2>/dev/null | tail -2
done
echo "== records: $(cat "$DB" 2>/dev/null | wc -l) in $DB"
echo "== simulation, batches of 1"; cat "$OUT/simulate.txt"
echo "== simulation, batches of 16"; tail -n +2 "$OUT/simulate-batch16.txt"
echo "== compile parallel vs serial (16 GEMM configurations, whole tuning run)"
printf 'j16 %s s, j1 %s s\n' "$(cat "$OUT/par-j16.seconds" 2>/dev/null)" "$(cat "$OUT/ser-j1.seconds" 2>/dev/null)"
for b in bench-tuned bench-tuned-triton; do
	[ -f "$OUT/$b.txt" ] && { echo "== $b"; grep "^kgen: " "$OUT/$b.log"; cat "$OUT/$b.txt"; }
done
echo "== steps"; cat "$SUMMARY"
