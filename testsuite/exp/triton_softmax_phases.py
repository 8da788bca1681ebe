# Experiment (session 45): where softmax_vocab's time goes on Triton (128
# rows of 50257 f32, a program a row, 32 warps: 65% of a same-size copy).
# Its rows are 50257 long, so no row but the first starts on 16 bytes and
# every load is a scalar one. Timed beside kgen's kernel, in one process:
#   stats       the first pass alone (the online max and sum), storing a
#               row's (m, s);
#   outputs     the outputs' pass alone, the row's (m, s) read from memory
#               and X from the DRAM (the whole kernel reads it from the L2);
#   ... al      the same with each row read from its first 16-byte
#               boundary on, in whole vectors: its first points (at most 3)
#               and its last block masked, the blocks between unmasked;
#   ... rcp     the outputs multiplied by 1/s where kgen divides
#               (correctly rounded);
#   whole al    the two passes in one kernel, aligned (what kgen would emit).
# Timing as triton_softmax_split.py's measure (graphs after an L2 flush,
# plans interleaved, 100 rounds); "max |diff|" is against torch.softmax.
#   python3 testsuite/exp/triton_softmax_phases.py DIR   (DIR: kgen build --target triton:sm_90 --kernel softmax_vocab -o DIR examples/softmax.kg)
import os
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(__file__))
from triton_softmax_split import D, R, load_kgen, measure  # noqa: E402

LOG2E = 1.4426950408889634


@triton.jit
def _update(m, s, x):
    up = x > m
    e = tl.extra.libdevice.exp2(tl.abs(x - m) * (-1.4426950408889634))
    s = tl.where(up, tl.where(m == float("-inf"), 1.0, s * e + 1.0), s + e)
    return tl.maximum(m, x, propagate_nan=tl.PropagateNan.ALL), s


