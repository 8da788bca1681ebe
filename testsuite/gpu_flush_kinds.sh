#!/bin/sh
# Times the memory-bound example instances under the timing protocol's L2
# flushes (KINDS, default "write read"), in one call: --flush write (a
# memset of twice the L2, as triton.testing.do_bench flushes; the
# default), --flush read, --flush clean (reads, each run charged its own
# write-backs), each on TARGETS (default cuda:sm_90 and triton:sm_90)
# beside PyTorch eager. Build bin/kgen first. Results go to $OUT (KIND.*);
# a comparison of the first two kinds is printed last.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
TARGETS=${TARGETS:-cuda:sm_90,triton:sm_90}
KERNELS=${KERNELS:-sum_rows_kb,sum_cols_kb,sum_cols_bf16_kb,sum_rows_4kx16k,logsumexp_4k,gelu_64m,softplus_softsign_kb,chain_kb,axpy_16m,transpose_last2_kb,vecmat_4k,matvec_256x131072,maxpool_2x2,maxpool_3x3_s2_p1,quantize_kb,instancenorm_kb,layernorm_bf16_llm,layernorm_8kx4k,rmsnorm_llama,rmsnorm_bf16_llama,rmsnorm_features_kb,cross_entropy_vocab,softmax_vocab,softmax_dim1_big,softmax_4kx16k,dw_relu6_s2,concat_kb}
FILES=${FILES:-examples}
for kind in ${KINDS:-write read}; do
	./bin/kgen bench --flush "$kind" --target "$TARGETS" --kernel "$KERNELS" --baseline eager \
		--json "$OUT/$kind.json" --md "$OUT/$kind.md" $FILES > "$OUT/$kind.log" 2> "$OUT/$kind.err"
	echo "kgen bench --flush $kind: exit $?"
	grep -v "^bench: " "$OUT/$kind.err" | tail -5
done
set -- ${KINDS:-write read}
./bin/kgen bench --compare "$OUT/$1.json" "$OUT/$2.json" 2>&1 | tee "$OUT/compare.txt"
