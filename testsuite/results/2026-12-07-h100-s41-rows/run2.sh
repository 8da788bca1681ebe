#!/bin/bash
# The forty-first session's second call, cuda:sm_90: ROWS and VEC over
# every big window launch whose rows are read as vectors (sweep-rows.txt,
# each instance's old default first and last), with bin/kgen-wr176 (ROWS,
# maxRowVectorRegs 176, so that the register bound refuses none of them:
# ptxas's counts and spills are in the logs); then Nsight Compute on
# dw_s2_5x5 at ROWS 4, VEC 2. triton:sm_90's dw_s2_5x5 and dw_mobilenet
# the same way (sweep-rows-triton.txt).
set -u
export PATH="/usr/local/cuda/bin:$PATH"
W=${OUT:-/tmp/out}
mkdir -p "$W"
cp bin/kgen-wr176 bin/kgen
OUT=$W sh testsuite/gpu_sweep.sh testsuite/results/2026-12-07-h100-s41-rows/sweep-rows.txt
mkdir -p "$W/triton"
TARGET=triton:sm_90 OUT=$W/triton sh testsuite/gpu_sweep.sh testsuite/results/2026-12-07-h100-s41-rows/sweep-rows-triton.txt
mkdir -p "$W/ncu"
KGEN_RUNNER_WRAPPER="ncu --log-file $W/ncu/ncu-rows4.txt -k regex:^dw_s2_5x5\$ -c 2 --section SpeedOfLight --section Occupancy --section MemoryWorkloadAnalysis --section LaunchStats" \
	timeout 90 ./bin/kgen-wr176 bench --target cuda:sm_90 --config ROWS=4,VEC=2 --kernel dw_s2_5x5 examples/depthwise_conv.kg > "$W/ncu/bench.txt" 2>&1
echo "== ncu ROWS=4, VEC=2: exit $?"
grep -E "Duration|L1/TEX Cache Throughput|DRAM Throughput|Registers Per|Achieved Occ|Waves" "$W/ncu/ncu-rows4.txt" | head -12
cd "$W" && tar cJf all.tar.xz *.txt *.err ncu triton 2>/dev/null; rm -rf ncu triton sweep.err
