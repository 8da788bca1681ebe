#!/bin/bash
# The thirty-fourth session's second call, on nvidia-h100-x1: Triton
# configurations of the launches below 80% of a same-size copy
# (sweep-triton.txt, testsuite/gpu_sweep.sh), and Nsight Compute on
# cuda:sm_90's softmax_temp (its warps' stalls and issue).
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
R=testsuite/results/2026-12-06-h100-s34-second
mkdir -p "$FINAL/w/sweep" "$FINAL/w/ncu"
KGEN_RUNNER_WRAPPER="ncu --clock-control none --log-file $FINAL/w/ncu/ncu.txt -k regex:^softmax_temp\$ -c 2 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section InstructionStats --section MemoryWorkloadAnalysis" \
	timeout -k 5 120 ./bin/kgen bench --target cuda:sm_90 --kernel softmax_temp examples/softmax.kg > "$FINAL/w/ncu/bench.txt" 2>&1
echo "ncu: exit $?"
grep -E "SM Frequency|Duration|DRAM Throughput|Issue Slots Busy|Warp Cycles Per Issued|Achieved Occupancy|Theoretical Occupancy|Block Limit|Waves Per SM|Stall|Executed Instructions  " "$FINAL/w/ncu/ncu.txt" | head -30
TARGET=triton:sm_90 OUT=$FINAL/w/sweep timeout 360 sh testsuite/gpu_sweep.sh $R/sweep-triton.txt > /dev/null 2>&1
echo "== sweep"
cut -c1-200 "$FINAL/w/sweep/sweep.txt"
grep -v '^bench:\|no tuning record' "$FINAL/w/sweep/sweep.err" | head
tar czf "$FINAL/s34-second.tgz" -C "$FINAL/w" . && rm -rf "$FINAL/w"
