#!/bin/bash
# Row launches staged in shared memory or spread over clusters, before and
# after a change, in one call on a GPU machine:
#  1. kgen test (bin/kgen) of testsuite/staged_rows.kg staged in one block
#     and by clusters of 4 and 16, of testsuite/cluster_rows.kg at its
#     defaults, and of every example instance (examples/ and KernelBench's
#     level 1) with a staged or cluster launch at its defaults, plus EXTRA;
#  2. each of KGENS (default "kgen-base kgen", both in bin/) timed on those
#     instances and on cluster_rows.kg's long rows (LONG) staged by
#     clusters of 16 blocks of each of THREADS (a comma-separated list,
#     default 1024), no PyTorch; then the first against each other
#     (kgen bench --compare).
# The instances come from the manifests that bin/kgen writes for
# cuda:sm_90 with the heuristic defaults. Build the binaries first and
# carry bin; logs go to $OUT, a short table last.
#   KGENS="kgen-base kgen" EXTRA=layernorm_bert testsuite/gpu_row_launches.sh
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/correct" "$OUT/emit" "$OUT/time"
set -f
KGENS=${KGENS:-kgen-base kgen}
set +f
THREADS=${THREADS:-1024}
LONG=${LONG:-center_2m,layernorm_2m}
FILES="examples/*.kg testsuite/kernelbench/level1.kg"
for f in $FILES; do
	./bin/kgen build --emit-only --db off --target cuda:sm_90 -o "$OUT/emit" "$f" > /dev/null 2>&1 || echo "emit $f: failed"
done
# The instances (entries with fixed sizes) with a launch staged or by
# clusters, in the manifests' order.
INSTANCES=$(python3 - "$OUT"/emit/*.manifest.json <<'PY'
import json, sys
names = []
for path in sys.argv[1:]:
    for e in json.load(open(path))["kernels"]:
        if not e.get("specialized"):
            continue
        for l in e.get("launches", []):
            c = l.get("config", {})
            if c.get("STAGE") == 1 or c.get("CLUSTER", 1) > 1:
                names.append(e["name"])
                break
print(",".join(names))
PY
)
[ -n "${EXTRA:-}" ] && INSTANCES="$INSTANCES,$EXTRA"
echo "instances: $INSTANCES"
for c in 1:256 4:256 16:128; do
	IFS=: read -r k th <<< "$c"
	cfg="row-reduce.STAGE=1,row-reduce.CLUSTER=$k,row-reduce.PREFETCH=0,row-reduce.BLOCK_ROWS=1,row-reduce.THREADS=$th"
	timeout -k 5 60 ./bin/kgen test --target cuda:sm_90 --seeds 3 --max-work 3e7 --config "$cfg" testsuite/staged_rows.kg > "$OUT/correct/staged-c$k.log" 2>&1
	echo "test staged_rows.kg CLUSTER=$k: exit $? $(grep -E 'passed' "$OUT/correct/staged-c$k.log" | tail -1)"
done
timeout -k 5 90 ./bin/kgen test --target cuda:sm_90 --seeds 3 testsuite/cluster_rows.kg > "$OUT/correct/cluster_rows.log" 2>&1
echo "test cluster_rows.kg: exit $? $(grep -E 'passed' "$OUT/correct/cluster_rows.log" | tail -1)"
timeout -k 5 180 ./bin/kgen test --target cuda:sm_90 --seeds 3 --kernel "$INSTANCES" $FILES > "$OUT/correct/instances.log" 2>&1
echo "test the instances: exit $? $(grep -E 'passed' "$OUT/correct/instances.log" | tail -1)"
for k in $KGENS; do
	[ -x "./bin/$k" ] || { echo "no bin/$k"; exit 1; }
	timeout 240 ./bin/$k bench --target cuda:sm_90 --kernel "$INSTANCES" --json "$OUT/time/$k.json" --md "$OUT/time/$k.md" $FILES > "$OUT/time/$k.log" 2>&1
	echo "bench $k: exit $?"
	for th in ${THREADS//,/ }; do
		staged="row-reduce.STAGE=1,row-reduce.CLUSTER=16,row-reduce.PREFETCH=0,row-reduce.THREADS=$th"
		timeout 60 ./bin/$k bench --target cuda:sm_90 --kernel "$LONG" --config "$staged" --json "$OUT/time/$k-long$th.json" --md "$OUT/time/$k-long$th.md" testsuite/cluster_rows.kg > "$OUT/time/$k-long$th.log" 2>&1
		echo "bench $k, $LONG staged by 16 blocks of $th: exit $?"
	done
done
set -- $KGENS
base=$1
shift
for k in "$@"; do
	./bin/kgen bench --compare "$OUT/time/$base.json" "$OUT/time/$k.json" > "$OUT/time/compare-$k.txt" 2>&1
	echo "== $base against $k"
	grep -hE "^[a-z]" "$OUT/time/compare-$k.txt" | grep -v "^old:\|^new:\|^noise:\|^instance" | cut -c1-110
	for th in ${THREADS//,/ }; do
		./bin/kgen bench --compare "$OUT/time/$base-long$th.json" "$OUT/time/$k-long$th.json" > "$OUT/time/compare-$k-long$th.txt" 2>&1
		echo "== $base against $k, $LONG staged by 16 blocks of $th"
		grep -hE "^[a-z]" "$OUT/time/compare-$k-long$th.txt" | grep -v "^old:\|^new:\|^noise:\|^instance" | cut -c1-110
	done
done
