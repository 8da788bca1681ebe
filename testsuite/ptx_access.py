#!/usr/bin/env python3
"""Counts each kernel's global and shared loads and stores in nvcc's PTX,
vector (.v2, .v4, .v8) and scalar, to find the vector accesses that nvcc
split into one a point.

    kgen build --emit-only --db off --target cuda:sm_90 -o DIR FILE.kg...
    python3 testsuite/ptx_access.py [--nvcc NVCC] [--missing] DIR

It compiles each DIR/*.cu to DIR/*.ptx as kgen does (-arch=sm_90 -O3
-std=c++17), then prints a line per entry point:

    center_2m ld.global.s=14 ld.global.v=14 st.global.s=7 st.global.v=7 ...

With --missing it prints only the launches of specialized kernels whose
configuration asks for vectors (VEC > 1, from DIR's manifests) but whose
PTX has no vector global load, or no vector global store among several. Scalar accesses
are expected on the edge paths of most templates; what to look at is a
launch with none of the other kind. The thirty-eighth session found this
way that nvcc split `*(KgVec<float, 4>*)(Y + off) = v` into four stores
(testsuite/results/2026-12-06-h100-s38-vec/).
"""
import argparse
import collections
import glob
import json
import os
import re
import subprocess
import sys

ACCESS = re.compile(r"(?:@!?%p\d+\s+)?(st|ld)\.(global|shared)((?:\.[a-z0-9]+)*)\s")


def count(ptx):
    """Returns {entry: Counter} of the accesses in a PTX file's text."""
    out, cur = {}, None
    for line in ptx.splitlines():
        m = re.match(r"\s*(?:\.visible\s+)?\.entry\s+(\w+)\(", line)
        if m:
            cur = m.group(1)
            out[cur] = collections.Counter()
            continue
        if cur is None:
            continue
        m = ACCESS.match(line.strip())
        if m:
            kind = "v" if re.search(r"\.v[248]\b", m.group(3)) else "s"
            out[cur]["%s.%s.%s" % (m.group(1), m.group(2), kind)] += 1
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--nvcc", default="nvcc")
    ap.add_argument("--missing", action="store_true")
    args = ap.parse_args()
    counts = {}
    for cu in sorted(glob.glob(os.path.join(args.dir, "*.cu"))):
        ptx = cu[:-3] + ".ptx"
        r = subprocess.run([args.nvcc, "-arch=sm_90", "-O3", "-std=c++17", "-ptx", "-o", ptx, cu],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("%s: nvcc failed:\n%s" % (cu, r.stderr))
        with open(ptx) as f:
            counts.update(count(f.read()))
    if not args.missing:
        for name in sorted(counts):
            c = counts[name]
            print(name, " ".join("%s=%d" % (k, c[k]) for k in sorted(c)))
        return
    for path in sorted(glob.glob(os.path.join(args.dir, "*.manifest.json"))):
        with open(path) as f:
            manifest = json.load(f)
        for k in manifest["kernels"]:
            if not k.get("specialized"):
                continue
            for l in k.get("launches", []):
                if l.get("config", {}).get("VEC", 1) < 2:
                    continue
                c = counts.get(l["function"], collections.Counter())
                # A reduction to one value a row stores it once: only its
                # loads count.
                if c["ld.global.v"] == 0 or (c["st.global.v"] == 0 and c["st.global.s"] > 1):
                    print(l["function"], l.get("template"), "VEC=%d" % l["config"]["VEC"],
                          " ".join("%s=%d" % (x, c[x]) for x in sorted(c)))


if __name__ == "__main__":
    main()
