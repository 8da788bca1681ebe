"""PyTorch baselines and oracle for `kgen bench`, timed with kgen's protocol.

kgen writes a JSON job on stdin:

    {"warmup_ms": 25, "min_reps": 10, "min_ms": 100, "flush_bytes": N, "flush": "write",
     "modes": ["eager", "compile", "max-autotune"],
     "tasks": [{"name": "softmax_16x16384", "kernel": "softmax",
                "inputs": [{"name": "X", "dtype": "f32", "shape": [16, 16384]}],
                "params": {"eps": 1e-5},
                "module": "/tmp/.../softmax.py", "fn": "softmax", "sizes": {"R": 16, "D": 16384},
                "check_inputs": ["/tmp/.../X.bin"], "check_outputs": ["/tmp/.../Y.bin"]}]}

and reads one JSON object per task on stdout: for each mode ("timings":
eager, compile, and max-autotune for tasks marked "contraction"), the timing
(microseconds per run: median, p20, p80, samples, CUDA-graph batch), or
why there is none. With no modes, only the checks run, on the CPU when
there is no GPU. The program timed is what a PyTorch user would write: the
spec's reference module's function when there is one, else OPS's
hand-written one for the kernel, else the
program kgen emitted from the IR (module, fn: backends/torch), unless the
spec has a reference module (reference: STEM.torch.py beside STEM.kg) with
a function named after the kernel; "compile"
times torch.compile of the same program. With check_inputs, the emitted
program also runs once on those inputs (raw little-endian files, in input
order) and writes each output's raw bytes to check_outputs: the oracle
kgen compares its kernels with at full size.
The protocol is the runner's (runtime/runner/runner.cpp, measure): a
warm-up of at least warmup_ms that also estimates one run; CUDA graphs of K
runs when one run is under 20 us of GPU time (for a run that
looks under 200 us, the GPU's time is read from a graph of ten runs, since
the CPU's gaps between calls, a torch.compile'd function's guards, are no
part of it; each of the K runs after its own flush, the K flushes timed
alone in a second graph and taken off; a program that cannot be captured
is timed call by call);
then at least
max(min_reps, min_ms worth) samples, each timed with CUDA events and
preceded, outside the timed region, by an L2 flush of flush_bytes: a fill
of a scratch buffer, or with "flush": "read" a read of it (runner.cpp's
Scratch says what each costs or credits the program). With "flush":
"clean" the flushes read, every program is timed in graphs that end with
one more flush, less the graph of the flushes alone, so that a run pays
for writing back its own writes (a program that cannot be captured: each
sample is a run and the flush after it, less the flush before it, which
follows the previous sample's).

The PyTorch programs are written by hand for the example kernels named in
OPS, keyed by kernel name: the obvious torch call for each.
"""

import ctypes
import importlib.util
import json
import math
import os
import sys
import time

import torch
import torch.nn.functional as F

# DEVICE is where checks run: the GPU when there is one. Timing needs it.
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"

DTYPES = {
    "f64": torch.float64, "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
    "i64": torch.int64, "i32": torch.int32, "i8": torch.int8, "u8": torch.uint8, "bool": torch.bool,
}


def make(spec, gen):
    dt, shape = DTYPES[spec["dtype"]], spec["shape"]
    if dt.is_floating_point:
        return torch.randn(shape, generator=gen, device="cuda", dtype=torch.float32).to(dt)
    if dt == torch.bool:
        return torch.rand(shape, generator=gen, device="cuda") < 0.5
    return torch.randint(-8, 9, shape, generator=gen, device="cuda").to(dt)


def conv_out(x, w, p, groups=1, bias=None):
    return F.conv2d(x, w, bias, stride=int(p.get("stride", 1)), padding=int(p.get("pad", 0)),
                    dilation=int(p.get("dil", 1)), groups=groups)


# OPS maps a kernel name to a function of (inputs, params) returning the
# callable to time.
def tf32(f):
    """f with TF32 tensor cores allowed, as a kernel's tf32() asks."""
    def run():
        torch.backends.cuda.matmul.allow_tf32 = True
        try:
            return f()
        finally:
            torch.backends.cuda.matmul.allow_tf32 = False
    return run