@triton.jit
def _max(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _combine(m, s):
    M = tl.reduce(m, 0, _max)
    S = tl.sum(tl.where(m == M, tl.where(m == float("inf"), float("nan"), s),
                        tl.where(m == float("-inf"), 0.0, s * tl.exp(m - M))), axis=0)
    return M, S


@triton.jit
def _stats(X, r, D: tl.constexpr, BLOCK: tl.constexpr, ALIGN: tl.constexpr):
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    row = X + r * D
    if ALIGN:
        head = (4 - (r * D) % 4) % 4  # points before the row's first 16-byte boundary
        h = tl.arange(0, 4)
        xh = tl.load(row + h, mask=h < head, other=float("-inf"))
        mh, sh = _update(tl.full([4], float("-inf"), tl.float32), tl.zeros([4], tl.float32), xh)
        n = D - head
        whole = n // BLOCK * BLOCK
        for c0 in range(0, whole, BLOCK):
            p = tl.multiple_of(r * D + head + c0, 4)
            x = tl.load(X + p + tl.arange(0, BLOCK))
            m, s = _update(m, s, x)
        c = whole + tl.arange(0, BLOCK)
        p = tl.multiple_of(r * D + head, 4)
        x = tl.load(X + p + c, mask=c < n, other=float("-inf"))
        m, s = _update(m, s, x)
        M, S = _combine(m, s)
        Mh, Sh = _combine(mh, sh)
        M2 = _max(M, Mh)
        S = tl.where(M2 == float("-inf"), 0.0,
                     tl.where(M == M2, S, S * tl.exp(M - M2)) + tl.where(Mh == M2, Sh, Sh * tl.exp(Mh - M2)))
        M = M2
    else:
        whole: tl.constexpr = D // BLOCK * BLOCK
        for c0 in range(0, whole, BLOCK):
            x = tl.load(row + c0 + tl.arange(0, BLOCK))
            m, s = _update(m, s, x)
        c = whole + tl.arange(0, BLOCK)
        x = tl.load(row + c, mask=c < D, other=float("-inf"))
        m, s = _update(m, s, x)
        M, S = _combine(m, s)
    return M, S


@triton.jit
def _out(x, M, S, RCP: tl.constexpr):
    e = tl.exp(x - M)
    if RCP:
        return e * (1.0 / S)
    return tl.div_rn(e, S)


@triton.jit
def _outputs(X, Y, r, M, S, D: tl.constexpr, BLOCK: tl.constexpr, ALIGN: tl.constexpr, RCP: tl.constexpr):
    if ALIGN:
        head = (4 - (r * D) % 4) % 4
        h = tl.arange(0, 4)
        tl.store(Y + r * D + h, _out(tl.load(X + r * D + h, mask=h < head, other=0.0), M, S, RCP), mask=h < head)
        n = D - head
        whole = n // BLOCK * BLOCK
        p = tl.multiple_of(r * D + head, 4)
        c = whole + tl.arange(0, BLOCK)
        tl.store(Y + p + c, _out(tl.load(X + p + c, mask=c < n, other=0.0), M, S, RCP), mask=c < n)
        for cr in range(0, whole, BLOCK):
            c = whole - BLOCK - cr + tl.arange(0, BLOCK)
            tl.store(Y + p + c, _out(tl.load(X + p + c), M, S, RCP))
    else:
        whole: tl.constexpr = D // BLOCK * BLOCK
        c = whole + tl.arange(0, BLOCK)
        tl.store(Y + r * D + c, _out(tl.load(X + r * D + c, mask=c < D, other=0.0), M, S, RCP), mask=c < D)
        for cr in range(0, whole, BLOCK):
            c = whole - BLOCK - cr + tl.arange(0, BLOCK)
            tl.store(Y + r * D + c, _out(tl.load(X + r * D + c), M, S, RCP))


@triton.jit
def stats_kernel(X, WM, WS, D: tl.constexpr, BLOCK: tl.constexpr, ALIGN: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    M, S = _stats(X, r, D, BLOCK, ALIGN)
    tl.store(WM + r, M)
    tl.store(WS + r, S)


@triton.jit
def outputs_kernel(X, Y, WM, WS, D: tl.constexpr, BLOCK: tl.constexpr, ALIGN: tl.constexpr, RCP: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    _outputs(X, Y, r, tl.load(WM + r), tl.load(WS + r), D, BLOCK, ALIGN, RCP)


@triton.jit
def whole_kernel(X, Y, D: tl.constexpr, BLOCK: tl.constexpr, ALIGN: tl.constexpr, RCP: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    M, S = _stats(X, r, D, BLOCK, ALIGN)
    _outputs(X, Y, r, M, S, D, BLOCK, ALIGN, RCP)


def main():
    torch.manual_seed(0)
    X = torch.randn(R, D, device="cuda") * 4
    Y = torch.empty_like(X)
    ref = torch.softmax(X, dim=1)
    WM = ref.new_empty(R)
    WS = ref.new_empty(R)
    k = load_kgen(sys.argv[1])
    plans = {"kgen": lambda: k["fn"][(R,)](X, Y, **k["constexprs"], num_warps=k["num_warps"], num_stages=k["num_stages"])}
    plans["torch.softmax"] = lambda: torch.ops.aten._softmax.out(X, 1, False, out=Y)
    B, W = 4096, 32
    # Stats and outputs: WM and WS are taken from the reference run (the
    # graph captures the launch only); correctness of the pair is checked
    # through the outputs plan that follows it in the same graph.
    for al in (0, 1):
        sfx = " al" if al else ""
        plans["stats" + sfx] = (lambda a: lambda: stats_kernel[(R,)](X, WM, WS, D, B, a, num_warps=W))(al)
        for rcp in (0, 1):
            name = "outputs" + sfx + (" rcp" if rcp else "")
            plans[name] = (lambda a, c: lambda: outputs_kernel[(R,)](X, Y, WM, WS, D, B, a, c, num_warps=W))(al, rcp)
        plans["whole" + sfx] = (lambda a: lambda: whole_kernel[(R,)](X, Y, D, B, a, 0, num_warps=W))(al)
    plans["whole al rcp"] = lambda: whole_kernel[(R,)](X, Y, D, B, 1, 1, num_warps=W)
    stats_kernel[(R,)](X, WM, WS, D, B, 0, num_warps=W)  # WM, WS for the outputs' plans
    measure(plans, X, Y, ref)


if __name__ == "__main__":
    main()
