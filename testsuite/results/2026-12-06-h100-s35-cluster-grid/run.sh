#!/bin/bash
# The thirty-fifth session's third call, on nvidia-h100-x1: kgen's own
# cluster-staged kernels (the tree of this session's kg_cluster_reduce,
# bin/kgen) launched a cluster a row, as kgen's manifest says, and with
# only the clusters that fit at once (testsuite/exp/cluster_grid.cu):
# center_2m staged by clusters of 16 blocks of 1024 and of 512 threads,
# and softmax_256k at its default (staged by clusters of 8 blocks of
# 1024 threads).
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
./bin/kgen build --emit-only --db off --target cuda:sm_90 -o "$W/gendef" testsuite/cluster_rows.kg
nvcc -O3 -arch=sm_90 -w -I"$W/gendef" -DGEN='"cluster_rows.cu"' -DKERNEL=softmax_256k -DKROWS=256 -DKROW=256000 \
	-DKCLUSTER=8 -DKTHREADS=1024 -DKSMEM=128016 -o "$W/softmax" testsuite/exp/cluster_grid.cu &
wait
for p in center1024 center512 softmax; do
	timeout 60 "$W/$p" > "$W/$p.log" 2>&1
	echo "== $p: exit $?"; cat "$W/$p.log"
done
tar czf "$FINAL/s35-cluster-grid.tgz" -C "$W" --exclude='gen*' --exclude=center1024 --exclude=center512 --exclude=softmax . && rm -rf "$W"
