#!/bin/bash
# The thirtieth session's first call, on nvidia-h200-x4 (bin/kgen at the
# session's start, bin/kgen-base from 9bc9d64, before Triton's kg_f2i32).
#   GPU 0: nc_loads.sh (ld.global.nc against plain loads); Triton's
#          kg_f2i32 before and after; casts.kg on three targets under
#          specials, normal and large inputs; then every example not yet
#          run under specials on triton:sm_90, four files at a time.
#   GPUs 1, 2, 3: kgen tune of testsuite/other-instances.txt, one target a
#          GPU (cuda:sm_90, triton:sm_90, hip:nvidia), until DEADLINE.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
OUT=$FINAL/w
mkdir -p "$OUT"
DEADLINE=${DEADLINE:-540}
others=$(grep -v '^#' testsuite/other-instances.txt)
for t in cuda:sm_90 triton:sm_90 hip:nvidia; do
	d="$OUT/tune-$(echo "$t" | tr ':' '_')"
	mkdir -p "$d"
	case $t in cuda*) g=1 ;; triton*) g=2 ;; hip*) g=3 ;; esac
	db=""
	[ -n "${DBDIR:-}" ] && db="$DBDIR/$(echo "$t" | tr ':' '_').jsonl"
	CUDA_VISIBLE_DEVICES=$g OUT="$d" DB=$db DEADLINE=$DEADLINE TARGET=$t KERNELS=$others \
		bash testsuite/gpu_tune_examples.sh > "$d/run.txt" 2>&1 &
done

(
	export CUDA_VISIBLE_DEVICES=0
	bash testsuite/exp/nc_loads.sh "$OUT/nc_loads" > "$OUT/nc_loads.txt" 2>&1
	mkdir -p "$OUT/f2i32"
	OUT="$OUT/f2i32" KGENS="kgen-base kgen" BASELINE= TARGETS=triton:sm_90 KERNELS=quantize_kb,quantize_rows_kb,quantize_small \
		sh testsuite/gpu_before_after.sh examples > "$OUT/f2i32.txt" 2>&1
	mkdir -p "$OUT/casts"
	for t in cuda:sm_90 triton:sm_90 hip:nvidia; do
		./bin/kgen test --target $t --dists specials,normal,large --seeds 3 testsuite/exp/casts.kg \
			> "$OUT/casts/$(echo "$t" | tr ':' '_').log" 2>&1
		echo "casts $t: exit $?" >> "$OUT/casts/exits.txt"
	done
	mkdir -p "$OUT/specials-triton"
	left=$((DEADLINE - SECONDS - 10))
	printf '%s\n' conv1d conv1x1 conv2d depthwise_conv elementwise fused_gemm l2norm layernorm masked matmul matmul_lowp matvec norms pad_concat rmsnorm transpose |
		xargs -P 4 -I{} sh -c "timeout -k 5 $left ./bin/kgen test --target triton:sm_90 --dists specials --seeds 1 --max-work 3e7 examples/{}.kg > $OUT/specials-triton/{}.log 2>&1; echo {} exit \$? >> $OUT/specials-triton/exits.txt"
) &
wait
echo "== table"
cat "$OUT/nc_loads.txt" | tail -8
tail -6 "$OUT/f2i32.txt"
cat "$OUT/casts/exits.txt"; grep -h '^test:\|passed\|FAIL' "$OUT"/casts/*.log | tail -6
cat "$OUT/specials-triton/exits.txt"
for d in "$OUT"/tune-*; do echo "$d: $(head -1 $d/run.txt 2>/dev/null) $(grep -h '^kgen tune:' $d/run.txt)"; done
tar czf "$FINAL/s30-first.tgz" -C "$OUT" . && rm -rf "$OUT"
