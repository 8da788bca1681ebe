#!/bin/bash
# The CUDA-core matrix tiles (matmul-simt, igemm-simt) on a GPU machine:
# every configuration of their space (BK x BLOCKS_PER_SM) for the suite's
# f32 products, tuned exhaustively into $OUT/simt.jsonl, then kgen bench of
# the same instances beside PyTorch eager with that database (the tuned
# configurations) and, time allowing, without it (the defaults). Build
# bin/kgen first; carry bin/. Logs go to $OUT; the tables are printed last.
#   TARGET (default cuda:sm_90a), L1 and L2 (the instances of the suite's
#   levels 1 and 2 to tune and time), DEADLINE (seconds for the whole run,
#   default 540)
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
T=${TARGET:-cuda:sm_90a}
DEADLINE=${DEADLINE:-540}
L1=${L1:-kb_matmul_square,kb_matmul_irregular,kb_bmm_nominal,kb_matmul_small_k,kb_tensor_matmul_nominal,kb_matmul_at_nominal,kb_matmul_bt_nominal,kb_conv2d_3x3_nominal,kb_conv2d_1x1_nominal}
L2=${L2:-kb2_gemm_bias_relu_nominal,kb2_gemm_rowsum_nominal}
DB="$OUT/simt.jsonl"
S=testsuite/kernelbench
mkdir -p "$OUT"
left() { echo $((DEADLINE - SECONDS > 5 ? DEADLINE - SECONDS : 5)); }
timeout -k 10 "$(left)" ./bin/kgen tune --target "$T" --db "$DB" --strategy exhaustive --kernel "$L1" $S/level1.kg > "$OUT/tune-l1.txt" 2> "$OUT/tune-l1.log"
echo "tune level 1: exit $?, $SECONDS s" | tee -a "$OUT/summary.txt"
timeout -k 10 "$(left)" ./bin/kgen tune --target "$T" --db "$DB" --strategy exhaustive --kernel "$L2" $S/level2.kg > "$OUT/tune-l2.txt" 2> "$OUT/tune-l2.log"
echo "tune level 2: exit $?, $SECONDS s" | tee -a "$OUT/summary.txt"
for how in tuned default; do
	db="--db $DB"
	[ $how = default ] && db="--db off"
	timeout -k 10 "$(left)" ./bin/kgen bench --target "$T" --baseline eager $db --kernel "$L1,$L2" --json "$OUT/bench-$how.json" \
		$S/level1.kg $S/level2.kg > "$OUT/bench-$how.txt" 2> "$OUT/bench-$how.log"
	echo "bench $how: exit $?, $SECONDS s" | tee -a "$OUT/summary.txt"
done
cat "$OUT/tune-l1.txt" "$OUT/tune-l2.txt"
cat "$OUT/bench-tuned.txt" "$OUT/bench-default.txt"
cat "$OUT/summary.txt"
