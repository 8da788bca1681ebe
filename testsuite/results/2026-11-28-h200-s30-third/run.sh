#!/bin/bash
# The thirtieth session's third call, on nvidia-h200-x4, bin/kgen at
# a winner's key naming its launch: kgen tune of
# testsuite/other-instances.txt resumed from the second call's databases,
# cuda:sm_90 on GPU 1, hip:nvidia on GPU 3, triton:sm_90 (the slowest to
# compile) on GPUs 0 and 2, until DEADLINE.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
OUT=$FINAL/w
mkdir -p "$OUT"
DEADLINE=${DEADLINE:-540}
prev=testsuite/results/2026-11-28-h200-s30-second
others=$(grep -v '^#' testsuite/other-instances.txt)
for t in cuda:sm_90 triton:sm_90 hip:nvidia; do
	n=$(echo "$t" | tr ':' '_')
	d="$OUT/tune-$n"
	mkdir -p "$d"
	case $t in cuda*) g=1 ;; triton*) g=0,2 ;; hip*) g=3 ;; esac
	CUDA_VISIBLE_DEVICES=$g OUT="$d" DB=$prev/tune-$n/tune.jsonl DEADLINE=$DEADLINE TARGET=$t KERNELS=$others \
		bash testsuite/gpu_tune_examples.sh > "$d/run.txt" 2>&1 &
done
wait
echo "== table"
for d in "$OUT"/tune-*; do echo "$d: $(grep -h '^kgen tune:' $d/run.txt) $(grep -c 'again: keeping' $d/tune.log) kept"; done
tar czf "$FINAL/s30-third.tgz" -C "$OUT" . && rm -rf "$OUT"
