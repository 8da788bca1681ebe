# Experiment (session 43): what holds Triton's softmax_vocab (128 rows of
# 50257 f32) at 56% of a same-size copy, where CUDA's staged rows reach
# 69%? kgen's Triton plan is a program a row (BLOCK 4096, 16 warps) making
# three passes over its row (the max, the sum of exponentials, the outputs
# last block first): 128 programs, one a multiprocessor, each waiting on
# its loads in turn. Here, beside it, in one process:
#   online    a program a row, two passes: the max and the sum together
#             (each lane keeps m and s; a point above m rescales s by
#             exp(m - x), any other adds exp(x - m): one exponential a
#             point), then the outputs last block first;
#   split P   two launches: P programs a row each take a piece of it and
#             store its (m, s) pair; then P programs a row combine the
#             row's P pairs and write their piece's outputs, reading the
#             piece again (from the L2, if it holds the 25 MiB);
#   ... rev hint  the second launch's programs in reverse order, so that
#             the pieces read last by the first launch come first, and the
#             first launch's loads evict_last, the second's evict_first.
# Every plan runs in a CUDA graph, replayed after a 256 MiB memset that
# flushes the L2 (as kgen bench does), timed by CUDA events around the
# replay: median and p20-p80 of 100 rounds, plans interleaved round by
# round, and the fraction of a copy of the same bytes (X to another
# buffer) timed the same way. Each plan's outputs are compared with
# torch.softmax's (max |diff|).
#   python3 testsuite/exp/triton_softmax_split.py DIR   (DIR: kgen build --target triton:sm_90 --kernel softmax_vocab -o DIR examples/softmax.kg)
import importlib.util
import os
import statistics
import sys

import torch
import triton
import triton.language as tl

R, D = 128, 50257
NEG = float("-inf")


@triton.jit
def _online_update(m, s, x):
    # One exponential a point: a point above the lane's max rescales its
    # sum, any other adds to it; -inf points add nothing.
    up = x > m
    e = tl.exp(tl.where(up, m - x, x - m))
    e = tl.where(x == float("-inf"), 0.0, e)
    s = tl.where(up, s * e + 1.0, s + e)
    return tl.maximum(m, x), s


@triton.jit
def _combine(m, s):
    M = tl.max(m, 0)
    S = tl.sum(tl.where(m == float("-inf"), 0.0, s * tl.exp(m - M)), 0)
    return M, S


