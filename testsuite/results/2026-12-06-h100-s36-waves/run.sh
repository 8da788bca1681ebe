#!/bin/bash
# The thirty-sixth session's second call, on nvidia-h100-x1 (main at
# e5f624e's code as bin/kgen): sweep.txt, launches of a wave and a
# fraction with BLOCKS_PER_SM filling one wave, each default timed first
# and last (testsuite/gpu_sweep.sh, cuda:sm_90).
set -u
FINAL=${OUT:-/tmp/out}
mkdir -p "$FINAL/w"
OUT=$FINAL/w timeout 500 sh testsuite/gpu_sweep.sh testsuite/results/2026-12-06-h100-s36-waves/sweep.txt > /dev/null 2>&1
cut -c1-200 "$FINAL/w/sweep.txt"
tar czf "$FINAL/s36-waves.tgz" -C "$FINAL/w" . && rm -rf "$FINAL/w"
