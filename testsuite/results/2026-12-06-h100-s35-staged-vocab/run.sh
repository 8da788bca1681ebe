#!/bin/bash
# The thirty-fifth session's ninth call, on nvidia-h100-x1: which part of
# the staged-row changes of -staged-rows/ (bin/kgen) slows softmax_vocab
# (128 rows of 50257 f32, staged in one block of 1024 threads)? Each
# variant takes one part back: kgen-s the outputs' loop of 258694d (the
# alignment tested a chunk, 64-bit bounds), kgen-t the copy's stride
# blockDim.x instead of the constant 1024, kgen-st both; against 258694d
# (kgen-base). Two rounds, in turn.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
W=$FINAL/w
mkdir -p "$W"
for round in 1 2; do
	for k in kgen-base kgen kgen-s kgen-t kgen-st; do
		timeout 40 ./bin/$k bench --target cuda:sm_90 --kernel softmax_vocab,kb_softmax_wide --json "$W/$k-$round.json" examples testsuite/kernelbench > "$W/$k-$round.log" 2>&1
		echo "$round $k: exit $? $(python3 -c "
import json,sys
r=json.load(open('$W/$k-$round.json'))['rows']
print(' '.join('%s %.2f (%.2f-%.2f)'%(x['name'],x['time']['median_us'],x['time']['p20_us'],x['time']['p80_us']) for x in r))" 2>&1)"
	done
done
tar czf "$FINAL/s35-staged-vocab.tgz" -C "$W" . && rm -rf "$W"
