#!/bin/bash
# The thirty-fourth session's memory-bound table, on nvidia-h100-x1: the 53
# memory-bound example instances (testsuite/memory-bound.txt) on
# cuda:sm_90 and triton:sm_90 with bin/kgen, each beside a
# device-to-device copy of the same bytes timed in the same run (kgen
# bench's "of same-size copy"), in two halves, merged.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
OUT=$FINAL/w
mkdir -p "$OUT"
all=$(grep -v '^#' testsuite/memory-bound.txt)
first=$(echo "$all" | cut -d, -f1-27)
second=$(echo "$all" | cut -d, -f28-)
T=cuda:sm_90,triton:sm_90
timeout -k 5 270 ./bin/kgen bench --target $T --kernel "$first" --json "$OUT/part-1.json" --md "$OUT/part-1.md" examples > "$OUT/part-1.log" 2> "$OUT/part-1.err"
echo "part 1: exit $?"
timeout -k 5 270 ./bin/kgen bench --target $T --kernel "$second" --json "$OUT/part-2.json" --md "$OUT/part-2.md" examples > "$OUT/part-2.log" 2> "$OUT/part-2.err"
echo "part 2: exit $?"
./bin/kgen bench --merge "$OUT/part-1.json" "$OUT/part-2.json" --json "$OUT/memory.json" --md "$OUT/memory.md" > "$OUT/merge.log" 2>&1
echo "merge: exit $?"
echo "== table"
python3 - "$OUT/memory.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
by = {}
for r in rows:
    by.setdefault(r["name"], {})[r["target"]] = r
ts = ["cuda:sm_90", "triton:sm_90"]
n80 = {t: 0 for t in ts}
for name, d in by.items():
    cells = []
    for t in ts:
        r = d.get(t)
        if r is None or r.get("size_copy_fraction") is None:
            cells.append("-")
            continue
        f = r["size_copy_fraction"]
        n80[t] += f >= 0.8
        cells.append("%.2f %3.0f%%" % (r["time"]["median_us"], 100 * f))
    print("%-24s %s" % (name, "  ".join("%-14s" % c for c in cells)))
print("at 80% of a same-size copy or more:", n80, "of", len(by))
PY
tar czf "$FINAL/s34-memory.tgz" -C "$OUT" . && rm -rf "$OUT"
