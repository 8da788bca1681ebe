#!/bin/bash
# Issue 5's tuned-versus-default evidence for several targets in one call
# on a machine of several GPUs: the GPUs are dealt out to the TARGETS in
# turn (four GPUs and two targets: 0,2 and 1,3), each target's instances
# (KERNELS, default every example) are tuned on its GPUs at once
# (gpu_tune_examples.sh, resuming $DBDIR/TARGET.jsonl where DBDIR holds
# one), and when a target's tuning stops (done, or DEADLINE seconds from
# the start, default 360) its instances are timed with the defaults and
# with the database (gpu_tuned_vs_default.sh), split in as many parts as
# it has GPUs, each part on one GPU, both figures of an instance on the
# same GPU. Build bin/kgen first and carry bin. Logs go to
# $OUT/TARGET/{tune,part-N}/; a table of counts is printed last.
#   TARGETS="triton:sm_90 hip:nvidia" KERNELS="$(grep -v '^#' testsuite/memory-bound.txt)" testsuite/gpu_tune_targets.sh
#   DBDIR=testsuite/results/.../dbs (files named TARGET.jsonl, ':' as '_')
#   GPUS="1 2 3": deal out only these GPUs (default every GPU), leaving the
#   others to another job of the same call.
#   LISTS=FILE: each target tunes the instances of its line "TARGET: a,b,c"
#   in FILE (a run's untuned.txt) instead of KERNELS; a target without a
#   line tunes none. COMPARE=a,b,c: the instances timed tuned against
#   default (default: those the target tuned), e.g. all of a list of which
#   an earlier call tuned part.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
here=$(dirname "$0")
read -r -a targets <<< "${TARGETS:-cuda:sm_90 triton:sm_90 hip:nvidia}"
deadline=${DEADLINE:-360}
if [ -n "${GPUS:-}" ]; then
	read -r -a gpus <<< "$GPUS"
else
	mapfile -t gpus < <(nvidia-smi --query-gpu=index --format=csv,noheader)
fi
if [ "${#gpus[@]}" -lt "${#targets[@]}" ]; then
	echo "gpu_tune_targets: ${#gpus[@]} GPUs for ${#targets[@]} targets; want at least one each" >&2
	exit 2
fi
kernels=${KERNELS:-}
if [ -z "$kernels" ]; then
	kernels=$(grep -ho '^instance [A-Za-z0-9_]*' examples/*.kg | cut -d' ' -f2 | paste -sd,)
fi
kernels=$(echo "$kernels" | tr -s ', \n' ',' | sed 's/^,//; s/,$//')

run_target() {
	local t=$1 list=$2 dir
	dir="$OUT/$(echo "$t" | tr ':' '_')"
	mkdir -p "$dir/tune"
	local db=""
	[ -n "${DBDIR:-}" ] && [ -f "$DBDIR/$(echo "$t" | tr ':' '_').jsonl" ] && db="$DBDIR/$(echo "$t" | tr ':' '_').jsonl"
	local tk=$kernels
	[ -n "${LISTS:-}" ] && tk=$(grep "^$t: " "$LISTS" | cut -d' ' -f2)
	if [ -n "$tk" ]; then
		CUDA_VISIBLE_DEVICES=$list OUT="$dir/tune" DB=$db DEADLINE=$((deadline - SECONDS)) TARGET=$t KERNELS=$tk \
			bash "$here/gpu_tune_examples.sh" > "$dir/tune/run.txt" 2>&1
	else
		[ -n "$db" ] && cp "$db" "$dir/tune/tune.jsonl"
		echo "kgen tune: nothing to tune" > "$dir/tune/run.txt"
	fi
	# The instances in as many parts as the target has GPUs, a part a GPU.
	IFS=, read -r -a gl <<< "$list"
	IFS=, read -r -a kl <<< "${COMPARE:-$tk}"
	local n=${#gl[@]} i
	for i in "${!gl[@]}"; do
		local part="" j
		for ((j = i; j < ${#kl[@]}; j += n)); do part="$part${part:+,}${kl[$j]}"; done
		[ -n "$part" ] || continue
		mkdir -p "$dir/part-$i"
		CUDA_VISIBLE_DEVICES=${gl[$i]} OUT="$dir/part-$i" BASELINE= TARGETS=$t KERNELS=$part \
			sh "$here/gpu_tuned_vs_default.sh" "$dir/tune/tune.jsonl" > "$dir/part-$i/run.txt" 2>&1 &
	done
	wait
}

for k in "${!targets[@]}"; do
	list=""
	for ((g = k; g < ${#gpus[@]}; g += ${#targets[@]})); do list="$list${list:+,}${gpus[$g]}"; done
	echo "${targets[$k]}: GPUs $list"
	run_target "${targets[$k]}" "$list" &
done
wait

echo "== summary"
for t in "${targets[@]}"; do
	dir="$OUT/$(echo "$t" | tr ':' '_')"
	echo "$t: $(grep -h '^kgen tune:' "$dir/tune/run.txt")"
	grep -h '^summary:' "$dir"/part-*/compare.txt 2>/dev/null | sed 's/^/  /'
	grep -hE ' (faster|slower)$' "$dir"/part-*/compare.txt 2>/dev/null | sed 's/^/  /'
done
