# Experiment (session 22, after triton_stages1.py): which input element
# does each of conv_stem_7x7's 147 taps read when Triton pipelines its
# implicit GEMM with num_stages=1? X holds each element's own flat index
# (exact in f32 below 2^24), Wt is one-hot at filter 0 and tap j, and the
# bias zero, so Y[n, 0, oh, ow] is the index of the element that tap j
# read at that output (0 where it read padding). Printed: for each
# num_stages, the taps whose reads differ from the expected ones, with
# the expected and the read (c, ih, iw) at the first difference; then
# matrix products with K = 147 and K = 160 (an f32 ieee tl.dot loop with
# and without a masked last chunk) at num_stages 1 and 2.
import importlib.util, os, sys
import torch, triton, triton.language as tl

src_dir = sys.argv[1]
spec = importlib.util.spec_from_file_location("conv2d", os.path.join(src_dir, "conv2d.py"))
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)

N, C, H, W, F, KH, KW, S, P = 8, 3, 224, 224, 64, 7, 7, 2, 3
OH = OW = 112
X = torch.arange(N * C * H * W, device="cuda", dtype=torch.float32).reshape(N, C, H, W) + 1  # 0 is padding
bias = torch.zeros(F, device="cuda")
cfg = dict(BLOCK_K=32, BLOCK_M=128, BLOCK_N=128, GROUP_M=16, num_warps=8)
grid = (-(-F // 128) * -(-N * OH * OW // 128),)
oh = torch.arange(OH, device="cuda")[:, None]
ow = torch.arange(OW, device="cuda")[None, :]


def where(idx):
    i = int(idx) - 1
    if i < 0:
        return "padding"
    n, r = divmod(i, C * H * W)
    c, r = divmod(r, H * W)
    h, w = divmod(r, W)
    return f"(n={n}, c={c}, h={h}, w={w})"


for st in (1, 2):
    bad = 0
    for j in range(C * KH * KW):
        c, r = divmod(j, KH * KW)
        kh, kw = divmod(r, KW)
        Wt = torch.zeros(F, C, KH, KW, device="cuda")
        Wt[0, c, kh, kw] = 1
        Y = torch.full((N, F, OH, OW), float("nan"), device="cuda")
        m.conv_stem_7x7[grid](X, Wt, bias, Y, num_stages=st, **cfg)
        ih, iw = oh * S + kh - P, ow * S + kw - P
        inside = (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        want = torch.where(inside, X[0, c, ih.clamp(0, H - 1), iw.clamp(0, W - 1)], torch.zeros((), device="cuda"))
        got = Y[0, 0]
        diff = (got != want).nonzero()
        if len(diff):
            bad += 1
            y, x = diff[0].tolist()
            if bad <= 12:
                print(f"num_stages={st} tap j={j} (c={c}, kh={kh}, kw={kw}): {len(diff)} of {OH * OW} outputs differ; at oh={y}, ow={x} want {where(want[y, x].item())} got {where(got[y, x].item()) if got[y, x] == got[y, x] else 'nan'} ({got[y, x].item()})")
    print(f"num_stages={st}: {bad} of {C * KH * KW} taps read other elements", flush=True)


@triton.jit
def mm(A, B, Cp, M, Nn, K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pn * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(A + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0)
        b = tl.load(B + rk[:, None] * Nn + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < Nn), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(Cp + rm[:, None] * Nn + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < Nn))


for K in (147, 160):
    A = torch.randn(64, K, device="cuda")
    B = torch.randn(K, 4096, device="cuda")
    ref = (A.double() @ B.double()).float()
    for st in (1, 2):
        Cm = torch.full((64, 4096), float("nan"), device="cuda")
        mm[(1, 32)](A, B, Cm, 64, 4096, K, 128, 128, 32, num_stages=st, num_warps=8)
        print(f"matmul K={K} num_stages={st}: max abs err {(Cm - ref).abs().max().item():.3g}", flush=True)
