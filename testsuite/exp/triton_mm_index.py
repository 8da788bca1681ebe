# Experiment (session 13): does a Triton GEMM's index width matter? The
# same 4096^3 bf16 tile program as kgen emits (128 x 256 x 64, 3 stages,
# 8 warps), with int64 program ids and offsets (kgen's) and with int32,
# beside torch.matmul, timed by triton.testing.do_bench in one process.
import torch, triton, triton.language as tl

@triton.jit
def mm(A, B, C, I64: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    kg_pid = tl.program_id(0)
    if I64:
        kg_pid = kg_pid.to(tl.int64)
    kg_tm = tl.cdiv(4096, BLOCK_M)
    kg_tn = tl.cdiv(4096, BLOCK_N)
    kg_t = kg_pid % (kg_tm * kg_tn)
    kg_w = GROUP_M * kg_tn
    kg_g0 = kg_t // kg_w * GROUP_M
    kg_gs = tl.minimum(kg_tm - kg_g0, GROUP_M)
    kg_tr = kg_g0 + kg_t % kg_w % kg_gs
    kg_tc = kg_t % kg_w // kg_gs
    kg_m = kg_tr * BLOCK_M + tl.arange(0, BLOCK_M)
    kg_n = kg_tc * BLOCK_N + tl.arange(0, BLOCK_N)
    kg_acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for kg_k0 in range(0, 4096, BLOCK_K):
        kg_k = kg_k0 + tl.arange(0, BLOCK_K)
        kg_a = tl.load(A + (kg_m[:, None]) * 4096 + (kg_k[None, :]))
        kg_b = tl.load(B + (kg_k[:, None]) * 4096 + (kg_n[None, :]))
        kg_acc = tl.dot(kg_a, kg_b, kg_acc)
    tl.store(C + (kg_m[:, None]) * 4096 + (kg_n[None, :]), kg_acc.to(tl.bfloat16))

a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
c = torch.empty_like(a)
ref = a @ b
for cfg in [(128, 256, 64, 3, 8), (128, 256, 64, 4, 8), (128, 128, 64, 4, 4), (128, 128, 64, 4, 8)]:
    bm, bn, bk, st, w = cfg
    grid = (4096 // bm * 4096 // bn,)
    for i64 in (True, False):
        f = lambda: mm[grid](a, b, c, i64, bk, bm, bn, 8, num_stages=st, num_warps=w)
        f()
        err = (c.float() - ref.float()).abs().max().item()
        t = triton.testing.do_bench(f, warmup=100, rep=500, quantiles=[0.5, 0.2, 0.8])
        print(f"BM={bm} BN={bn} BK={bk} stages={st} warps={w} {'int64' if i64 else 'int32'}: {t[0]*1e3:.1f} us ({t[1]*1e3:.1f}-{t[2]*1e3:.1f}) err {err:.3g}")
t = triton.testing.do_bench(lambda: torch.matmul(a, b), warmup=100, rep=500, quantiles=[0.5, 0.2, 0.8])
print(f"torch.matmul: {t[0]*1e3:.1f} us ({t[1]*1e3:.1f}-{t[2]*1e3:.1f})")
