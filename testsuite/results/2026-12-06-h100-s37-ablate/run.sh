#!/bin/bash
# The thirty-seventh session's second call, on nvidia-h100-x1: which part
# of kgen's center_2m staged by clusters of 16 blocks (main, c8658b3, as
# bin/kgen-base) costs what against the hand-written clusters of
# testsuite/exp/grid_resident.cu, timed in the same call. Each variant of
# kgen's emitted kernel (testsuite/exp/ablate_staged.py: base, sums,
# stores, both) at 512 and 1024 threads, timed by
# testsuite/exp/cluster_grid.cu with the clusters that fit at once (as
# kgen's runner launches it), row 0 checked against the host.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
W=$FINAL/w
mkdir -p "$W"
nvcc -O3 -arch=sm_90 -o "$W/grid_resident" testsuite/exp/grid_resident.cu &
for th in 512 1024; do
	./bin/kgen-base build --emit-only --db off --target cuda:sm_90 -o "$W/gen$th" \
		--config row-reduce.STAGE=1,row-reduce.CLUSTER=16,row-reduce.PREFETCH=0,row-reduce.THREADS=$th testsuite/cluster_rows.kg
	for v in base sums stores both; do
		python3 testsuite/exp/ablate_staged.py "$W/gen$th/cluster_rows.cu" center_2m $th $v "$W/gen$th/$v.cu" || exit 1
		nvcc -O3 -arch=sm_90 -w -I"$W/gen$th" -DGEN="\"$v.cu\"" -DKERNEL=center_2m -DCENTER -DKROWS=128 -DKROW=524288 \
			-DKCLUSTER=16 -DKTHREADS=$th -DKSMEM=131088 -o "$W/$v$th" testsuite/exp/cluster_grid.cu &
	done
done
wait
for p in grid_resident base512 sums512 stores512 both512 base1024 sums1024 stores1024 both1024; do
	timeout 90 "$W/$p" > "$W/$p.log" 2>&1
	echo "== $p: exit $?"; grep -E "registers|MiB|clusters at once|clustered|copy" "$W/$p.log"
done
tar czf "$FINAL/s37-ablate.tgz" -C "$W" --exclude='gen*' --exclude='*512' --exclude='*1024' --exclude=grid_resident . && rm -rf "$W"
