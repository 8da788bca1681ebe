#!/bin/bash
# The thirty-first session's second call, on nvidia-h200-x4, bin/kgen with
# the window template's TILES (default 1: the default's code unchanged).
#   GPU 0: the window sweep (testsuite/sweep-window-tiles.txt), then half
#          of Triton's tuned-versus-default instances.
#   GPU 1: CUDA's tuned-versus-default instances.
#   GPUs 2, 3: HIP's, half each; then GPU 3 the other half of Triton's.
# The instances are those whose launches differ built with the first
# call's tuning databases and without (same-code-TARGET.txt, from
# testsuite/tuned_same_code.sh on the development machine): every other
# instance builds to the same code both ways.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
OUT=$FINAL/w
mkdir -p "$OUT"
DEADLINE=${DEADLINE:-540}
here=testsuite/results/2026-11-28-h200-s31-second
dbs=testsuite/results/2026-11-28-h200-s31-first
half() { # file part(0|1)
	awk -v p="$2" 'NR % 2 == p' "$1" | paste -sd,
}
tvd() { # gpu target kernels name
	local n d
	n=$(echo "$2" | tr ':' '_')
	d="$OUT/tvd-$4"
	mkdir -p "$d"
	CUDA_VISIBLE_DEVICES=$1 OUT="$d" BASELINE= TARGETS=$2 KERNELS=$3 \
		timeout -k 10 $((DEADLINE - SECONDS)) sh testsuite/gpu_tuned_vs_default.sh $dbs/tune-$n/tune.jsonl > "$d/run.txt" 2>&1
}
(
	mkdir -p "$OUT/sweep"
	CUDA_VISIBLE_DEVICES=0 OUT="$OUT/sweep" TARGET=cuda:sm_90 timeout -k 10 300 sh testsuite/gpu_sweep.sh testsuite/sweep-window-tiles.txt > "$OUT/sweep.txt" 2>&1
	tvd 0 triton:sm_90 "$(half $here/differs-triton_sm_90.txt 0)" triton-0
) &
tvd 1 cuda:sm_90 "$(paste -sd, $here/differs-cuda_sm_90.txt)" cuda &
tvd 2 hip:nvidia "$(half $here/differs-hip_nvidia.txt 0)" hip-0 &
( tvd 3 hip:nvidia "$(half $here/differs-hip_nvidia.txt 1)" hip-1
  tvd 3 triton:sm_90 "$(half $here/differs-triton_sm_90.txt 1)" triton-1 ) &
wait
echo "== table"
cat "$OUT/sweep/sweep.txt"
for d in "$OUT"/tvd-*; do echo "$d:"; grep -h '^kgen bench' $d/run.txt; grep -h '^summary:' $d/compare.txt; grep -hE ' (faster|slower)$' $d/compare.txt; done
tar czf "$FINAL/s31-second.tgz" -C "$OUT" . && rm -rf "$OUT"
