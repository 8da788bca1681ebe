# Experiment (session 21): would Triton's bf16 GEMM 4096^3 gain from the
# tensor memory accelerator (device-side tensor descriptors) or from a
# persistent grid? Variants of the tile program kgen emits (128 x 256 x 64,
# 3 stages, 8 warps), each checked against torch.matmul and timed by
# triton.testing.do_bench in one process, torch.matmul timed before and
# after them. Usage: python triton_mm_tma.py
import torch, triton, triton.language as tl

N = 4096


@triton.jit
def tile_of(t, GROUP_M: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    tm = tl.cdiv(4096, BLOCK_M)
    tn = tl.cdiv(4096, BLOCK_N)
    w = GROUP_M * tn
    g0 = t // w * GROUP_M
    gs = tl.minimum(tm - g0, GROUP_M)
    return g0 + t % w % gs, t % w // gs


@triton.jit
def mm_ptr(A, B, C, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    tr, tc = tile_of(tl.program_id(0).to(tl.int64), GROUP_M, BLOCK_M, BLOCK_N)
    m = tr * BLOCK_M + tl.arange(0, BLOCK_M)
    n = tc * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(0, 4096, BLOCK_K):
        k = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(A + m[:, None] * 4096 + k[None, :])
        b = tl.load(B + k[:, None] * 4096 + n[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(C + m[:, None] * 4096 + n[None, :], acc.to(tl.bfloat16))


@triton.jit
def mm_tma(A, B, C, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, STORE_TMA: tl.constexpr):
    ad = tl.make_tensor_descriptor(A, [4096, 4096], [4096, 1], [BLOCK_M, BLOCK_K])
    bd = tl.make_tensor_descriptor(B, [4096, 4096], [4096, 1], [BLOCK_K, BLOCK_N])
    tr, tc = tile_of(tl.program_id(0), GROUP_M, BLOCK_M, BLOCK_N)
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(0, 4096, BLOCK_K):
        a = ad.load([tr * BLOCK_M, k0])
        b = bd.load([k0, tc * BLOCK_N])
        acc = tl.dot(a, b, acc)
    if STORE_TMA:
        cd = tl.make_tensor_descriptor(C, [4096, 4096], [4096, 1], [BLOCK_M, BLOCK_N])
        cd.store([tr * BLOCK_M, tc * BLOCK_N], acc.to(tl.bfloat16))
    else:
        m = tr.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
        n = tc.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
        tl.store(C + m[:, None] * 4096 + n[None, :], acc.to(tl.bfloat16))


@triton.jit
def mm_tma_persistent(A, B, C, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, SMS: tl.constexpr, FLATTEN: tl.constexpr, WS: tl.constexpr):
    ad = tl.make_tensor_descriptor(A, [4096, 4096], [4096, 1], [BLOCK_M, BLOCK_K])
    bd = tl.make_tensor_descriptor(B, [4096, 4096], [4096, 1], [BLOCK_K, BLOCK_N])
    cd = tl.make_tensor_descriptor(C, [4096, 4096], [4096, 1], [BLOCK_M, BLOCK_N])
    tiles = tl.cdiv(4096, BLOCK_M) * tl.cdiv(4096, BLOCK_N)
    for t in tl.range(tl.program_id(0), tiles, SMS, flatten=FLATTEN, warp_specialize=WS):
        tr, tc = tile_of(t, GROUP_M, BLOCK_M, BLOCK_N)
        acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
        for k0 in range(0, 4096, BLOCK_K):
            a = ad.load([tr * BLOCK_M, k0])
            b = bd.load([k0, tc * BLOCK_N])
            acc = tl.dot(a, b, acc)
        cd.store([tr * BLOCK_M, tc * BLOCK_N], acc.to(tl.bfloat16))


def main():
    triton.set_allocator(lambda size, align, stream: torch.empty(size, device="cuda", dtype=torch.int8))
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    torch.manual_seed(0)
    a = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
    c = torch.empty_like(a)
    ref = (a.float() @ b.float())

    def bench(name, f):
        try:
            c.fill_(float("nan"))
            f()
            torch.cuda.synchronize()
            err = ((c.float() - ref).abs().max() / ref.abs().max()).item()
            t = triton.testing.do_bench(f, warmup=100, rep=500, quantiles=[0.5, 0.2, 0.8])
            print(f"{name:58s} {t[0]*1e3:8.1f} us ({t[1]*1e3:.1f}-{t[2]*1e3:.1f})  {2*N**3/t[0]/1e9:6.1f} TFLOP/s  rel err {err:.2g}", flush=True)
        except Exception as e:
            print(f"{name:58s} failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", flush=True)

    bench("torch.matmul (first)", lambda: torch.matmul(a, b, out=c))
    for bm, bn, bk, st, w in [(128, 256, 64, 3, 8), (128, 256, 64, 4, 8), (128, 128, 64, 4, 4), (128, 128, 64, 4, 8), (256, 128, 64, 3, 8)]:
        grid = (N // bm * N // bn,)
        cfg = f"{bm}x{bn}x{bk} s{st} w{w}"
        bench(f"pointers {cfg}", lambda: mm_ptr[grid](a, b, c, bm, bn, bk, 8, num_stages=st, num_warps=w))
        bench(f"tma loads {cfg}", lambda: mm_tma[grid](a, b, c, bm, bn, bk, 8, False, num_stages=st, num_warps=w))
        bench(f"tma loads+store {cfg}", lambda: mm_tma[grid](a, b, c, bm, bn, bk, 8, True, num_stages=st, num_warps=w))
        for flat in (False, True):
            for ws in (False, True):
                bench(f"tma persistent flat={int(flat)} ws={int(ws)} {cfg}", lambda: mm_tma_persistent[(min(sms, grid[0]),)](a, b, c, bm, bn, bk, 8, sms, flat, ws, num_stages=st, num_warps=w))
    bench("torch.matmul (last)", lambda: torch.matmul(a, b, out=c))


main()
