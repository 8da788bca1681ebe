#!/bin/bash
# The thirty-third session's Nsight Compute calls on softmax_vocab
# (cuda:sm_90, nvidia-h200) before (bin/kgen-base, fbd5183) and after
# (bin/kgen) its staged-row changes, with the scheduler, instruction and
# source-counter sections. locked/: at ncu's locked clock (1.45 GHz), the
# session's first version as bin/kgen (-online-copy/'s: the copy computing
# the max and its sum online). free/: with ARGS="--clock-control none"
# SUFFIX=-free, at the GPU's own clock (1.95 GHz), a148fc6's tree as
# bin/kgen (the max in the copy, the exponentials kept in place of the
# row, the divisions through a reciprocal that were later taken back).
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
OUT=$FINAL/w
mkdir -p "$OUT"
for k in ${KGENS:-kgen-base kgen}; do
	KGEN_RUNNER_WRAPPER="ncu ${ARGS:-} --log-file $OUT/ncu-$k${SUFFIX:-}.txt -k regex:^softmax_vocab\$ -c 2 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section InstructionStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section SourceCounters" \
		timeout -k 5 200 ./bin/$k bench --target cuda:sm_90 --kernel softmax_vocab examples/softmax.kg > "$OUT/bench-$k${SUFFIX:-}.txt" 2>&1
	echo "== $k: exit $?"
	grep -E "SM Frequency|Duration|DRAM Throughput|Compute \(SM\) Throughput|Issue Slots Busy|Issued Warp Per Scheduler|Warp Cycles Per Issued|Avg. Executed Instructions Per Scheduler|Registers Per" "$OUT/ncu-$k${SUFFIX:-}.txt" | head -24
done
tar czf "$FINAL/s33-ncu${SUFFIX:-}.tgz" -C "$OUT" . && rm -rf "$OUT"
