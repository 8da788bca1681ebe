#!/bin/bash
# The thirty-third session's floor of a staged row-reduce launch: a call
# for nvidia-h200 that an H100 80GB HBM3 ran (bin/kgen at the session's
# staged-row commit): softmax_vocab and testsuite/exp/staged_floor.kg's
# sub_max (128 rows of 50257 and of 50256 f32, each less its max: no
# arithmetic to speak of) at their defaults (a block of 1024 threads
# staging a row), then sub_max with its rows kept in registers by
# clusters of 4 and of 8, each beside a same-size copy timed in the same
# run (kgen bench's "of same-size copy").
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
OUT=$FINAL/w
mkdir -p "$OUT"
./bin/kgen bench --target cuda:sm_90 --kernel softmax_vocab,sub_max_vocab,sub_max_aligned --json "$OUT/default.json" examples/softmax.kg testsuite/exp/staged_floor.kg > "$OUT/default.log" 2> "$OUT/default.err"
echo "default: exit $?"
for c in "CLUSTER=4,THREADS=1024,VEC=4" "CLUSTER=8,THREADS=512,VEC=4"; do
	n=$(echo "$c" | tr ',=' '__')
	./bin/kgen bench --target cuda:sm_90 --kernel sub_max_vocab,sub_max_aligned --config "row-reduce.STAGE=0,row-reduce.PREFETCH=0,row-reduce.BLOCK_ROWS=1,$(echo "$c" | sed 's/\([A-Z]*=\)/row-reduce.\1/g')" \
		--json "$OUT/$n.json" testsuite/exp/staged_floor.kg > "$OUT/$n.log" 2> "$OUT/$n.err"
	echo "$c: exit $?"
done
echo "== table"
for f in "$OUT"/*.log; do echo "-- $(basename "$f")"; grep -E "^(softmax_vocab|sub_max)" "$f" | cut -c1-160; done
tar czf "$FINAL/s33-floor.tgz" -C "$OUT" . && rm -rf "$OUT"