@triton.jit
def online_row(X, Y, D: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    for c0 in range(0, D, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        x = tl.load(X + r * D + c, mask=c < D, other=float("-inf"))
        m, s = _online_update(m, s, x)
    M, S = _combine(m, s)
    for cr in range(0, D, BLOCK):
        c = (D - 1) // BLOCK * BLOCK - cr + tl.arange(0, BLOCK)
        x = tl.load(X + r * D + c, mask=c < D, other=0.0)
        tl.store(Y + r * D + c, tl.div_rn(tl.exp(x - M), S), mask=c < D)


@triton.jit
def split_part(X, WM, WS, D: tl.constexpr, P: tl.constexpr, PIECE: tl.constexpr, BLOCK: tl.constexpr, HINT: tl.constexpr):
    pid = tl.program_id(0)
    r = (pid // P).to(tl.int64)
    lo = pid % P * PIECE
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    for c0 in range(0, PIECE, BLOCK):
        i = c0 + tl.arange(0, BLOCK)
        c = lo + i
        mask = (i < PIECE) & (c < D)
        if HINT:
            x = tl.load(X + r * D + c, mask=mask, other=float("-inf"), eviction_policy="evict_last")
        else:
            x = tl.load(X + r * D + c, mask=mask, other=float("-inf"))
        m, s = _online_update(m, s, x)
    M, S = _combine(m, s)
    tl.store(WM + pid, M)
    tl.store(WS + pid, S)


@triton.jit
def split_out(X, Y, WM, WS, D: tl.constexpr, P: tl.constexpr, PIECE: tl.constexpr, BLOCK: tl.constexpr,
              HINT: tl.constexpr, REV: tl.constexpr, NPROG: tl.constexpr):
    pid = tl.program_id(0)
    if REV:
        pid = NPROG - 1 - pid
    r = (pid // P).to(tl.int64)
    lo = pid % P * PIECE
    M, S = _combine(tl.load(WM + r * P + tl.arange(0, P)), tl.load(WS + r * P + tl.arange(0, P)))
    for c0 in range(0, PIECE, BLOCK):
        i = c0 + tl.arange(0, BLOCK)
        c = lo + i
        mask = (i < PIECE) & (c < D)
        if HINT:
            x = tl.load(X + r * D + c, mask=mask, other=0.0, eviction_policy="evict_first")
        else:
            x = tl.load(X + r * D + c, mask=mask, other=0.0)
        tl.store(Y + r * D + c, tl.div_rn(tl.exp(x - M), S), mask=mask)


def load_kgen(folder):
    spec = importlib.util.spec_from_file_location("kg_softmax", os.path.join(folder, "softmax.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m.KERNELS["softmax_vocab"]


def main():
    torch.manual_seed(0)
    X = torch.randn(R, D, device="cuda") * 4
    Y = torch.empty_like(X)
    ref = torch.softmax(X, dim=1)
    plans = {}
    k = load_kgen(sys.argv[1])
    plans["kgen (3 passes)"] = lambda: k["fn"][(R,)](X, Y, **k["constexprs"], num_warps=k["num_warps"], num_stages=k["num_stages"])
    for block, warps in ((4096, 16),):
        plans[f"online B{block} w{warps}"] = (lambda b, w: lambda: online_row[(R,)](X, Y, D, b, num_warps=w))(block, warps)
    for P, block, warps in ((8, 2048, 8), (16, 1024, 4)):
        piece = triton.cdiv(triton.cdiv(D, P), 16) * 16
        WM = torch.empty(R * P, device="cuda")
        WS = torch.empty(R * P, device="cuda")
        for rev, hint in ((0, 0), (1, 1)):
            name = f"split P{P} B{block} w{warps}" + (" rev" if rev else "") + (" hint" if hint else "")

            def f(P=P, piece=piece, block=block, warps=warps, WM=WM, WS=WS, rev=rev, hint=hint):
                split_part[(R * P,)](X, WM, WS, D, P, piece, block, hint, num_warps=warps)
                split_out[(R * P,)](X, Y, WM, WS, D, P, piece, block, hint, rev, R * P, num_warps=warps)
            plans[name] = f
    measure(plans, X, Y, ref)


def measure(plans, X, Y, ref, clean=False):
    """Times each plan (a function launching it, writing Y) beside a copy
    of X, as the header says (with clean, under the clean flush:
    time_plans), and prints the table."""
    Z = torch.empty_like(X)
    plans["copy"] = lambda: Z.copy_(X)

    def check(name, f):
        Y.fill_(float("nan"))
        f()
        torch.cuda.synchronize()
        return f"{(Y - ref).abs().max().item():.3g}" if name != "copy" else "0"

    times, errs = time_plans(plans, check, clean)
    print(torch.cuda.get_device_name(), "triton", triton.__version__, "torch", torch.__version__)
    copy = statistics.median(times["copy"])
    flush = ", clean (read) flush, less two flushes" if clean else ""
    table(f"softmax over {R} rows of {D} f32{flush}: plan, median us, p20-p80, of the copy, max |diff| from torch.softmax",
          times, errs, lambda med: f"{copy / med:5.0%}")


def table(title, times, errs, figure):
    """Prints title, then a line a plan: its median time, p20-p80, the
    figure of its median (figure(median)) and its check's text."""
    print(title)
    for name, t in times.items():
        q = statistics.quantiles(t, n=10)
        med = statistics.median(t)
        print(f"  {name:28s} {med:8.2f}  {q[1]:8.2f}-{q[7]:<8.2f} {figure(med)}  {errs[name]}")


def time_plans(plans, check, clean=False):
    """Runs each plan once through check(name, f), which returns the text
    of its error, captures it in a CUDA graph, then times the graphs: 100
    rounds, plans interleaved, each replay after a 256 MiB memset that
    flushes the L2, by CUDA events around the replay. Returns each plan's
    times in us and its check's text.

    With clean, as kgen bench's clean flush: the flush reads the 256 MiB
    instead (leaving the L2 clean), each plan's graph is a flush, the
    plan and a flush again, so that the plan pays for writing back what
    it wrote, and a graph of the two flushes alone, timed in the same
    rounds, is taken from each time (its median, from each sample)."""
    flush = torch.ones(64 << 20, dtype=torch.int32, device="cuda")  # 256 MiB
    sink = torch.empty((), dtype=torch.int64, device="cuda")

    def read_flush():
        torch.sum(flush, dim=0, out=sink)

    graphs, errs = {}, {}
    if clean:
        plans = dict(plans, **{"(two flushes)": lambda: None})
    for name, f in plans.items():
        if name != "(two flushes)":
            errs[name] = check(name, f)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            read_flush()
            f()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            if clean:
                read_flush()
            f()
            if clean:
                read_flush()
        graphs[name] = g
    times = {name: [] for name in plans}
    for _ in range(100):
        for name, g in graphs.items():
            if not clean:
                flush.zero_()
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            g.replay()
            b.record()
            b.synchronize()
            times[name].append(a.elapsed_time(b) * 1e3)
    if clean:
        base = statistics.median(times.pop("(two flushes)"))
        times = {name: [t - base for t in ts] for name, ts in times.items()}
    return times, errs


if __name__ == "__main__":
    main()
