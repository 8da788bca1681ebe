# Experiment (session 45): why softmax_vocab's first pass on Triton (the
# online max and sum over 128 rows of 50257 f32, a program a row, 32
# warps) takes 18.4 us to read 25.7 MB (1.4 TB/s) when a copy of the same
# bytes, reading and writing them, takes 26.1 (triton_softmax_phases.py).
# Each plan below reads X and stores a pair a row (or a piece), alone:
#   stats B w s     the online pass as kgen emits it, BLOCK B, w warps, s
#                   stages;
#   stats2 B        the same reading two blocks an iteration, both loads
#                   issued before either block's update;
#   sum B           a plain sum of the row (no exponential);
#   split P         P programs a row, each a piece of it;
#   torch.sum/amax  PyTorch's reductions of X over its rows.
# Then the outputs' pass alone (X from the DRAM) at BLOCK 4096 and 8192.
# Timing as triton_softmax_split.py's measure.
#   python3 testsuite/exp/triton_softmax_reads.py
import os
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(__file__))
from triton_softmax_phases import _combine, _update, outputs_kernel  # noqa: E402
from triton_softmax_split import D, R, table, time_plans  # noqa: E402


@triton.jit
def stats_kernel(X, WM, WS, D: tl.constexpr, BLOCK: tl.constexpr, TWO: tl.constexpr, P: tl.constexpr, PIECE: tl.constexpr):
    pid = tl.program_id(0)
    r = (pid // P).to(tl.int64)
    lo = pid % P * PIECE
    hi = tl.minimum(lo + PIECE, D)
    row = X + r * D
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    if TWO:
        m2 = tl.full([BLOCK], float("-inf"), tl.float32)
        s2 = tl.zeros([BLOCK], tl.float32)
        step = 2 * BLOCK
        whole = lo + (hi - lo) // step * step
        for c0 in range(lo, whole, step):
            x = tl.load(row + c0 + tl.arange(0, BLOCK))
            y = tl.load(row + c0 + BLOCK + tl.arange(0, BLOCK))
            m, s = _update(m, s, x)
            m2, s2 = _update(m2, s2, y)
        for c0 in range(whole, hi, BLOCK):
            c = c0 + tl.arange(0, BLOCK)
            m, s = _update(m, s, tl.load(row + c, mask=c < hi, other=float("-inf")))
        M, S = _combine(m, s)
        M2, S2 = _combine(m2, s2)
        Mx = tl.maximum(M, M2)
        S = tl.where(Mx == float("-inf"), 0.0, S * tl.exp(M - Mx) + S2 * tl.exp(M2 - Mx))
        M = Mx
    else:
        whole = lo + (hi - lo) // BLOCK * BLOCK
        for c0 in range(lo, whole, BLOCK):
            m, s = _update(m, s, tl.load(row + c0 + tl.arange(0, BLOCK)))
        for c0 in range(whole, hi, BLOCK):
            c = c0 + tl.arange(0, BLOCK)
            m, s = _update(m, s, tl.load(row + c, mask=c < hi, other=float("-inf")))
        M, S = _combine(m, s)
    tl.store(WM + pid, M)
    tl.store(WS + pid, S)


@triton.jit
def sum_kernel(X, WS, D: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([BLOCK], tl.float32)
    for c0 in range(0, D, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        acc += tl.load(X + r * D + c, mask=c < D, other=0.0)
    tl.store(WS + r, tl.sum(acc, 0))


def main():
    torch.manual_seed(0)
    X = torch.randn(R, D, device="cuda") * 4
    Y = torch.empty_like(X)
    ref = torch.softmax(X, dim=1)
    WM = X.new_empty(R * 16)
    WS = X.new_empty(R * 16)
    plans = {}
    for b, w, s in ((4096, 32, 1), (8192, 32, 1), (16384, 32, 1), (4096, 32, 3), (2048, 16, 1)):
        plans[f"stats B{b} w{w} s{s}"] = (lambda b, w, s: lambda: stats_kernel[(R,)](X, WM, WS, D, b, 0, 1, D, num_warps=w, num_stages=s))(b, w, s)
    for b in (2048, 4096):
        plans[f"stats2 B{b} w32"] = (lambda b: lambda: stats_kernel[(R,)](X, WM, WS, D, b, 1, 1, D, num_warps=32))(b)
    for b in (4096, 8192):
        plans[f"sum B{b} w32"] = (lambda b: lambda: sum_kernel[(R,)](X, WS, D, b, num_warps=32))(b)
    for p, b, w in ((2, 4096, 16), (4, 2048, 16), (8, 2048, 8)):
        piece = triton.cdiv(triton.cdiv(D, p), 16) * 16
        plans[f"split P{p} B{b} w{w}"] = (lambda p, b, w, piece: lambda: stats_kernel[(R * p,)](X, WM, WS, D, b, 0, p, piece, num_warps=w))(p, b, w, piece)
    plans["torch.sum"] = lambda: torch.sum(X, 1, out=WS[:R])
    plans["torch.amax"] = lambda: torch.amax(X, 1, out=WM[:R])
    stats_kernel[(R,)](X, WM, WS, D, 4096, 0, 1, D, num_warps=32)
    WM0, WS0 = WM[:R].clone(), WS[:R].clone()
    for b in (4096, 8192):
        plans[f"outputs B{b} w32"] = (lambda b: lambda: outputs_kernel[(R,)](X, Y, WM0, WS0, D, b, 0, 0, num_warps=32))(b)
    measure(plans, X, Y, ref, WM, WS, WM0, WS0)


def measure(plans, X, Y, ref, WM, WS, WM0, WS0):
    Z = torch.empty_like(X)
    plans["copy"] = lambda: Z.copy_(X)

    def check(name, f):
        Y.fill_(float("nan"))
        f()
        torch.cuda.synchronize()
        if name.startswith("outputs"):
            return f"{(Y - ref).abs().max().item():.3g}"
        if name.startswith("stats B"):
            return f"m {(WM[:R] - WM0).abs().max().item():.3g} s {((WS[:R] - WS0) / WS0).abs().max().item():.3g}"
        return ""

    times, errs = time_plans(plans, check)
    print(torch.cuda.get_device_name(), "triton", triton.__version__, "torch", torch.__version__)
    table(f"reading {R} rows of {D} f32 ({R * D * 4 / 1e6:.1f} MB): plan, median us, p20-p80, GB/s read, check",
          times, errs, lambda med: f"{R * D * 4 / med / 1e3:7.0f}")


if __name__ == "__main__":
    main()
