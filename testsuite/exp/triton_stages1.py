# Experiment (session 22): why does Triton's implicit GEMM for conv_stem_7x7
# compute wrong results with num_stages=1 (the twenty-first session's tuning
# records)? Runs the tile program kgen emits (examples/conv2d.kg, built with
# --emit-only into the folder given as the first argument) beside
# torch.nn.functional.conv2d in f32 without TF32, with num_stages 1, 2 and 3
# and with edited copies of the source that each remove one suspect, and
# for a wrong result asks which part of the reduction it holds: the bias
# plus the sum over which range of k = (c, kh, kw). Writes the loop's TTGIR
# and PTX for num_stages 1 and 3 under $OUT.
import importlib.util, os, sys, tempfile
import torch, torch.nn.functional as F

src_dir = sys.argv[1]
out = os.environ.get("OUT", "/tmp")
torch.backends.cudnn.allow_tf32 = False
src = open(os.path.join(src_dir, "conv2d.py")).read()

def load(text, tag):
    path = os.path.join(tempfile.mkdtemp(), f"conv2d_{tag}.py")
    open(path, "w").write(text)
    spec = importlib.util.spec_from_file_location(f"conv2d_{tag}", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m

g = torch.Generator(device="cuda").manual_seed(1)
X = torch.randn(8, 3, 224, 224, device="cuda", generator=g)
Wt = torch.randn(64, 3, 7, 7, device="cuda", generator=g)
bias = torch.randn(64, device="cuda", generator=g)
ref = F.conv2d(X, Wt, bias, stride=2, padding=3)

# The sum over the flattened k in [lo, hi), for the explanation.
Xp = F.pad(X, (3, 3, 3, 3))
cols = Xp.unfold(2, 7, 2).unfold(3, 7, 2)  # n c oh ow kh kw
cols = cols.permute(0, 2, 3, 1, 4, 5).reshape(8, 112, 112, 147)
Wf = Wt.reshape(64, 147)
def partial(lo, hi):
    return torch.einsum("nhwk,fk->nfhw", cols[..., lo:hi], Wf[:, lo:hi])

variants = {
    "as emitted": src,
    "no bias": src.replace("tl.load(bias + kg_m[:, None], mask=kg_mm & kg_nm, other=0) + kg_acc", "kg_acc"),
    "acc +=": src.replace("kg_acc = tl.dot(kg_a, kg_b, kg_acc, input_precision=\"ieee\")", "kg_acc += tl.dot(kg_a, kg_b, input_precision=\"ieee\")"),
    "tf32": src.replace("input_precision=\"ieee\")", "input_precision=\"tf32\")"),
}
configs = [dict(BLOCK_K=32, BLOCK_M=128, BLOCK_N=128, GROUP_M=16, num_warps=8),
           dict(BLOCK_K=128, BLOCK_M=256, BLOCK_N=64, GROUP_M=1, num_warps=8),
           dict(BLOCK_K=32, BLOCK_M=64, BLOCK_N=64, GROUP_M=8, num_warps=4)]
for name, text in variants.items():
    if name != "as emitted" and text == src:
        print(f"{name}: the edit did not apply")
        continue
    m = load(text, name.replace(" ", "_").replace("+=", "pe"))
    for cfg in configs:
        for st in (1, 2, 3):
            Y = torch.full_like(ref, float("nan"))
            grid = -(-64 // cfg["BLOCK_M"]) * -(-100352 // cfg["BLOCK_N"])
            try:
                k = m.conv_stem_7x7[(grid,)](X, Wt, bias, Y, num_stages=st, **cfg)
            except Exception as e:
                print(f"{name} {cfg} stages={st}: {type(e).__name__}: {str(e)[:200]}")
                continue
            torch.cuda.synchronize()
            want = ref if name != "no bias" else ref - bias[None, :, None, None]
            err = ((Y - want).abs() / (want.abs() + 1e-3)).max().item()
            line = f"{name} {cfg} stages={st}: max rel err {err:.3g}"
            if err > 1e-3:
                got = Y if name == "no bias" else Y - bias[None, :, None, None]
                # Which k-range's sum is it?
                bk = cfg["BLOCK_K"]
                found = []
                for lo in range(0, 147, bk):
                    for hi in range(lo + bk, 147 + bk, bk):
                        p = partial(lo, min(hi, 147))
                        if ((got - p).abs() / (p.abs() + 1e-3)).max().item() < 1e-3:
                            found.append(f"k in [{lo},{min(hi,147)})")
                line += f"; got {Y.flatten()[0].item():.6g} want {want.flatten()[0].item():.6g}; equals the sum over {found or 'no k-range of whole chunks'}"
                if name == "as emitted" and cfg is configs[0] and st == 1:
                    open(os.path.join(out, "stages1.ttgir"), "w").write(k.asm["ttgir"])
                    open(os.path.join(out, "stages1.ptx"), "w").write(k.asm["ptx"])
            elif name == "as emitted" and cfg is configs[0] and st == 3:
                open(os.path.join(out, "stages3.ttgir"), "w").write(k.asm["ttgir"])
            print(line, flush=True)
