# Experiment (session 45, for the next session's device time): Triton's
# softmax_vocab (128 rows of 50257 f32, a program a row) with the first C
# points of its row kept in registers from the first pass to the
# outputs' pass, so that the outputs' pass reads again only the rest of
# the row, the part the first pass read last (the likeliest still in the
# L2), last block first; the kept part's outputs are computed from the
# registers. kgen bench puts softmax_vocab 11.7 us above a same-size copy
# (33.4 against 21.7), about what a third 25.7 MB at the copy's rate
# would take: if the outputs' pass pays for reading X again, this plan
# would pay for 17489 points a row (C = 32768) where kgen pays for 50257.
# (Timing only: these kernels take no care of infinite points.)
#   cached C w   C points kept, w warps, BLOCK 4096;
#   ... hint     with evict_last on the streamed part's first reads and
#                evict_first on its second.
# Beside kgen's module as built (its BLOCK 4096 and 32 warps), under the
# clean flush (time_plans(clean=True): kgen bench's protocol) and the
# memset flush, plans interleaved, 100 rounds each.
#   python3 testsuite/exp/triton_softmax_cached.py DIR   (DIR: kgen build --target triton:sm_90 --kernel softmax_vocab -o DIR examples/softmax.kg)
import os
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(__file__))
from triton_softmax_phases import _combine, _update  # noqa: E402
from triton_softmax_split import D, R, load_kgen, measure  # noqa: E402


@triton.jit
def cached_row(X, Y, D: tl.constexpr, BLOCK: tl.constexpr, C: tl.constexpr, HINT: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    row = X + r * D
    out = Y + r * D
    xh = tl.load(row + tl.arange(0, C))  # the kept part, C < D
    mh = tl.max(xh, 0)
    sh = tl.sum(tl.exp(xh - mh), 0)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    whole: tl.constexpr = C + (D - C) // BLOCK * BLOCK
    for c0 in range(C, whole, BLOCK):
        if HINT:
            x = tl.load(row + c0 + tl.arange(0, BLOCK), eviction_policy="evict_last")
        else:
            x = tl.load(row + c0 + tl.arange(0, BLOCK))
        m, s = _update(m, s, x)
    c = whole + tl.arange(0, BLOCK)
    m, s = _update(m, s, tl.load(row + c, mask=c < D, other=float("-inf")))
    M, S = _combine(m, s)
    Mx = tl.maximum(M, mh)
    S = S * tl.exp(M - Mx) + sh * tl.exp(mh - Mx)
    M = Mx
    tl.store(out + c, tl.div_rn(tl.exp(tl.load(row + c, mask=c < D, other=0.0) - M), S), mask=c < D)
    for cr in range(C, whole, BLOCK):
        cb = whole - BLOCK - (cr - C) + tl.arange(0, BLOCK)
        if HINT:
            x = tl.load(row + cb, eviction_policy="evict_first")
        else:
            x = tl.load(row + cb)
        tl.store(out + cb, tl.div_rn(tl.exp(x - M), S))
    tl.store(out + tl.arange(0, C), tl.div_rn(tl.exp(xh - M), S))


def main():
    torch.manual_seed(0)
    X = torch.randn(R, D, device="cuda") * 4
    Y = torch.empty_like(X)
    ref = torch.softmax(X, dim=1)
    k = load_kgen(sys.argv[1])
    plans = {"kgen": lambda: k["fn"][(R,)](X, Y, **k["constexprs"], num_warps=k["num_warps"], num_stages=k["num_stages"])}
    for c, w in ((16384, 32), (32768, 32), (16384, 16)):
        for hint in (0, 1):
            name = f"cached {c} w{w}" + (" hint" if hint else "")
            plans[name] = (lambda c, w, hint: lambda: cached_row[(R,)](X, Y, D, 4096, c, hint, num_warps=w))(c, w, hint)
    plans["torch.softmax"] = lambda: torch.ops.aten._softmax.out(X, 1, False, out=Y)
    measure(plans, X, Y, ref, clean=True)
    measure(plans, X, Y, ref)


if __name__ == "__main__":
    main()
