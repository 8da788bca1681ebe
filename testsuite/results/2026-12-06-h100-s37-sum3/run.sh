#!/bin/bash
# The thirty-seventh session's first call, on nvidia-h100-x1, cuda:sm_90, no
# PyTorch. Four kgens in bin/:
#   kgen-base: c8658b3 (main);
#   kgen-sum3: branch s36-cluster-sum3, a mean and its squared deviations
#     over a row shared by a cluster in one cluster reduction
#     (kg_cluster_sum3), one cluster barrier where two were;
#   kgen-regroup: branch s37-regroup, group norm's channels split into
#     groups and members (lower/regroup.go) so that its outputs fuse into
#     the row launch of its statistics;
#   kgen: both (branch s37-both).
# 1. kgen test (bin/kgen): staged_rows.kg staged by clusters of 4 and 16,
#    cluster_rows.kg, norms.kg at its defaults, groupnorm_kb staged by
#    clusters of 16 blocks of 512 and 1024 threads;
# 2. each kgen timed on center_2m, layernorm_2m (cluster_rows.kg) and
#    groupnorm_kb at their defaults and staged by clusters of 16 blocks of
#    512 and 1024 threads.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
W=$FINAL/w
mkdir -p "$W/correct" "$W/time"
staged() { echo "row-reduce.STAGE=1,row-reduce.CLUSTER=16,row-reduce.PREFETCH=0,row-reduce.BLOCK_ROWS=1,row-reduce.THREADS=$1"; }
for c in 4:256 16:128; do
	IFS=: read -r k th <<< "$c"
	cfg="row-reduce.STAGE=1,row-reduce.CLUSTER=$k,row-reduce.PREFETCH=0,row-reduce.BLOCK_ROWS=1,row-reduce.THREADS=$th"
	timeout -k 5 60 ./bin/kgen test --target cuda:sm_90 --seeds 3 --max-work 3e7 --config "$cfg" testsuite/staged_rows.kg > "$W/correct/staged-c$k.log" 2>&1
	echo "test staged_rows.kg CLUSTER=$k: exit $? $(grep -E 'passed' "$W/correct/staged-c$k.log" | tail -1)"
done
timeout -k 5 90 ./bin/kgen test --target cuda:sm_90 --seeds 3 testsuite/cluster_rows.kg > "$W/correct/cluster_rows.log" 2>&1
echo "test cluster_rows.kg: exit $? $(grep -E 'passed' "$W/correct/cluster_rows.log" | tail -1)"
timeout -k 5 90 ./bin/kgen test --target cuda:sm_90 --seeds 3 examples/norms.kg > "$W/correct/norms.log" 2>&1
echo "test norms.kg: exit $? $(grep -E 'passed' "$W/correct/norms.log" | tail -1)"
for th in 512 1024; do
	timeout -k 5 60 ./bin/kgen test --target cuda:sm_90 --seeds 3 --kernel groupnorm_kb --config "$(staged $th)" examples/norms.kg > "$W/correct/groupnorm-staged$th.log" 2>&1
	echo "test groupnorm_kb staged by 16 of $th: exit $? $(grep -E 'passed' "$W/correct/groupnorm-staged$th.log" | tail -1)"
done
for k in kgen-base kgen-sum3 kgen-regroup kgen; do
	for cfg in default 512 1024; do
		args=()
		[ "$cfg" != default ] && args=(--config "$(staged $cfg)")
		timeout 60 ./bin/$k bench --target cuda:sm_90 --kernel center_2m,layernorm_2m "${args[@]}" --json "$W/time/$k-rows-$cfg.json" testsuite/cluster_rows.kg > "$W/time/$k-rows-$cfg.log" 2>&1 || echo "bench $k rows $cfg: failed"
		timeout 60 ./bin/$k bench --target cuda:sm_90 --kernel groupnorm_kb "${args[@]}" --json "$W/time/$k-gn-$cfg.json" examples/norms.kg > "$W/time/$k-gn-$cfg.log" 2>&1 || echo "bench $k groupnorm $cfg: failed"
	done
done
python3 - "$W/time" <<'PY'
import json, os, sys
d = sys.argv[1]
rows = {}
for f in sorted(os.listdir(d)):
    if not f.endswith(".json"):
        continue
    k, _, cfg = f[:-5].rpartition("-")
    k = k.rsplit("-", 1)[0]
    for r in json.load(open(os.path.join(d, f)))["rows"]:
        t = r["time"]
        rows.setdefault((r["name"], cfg), {})[k] = "%.2f (%.2f-%.2f) %.0f%%" % (t["median_us"], t["p20_us"], t["p80_us"], 100 * r.get("size_copy_fraction", 0))
ks = ["kgen-base", "kgen-sum3", "kgen-regroup", "kgen"]
print("%-14s %-8s " % ("instance", "config") + " ".join("%-28s" % k for k in ks))
for (name, cfg), v in sorted(rows.items()):
    print("%-14s %-8s " % (name, cfg) + " ".join("%-28s" % v.get(k, "-") for k in ks))
PY
tar czf "$FINAL/s37-sum3.tgz" -C "$W" . && rm -rf "$W"