OPS = {
    "gelu_erf": lambda t, p: lambda: F.gelu(t[0]),
    "gelu_tanh_approx": lambda t, p: lambda: F.gelu(t[0], approximate="tanh"),
    "silu": lambda t, p: lambda: F.silu(t[0]),
    "mish_act": lambda t, p: lambda: F.mish(t[0]),
    "leaky_relu": lambda t, p: lambda: F.leaky_relu(t[0], p.get("slope", 0.01)),
    "elu": lambda t, p: lambda: F.elu(t[0], p.get("alpha", 1.0)),
    "hardswish": lambda t, p: lambda: F.hardswish(t[0]),
    "axpy": lambda t, p: lambda: t[0] * t[1] + t[2],
    "matmul": lambda t, p: lambda: t[0] @ t[1],
    "matmul_bt": lambda t, p: lambda: t[0] @ t[1].T,
    "matmul_at": lambda t, p: lambda: t[0].T @ t[1],
    "matmul_tf32": lambda t, p: tf32(lambda: t[0] @ t[1]),
    "gemm": lambda t, p: lambda: p.get("alpha", 1.0) * (t[0] @ t[1]) + p.get("beta", 0.0) * t[2],
    "matmul_bf16": lambda t, p: lambda: t[0] @ t[1],
    "matmul_f16_f32out": lambda t, p: lambda: (t[0] @ t[1].T).float(),
    "bmm": lambda t, p: lambda: torch.bmm(t[0], t[1]),
    "bmm_bt": lambda t, p: lambda: torch.bmm(t[0], t[1].transpose(1, 2)),
    "tensor_matmul": lambda t, p: lambda: t[0] @ t[1],
    "gemm_bias_relu": lambda t, p: lambda: torch.relu(t[0] @ t[1] + t[2]),
    "linear_gelu": lambda t, p: lambda: F.gelu(F.linear(t[0], t[1], t[2])),
    "linear_tanh_residual": lambda t, p: lambda: t[0] + torch.tanh(F.linear(t[0], t[1], t[2])),
    "matvec": lambda t, p: lambda: t[0] @ t[1],
    "softmax": lambda t, p: lambda: torch.softmax(t[0], -1),
    "log_softmax": lambda t, p: lambda: torch.log_softmax(t[0], -1),
    "logsumexp": lambda t, p: lambda: torch.logsumexp(t[0], -1),
    "layernorm": lambda t, p: lambda: F.layer_norm(t[0], t[0].shape[-1:], t[1], t[2], p.get("eps", 1e-5)),
    "layernorm_bf16": lambda t, p: lambda: F.layer_norm(t[0], t[0].shape[-1:], t[1], t[2], p.get("eps", 1e-5)),
    "rmsnorm": lambda t, p: lambda: F.rms_norm(t[0], t[0].shape[-1:], t[1], p.get("eps", 1e-6)),
    "rmsnorm_bf16": lambda t, p: lambda: F.rms_norm(t[0], t[0].shape[-1:], t[1], p.get("eps", 1e-6)),
    "l2_normalize": lambda t, p: lambda: F.normalize(t[0], dim=-1, eps=p.get("eps", 1e-12)),
    "sum_rows": lambda t, p: lambda: t[0].sum(-1),
    "mean_rows": lambda t, p: lambda: t[0].mean(-1),
    "sum_cols": lambda t, p: lambda: t[0].sum(0),
    "mean_cols": lambda t, p: lambda: t[0].mean(0),
    "sum_all": lambda t, p: lambda: t[0].sum(),
    "mse_loss": lambda t, p: lambda: F.mse_loss(t[0], t[1]),
    "transpose": lambda t, p: lambda: t[0].T.contiguous(),
    "conv2d": lambda t, p: lambda: conv_out(t[0], t[1], p),
    "conv2d_bias": lambda t, p: lambda: conv_out(t[0], t[1], p, bias=t[2]),
    "conv2d_nhwc": lambda t, p: lambda: conv_out(t[0].permute(0, 3, 1, 2), t[1].permute(0, 3, 1, 2), p).permute(0, 2, 3, 1),
    "depthwise_conv2d": lambda t, p: lambda: conv_out(t[0], t[1].unsqueeze(1), p, groups=t[0].shape[1]),
}


def percentile(xs, q):
    pos = q * (len(xs) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(xs) - 1)
    f = pos - lo
    return xs[lo] * (1 - f) + xs[hi] * f


