#!/bin/sh
# The forty-seventh session's call (nvidia-h100-x1; bin/kgen from main;
# carry bin):
#   1. testsuite/exp/frob_resident.cu: frobenius_kb's normalization as one
#      cooperative launch keeping most of X on chip (registers and shared
#      memory) across a grid barrier, the rest read again after the
#      barrier, against a copy and kgen's two-pass shape;
#   2. kgen bench of frobenius_kb on cuda:sm_90 and triton:sm_90 (its time
#      against a same-size copy, kgen's own protocol), to place 1's plans;
#   3. testsuite/exp/reverse_reread.py, the forty-sixth session's
#      experiment, whose first run failed on its flush (torch.sum's out=
#      needs a dim; fixed), unless QUICK is set.
export PATH="/usr/local/cuda/bin:$PATH"
nvcc -O3 -arch=sm_90 -Xptxas -v -o /tmp/frob_resident testsuite/exp/frob_resident.cu > $OUT/frob_build.txt 2>&1
echo "nvcc exit $?"
timeout 200 /tmp/frob_resident > $OUT/frob_resident.txt 2>&1
echo "frob_resident exit $?"
timeout 150 ./bin/kgen bench --target ${BENCH_TARGETS:-cuda:sm_90,triton:sm_90} --kernel frobenius_kb --json $OUT/bench.json examples/l2norm.kg > $OUT/bench.txt 2>&1
echo "kgen bench exit $?"
if [ -z "$QUICK" ]; then
	timeout 150 python3 testsuite/exp/reverse_reread.py > $OUT/reverse.txt 2>&1
	echo "reverse_reread exit $?"
	cat $OUT/reverse.txt
fi
grep -i "frobenius\|copy" $OUT/bench.txt | tail -n 6; cat $OUT/frob_resident.txt
