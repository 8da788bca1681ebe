#!/bin/bash
# The benchmark suite in parts (issue 6), for GPU calls too short for a
# whole level with torch.compile's max-autotune: for each level, the
# nominal instances that kgen plans as matrix products or implicit GEMMs
# ("contractions", those max-autotune is timed for) in groups of GROUP,
# each timed beside eager, compile and max-autotune, and the other nominal
# instances in one part beside eager and compile. Parts are named l1-rest,
# l1-mm1, l1-mm2, ..., l2-rest, l2-mm1, ...; PARTS picks which to run (default
# all, in that order), LIMIT the seconds each may take (default 280). Each
# part writes $OUT/part-NAME.json, .log and .err; a part that ran out of
# time writes no JSON. Join the parts with
#   kgen bench --merge part-*.json --json suite.json --md suite.md --html suite.html
# Build bin/kgen first. PARTS=list prints the parts and their instances
# without a GPU.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
TARGET=${TARGET:-cuda:sm_90a}
GROUP=${GROUP:-4}
dir=$(dirname "$0")/kernelbench
mkdir -p "$OUT"

# parts prints "NAME FILE BASELINES INSTANCES" for every part of every level.
parts() {
	for level in 1 2; do
		file=$dir/level$level.kg
		nominal=$(sed -n 's/^instance \([a-z0-9_]*\) = .*/\1/p' "$file" | grep -v -e '_odd$' -e '_small$')
		# Plans whose launches take a matmul-* or igemm-* template.
		mm=$(./bin/kgen ir --after lower --target "$TARGET" "$file" | awk '
			/^plan / { name = $2 }
			/^  launch / && / (matmul|igemm)-[a-z]+\(/ { print name }' | sort -u)
		rest=() mms=()
		for n in $nominal; do
			if grep -qx "$n" <<<"$mm"; then mms+=("$n"); else rest+=("$n"); fi
		done
		if [ ${#rest[@]} -gt 0 ]; then
			echo "l$level-rest $file eager,compile $(IFS=,; echo "${rest[*]}")"
		fi
		for ((i = 0; i < ${#mms[@]}; i += GROUP)); do
			echo "l$level-mm$((i / GROUP + 1)) $file eager,compile,max-autotune $(IFS=,; echo "${mms[*]:i:GROUP}")"
		done
	done
}

all=$(parts) || exit 1
if [ "${PARTS:-}" = list ]; then
	echo "$all"
	exit 0
fi
for name in ${PARTS:-$(cut -d' ' -f1 <<<"$all")}; do
	read -r _ file baselines names < <(grep "^$name " <<<"$all") || { echo "no part $name" >&2; continue; }
	start=$SECONDS
	timeout -k 10 "${LIMIT:-280}" ./bin/kgen bench --target "$TARGET" --baseline "$baselines" --kernel "$names" \
		--json "$OUT/part-$name.json" "$file" > "$OUT/part-$name.log" 2> "$OUT/part-$name.err"
	echo "part $name: exit $?, $((SECONDS - start)) s" | tee -a "$OUT/parts.txt"
done
