#!/bin/bash
# The thirty-first session's fourth call, on nvidia-h200: the window
# template's strips (PH) swept (testsuite/sweep-window-strips.txt) with
# bin/kgen-w9 (the tree with MinWindowTaps 9, so that dw_mobilenet's
# 3 x 3 window takes the window template), beside dw_mobilenet point by
# point with bin/kgen (the tree as committed) in the same run; then
# depthwise_conv.kg tested on cuda:sm_90 and hip:nvidia with every window
# launch in strips of 4 (bin/kgen-w9).
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
OUT=$FINAL/w
mkdir -p "$OUT"
./bin/kgen bench --target cuda:sm_90 --kernel dw_mobilenet examples/depthwise_conv.kg > "$OUT/generic-before.txt" 2>&1
cp bin/kgen bin/kgen-real && cp bin/kgen-w9 bin/kgen
mkdir -p "$OUT/sweep"
OUT="$OUT/sweep" TARGET=cuda:sm_90 timeout -k 5 300 sh testsuite/gpu_sweep.sh testsuite/sweep-window-strips.txt > "$OUT/sweep.txt" 2>&1
cp bin/kgen-real bin/kgen
./bin/kgen bench --target cuda:sm_90 --kernel dw_mobilenet examples/depthwise_conv.kg > "$OUT/generic-after.txt" 2>&1
mkdir -p "$OUT/correct"
for t in cuda:sm_90 hip:nvidia; do
	timeout -k 5 100 ./bin/kgen-w9 test --target $t --seeds 3 --config window.PH=4,window.TH=16,window.TW=128,window.THREADS=256 examples/depthwise_conv.kg > "$OUT/correct/$(echo $t | tr : _).log" 2>&1
	echo "test $t: exit $?" >> "$OUT/correct/exits.txt"
done
echo "== table"
grep -h "^dw_mobilenet " "$OUT/generic-before.txt" "$OUT/generic-after.txt"
sed 's/  */ /g' "$OUT/sweep/sweep.txt" | cut -c1-170
cat "$OUT/correct/exits.txt"; grep -h 'plans' "$OUT"/correct/*.log
tar czf "$FINAL/s31-fourth.tgz" -C "$OUT" . && rm -rf "$OUT"
