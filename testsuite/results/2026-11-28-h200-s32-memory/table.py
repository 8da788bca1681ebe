#!/usr/bin/env python3
"""The thirty-second session's memory-bound table, from what the calls
measured: part-2.json (kgen bench's report of the second half, three
targets), part-1-hip.json (the first half's hip:nvidia instances that
part 1 did not reach), and part-1.err, the progress lines of part 1's kgen
bench, which timed out before writing its report: each line is an
instance's median, p20, p80 and the same-size copy timed beside it, in
the order of its --target (cuda:sm_90, triton:sm_90, then hip:nvidia,
cut off after 12). Nothing is measured here.

    python3 table.py > table.md
"""
import json
import re

TARGETS = ["cuda:sm_90", "triton:sm_90", "hip:nvidia"]
rows = {}  # (name, target) -> (median, p20, p80, copy us, fraction)

line = re.compile(r"^bench: (\w+) ([0-9.]+) us \(p20 ([0-9.]+), p80 ([0-9.]+), [^)]*\)(?:, [0-9]+ GB/s; a copy of its size ([0-9.]+) us)?")
t, seen = 0, set()
for l in open("part-1.err"):
    m = line.match(l)
    if not m:
        continue
    name = m.group(1)
    if name in seen:
        t, seen = t + 1, set()
    seen.add(name)
    med, p20, p80 = (float(m.group(i)) for i in (2, 3, 4))
    copy = float(m.group(5)) if m.group(5) else None
    rows[(name, TARGETS[t])] = (med, p20, p80, copy, copy / med if copy else None)
for p in ["part-1-hip.json", "part-2.json"]:
    rep = json.load(open(p))
    for r in rep["rows"]:
        tm, c = r["time"], r.get("size_copy")
        rows[(r["name"], r.get("target", rep["target"]))] = (tm["median_us"], tm["p20_us"], tm["p80_us"], c and c["median_us"], r.get("size_copy_fraction"))

order = open("../../memory-bound.txt").read().split("\n")
order = [l for l in order if l and not l.startswith("#")][0].split(",")
print("| instance | " + " | ".join(f"{t} us (p20-p80) | of same-size copy" for t in TARGETS) + " |")
print("|" + " --- |" * (1 + 2 * len(TARGETS)))
at = {t: [0, 0, 0] for t in TARGETS}
for n in order:
    cells = []
    for t in TARGETS:
        r = rows.get((n, t))
        if r is None:
            cells += ["-", "-"]
            continue
        cells.append(f"{r[0]:.2f} ({r[1]:.2f}-{r[2]:.2f})")
        if r[4] is None:
            cells.append("(no copy: a product)")
            continue
        cells.append(f"{100 * r[4]:.0f}%")
        at[t][0] += 1
        at[t][1] += r[4] >= 0.8
        at[t][2] += r[4] >= 0.9
    print(f"| {n} | " + " | ".join(cells) + " |")
print()
for t in TARGETS:
    print(f"{t}: {at[t][0]} instances; at 80% of a same-size copy or more: {at[t][1]}; at 90% or more: {at[t][2]}.")
below = {t: [n for n in order if (n, t) in rows and rows[(n, t)][4] is not None and rows[(n, t)][4] < 0.8] for t in TARGETS}
for t in TARGETS:
    print(f"{t} below 80%: " + ", ".join(f"{n} ({100 * rows[(n, t)][4]:.0f}%)" for n in below[t]) + ".")
