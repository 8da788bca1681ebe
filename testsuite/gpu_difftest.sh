#!/bin/sh
# The GPU half of the differential tester (testsuite/difftest): runs
# `kgen test` (every kernel and instance on the GPU, against the reference
# interpreter) on the committed batch of generated specs,
# testsuite/difftest/gpu-batch/*.kg, and on the reproducers and seed specs
# of testsuite/corpus (those not marked known-failure), for every runnable
# target that bin/kgen knows: cuda:sm_90, triton:sm_90, hip:nvidia.
#
# Needs no Go: build bin/kgen here first (go build -o bin/kgen ./cmd/kgen)
# and carry bin/. The batch was generated with
#   go run ./testsuite/difftest -gen testsuite/difftest/gpu-batch -seed 5000 -n 40
# Logs go to $OUT (difftest-TARGET-SET.log); a table of counts is printed
# last. A set whose build fails (a spec that does not compile) is re-run
# one spec at a time, so the others are still tested and the culprit named.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
KGEN=${KGEN:-./bin/kgen}
LIMIT=${LIMIT:-240}   # seconds per target and set; TARGETS=... runs fewer targets (one call each stays under 10 minutes)
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/difftest-gpu.txt" 2>&1
"$KGEN" version >> "$OUT/difftest-gpu.txt" 2>&1
"$KGEN" devices >> "$OUT/difftest-gpu.txt" 2>&1

batch=$(ls testsuite/difftest/gpu-batch/*.kg)
corpus=$(grep -L '^// known-failure:' testsuite/corpus/*.kg)
table="$OUT/difftest-table.txt"
printf '%-14s %-7s %5s %6s %6s %6s %7s %7s  %s\n' target set specs plans passed failed skipped checks notes > "$table"

# run TARGET SET FILES...: kgen test on the files at once, or one at a
# time when the build of the whole set fails.
run() {
	t=$1; set_name=$2; shift 2
	log="$OUT/difftest-$(echo "$t" | tr ':' '_')-$set_name.log"
	n=$#
	timeout "$LIMIT" "$KGEN" test --target "$t" --seeds 2 "$@" > "$log" 2>&1
	code=$?
	notes=""
	if ! grep -q ' plans: ' "$log"; then
		# The set did not build: test each spec alone.
		echo "== the set did not build (exit $code); one spec at a time" >> "$log"
		notes="per-spec:"
		for f in "$@"; do
			echo "== $f" >> "$log"
			timeout 60 "$KGEN" test --target "$t" --seeds 2 "$f" >> "$log" 2>&1
			c=$?
			[ $c -ne 0 ] && notes="$notes $(basename "$f")=$c"
		done
	elif [ $code -ne 0 ]; then
		notes="exit $code"
	fi
	# Sum the summary lines: "N plans: P passed, F failed, S skipped; C checks in T".
	sums=$(grep ' plans: ' "$log" | sed 's/[,;]//g' | awk '{p+=$1; ok+=$3; f+=$5; s+=$7; c+=$9} END {printf "%d %d %d %d %d", p, ok, f, s, c}')
	set -- $sums
	printf '%-14s %-7s %5d %6d %6d %6d %7d %7d  %s\n' "$t" "$set_name" "$n" "$1" "$2" "$3" "$4" "$5" "$notes" >> "$table"
}

for t in ${TARGETS:-cuda:sm_90 triton:sm_90 hip:nvidia}; do
	# A target this kgen does not know is a usage error (exit 2).
	"$KGEN" build --emit-only --target "$t" -o "$OUT/probe" testsuite/corpus/compile-s1.kg > /dev/null 2>&1
	if [ $? -eq 2 ]; then
		printf '%-14s %-7s %5s %6s %6s %6s %7s %7s  %s\n' "$t" - - - - - - - "not a target of this kgen" >> "$table"
		continue
	fi
	run "$t" batch $batch
	run "$t" corpus $corpus
done
rm -rf "$OUT/probe"
cat "$OUT/difftest-gpu.txt" | head -3
grep -h -E '^FAIL|^  .* seed .*:' "$OUT"/difftest-*.log | head -40
cat "$table"
