#!/bin/bash
# The thirty-eighth session's second call, cuda:sm_90, no PyTorch. bin/kgen
# (s38-vecidx): a row pass that writes its outputs along the row stores
# whole chunks as vectors, and the staged outputs' and the elementwise
# template's vector stores index a vector pointer (nvcc had split them into
# one store a point); bin/kgen-base is main (0a3031f). bin/kgen-regroup
# (ffd9b86 with s37-regroup's splitGroups: group norm in one launch) is
# timed beside them. (Branch s38-stores-vec, s37-stores with its batch's
# store indexed as vectors, was left out: the device time left was short.)
#  1. kgen test (bin/kgen) of cluster_rows.kg and of the example files
#     whose kernels' code changed (their kernels of run-time sizes among
#     them);
#  2. each kgen timed once on cluster_rows.kg's instances, the window
#     and pad instances whose stores changed, softmax_vocab and
#     kb_softmax_wide (whose code bin/kgen leaves alone: the control), and
#     groupnorm_kb; then kgen bench --compare against kgen-base.
# Results go straight to $OUT, most needed first, so that what ran comes
# back if the call is cut short.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
W=${OUT:-/tmp/out}
mkdir -p "$W/correct" "$W/time"
t() { # name, timeout, kgen, args...
	local n=$1 s=$2 k=$3
	shift 3
	timeout -k 5 "$s" ./bin/$k test --target cuda:sm_90 --seeds 3 "$@" > "$W/correct/$n.log" 2>&1
	echo "test $n ($k): exit $? $(grep -E 'passed' "$W/correct/$n.log" | tail -1)"
}
t cluster_rows 40 kgen testsuite/cluster_rows.kg
t examples 90 kgen examples/softmax.kg examples/layernorm.kg examples/rmsnorm.kg examples/depthwise_conv.kg examples/pooling.kg examples/pad_concat.kg
K=center_2m,layernorm_2m,softmax_256k,softmax_odd,softmax_f16_odd,layernorm_odd,add_layernorm_odd,rms_to_f16_odd,dw_s2_5x5,dw_mobilenet,dw_relu6_s2,maxpool_3x3_s2_p1,pad2d_kb,softmax_vocab,kb_softmax_wide,groupnorm_kb
F="testsuite/cluster_rows.kg examples/depthwise_conv.kg examples/pooling.kg examples/pad_concat.kg examples/softmax.kg examples/norms.kg testsuite/kernelbench/level1.kg"
for k in kgen-base kgen kgen-regroup; do
	timeout 75 ./bin/$k bench --target cuda:sm_90 --kernel "$K" --json "$W/time/$k.json" $F > "$W/time/$k.log" 2>&1
	echo "bench $k: exit $?"
done
for k in kgen kgen-regroup; do
	./bin/kgen bench --compare "$W/time/kgen-base.json" "$W/time/$k.json" > "$W/time/compare-$k.txt" 2>&1
	echo "== kgen-base against $k"
	grep -hE "^[a-z]" "$W/time/compare-$k.txt" | grep -v "^old:\|^new:\|^noise:\|^instance" | cut -c1-110
done
