#!/bin/sh
# Times the matrix-product instances under several template configurations
# (kgen bench --config), then the instances of issue 3's targets beside
# PyTorch eager: how the templates' default configurations were chosen.
# Build bin/kgen first (go build -o bin/kgen ./cmd/kgen). Logs go to $OUT;
# a table of configurations and times is printed last.
#   usage: gpu_sweep.sh [CONFIGS_FILE]
# CONFIGS_FILE holds lines "INSTANCE FILE CONFIG"; the default is
# testsuite/sweep.txt.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
configs=${1:-$(dirname "$0")/sweep.txt}
: > "$OUT/sweep.txt"
grep -v '^#' "$configs" | while read -r inst file cfg; do
	[ -n "$inst" ] || continue
	line=$(timeout 120 ./bin/kgen bench --target "${TARGET:-cuda:sm_90}" --config "$cfg" --kernel "$inst" "$file" 2>>"$OUT/sweep.err" | grep "^$inst ")
	echo "$cfg $line" >> "$OUT/sweep.txt"
done
echo "== sweep"
cat "$OUT/sweep.txt"
