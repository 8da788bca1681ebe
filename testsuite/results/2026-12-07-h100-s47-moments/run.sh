#!/bin/bash
# The forty-seventh session's call for the moments (nvidia-h100-x1; carry
# bin): bin/kgen from main at 5a01dbb or later, with backends/cuda/moments.go (a
# mean and its squared deviations in one reduction across the row's
# threads, where they took two), bin/kgen-base from f0ad9f8 (before it),
# bin/kgen-cm from branch s47-cached-moments; run it as
#   FROB=1 bash testsuite/results/2026-12-07-h100-s47-moments/run.sh
#   1. kgen test on cuda:sm_90 of testsuite/staged_rows.kg staged by
#      clusters of 16 (the cluster path is not emulated), then (after 2)
#      testsuite/cluster_rows.kg and examples/norms.kg, layernorm.kg;
#   2. center_2m, layernorm_2m (testsuite/cluster_rows.kg) staged by
#      clusters of 16 blocks of 1024 threads, both orders;
#   3. the instances whose code changes at their defaults (groupnorm_kb,
#      layernorm_3d_kb, layernorm_odd, add_layernorm_odd),
#      both orders;
#   4. where bin/kgen-cm exists (branch s47-cached-moments: rows kept in
#      registers take the moments too), kgen test of norms.kg and
#      layernorm.kg with it, and the instances whose rows it keeps in
#      registers against bin/kgen, both orders;
#   5. with FROB=1, testsuite/exp/frob_resident.cu.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
for c in 16:128; do
	IFS=: read -r k th <<< "$c"
	cfg="row-reduce.STAGE=1,row-reduce.CLUSTER=$k,row-reduce.PREFETCH=0,row-reduce.BLOCK_ROWS=1,row-reduce.THREADS=$th"
	timeout -k 5 50 ./bin/kgen test --target cuda:sm_90 --seeds 3 --max-work 3e7 --config "$cfg" testsuite/staged_rows.kg > "$OUT/staged-c$k.log" 2>&1
	echo "test staged_rows.kg CLUSTER=$k: exit $? $(grep -E 'passed' "$OUT/staged-c$k.log" | tail -1)"
done
S=row-reduce.STAGE=1,row-reduce.CLUSTER=16,row-reduce.PREFETCH=0,row-reduce.THREADS=1024
sh testsuite/config_kgen.sh kgen-s16 kgen $S
sh testsuite/config_kgen.sh kgen-base-s16 kgen-base $S
ba() { # name kgens kernels files
	KGENS="$2" BASELINE= TARGETS=cuda:sm_90 KERNELS=$3 OUT=$OUT/$1 testsuite/gpu_before_after.sh $4 > $OUT/$1.txt 2>&1
}
ba s1 "kgen-base-s16 kgen-s16" center_2m,layernorm_2m testsuite/cluster_rows.kg
ba s2 "kgen-s16 kgen-base-s16" center_2m,layernorm_2m testsuite/cluster_rows.kg
tail -n 5 $OUT/s1.txt $OUT/s2.txt
timeout -k 5 60 ./bin/kgen test --target cuda:sm_90 --seeds 3 testsuite/cluster_rows.kg examples/norms.kg examples/layernorm.kg > "$OUT/correct.log" 2>&1
echo "test cluster_rows.kg norms.kg layernorm.kg: exit $? $(grep -E 'passed' "$OUT/correct.log" | tail -1)"
R=groupnorm_kb,layernorm_3d_kb,layernorm_odd,add_layernorm_odd
ba r1 "kgen-base kgen" $R "examples testsuite/cluster_rows.kg"
ba r2 "kgen kgen-base" $R "examples testsuite/cluster_rows.kg"
tail -n 9 $OUT/r1.txt $OUT/r2.txt
if [ -x bin/kgen-cm ]; then
	timeout -k 5 60 ./bin/kgen-cm test --target cuda:sm_90 --seeds 3 examples/norms.kg examples/layernorm.kg > "$OUT/correct-cm.log" 2>&1
	echo "kgen-cm test norms.kg layernorm.kg: exit $? $(grep -E 'passed' "$OUT/correct-cm.log" | tail -1)"
	C=layernorm_bert,layernorm_8kx4k,layernorm_bf16_llm,kb_layernorm_nominal,instancenorm_kb,var_std_rows_kb
	ba c1 "kgen kgen-cm" $C "examples testsuite/kernelbench/level1.kg"
	ba c2 "kgen-cm kgen" $C "examples testsuite/kernelbench/level1.kg"
	tail -n 9 $OUT/c1.txt $OUT/c2.txt
fi
(cd $OUT && tar czf moments.tgz s1 s2 r1 r2 c1 c2 2>/dev/null; rm -rf s1 s2 r1 r2 c1 c2)
if [ -n "${FROB:-}" ]; then
	nvcc -O3 -arch=sm_90 -o /tmp/frob_resident testsuite/exp/frob_resident.cu > $OUT/frob_build.txt 2>&1 && timeout 100 /tmp/frob_resident > $OUT/frob_resident.txt 2>&1
	echo "frob_resident exit $?"
	cat $OUT/frob_resident.txt
fi
