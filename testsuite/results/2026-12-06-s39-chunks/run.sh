#!/bin/bash
# The thirty-ninth session's call, cuda:sm_90. bin/kgen is this session's
# tree: (a) the loads of a register-loop reduction beside no cached row (a
# split row's X[chunk * CH + d]) read a chunk at a time, each row's
# alignment checked (chunkLoads, kg_pvec); (b) the stores still written as
# a cast of the chunk's first element's address (the tensor-core and SIMT
# matmul epilogues, the transposes, the column groups, a cached row's
# outputs) indexed as vectors (vecAt), which nvcc no longer splits into one
# store a point (matmul_bf16_4k's PTX: 256 scalar stores, no vector one,
# before). bin/kgen-base is main before them (12cb7cb).
#  1. kgen test (bin/kgen) of the files whose loads changed;
#  2. kgen-base and kgen timed on some of the changed kernels and
#     kb_matvec_nominal (changed by neither: the control), kgen with
#     PyTorch eager beside it; kgen bench --compare;
#  3. kgen test of the files whose stores changed.
# The call was cut to what the session's device time left allowed.
# Results go straight to $OUT, most needed first.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
W=${OUT:-/tmp/out}
mkdir -p "$W/correct" "$W/time"
t() { # name, timeout, kgen, args...
	local n=$1 s=$2 k=$3
	shift 3
	timeout -k 5 "$s" ./bin/$k test --target cuda:sm_90 --seeds 3 "$@" > "$W/correct/$n.log" 2>&1
	echo "test $n ($k): exit $? $(grep -E 'passed' "$W/correct/$n.log" | tail -1)"
}
t chunks 35 kgen examples/l2norm.kg examples/matvec.kg examples/reductions.kg backends/cuda/testdata/rows.kg
K=frobenius_kb,dot_1m,sum_all_1k,transpose_last2_kb,softmax_dim1_big,matmul_bf16_4k,gemm_bias_relu_4k,kb_matvec_nominal
F="examples/l2norm.kg examples/matvec.kg examples/reductions.kg examples/transpose.kg examples/softmax.kg examples/matmul_lowp.kg examples/fused_gemm.kg testsuite/kernelbench/level1.kg"
timeout 55 ./bin/kgen-base bench --target cuda:sm_90 --kernel "$K" --json "$W/time/kgen-base.json" $F > "$W/time/kgen-base.log" 2>&1
echo "bench kgen-base: exit $?"
timeout 75 ./bin/kgen bench --target cuda:sm_90 --baseline eager --kernel "$K" --json "$W/time/kgen.json" $F > "$W/time/kgen.log" 2>&1
echo "bench kgen: exit $?"
./bin/kgen bench --compare "$W/time/kgen-base.json" "$W/time/kgen.json" > "$W/time/compare-kgen.txt" 2>&1
echo "== kgen-base against kgen"
grep -hE "^[a-z]" "$W/time/compare-kgen.txt" | grep -v "^old:\|^new:\|^noise:\|^instance" | cut -c1-120
grep -E "matmul_bf16_4k|gemm_bias_relu_4k|matmul_f16_8k|frobenius_kb" "$W/time/kgen.log" | cut -c1-200
t epilogues 60 kgen examples/matmul.kg examples/fused_gemm.kg examples/matmul_lowp.kg examples/attention.kg examples/conv1x1.kg
t groups 30 kgen examples/transpose.kg examples/rmsnorm.kg examples/softmax.kg
