#!/bin/sh
# Which instances a tuning database changes: builds the spec files (default
# examples) for TARGET (default triton:sm_90) without a GPU, once with the
# heuristic defaults (--db off) and once with the databases given as
# arguments, and prints each instance of KERNELS (all when unset) as
# "same" or "differs" by its launches' configurations. An instance that
# is the same builds to the same code both ways, so that its default's
# time is its tuned time. Build bin/kgen first.
#   KERNELS="$(grep -v '^#' testsuite/memory-bound.txt)" testsuite/tuned_same_code.sh testsuite/results/*/tune.jsonl
set -eu
TARGET=${TARGET:-triton:sm_90}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat "$@" > "$dir/db.jsonl"
files=$(ls examples/*.kg)
for db in off tuned; do
	out="$dir/$db"
	arg=off
	[ "$db" = tuned ] && arg="$dir/db.jsonl"
	./bin/kgen build --target "$TARGET" --emit-only --db "$arg" -o "$out" $files > /dev/null 2>&1
	# Each launch's header: "// NAME: launch I of N, template T (CONFIG)"
	# in CUDA and HIP, with "#" in Triton.
	cat "$out"/* | sed -n 's@^\(//\|#\) \([A-Za-z0-9_]*\): launch \(.*\)$@\2 \3@p' | sort > "$out.launches"
done
names=${KERNELS:-$(cut -d' ' -f1 "$dir/off.launches" | sort -u | tr '\n' ',')}
echo "$names" | tr ',' '\n' | while read -r k; do
	[ -n "$k" ] || continue
	a=$(grep "^$k " "$dir/off.launches" || true)
	b=$(grep "^$k " "$dir/tuned.launches" || true)
	if [ -z "$a" ]; then
		echo "$k: not built"
	elif [ "$a" = "$b" ]; then
		echo "$k: same"
	else
		echo "$k: differs"
	fi
done
