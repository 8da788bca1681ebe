#!/bin/sh
# Nsight Compute's view of some instances' kernels on a GPU machine: for
# each instance named in $@ (FILE:INSTANCE), the first launch of each of
# its kernels under kgen bench, with the speed-of-light, occupancy, launch
# and warp-state sections. Build bin/kgen first. Reports go to
# $OUT/ncu-INSTANCE.txt; a summary of each is printed.
# TARGET may be triton:sm_90 too (the Python runner starts under the
# wrapper as the CUDA one does; Triton names a kernel after its function).
#   TARGET=cuda:sm_90a testsuite/gpu_ncu.sh examples/softmax.kg:softmax_vocab
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
for spec in "$@"; do
	file=${spec%%:*} inst=${spec#*:}
	# ncu starts the runner (KGEN_RUNNER_WRAPPER): it cannot follow Go's
	# child processes.
	KGEN_RUNNER_WRAPPER="ncu --log-file $OUT/ncu-$inst.txt -k regex:^${inst}(_[0-9]+_.*)?\$ -c 4 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis --section SourceCounters" \
		./bin/kgen bench --target "${TARGET:-cuda:sm_90a}" --kernel "$inst" "$file" > "$OUT/bench-$inst.txt" 2>&1
	echo "== $inst: kgen bench under ncu exit $?"
	grep -E "^  [a-z_0-9]+.*\(|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Size|Grid Size|Dynamic Shared|Static Shared|Waves Per SM|Stall|L2 Hit|L1/TEX Hit" "$OUT/ncu-$inst.txt" | head -40
done
