#!/bin/bash
# The thirty-sixth session's third call (asked of any one-GPU kind; an H100 came): what a second
# cluster reduction a row costs. testsuite/exp/grid_resident.cu's
# hand-written clusters of 16 blocks a row (clustered, one cluster barrier
# a row) against clustered-two (a second reduction and barrier a row, as
# kgen's plan for a mean and then a variance has), beside kgen's own
# center_2m staged by 16 blocks of 1024 and 512 threads
# (testsuite/exp/cluster_grid.cu, main's code as bin/kgen).
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
for p in grid_resident center1024 center512; do
	timeout 90 "$W/$p" > "$W/$p.log" 2>&1
	echo "== $p: exit $?"; cat "$W/$p.log"
done
tar czf "$FINAL/s36-barrier.tgz" -C "$W" --exclude='gen*' --exclude=center1024 --exclude=center512 --exclude=grid_resident . && rm -rf "$W"
