#!/bin/bash
# Issue 5's one runner a GPU: kgen tune of the same instances with one GPU
# (--gpus 0) and with every GPU of the machine (--gpus all), each into a
# database of its own, with the wall time of each and the winners both
# chose. On a machine of several GPUs (nvidia-h200-x2 or -x4). Build
# bin/kgen first; logs go to $OUT; a summary is printed last.
#   KERNELS=gelu_kb,silu_kb,... testsuite/gpu_tune_gpus.sh examples
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
[ $# -gt 0 ] || set -- examples
OUT="$OUT" "$(dirname "$0")/gpu_machine.sh"
for gpus in 0 all; do
	start=$SECONDS
	timeout -k 10 "${LIMIT:-240}" ./bin/kgen tune --target "${TARGET:-cuda:sm_90}" --gpus "$gpus" --db "$OUT/gpus-$gpus.jsonl" \
		--strategy model --budget "${BUDGET:-6}" --kernel "$KERNELS" "$@" > "$OUT/gpus-$gpus.txt" 2> "$OUT/gpus-$gpus.log"
	echo "--gpus $gpus: exit $?, $((SECONDS - start)) s, $(grep -c . "$OUT/gpus-$gpus.jsonl") records" | tee "$OUT/gpus-$gpus.summary.txt"
done
echo "== winners (--gpus 0, then all)"
for gpus in 0 all; do
	echo "-- $gpus"
	cat "$OUT/gpus-$gpus.txt"
done
