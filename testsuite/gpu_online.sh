#!/bin/bash
# Softmax statistics split over chunks of long rows (lower.splitOnline) on
# a GPU machine: kgen test of the softmax examples and
# backends/cuda/testdata/rows.kg on cuda:sm_90 and triton:sm_90, then kgen
# bench of the split instances on cuda:sm_90a and triton:sm_90 beside
# PyTorch eager, and with bin/kgen-old (the kgen before, when there) in the
# same call. Build bin/kgen (and bin/kgen-old) first; carry bin/. Logs go
# to $OUT; the tables are printed last.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
files="examples/softmax.kg examples/log_softmax.kg"
for t in cuda:sm_90 triton:sm_90; do
	timeout -k 10 120 ./bin/kgen test --target $t --seeds 2 --max-work 3e7 $files backends/cuda/testdata/rows.kg > "$OUT/test-${t/:/_}.log" 2>&1
	echo "kgen test $t: exit $?" | tee -a "$OUT/summary.txt"
done
inst=${KERNELS:-softmax_vocab,kb_softmax_wide}
timeout -k 10 150 ./bin/kgen bench --target cuda:sm_90a,triton:sm_90 --baseline eager --kernel "$inst" --json "$OUT/bench-kgen.json" \
	examples/softmax.kg testsuite/kernelbench/level1.kg > "$OUT/bench-kgen.txt" 2> "$OUT/bench-kgen.log"
echo "bench with kgen: exit $?" | tee -a "$OUT/summary.txt"
if [ -x ./bin/kgen-old ]; then
	timeout -k 10 120 ./bin/kgen-old bench --target cuda:sm_90a,triton:sm_90 --kernel "$inst" --json "$OUT/bench-kgen-old.json" \
		examples/softmax.kg testsuite/kernelbench/level1.kg > "$OUT/bench-kgen-old.txt" 2> "$OUT/bench-kgen-old.log"
	echo "bench with kgen-old: exit $?" | tee -a "$OUT/summary.txt"
fi
grep -h "passed\|^FAIL" "$OUT"/test-*.log | tail -6
cat "$OUT"/bench-*.txt "$OUT/summary.txt"
