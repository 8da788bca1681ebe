tar xJf bin/bins.tar.xz -C bin
export PATH="/usr/local/cuda/bin:$PATH"
./bin/kgen tune --target triton:sm_90 --kernel softmax_vocab,instancenorm_kb --strategy exhaustive --time 80s --db $OUT/tune.jsonl examples/softmax.kg examples/norms.kg > $OUT/tune.log 2> $OUT/tune.err
echo "tune exit $?"; tail -n 25 $OUT/tune.log
KERNELS=softmax_vocab,instancenorm_kb TARGETS=triton:sm_90 BASELINE= OUT=$OUT/tvd sh testsuite/gpu_tuned_vs_default.sh $OUT/tune.jsonl
