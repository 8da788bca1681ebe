#!/bin/bash
# The thirty-fifth session's fourth call, on nvidia-h100-x1: Nsight Compute
# (at the GPU's own clock) on kgen's center_2m staged by clusters of 16
# blocks of 1024 and of 512 threads (testsuite/exp/cluster_grid.cu, the
# launch with the clusters that fit at once; the tree of this session's
# kg_cluster_reduce, bin/kgen), and on the hand-written clusters of
# testsuite/exp/grid_resident.cu (clustered, 1024 threads): where do
# kgen's kernels spend the time the hand-written one does not?
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
W=$FINAL/w
mkdir -p "$W"
for th in 1024 512; do
	./bin/kgen build --emit-only --db off --target cuda:sm_90 -o "$W/gen$th" \
		--config row-reduce.STAGE=1,row-reduce.CLUSTER=16,row-reduce.PREFETCH=0,row-reduce.THREADS=$th testsuite/cluster_rows.kg
	nvcc -O3 -arch=sm_90 -w -I"$W/gen$th" -DGEN='"cluster_rows.cu"' -DKERNEL=center_2m -DCENTER -DKROWS=128 -DKROW=524288 \
		-DKCLUSTER=16 -DKTHREADS=$th -DKSMEM=131088 -o "$W/center$th" testsuite/exp/cluster_grid.cu &
done
nvcc -O3 -arch=sm_90 -o "$W/grid_resident" testsuite/exp/grid_resident.cu &
wait
S="--clock-control none --section SpeedOfLight --section LaunchStats --section WarpStateStats --section SchedulerStats --section InstructionStats --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
timeout 100 ncu $S -k regex:center_2m --launch-skip 1 -c 1 "$W/center1024" > "$W/ncu-center1024.txt" 2>&1; echo "ncu center1024: exit $?"
timeout 100 ncu $S -k regex:center_2m --launch-skip 1 -c 1 "$W/center512" > "$W/ncu-center512.txt" 2>&1; echo "ncu center512: exit $?"
timeout 100 ncu $S -k regex:clustered -c 1 "$W/grid_resident" > "$W/ncu-hand.txt" 2>&1; echo "ncu hand: exit $?"
for f in center1024 center512 hand; do
	echo "== $f"
	grep -E "SM Frequency|Duration|DRAM Throughput|Issue Slots Busy|Warp Cycles Per Issued|Registers Per|Executed Instructions  |stalled_(barrier|long_scoreboard|membar|lg_throttle|wait|short_scoreboard|mio_throttle|math_pipe|drain|sleeping|not_selected|selected|branch|dispatch|no_instruction|misc|tex)" "$W/ncu-$f.txt" | grep -v "  0$" | sed 's/  */ /g' | head -30
done
tar czf "$FINAL/s35-cluster-ncu.tgz" -C "$W" --exclude='gen*' --exclude=center1024 --exclude=center512 --exclude=grid_resident . && rm -rf "$W"
