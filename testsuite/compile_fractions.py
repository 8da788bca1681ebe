#!/usr/bin/env python3
"""Fractions of the copy bandwidth of kgen's kernels and of torch.compile's
beside them, from kgen bench reports run with --baseline compile (one or
more JSON reports, merged or not): a markdown table, an instance a row,
each target's time and fraction of the copy bandwidth measured in the
same run, torch.compile's, and kgen's speedup over torch.compile; then
counts. Every figure is read from the reports; nothing is measured here.

    testsuite/compile_fractions.py REPORT.json... > table.md
"""
import json
import math
import sys


def main(paths):
    by, targets = {}, []
    for p in paths:
        for r in json.load(open(p))["rows"]:
            by.setdefault(r["name"], {})[r["target"]] = r
            if r["target"] not in targets:
                targets.append(r["target"])
    head = ["instance", "MB moved"]
    for t in targets:
        head += [f"{t} us", "of copy"]
    head += ["torch.compile us", "of copy"] + [f"{t} vs compile" for t in targets]
    print("| " + " | ".join(head) + " |")
    print("|" + " --- |" * len(head))
    at80 = {t: 0 for t in targets + ["compile"]}
    slower = {t: [] for t in targets}
    ratios = {t: [] for t in targets}
    n = 0
    for name, ts in by.items():
        first = ts[targets[0]]
        timings = (first.get("torch") or {}).get("timings") or {}
        if "compile" not in timings:
            continue
        n += 1
        mb = first["bytes"] / 1e6
        # A row's copy_fraction is over the copy its own run measured;
        # the same bytes in us microseconds are that fraction scaled.
        frac = lambda us, t: ts[t]["copy_fraction"] * ts[t]["time"]["median_us"] / us
        cells = [name, f"{mb:.1f}"]
        for t in targets:
            us = ts[t]["time"]["median_us"]
            f = frac(us, t)
            at80[t] += f >= 0.8
            cells += [f"{us:.2f}", f"{f:.0%}"]
        cus = timings["compile"]["median_us"]
        cf = frac(cus, targets[0])
        at80["compile"] += cf >= 0.8
        cells += [f"{cus:.2f}", f"{cf:.0%}"]
        for t in targets:
            s = cus / ts[t]["time"]["median_us"]
            ratios[t].append(s)
            if s < 0.95:
                slower[t].append(f"{name} ({s:.2f}x)")
            cells.append(f"{s:.2f}x")
        print("| " + " | ".join(cells) + " |")
    print()
    print(f"{n} instances. At 80% of the copy bandwidth or more: " +
          ", ".join(f"{t} {at80[t]}" for t in targets) + f", torch.compile {at80['compile']}.")
    for t in targets:
        g = math.exp(sum(math.log(x) for x in ratios[t]) / len(ratios[t]))
        print(f"{t}: geometric-mean speedup over torch.compile {g:.2f}x; "
              f"more than 5% slower than torch.compile: {len(slower[t])}" +
              (f" ({', '.join(slower[t])})" if slower[t] else "") + ".")


if __name__ == "__main__":
    main(sys.argv[1:])
