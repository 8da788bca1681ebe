#!/bin/bash
# The forty-first session's call, cuda:sm_90: a generic window launch
# whose thread takes VEC points of each of ROWS output rows, their input
# rows loaded once for all of them (ROWS, this session's commit; the
# fortieth session's branch for it was lost before it ran). bin/kgen is
# main before ROWS (21872c4: dw_s2_5x5 at VEC 4 by default); bin/kgen-wr
# has ROWS; bin/kgen-wr96 the same with maxRowVectorRegs 96, so that
# dw_s2_5x5 takes ROWS=4 at VEC 2 (11 rows of 8 columns). Nsight Compute
# found dw_s2_5x5 bound by its L1 (83% of its throughput at VEC 2, 76% at
# VEC 4: ../2026-12-07-h100-s40-chunks/ncu-dw/): at ROWS 2 a thread loads
# 7 rows for 2 output rows where two threads loaded 10. Then the sm_90
# mma GEMM's tiles: since b4c434e its 256 x 128 default spills (255
# registers); 128 x 128 tiles beside it.
# Each bench checks its kernel once against the reference before timing.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
W=${OUT:-/tmp/out}
mkdir -p "$W"
b() { # name, kgen, kernels, file, args...
	local n=$1 k=$2 ks=$3 f=$4
	shift 4
	timeout -k 5 90 ./bin/$k bench --target cuda:sm_90 --kernel "$ks" --json "$W/$n.json" "$@" "$f" > "$W/$n.log" 2>&1
	echo "$n ($k $*): exit $?"
	grep -hE "^(dw_|maxpool|matmul)" "$W/$n.log" | cut -c1-150
}
D=examples/depthwise_conv.kg
b main kgen dw_s2_5x5,dw_mobilenet,dw_relu6_s2 $D
b rows2-s2 kgen-wr dw_s2_5x5 $D --config ROWS=2,VEC=2
b vec2 kgen dw_s2_5x5 $D --config VEC=2
b rows2-s2-t128 kgen-wr dw_s2_5x5 $D --config ROWS=2,VEC=2,THREADS=128
b rows4-s2 kgen-wr96 dw_s2_5x5 $D --config ROWS=4,VEC=2
b rows2 kgen-wr dw_mobilenet,dw_relu6_s2 $D --config ROWS=2
b main-2 kgen dw_s2_5x5 $D
b rows2-s2-2 kgen-wr dw_s2_5x5 $D --config ROWS=2,VEC=2
b rows4-s2-2 kgen-wr96 dw_s2_5x5 $D --config ROWS=4,VEC=2
b pool-main kgen maxpool_3x3_s2_p1 examples/pooling.kg
b pool-rows2 kgen-wr maxpool_3x3_s2_p1 examples/pooling.kg --config ROWS=2
M=examples/matmul_lowp.kg
b mm kgen matmul_bf16_4k $M
b mm-128 kgen matmul_bf16_4k $M --config BM=128,WARPS_M=2,WARPS_N=4
b mm-128-s3 kgen matmul_bf16_4k $M --config BM=128,WARPS_M=2,WARPS_N=4,STAGES=3
b mm-2 kgen matmul_bf16_4k $M
for p in "main rows2" "pool-main pool-rows2" "main-2 rows2-s2-2" "main-2 rows4-s2-2" "mm mm-128"; do
	set -- $p
	./bin/kgen bench --compare "$W/$1.json" "$W/$2.json" > "$W/compare-$1-$2.txt" 2>&1
	echo "== $1 against $2"
	grep -hE "^[a-z]" "$W/compare-$1-$2.txt" | grep -v "^old:\|^new:\|^noise:\|^instance" | cut -c1-120
done
cp bin/kgen-wr bin/kgen
mkdir -p "$W/ncu"
KGEN_RUNNER_WRAPPER="ncu --log-file $W/ncu/ncu-rows2.txt -k regex:^dw_s2_5x5\$ -c 2 --section SpeedOfLight --section Occupancy --section MemoryWorkloadAnalysis" \
	timeout 90 ./bin/kgen bench --target cuda:sm_90 --config ROWS=2,VEC=2 --kernel dw_s2_5x5 $D > "$W/ncu/bench.txt" 2>&1
echo "== ncu ROWS=2: exit $?"
grep -E "Duration|L1/TEX Cache Throughput|DRAM Throughput|Registers Per|Achieved Occ|Waves" "$W/ncu/ncu-rows2.txt" | head -12
# One archive: a call returns only a few files.
cd "$W" && tar cJf all.tar.xz *.json *.log *.txt ncu && rm -rf *.json *.log compare-*.txt ncu
