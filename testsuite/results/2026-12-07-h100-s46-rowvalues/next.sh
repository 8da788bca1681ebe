#!/bin/sh
# For the next session's first call (nvidia-h100-x1; carry bin), written
# in the forty-sixth, whose device time ended before it could run:
#   bin/kgen       main (with hoistRowValues: a row-reduce row's costly
#                  values of the row alone, a norm's rsqrt(var + eps),
#                  computed once a row before the outputs' loop);
#   bin/kgen-base  5f4e2e9, the commit before it:
#     git worktree add /tmp/base 5f4e2e9 && (cd /tmp/base && go build -ldflags='-s -w' -o /work/main/bin/kgen-base ./cmd/kgen)
# GPU-free (nvcc 11.8, sm_90): center_2m staged by clusters of 16 ran 32
# MUFU.RSQ in its SASS, now 3 (2504 -> 2304 instructions, 64 -> 63
# registers); the non-staged norms' SASS is all but the same (nvcc had
# hoisted it there). Timed here on cuda:sm_90, both orders: every instance
# whose code changed that is large enough to time, then center_2m and
# layernorm_2m staged by clusters of 16 (--config), where the gain should
# show; then the forty-sixth session's own second call.
export PATH="/usr/local/cuda/bin:$PATH"
wrap() { # name kgen config
	printf '#!/bin/sh\ncmd=$1; shift\nexec "$(dirname "$0")/%s" "$cmd" --config %s "$@"\n' "$2" "$3" > bin/$1
	chmod +x bin/$1
}
S=row-reduce.STAGE=1,row-reduce.CLUSTER=16,row-reduce.PREFETCH=0,row-reduce.THREADS=1024
wrap kgen-s16 kgen $S
wrap kgen-base-s16 kgen-base $S
F="examples testsuite/kernelbench/level1.kg testsuite/cluster_rows.kg"
K=layernorm_8kx4k,layernorm_bert,layernorm_bf16_llm,kb_layernorm_nominal,instancenorm_kb,center_2m,layernorm_2m
ba() { # name kgens kernels files
	KGENS="$2" BASELINE= TARGETS=cuda:sm_90 KERNELS=$3 OUT=$OUT/$1 testsuite/gpu_before_after.sh $4 > $OUT/$1.txt 2>&1
}
ba r1 "kgen-base kgen" $K "$F"
ba r2 "kgen kgen-base" $K "$F"
ba s1 "kgen-base-s16 kgen-s16" center_2m,layernorm_2m testsuite/cluster_rows.kg
ba s2 "kgen-s16 kgen-base-s16" center_2m,layernorm_2m testsuite/cluster_rows.kg
(cd $OUT && tar czf rowvalues.tgz r1 r2 s1 s2 && rm -rf r1 r2 s1 s2)
tail -n 12 $OUT/r1.txt $OUT/r2.txt; tail -n 6 $OUT/s1.txt $OUT/s2.txt
