#!/usr/bin/env python3
"""Row-reduce evaluations with BLOCK_ROWS > 1 in the tuning databases under
testsuite/results/ (every *.jsonl of the H100 and H200 sessions), against
the best evaluation of the same launch (database, kernel, shape, target,
launch, GPU): for the thirty-third session's lead, a constraint that would
spare the tuner the hopeless ones. Nothing is measured here; every time is a
database's.

    cd testsuite/results/2026-11-28-blockrows-s32 && python3 blockrows.py > blockrows.txt
"""
import collections
import glob
import json
import re

best, recs = {}, []
for f in sorted(glob.glob("../2026-11-2*-h*-s*/**/*.jsonl", recursive=True)):
    for line in open(f):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("kind") != "eval" or not (r.get("time") or {}).get("median_us"):
            continue
        if not any(t.startswith("row-reduce") for t in r.get("templates", [])):
            continue
        key = (f, r["kernel"], r["shape"], r["target"], r.get("launch", 0), r["device"]["name"])
        t = r["time"]["median_us"]
        best[key] = min(best.get(key, float("inf")), t)
        # configs holds each launch's configuration, or the one launch's.
        cfgs, i = r.get("configs") or [""], r.get("launch", 0)
        recs.append((key, cfgs[i] if i < len(cfgs) else cfgs[0], t))

by = collections.defaultdict(list)
for key, cfg, t in recs:
    m = re.search(r"BLOCK_ROWS=(\d+)", cfg)
    if m and int(m.group(1)) > 1:
        by[(key[1], key[4], key[2], key[3])].append(t / best[key])
print(f"{'instance':26s} {'launch':6s} {'target':13s} {'shape':42s} evals  best/launch best  worst")
count = collections.Counter()
for (k, launch, shape, target), v in sorted(by.items()):
    v.sort()
    print(f"{k:26s} {launch:6d} {target:13s} {shape[:42]:42s} {len(v):5d}  {v[0]:16.2f}  {v[-1]:6.1f}")
    thread_level = not target.startswith("triton")
    for x in v:
        count[(thread_level, "within 10%" if x <= 1.1 else "1.1-2x" if x <= 2 else "over 2x")] += 1
print()
for tl in (True, False):
    name = "cuda and hip (thread-level row-reduce)" if tl else "triton (tile-level row-reduce)"
    n = sum(c for (t, _), c in count.items() if t == tl)
    print(f"{name}: {n} evaluations with BLOCK_ROWS > 1; " + ", ".join(f"{b} {count[(tl, b)]}" for b in ("within 10%", "1.1-2x", "over 2x")) + " of their launch's best")
