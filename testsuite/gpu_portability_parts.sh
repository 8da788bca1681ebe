#!/bin/bash
# The portability matrix in parts (issue 4), for GPU calls shorter than a
# whole run: each part is a few example files run through
# testsuite/gpu_portability.sh (every target, tests, cross-check, --time)
# under NAME=port-PART, so that it writes $OUT/port-PART.json and .md.
# PARTS picks the parts (default all, in order), LIMIT the seconds each
# may take (default 560; a part that runs out writes no matrix, only its
# logs). Join the parts, and a compile-only run of the AMD targets from a
# machine with hipcc, with
#   kgen test --merge-matrix port-*.json amd-compile.json --matrix-md matrix.md --matrix-json matrix.json
# Each part's matrix records the seconds each file took on each target and
# each instance's cross-check on each, to size the parts. PARTS=list
# prints the parts. Build bin/kgen first.
set -u
OUT=${OUT:-/tmp/out}
ex=examples
parts="
a $ex/reductions.kg $ex/log_softmax.kg $ex/conv1x1.kg $ex/batched_matmul.kg
b $ex/activations.kg $ex/masked.kg
c $ex/matmul_lowp.kg $ex/attention.kg
d $ex/matmul.kg $ex/transpose.kg
e $ex/matvec.kg $ex/pooling.kg $ex/conv2d.kg
f $ex/losses.kg $ex/softmax.kg $ex/pad_concat.kg
g $ex/fused_gemm.kg $ex/elementwise.kg $ex/quantize.kg
h $ex/norms.kg $ex/layernorm.kg $ex/l2norm.kg $ex/rmsnorm.kg
i $ex/depthwise_conv.kg $ex/conv1d.kg
"
if [ "${PARTS:-}" = list ]; then
	echo "$parts" | sed '/^$/d'
	exit 0
fi
# Every example is in exactly one part.
for f in $ex/*.kg; do
	n=$(echo "$parts" | grep -c " $f\b")
	[ "$n" = 1 ] || { echo "gpu_portability_parts.sh: $f is in $n parts" >&2; exit 2; }
done
for name in ${PARTS:-$(echo "$parts" | sed '/^$/d' | cut -d' ' -f1)}; do
	files=$(echo "$parts" | grep "^$name " | cut -d' ' -f2-)
	[ -n "$files" ] || { echo "no part $name" >&2; continue; }
	NAME=port-$name LIMIT=${LIMIT:-560} "$(dirname "$0")/gpu_portability.sh" $files > "$OUT/port-$name.txt"
	head -1 "$OUT/port-$name.txt" | tee -a "$OUT/parts.txt"
done
