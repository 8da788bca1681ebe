#!/bin/sh
# Times the instances in KERNELS with two kgens in one call (KGENS, default
# "kgen-base kgen": the tree before a change, built into bin/kgen-base, and
# after it), each on TARGETS beside PyTorch eager, then compares the two
# reports (kgen bench --compare). Build both binaries into bin/ first and
# carry bin. The spec files are the arguments (default examples).
# BASELINE is the PyTorch baseline both time beside them (default eager;
# empty for none).
# FLUSH, when set, is the L2 flush both use (--flush; a kgen from before
# the clean flush knows only write and read).
#   KERNELS=softmax_vocab,cross_entropy_vocab testsuite/gpu_before_after.sh examples
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
[ $# -gt 0 ] || set -- examples
TARGETS=${TARGETS:-cuda:sm_90,triton:sm_90,hip:nvidia}
set -f
KGENS=${KGENS:-kgen-base kgen}
base=${BASELINE-eager}
set +f
for k in $KGENS; do
	[ -x "./bin/$k" ] || { echo "no bin/$k"; exit 1; }
	./bin/$k bench --target "$TARGETS" --kernel "$KERNELS" ${base:+--baseline "$base"} ${FLUSH:+--flush "$FLUSH"} \
		--json "$OUT/$k.json" --md "$OUT/$k.md" "$@" > "$OUT/$k.log" 2> "$OUT/$k.err"
	echo "kgen bench ($k): exit $?"
	grep -v "^bench: \|no tuning record" "$OUT/$k.err" | tail -5
done
set -- $KGENS
./bin/kgen bench --compare "$OUT/$1.json" "$OUT/$2.json" 2>&1 | tee "$OUT/compare.txt"
