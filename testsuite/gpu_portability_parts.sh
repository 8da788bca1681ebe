#!/bin/bash
# The portability matrix in parts (issue 4), for GPU calls shorter than a
# whole run: the files of the parts in PARTS (default all, in order) go
# through testsuite/gpu_portability.sh (every target, tests, cross-check,
# --time) in one run, NAME=port-PARTS, writing $OUT/port-PARTS.json and
# .md. kgen writes the matrix after each file, so a run stopped at LIMIT
# seconds (default 560) keeps the files it finished and lists the rest as
# not run; FILES=... instead of PARTS runs those files (the rest of a
# stopped part). Join the runs, and a compile-only run of the AMD targets
# from a machine with hipcc, with
#   kgen test --merge-matrix port-*.json amd-compile.json --matrix-md matrix.md --matrix-json matrix.json
# Each matrix records the seconds each file took on each target and each
# instance's cross-check on each, to size the parts. PARTS=list prints
# the parts. Build bin/kgen first.
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
files=${FILES:-}
name=port
if [ -n "$files" ]; then
	name=port-$(basename "$(echo $files | cut -d' ' -f1)" .kg)
else
	for p in ${PARTS:-$(echo "$parts" | sed '/^$/d' | cut -d' ' -f1)}; do
		f=$(echo "$parts" | grep "^$p " | cut -d' ' -f2-)
		[ -n "$f" ] || { echo "no part $p" >&2; exit 2; }
		files="$files $f"
		name=$name$p
	done
	name=port-${name#port}
fi
NAME=$name LIMIT=${LIMIT:-560} "$(dirname "$0")/gpu_portability.sh" $files