def l2_flush(job):
    """The L2 flush before each sample (runner.cpp's Scratch): a function
    of the sample's index, or None without one."""
    fb = job["flush_bytes"]
    if fb <= 0:
        return None
    buf = torch.zeros(fb, dtype=torch.uint8, device="cuda")
    if job.get("flush", "write") == "write":
        return lambda i: buf.fill_(i & 0xFF)
    words = buf[:fb // 4 * 4].view(torch.float32)
    sink = torch.zeros((), dtype=torch.float32, device="cuda")
    return lambda i: torch.sum(words, 0, out=sink)


def graph_of(fn, n, flush=None, tail=False):
    """A CUDA graph of n calls of fn, each after flush(k) when it is
    given, and with tail one flush more at the end; or None where fn
    cannot be captured (a CPU synchronization, a recompilation): then it
    is timed call by call."""
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for k in range(n):
                if flush is not None:
                    flush(k)
                fn()
            if tail and flush is not None:
                flush(n)
        g.replay()
        torch.cuda.synchronize()
        return g
    except Exception:
        torch.cuda.synchronize()
        return None


def measure(fn, job):
    warmup_ms, min_reps, min_ms = job["warmup_ms"], job["min_reps"], job["min_ms"]
    flush = l2_flush(job)
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0, chunk, est = time.perf_counter(), 1, 1e-6
    while True:
        a.record()
        for _ in range(chunk):
            fn()
        b.record()
        b.synchronize()
        est = max(a.elapsed_time(b) / chunk, 1e-6)
        if (time.perf_counter() - t0) * 1e3 >= warmup_ms:
            break
        chunk = int(min(max(math.ceil(5.0 / est), 1), 100000))
    run, batch = fn, 0
    if est < 0.200:
        # The estimate counts the gaps while the CPU prepares each call:
        # a torch.compile'd function's guards take tens of microseconds,
        # so a short kernel may look long. Ten calls in a CUDA graph, with
        # no CPU between them, tell the GPU's own time.
        probe = graph_of(fn, 10)
        if probe is not None:
            a.record()
            probe.replay()
            b.record()
            b.synchronize()
            est = max(a.elapsed_time(b) / 10, 1e-6)
    # Short programs: a graph of batch calls, each after its own flush,
    # then a graph of the flushes alone; a sample is the difference over
    # batch (runner.cpp's measure).
    flushes = None
    fb = job["flush_bytes"]
    clean = job.get("flush") == "clean" and flush is not None
    if est < 0.020 or clean:
        batch = int(min(max(math.ceil(0.020 / est), 1), 1000))
        g = graph_of(fn, batch, flush, clean)
        if fb > 0 and g is not None:
            flushes = graph_of(lambda: None, batch, flush, clean)
            if flushes is None:
                g = None
        if g is None:
            batch = 0
        else:
            run = g.replay
            for _ in range(3):
                run()
                if flushes is not None:
                    flushes.replay()
            torch.cuda.synchronize()
    k = max(batch, 1)
    sample_ms = est * k
    if (batch or clean) and fb > 0:
        sample_ms += (k + (1 if clean else 0)) * fb / 3e9
    reps = int(min(max(min_reps, math.ceil(min_ms / sample_ms)), 100000))
    samples = []
    if clean and not batch:
        flush(0)  # the first sample's reference flush follows a flush
    for done in range(0, reps, 256):
        n = min(256, reps - done)
        evs = [tuple(torch.cuda.Event(enable_timing=True) for _ in range(3)) for _ in range(n)]
        for j, (e0, e1, e2) in enumerate(evs):
            if batch:
                e0.record()
                if flushes is not None:
                    flushes.replay()
                e1.record()
                run()
                e2.record()
                continue
            if clean:
                # e0 | a flush after a flush | e1 | the run, its flush | e2
                e0.record()
                flush(done + j)
                e1.record()
                run()
                flush(done + j + 1)
                e2.record()
                continue
            if flush is not None:
                flush(done + j)
            e1.record()
            run()
            e2.record()
        torch.cuda.synchronize()
        for e0, e1, e2 in evs:
            t = e1.elapsed_time(e2)
            if flushes is not None or (clean and not batch):
                t -= e0.elapsed_time(e1)
            samples.append(t * 1000.0 / k)
    samples.sort()
    return {"median_us": percentile(samples, 0.5), "p20_us": percentile(samples, 0.2),
            "p80_us": percentile(samples, 0.8), "reps": len(samples), "batch": batch}


_modules = {}


def emitted(task):
    """The function kgen emitted for the task's kernel."""
    return getattr(load(task["module"]), task["fn"])


def load(path):
    if path not in _modules:
        name = "kgen_torch_%d" % len(_modules)
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        # torch.compile (dynamo) finds a function's globals through
        # sys.modules by the module's name: unregistered, every compiled
        # baseline fails with ModuleNotFoundError.
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        _modules[path] = mod
    return _modules[path]


def program(task, inputs):
    """The callable to time: the spec's reference module's function for
    the kernel when it has one, else OPS's hand-written one, else the
    program kgen emitted."""
    if task.get("reference"):
        fn = getattr(load(task["reference"]), task["kernel"], None)
        if fn is not None:
            kw = keywords(task)
            return "reference", lambda: fn(*inputs, **kw)
    op = OPS.get(task["kernel"])
    if op is not None:
        return "hand-written", op(inputs, task.get("params", {}))
    if not task.get("module"):
        return None, None
    fn, kw = emitted(task), keywords(task)
    return "kgen's torch program", lambda: fn(*inputs, **kw)


def keywords(task):
    """The emitted function's keyword arguments: sizes, then params."""
    kw = dict(task.get("sizes", {}))
    names = task.get("keywords", {})
    for name, value in task.get("params", {}).items():
        kw[names.get(name, name)] = float(value) if isinstance(value, str) else value
    return kw


def read_raw(path, spec):
    data = bytearray(open(path, "rb").read())
    flat = torch.frombuffer(data, dtype=torch.uint8) if data else torch.empty(0, dtype=torch.uint8)
    return flat.view(DTYPES[spec["dtype"]]).reshape(spec["shape"]).to(DEVICE)


def write_raw(path, t):
    t = t.detach().contiguous().cpu()
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(ctypes.string_at(t.data_ptr(), t.numel() * t.element_size()))
    os.replace(tmp, path)


def check(task):
    """Runs the emitted program (or, with check_reference, the reference
    module's) on the task's check inputs."""
    inputs = [read_raw(p, s) for p, s in zip(task["check_inputs"], task["inputs"])]
    fn, kw = emitted(task), keywords(task)
    if task.get("check_reference"):
        fn = getattr(load(task["reference"]), task["kernel"])
    with torch.no_grad():
        outs = fn(*inputs, **kw)
    # An output that is an input's own storage costs the program nothing
    # where the kernel copies: as a baseline it would time nothing.
    given = {i.untyped_storage().data_ptr() for i in inputs if i.numel() > 0}
    for t in outs:
        if t.numel() > 0 and t.untyped_storage().data_ptr() in given:
            raise ValueError("an output is an input's own storage, not a copy of it")
    for path, t in zip(task["check_outputs"], outs):
        write_raw(path, t)


def main():
    job = json.load(sys.stdin)
    torch.backends.cuda.matmul.allow_tf32 = False  # f32 means f32, as in kgen
    torch.backends.cudnn.allow_tf32 = False
    modes = job.get("modes") or []
    for task in job["tasks"]:
        out = {"name": task["name"], "torch": torch.__version__}
        try:  # one task's failure is reported, not fatal
            if task.get("check_inputs"):
                check(task)
        except Exception as e:
            out["check_error"] = "%s: %s" % (type(e).__name__, e)
        if not modes:  # the check alone, which also runs on the CPU
            print(json.dumps(out), flush=True)
            continue
        gen = torch.Generator(device="cuda").manual_seed(1)
        try:
            inputs = [make(s, gen) for s in task["inputs"]]
            out["program"], fn = program(task, inputs)
            if fn is None:
                out["skip"] = "no PyTorch program for kernel %s" % task["kernel"]
            else:
                timings = out["timings"] = {}
                with torch.no_grad():
                    if "eager" in modes:
                        timings["eager"] = measure(fn, job)
                    for mode in ("compile", "max-autotune"):
                        if mode not in modes or (mode == "max-autotune" and not task.get("contraction")):
                            continue
                        torch._dynamo.reset()
                        compiled = torch.compile(fn, mode=None if mode == "compile" else mode)
                        for _ in range(3):  # compiles (and autotunes), then settles
                            compiled()
                        torch.cuda.synchronize()
                        timings[mode] = measure(compiled, job)
        except Exception as e:
            out["skip"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
