#!/bin/bash
# Rows staged in shared memory (row-reduce STAGE=1) on a GPU machine, in
# one call: kgen test of the row-reduce examples with every row-reduce
# launch staged (CONFIG below) on cuda:sm_90 and hip:nvidia, then kgen
# bench of the long-row instances in KERNELS, each under the default
# configuration and under every STAGE=1 variant of THREADS, side by side
# in one report per variant, and a compare of each against the default
# (BENCH=0: no bench).
# Build bin/kgen first and carry bin. Logs go to $OUT.
#   KERNELS=softmax_vocab,cross_entropy_vocab testsuite/gpu_stage.sh
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
FILES=${FILES:-testsuite/staged_rows.kg}
staged() { echo "row-reduce.STAGE=1,row-reduce.CLUSTER=1,row-reduce.PREFETCH=0,row-reduce.BLOCK_ROWS=1,row-reduce.THREADS=$1"; }
{
	date -u +%Y-%m-%dT%H:%M:%SZ
	nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
	nvcc --version | tail -1
	./bin/kgen version
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
SECONDS=0
# HIP targets take at most 64 KiB of shared memory a block: its run leaves
# out the instances whose rows take more.
grep -v -E "^instance (softmax_vocab|cross_entropy_vocab|cross_entropy_odd) " testsuite/staged_rows.kg > "$OUT/staged_rows_64k.kg"
for t in cuda:sm_90 hip:nvidia; do
	log="$OUT/test-staged-$(echo "$t" | tr ':' '_').log"
	files=$FILES
	case $t in hip:*) files="$OUT/staged_rows_64k.kg" ;; esac
	timeout -k 10 "${LIMIT:-200}" ./bin/kgen test --target "$t" --seeds 3 --max-work 3e7 --config "$(staged 256)" $files > "$log" 2>&1
	echo "kgen test $t staged (THREADS=256): exit $? ($SECONDS s)"
	grep -E "^(FAIL|ok|PASS)|passed|failed" "$log" | tail -4
done
[ "${BENCH:-1}" = 1 ] || exit 0
KERNELS=${KERNELS:-softmax_vocab,cross_entropy_vocab}
./bin/kgen bench --target cuda:sm_90 --kernel "$KERNELS" --json "$OUT/default.json" $FILES > "$OUT/default.log" 2> "$OUT/default.err"
echo "bench default: exit $? ($SECONDS s)"
for th in ${THREADS:-512 1024}; do
	./bin/kgen bench --target cuda:sm_90 --kernel "$KERNELS" --config "$(staged "$th")" --json "$OUT/staged-$th.json" $FILES > "$OUT/staged-$th.log" 2> "$OUT/staged-$th.err"
	echo "bench staged THREADS=$th: exit $? ($SECONDS s)"
	grep -v "^bench: \|no tuning record" "$OUT/staged-$th.err" | tail -3
	./bin/kgen bench --compare "$OUT/default.json" "$OUT/staged-$th.json" 2>&1 | tee "$OUT/compare-$th.txt"
done
