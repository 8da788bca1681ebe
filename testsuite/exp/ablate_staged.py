#!/usr/bin/env python3
"""Experiment (session 37): which part of kgen's rows staged across a
cluster (center_2m, STAGE=1, CLUSTER=16) costs what, against the
hand-written clusters of testsuite/exp/grid_resident.cu (224 us where
kgen's takes 267 at 512 threads and 326 at 1024).

Reads the CUDA that kgen emitted (SRC) and writes OUT with the entry
point KERNEL rewritten as VARIANT says (nothing else changes; it fails
if the text it rewrites is not there):
  base     as emitted;
  sums     the statistics as a plain sum and sum of squares a point
           (the squares' deviations as sum x^2 - mean * sum x), where
           kgen keeps shifted sums for accuracy: 2 operations a point
           where there are 7;
  stores   the outputs' loop as the hand-written kernel's: every chunk of
           the block's piece a thread, no test a chunk, 32-bit indices,
           the scale computed once (a row that starts 16-byte aligned);
  both     sums and stores.
Time each with testsuite/exp/cluster_grid.cu (-DCENTER reports row 0's
error against the host).
  ablate_staged.py SRC KERNEL THREADS VARIANT OUT
"""
import re
import sys

src, kernel, threads, variant, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
text = open(src).read()
head = "__launch_bounds__(%d) %s(" % (threads, kernel)
at = text.index(head)
end = text.find('extern "C"', at + len(head))
end = len(text) if end < 0 else end
body = text[at:end]


def sub(pattern, repl, s, count=0):
    n = len(re.findall(pattern, s, flags=re.M))
    if n == 0:
        sys.exit("ablate_staged: %r not found in %s" % (pattern, kernel))
    return re.sub(pattern, repl, s, count=count, flags=re.M)


if variant in ("sums", "both"):
    body = sub(r"^\s*if \(kg_cn_mu == 0\.0f\) kg_ck_mu = kg_cx;.*\n", "", body)
    body = sub(r"^\s*const float kg_cd = kg_cx - kg_ck_mu;\n", "", body)
    body = sub(r"^\s*kg_cs1_mu = kg_cs1_mu \+ kg_cd;\n", "", body)
    body = sub(r"^\s*kg_cn_mu = kg_cn_mu \+ 1\.0f;\n", "", body)
    body = sub(r"kg_cs2_mu = kg_cs2_mu \+ kg_cd \* kg_cd;", "kg_cs2_mu = kg_cs2_mu + kg_cx * kg_cx;", body)
    body = sub(r"float kg_part = kg_cs2_mu - 2\.0f \* kg_cm \* kg_cs1_mu \+ kg_cn_mu \* kg_cm \* kg_cm;",
               "float kg_part = kg_cs2_mu - kg_sp0 * kg_v_mu;", body)
if variant in ("stores", "both"):
    start = body.index("      float* const kg_yp = ")
    stop = body.index("    __syncthreads();  // every thread is done with the staged row")
    piece = re.search(r"const int kg_lo = \(int\)\(blockIdx\.x % \d+\) \* (\d+);", body).group(1)
    row = re.search(r"float\* const kg_yp = Y \+ r \* (\d+)L", body).group(1)
    stores = (
        "      float* const kg_yp = Y + r * %sL;\n"
        "      const float kg_a = kg_rsqrt(kg_v_var + 1e-05f);\n"
        "      #pragma unroll\n"
        "      for (int kg_k = 0; kg_k < %s / 4 / %d; ++kg_k) {\n"
        "        const int kg_c = kg_lo / 4 + (int)threadIdx.x + kg_k * %d;\n"
        "        const KgVec<float, 4> kg_s = *(const KgVec<float, 4>*)(kg_s_X + kg_c * 4);\n"
        "        KgVec<float, 4> kg_o;\n"
        "        #pragma unroll\n"
        "        for (int kg_e = 0; kg_e < 4; ++kg_e) kg_o.v[kg_e] = (kg_s.v[kg_e] - kg_v_mu) * kg_a;\n"
        "        *(KgVec<float, 4>*)(kg_yp + kg_c * 4) = kg_o;\n"
        "      }\n"
        "    }\n"
    ) % (row, piece, threads, threads)
    body = body[:start] + stores + body[stop:]
elif variant not in ("base", "sums"):
    sys.exit("ablate_staged: unknown variant " + variant)
open(out, "w").write(text[:at] + body + text[end:])
