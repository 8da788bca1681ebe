#!/bin/sh
# For the next session's first call (written in the forty-fourth, not yet
# run). Binaries in bin/bins.tar.xz: kgen-old, the tree of 81f02e7 (16
# warps at most); kgen-mid, main at 8261d38 or later (row-reduce's 32
# warps, the default where rows are streamed by no more programs than
# multiprocessors); kgen, the same with mask-free.diff applied (Triton's
# streamed rows: whole blocks unmasked, the last block masked after them).
#   1. groupnorm_kb, whose statistics launch took 32 warps untimed, and the
#      two softmaxes timed once: kgen-old against kgen-mid, both orders.
#   2. mask-free.diff: kgen-mid against kgen, both orders, on the
#      instances whose Triton code it changes.
#   3. kgen tune of Triton's row-reduce launches short of 80% of a
#      same-size copy, now that the space has 32 warps (with kgen-mid).
# Building the binaries here:
#   git worktree add /tmp/wo 81f02e7 && (cd /tmp/wo && go build -ldflags="-s -w" -o /tmp/b/kgen-old ./cmd/kgen)
#   go build -ldflags="-s -w" -o /tmp/b/kgen-mid ./cmd/kgen
#   git apply testsuite/results/2026-12-07-h100-s44-online/mask-free.diff && go build -ldflags="-s -w" -o /tmp/b/kgen ./cmd/kgen
#   rm -rf bin && mkdir bin && tar cJf bin/bins.tar.xz -C /tmp/b .   (then carry bin)
tar xJf bin/bins.tar.xz -C bin
export PATH="/usr/local/cuda/bin:$PATH"
F="examples testsuite/kernelbench/level1.kg"
run() { # name kgens kernels
	KGENS="$2" BASELINE= TARGETS=triton:sm_90 KERNELS=$3 OUT=$OUT/$1 testsuite/gpu_before_after.sh $F > $OUT/$1.txt 2>&1
}
if [ "${STEP:-1}" = 2 ]; then # the tune alone: the timings took most of a call
T=groupnorm_kb,instancenorm_kb,layernorm_3d_kb,frobenius_kb,softmax_vocab
./bin/kgen-mid tune --target triton:sm_90 --kernel $T --strategy exhaustive --time 40s --db $OUT/tune.jsonl examples > $OUT/tune.log 2> $OUT/tune.err
echo "tune exit $?"; cat $OUT/tune.log; exit
fi
K=groupnorm_kb,softmax_vocab,kb_softmax_wide
run w1 "kgen-old kgen-mid" $K
run w2 "kgen-mid kgen-old" $K
M=softmax_vocab,kb_softmax_wide,cross_entropy_vocab,frobenius_kb,groupnorm_kb,instancenorm_kb,layernorm_3d_kb,matvec_256x131072,kb_matvec_nominal,kb_matvec_odd
run m1 "kgen-mid kgen" $M
run m2 "kgen kgen-mid" $M
cd $OUT && tar czf all.tgz w1 w2 m1 m2 && rm -rf w1 w2 m1 m2
tail -n 14 w1.txt w2.txt m1.txt m2.txt
