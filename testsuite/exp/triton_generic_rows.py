# Experiment (session 22): does Triton's generic template lose dw_mobilenet
# (50% of copy, CUDA 64%) and global_avgpool_resnet (58%, CUDA 84%) to
# per-element index arithmetic? Hand-written variants of the programs kgen
# emits, timed by triton.testing.do_bench in one process beside the
# emitted form, each checked against PyTorch first.
#   flat64: kgen's form, a flat block of points decomposed in int64
#   flat32: the same in int32
#   rows:   a [BR, BW] block, rows (n, c, oh) decomposed once a row, the
#           output's last index along the columns, int32
import torch, triton, triton.language as tl
import torch.nn.functional as F

N, C, H, W = 16, 64, 112, 112
P = N * C * H * W


@triton.jit
def dw_flat(X, Wt, Y, BLOCK: tl.constexpr, I64: tl.constexpr):
    kg_p = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if I64:
        kg_p = kg_p.to(tl.int64)
    kg_pm = kg_p < 12845056
    r = kg_p
    ow = r % 112
    r = r // 112
    oh = r % 112
    r = r // 112
    c = r % 64
    n = r // 64
    acc = tl.full([BLOCK], 0.0, tl.float32)
    for kh in range(0, 3):
        for kw in range(0, 3):
            ih = oh + kh - 1
            iw = ow + kw - 1
            m = kg_pm & (ih >= 0) & (ih < 112) & (iw >= 0) & (iw < 112)
            acc = acc + tl.load(X + ((n * 64 + c) * 112 + ih) * 112 + iw, mask=m, other=0.0) * tl.load(Wt + (c * 3 + kh) * 3 + kw, mask=kg_pm, other=0)
    tl.store(Y + ((n * 64 + c) * 112 + oh) * 112 + ow, acc, mask=kg_pm)


@triton.jit
def dw_rows(X, Wt, Y, BR: tl.constexpr, BW: tl.constexpr):
    row = tl.program_id(0) * BR + tl.arange(0, BR)[:, None]
    rm = row < 16 * 64 * 112
    ow = tl.arange(0, BW)[None, :]
    om = ow < 112
    oh = row % 112
    nc = row // 112
    c = nc % 64
    acc = tl.full([BR, BW], 0.0, tl.float32)
    for kh in range(0, 3):
        ih = oh + kh - 1
        hm = rm & (ih >= 0) & (ih < 112)
        base = X + (nc * 112 + ih) * 112
        for kw in range(0, 3):
            iw = ow + kw - 1
            acc = acc + tl.load(base + iw, mask=hm & (iw >= 0) & (iw < 112), other=0.0) * tl.load(Wt + (c * 3 + kh) * 3 + kw, mask=rm, other=0)
    tl.store(Y + row * 112 + ow, acc, mask=rm & om)


@triton.jit
def gap_rows(X, Y, BLOCK: tl.constexpr, BLOCK_ROWS: tl.constexpr, I64: tl.constexpr):
    row = tl.program_id(0) * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)[:, None]
    if I64:
        row = row.to(tl.int64)
    live = row < 131072
    row = tl.minimum(row, 131072 - 1)
    col = tl.arange(0, BLOCK)[None, :]
    x = tl.load(X + row * 49 + col, mask=col < 49, other=0)
    s = tl.sum(tl.where(col < 49, x, 0.0), axis=1, keep_dims=True)
    tl.store(Y + row, tl.div_rn(s, tl.full([], 49.0, tl.float32)), mask=live)


def bench(name, f, check):
    f()
    torch.cuda.synchronize()
    err = check()
    t = triton.testing.do_bench(f, warmup=50, rep=300, quantiles=[0.5, 0.2, 0.8])
    print(f"{name:40s} {t[0]*1e3:8.2f} us ({t[1]*1e3:.2f}-{t[2]*1e3:.2f})  err {err:.2g}", flush=True)


X = torch.randn(N, C, H, W, device="cuda")
Wt = torch.randn(C, 3, 3, device="cuda")
Y = torch.empty_like(X)
ref = F.conv2d(X, Wt[:, None], padding=1, groups=C)
chk = lambda: (Y - ref).abs().max().item()
for blk, w in [(128, 4), (256, 4), (512, 4), (1024, 8)]:
    for i64 in (True, False):
        bench(f"dw flat{64 if i64 else 32} BLOCK={blk} warps={w}", lambda: dw_flat[(triton.cdiv(P, blk),)](X, Wt, Y, blk, i64, num_warps=w), chk)
for br, w in [(1, 4), (2, 4), (4, 4), (8, 4), (4, 8), (8, 8), (16, 8)]:
    bench(f"dw rows BR={br} BW=128 warps={w}", lambda: dw_rows[(triton.cdiv(N * C * H, br),)](X, Wt, Y, br, 128, num_warps=w), chk)
bench("dw torch F.conv2d groups=C", lambda: F.conv2d(X, Wt[:, None], padding=1, groups=C), lambda: 0.0)

G = torch.randn(64, 2048, 7, 7, device="cuda")
GY = torch.empty(64, 2048, device="cuda")
gref = G.mean(dim=(2, 3))
gchk = lambda: (GY - gref).abs().max().item()
for br, w in [(64, 8), (32, 4), (128, 8), (16, 4), (64, 4)]:
    for i64 in (True, False):
        bench(f"gap rows BLOCK_ROWS={br} warps={w} {'i64' if i64 else 'i32'}", lambda: gap_rows[(triton.cdiv(131072, br),)](G, GY.view(-1), 64, br, i64, num_warps=w), gchk)
bench("gap torch mean", lambda: G.mean(dim=(2, 3)), lambda: 0.0)
x = torch.empty(2 << 26, device="cuda")
y = torch.empty_like(x)
bench("copy 1 GiB (for GB/s)", lambda: y.copy_(x), lambda: 0.0)
