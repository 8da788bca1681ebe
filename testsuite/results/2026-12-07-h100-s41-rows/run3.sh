#!/bin/bash
# The forty-first session's third call: the new defaults. bin/kgen has
# rowVectorShape (ROWS 4 at VEC 2 for dw_s2_5x5, dw_mobilenet and
# kb_depthwise3x3_nominal, on every backend; maxRowVectorRegs 96);
# bin/kgen-base is 7aa40fb (ROWS there, 1 by default: VEC 4 alone).
# The three instances timed with each binary on cuda:sm_90 and
# triton:sm_90 (Triton's default at ROWS 4 takes BLOCK 512 since a303cff,
# as call2's sweep timed it; run it with bin/kgen from a303cff or later);
# then correctness
# (kgen test on cuda:sm_90, triton:sm_90 and hip:nvidia, each output
# against the interpreter or the reference kernels, the backends against
# each other); then a second round of timing while the call's time lasts
# (the device time left was short).
set -u
export PATH="/usr/local/cuda/bin:$PATH"
W=${OUT:-/tmp/out}
mkdir -p "$W/correct"
T=cuda:sm_90,triton:sm_90
K=dw_s2_5x5,dw_mobilenet
# One archive, written again after each step, so that what ran comes back
# if the call's limit cuts it (a call returns only a few files).
save() { (cd "$W" && tar cJf all.tar.xz --exclude=all.tar.xz *.json *.log *.txt correct 2>/dev/null); }
timing() { # round
	for k in kgen-base kgen; do
		timeout -k 5 60 ./bin/$k bench --target $T --kernel $K --json "$W/$k-$1.json" examples/depthwise_conv.kg > "$W/$k-$1.log" 2>&1
		echo "$k round $1: exit $?"
		timeout -k 5 60 ./bin/$k bench --target $T --kernel kb_depthwise3x3_nominal --json "$W/$k-kb-$1.json" testsuite/kernelbench/level1.kg > "$W/$k-kb-$1.log" 2>&1
	done
	./bin/kgen bench --compare "$W/kgen-base-$1.json" "$W/kgen-$1.json" > "$W/compare-$1.txt" 2>&1
	./bin/kgen bench --compare "$W/kgen-base-kb-$1.json" "$W/kgen-kb-$1.json" > "$W/compare-kb-$1.txt" 2>&1
	echo "== round $1: 7aa40fb against rowVectorShape"
	grep -hE "^[a-z]" "$W/compare-$1.txt" "$W/compare-kb-$1.txt" | grep -v "^old:\|^new:\|^noise:\|^instance" | cut -c1-120
}
timing 1
save
timeout -k 5 90 ./bin/kgen test --target $T,hip:nvidia --seeds 2 examples/depthwise_conv.kg backends/cuda/testdata/windows.kg > "$W/correct/windows.log" 2>&1
echo "== test depthwise_conv.kg windows.kg: exit $?"; grep -E "plans|passed|FAIL|fail" "$W/correct/windows.log" | tail -6
if [ $SECONDS -lt 150 ]; then
	timeout -k 5 50 ./bin/kgen test --target $T,hip:nvidia --seeds 2 --kernel kb_depthwise3x3 testsuite/kernelbench/level1.kg > "$W/correct/kb.log" 2>&1
	echo "== test kb_depthwise3x3: exit $?"; grep -E "plans|passed|FAIL|fail" "$W/correct/kb.log" | tail -4
fi
save
[ $SECONDS -lt 170 ] && timing 2
grep -hE "^(dw_s2_5x5|dw_mobilenet|kb_depthwise3x3_nominal) " "$W/kgen-1.log" "$W/kgen-kb-1.log" | cut -c1-160
save; cd "$W" && rm -rf *.json *.log compare-*.txt correct
