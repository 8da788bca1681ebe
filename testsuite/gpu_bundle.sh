#!/bin/sh
# Runs several GPU scripts in one device call and packs what they write
# into one file: the device tool brings back at most 8 files from $OUT.
# Each argument is one shell command, run with OUT set to a folder of its
# own ($OUT/bundle/1, 2, ...); its output goes to that folder's run.txt
# and is printed. Then $OUT/bundle is packed into $OUT/bundle.tgz.
#   testsuite/gpu_bundle.sh 'LEVELS=2 testsuite/gpu_suite.sh' 'testsuite/gpu_triton.sh bench'
set -u
OUT=${OUT:-/tmp/out}
n=0
for c in "$@"; do
	n=$((n + 1))
	dir="$OUT/bundle/$n"
	mkdir -p "$dir"
	echo "$c" > "$dir/command.txt"
	echo "== $n: $c"
	OUT="$dir" sh -c "$c" > "$dir/run.txt" 2>&1
	echo "exit $?" >> "$dir/run.txt"
	cat "$dir/run.txt"
done
tar czf "$OUT/bundle.tgz" -C "$OUT" bundle && rm -rf "$OUT/bundle"
