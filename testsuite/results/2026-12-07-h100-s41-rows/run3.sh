#!/bin/bash
# The forty-first session's third call: the new defaults. bin/kgen has
# rowVectorShape (ROWS 4 at VEC 2 for dw_s2_5x5, dw_mobilenet and
# kb_depthwise3x3_nominal, on every backend; maxRowVectorRegs 96);
# bin/kgen-base is 7aa40fb (ROWS there, 1 by default: VEC 4 alone).
# Correctness first (kgen test on cuda:sm_90, triton:sm_90 and hip:nvidia,
# each output against the interpreter or the reference kernels, the
# backends against each other), then the three instances timed with each
# binary, twice (the second time without hip:nvidia, for time).
set -u
export PATH="/usr/local/cuda/bin:$PATH"
W=${OUT:-/tmp/out}
mkdir -p "$W/correct"
T=cuda:sm_90,triton:sm_90,hip:nvidia
timeout -k 5 120 ./bin/kgen test --target $T --seeds 2 examples/depthwise_conv.kg backends/cuda/testdata/windows.kg > "$W/correct/windows.log" 2>&1
echo "== test depthwise_conv.kg windows.kg: exit $?"; grep -E "plans|passed|FAIL|fail" "$W/correct/windows.log" | tail -6
timeout -k 5 100 ./bin/kgen test --target $T --seeds 2 --kernel kb_depthwise3x3 testsuite/kernelbench/level1.kg > "$W/correct/kb.log" 2>&1
echo "== test kb_depthwise3x3: exit $?"; grep -E "plans|passed|FAIL|fail" "$W/correct/kb.log" | tail -4
K=dw_s2_5x5,dw_mobilenet
for round in 1 2; do
	# the second round without hip:nvidia, for time, and only while the
	# call's time lasts (SECONDS: this script's)
	[ $round = 2 ] && T=cuda:sm_90,triton:sm_90
	[ $round = 2 ] && [ $SECONDS -gt 250 ] && break
	for k in kgen-base kgen; do
		timeout -k 5 100 ./bin/$k bench --target $T --kernel $K --json "$W/$k-$round.json" examples/depthwise_conv.kg > "$W/$k-$round.log" 2>&1
		echo "$k round $round: exit $?"
		timeout -k 5 100 ./bin/$k bench --target $T --kernel kb_depthwise3x3_nominal --json "$W/$k-kb-$round.json" testsuite/kernelbench/level1.kg > "$W/$k-kb-$round.log" 2>&1
	done
	./bin/kgen bench --compare "$W/kgen-base-$round.json" "$W/kgen-$round.json" > "$W/compare-$round.txt" 2>&1
	./bin/kgen bench --compare "$W/kgen-base-kb-$round.json" "$W/kgen-kb-$round.json" > "$W/compare-kb-$round.txt" 2>&1
	echo "== round $round: 7aa40fb against rowVectorShape"
	grep -hE "^[a-z]" "$W/compare-$round.txt" "$W/compare-kb-$round.txt" | grep -v "^old:\|^new:\|^noise:\|^instance" | cut -c1-120
done
grep -hE "^(dw_s2_5x5|dw_mobilenet|kb_depthwise3x3_nominal) " "$W/kgen-1.log" "$W/kgen-kb-1.log" | cut -c1-160
cd "$W" && tar cJf all.tar.xz *.json *.log *.txt correct && rm -rf *.json *.log compare-*.txt correct
