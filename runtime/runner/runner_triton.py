# kgen's Triton runner: speaks runner.cpp's line protocol (read its header
# comment) for kgen-emitted Triton modules instead of cubins. kgen
# (runtime/runner_triton.go) embeds this file and starts it as
#
#   python runner_triton.py DEVICE_INDEX
#   python runner_triton.py --interpret
#
# With --interpret the kernels run in Triton's interpreter on the CPU
# (TRITON_INTERPRET=1: numpy executes each program), with torch CPU tensors
# for buffers: slow, but it checks the emitted kernels' results on a
# machine without a GPU. Timing commands then fail with ENOSYS.
#
#   load PATH        imports the module (importlib); its KERNELS table
#                    describes the entry points
#   func MOD NAME    compiles entry point NAME for this GPU (through
#                    triton.compiler.compile on the table's signature and
#                    constexprs, every pointer 16-byte aligned)
#                    -> ok FN REGS SMEM MAXTHREADS; a launch whose
#                    arguments divide by 16 otherwise (sizes, as Triton's
#                    JIT specializes) compiles that variant first
#   launch/time      grid (GX, GY, GZ) as sent; the block (BX...) must be
#                    the entry point's num_warps * 32 threads, and SMEM 0:
#                    Triton sizes both itself
#
# Buffers are torch uint8 tensors on the device; arguments reach the
# kernel as raw pointers and scalars, in the entry point's signature order
# (constexprs added). Timing follows runner.cpp's measure(): warm-up,
# CUDA events around each sample, an L2 flush (a read, or a write of the
# scratch buffer: L2Flush) before each sample outside the timed region, for short plans CUDA graphs of runs
# each after its own flush, less a graph of the flushes alone, the median
# and p20/p80.
#
# Error replies use CUDA's error names where the failure is the GPU's, so
# that kgen classifies them as it does the CUDA runner's; after an error
# that leaves the context dead the runner exits with status 3.

import contextlib
import importlib.util
import math
import os
import struct
import sys
import time
import traceback

EXIT_INIT, EXIT_FATAL, EXIT_IO = 2, 3, 4

STICKY = {
    "CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_HARDWARE_STACK_ERROR",
    "CUDA_ERROR_ILLEGAL_INSTRUCTION", "CUDA_ERROR_MISALIGNED_ADDRESS", "CUDA_ERROR_INVALID_ADDRESS_SPACE",
    "CUDA_ERROR_INVALID_PC", "CUDA_ERROR_ASSERT", "CUDA_ERROR_LAUNCH_TIMEOUT", "CUDA_ERROR_ECC_UNCORRECTABLE",
    "CUDA_ERROR_CONTEXT_IS_DESTROYED", "CUDA_ERROR_DEINITIALIZED", "CUDA_ERROR_UNKNOWN",
}

# Messages of torch's and the driver's errors, to CUDA error names.
MESSAGES = [
    ("illegal memory access", "CUDA_ERROR_ILLEGAL_ADDRESS"),
    ("misaligned address", "CUDA_ERROR_MISALIGNED_ADDRESS"),
    ("unspecified launch failure", "CUDA_ERROR_LAUNCH_FAILED"),
    ("illegal instruction", "CUDA_ERROR_ILLEGAL_INSTRUCTION"),
    ("device-side assert", "CUDA_ERROR_ASSERT"),
    ("out of memory", "CUDA_ERROR_OUT_OF_MEMORY"),
    ("too many resources", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"),
    ("out of resource", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"),
    ("OutOfResources", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"),
    ("invalid argument", "CUDA_ERROR_INVALID_VALUE"),
]


class Fail(Exception):
    def __init__(self, code, msg):
        super().__init__(msg)
        self.code, self.msg = code, msg


def gpu_fail(e, what):
    text = "".join(traceback.format_exception_only(type(e), e)).strip().replace("\n", " ")
    for needle, code in MESSAGES:
        if needle in text or needle in type(e).__name__:
            return Fail(code, what + ": " + text)
    return Fail("CUDA_ERROR_UNKNOWN" if "CUDA" in text else "CUDA_ERROR_INVALID_VALUE", what + ": " + text)


def proto_error(msg):
    return Fail("EPROTO", msg)


def parse_int(s, what):
    try:
        return int(s, 0)
    except ValueError:
        raise proto_error("bad %s '%s'" % (what, s))


def parse_nonneg(s, what):
    v = parse_int(s, what)
    if v < 0:
        raise proto_error("negative %s '%s'" % (what, s))
    return v


def parse_float(s, what):
    try:
        if "0x" in s.lower() or "p" in s.lower():
            return float.fromhex(s)
        return float(s)
    except ValueError:
        raise proto_error("bad %s '%s'" % (what, s))


def rest(line, k):
    """The text after the first k whitespace-separated fields."""
    s = line.lstrip(" \t")
    for _ in range(k):
        i = 0
        while i < len(s) and s[i] not in " \t":
            i += 1
        s = s[i:].lstrip(" \t")
    return s


# COMMANDS are the protocol's commands that take their fields; load, write
# and read take the line too, for a path that may hold spaces.
class L2Flush:
    """The timing protocol's L2 flush (runner.cpp's Scratch): a write (a
    fill, triton.testing.do_bench's flush), whose dirty lines the timed
    kernel pays to write back, or a read of the scratch buffer, whose
    clean lines it evicts for free."""

    def __init__(self, torch, nbytes, dev):
        self.torch = torch
        self.buf = torch.zeros(nbytes, dtype=torch.uint8, device=dev)
        self.sink = torch.zeros((), dtype=torch.float32, device=dev)

    def run(self, kind, nbytes, i):
        # clean reads (Runner.measure adds the trailing flush).
        if kind == "write":
            self.buf[:nbytes].fill_(i & 0xFF)
            return
        self.torch.sum(self.buf[:nbytes // 4 * 4].view(self.torch.float32), 0, out=self.sink)


COMMANDS = ("unload", "func", "alloc", "free", "fill", "launch", "sync", "time", "copytime", "copybw", "info")


class Runner:
    def __init__(self, torch, triton, device):
        self.torch, self.triton = torch, triton
        self.dev = torch.device("cuda", device)
        torch.cuda.set_device(self.dev)
        self.stream = torch.cuda.Stream(self.dev)
        self.next_id = 1
        self.modules, self.funcs, self.buffers = {}, {}, {}
        self.flush = None
        props = torch.cuda.get_device_properties(self.dev)
        self.props = props
        from triton.backends.compiler import GPUTarget
        cc = props.major * 10 + props.minor
        self.target = GPUTarget("cuda", cc, 32)

    def on_stream(self):
        """The context of the runner's copies: its CUDA stream."""
        return self.torch.cuda.stream(self.stream)

    def synchronize(self):
        self.stream.synchronize()

    def new_id(self):
        i = self.next_id
        self.next_id += 1
        return i

    # ---- commands ----

    def load(self, line, t):
        path = rest(line, 1)
        if not path:
            raise proto_error("usage: load PATH")
        try:
            spec = importlib.util.spec_from_file_location("kgen_%d" % self.next_id, path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            kernels = mod.KERNELS
        except FileNotFoundError as e:
            raise Fail("CUDA_ERROR_FILE_NOT_FOUND", "load %s: %s" % (path, e))
        except Exception as e:
            raise Fail("CUDA_ERROR_INVALID_IMAGE", "load %s: %s" % (path, "".join(traceback.format_exception_only(type(e), e)).strip()))
        i = self.new_id()
        self.modules[i] = kernels
        return "ok %d" % i

    def unload(self, t):
        if len(t) != 2:
            raise proto_error("usage: unload MOD")
        i = parse_int(t[1], "module id")
        if i not in self.modules:
            raise proto_error("unknown module " + t[1])
        del self.modules[i]
        for f in [f for f, v in self.funcs.items() if v["module"] == i]:
            del self.funcs[f]
        return "ok"

    def func(self, t):
        if len(t) != 3:
            raise proto_error("usage: func MOD NAME")
        i = parse_int(t[1], "module id")
        if i not in self.modules:
            raise proto_error("unknown module " + t[1])
        entry = self.modules[i].get(t[2])
        if entry is None:
            raise Fail("CUDA_ERROR_NOT_FOUND", "no entry point %s in the module" % t[2])
        consts = entry["constexprs"]
        kinds = [(name, ty, consts.get(name)) for name, ty in entry["signature"].items()]
        f = self.new_id()
        self.funcs[f] = {"module": i, "entry": entry, "variants": {}, "kinds": kinds, "threads": 32 * entry["num_warps"], "name": t[2]}
        # The variant of the usual launch: every pointer 16-byte aligned
        # (as every buffer of this runner is), no integer known divisible.
        k = self.variant(self.funcs[f], tuple(ty.startswith("*") for _, ty, c in kinds if ty != "constexpr"))
        return "ok %d %d %d %d" % (f, k.n_regs, k.metadata.shared, 32 * entry["num_warps"])

    def variant(self, f, key):
        """The entry point compiled for one specialization, as Triton's JIT
        specializes its launches: key holds, per runtime argument in
        signature order, whether it is divisible by 16 (a pointer's address,
        an integer's value), which the compiler is told (tt.divisibility)
        so that it can vectorize and pipeline the loads (cp.async needs
        aligned addresses). Each key is compiled once."""
        k = f["variants"].get(key)
        if k is not None:
            return k
        from triton.compiler import ASTSource
        entry = f["entry"]
        names = list(entry["signature"])
        runtime = [n for n in names if entry["signature"][n] != "constexpr"]
        attrs = {(names.index(n),): [["tt.divisibility", 16]] for n, d in zip(runtime, key) if d}
        try:
            src = ASTSource(fn=entry["fn"], signature=entry["signature"], constexprs=entry["constexprs"], attrs=attrs)
            k = self.triton.compiler.compile(src, target=self.target,
                                             options={"num_warps": entry["num_warps"], "num_stages": entry["num_stages"]})
            k._init_handles()
        except Exception as e:
            text = "".join(traceback.format_exception_only(type(e), e)).strip()
            if "OutOfResources" in type(e).__name__:
                raise Fail("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "triton: " + text.replace("\n", " "))
            raise Fail("CUDA_ERROR_INVALID_SOURCE", "triton compile: " + text.replace("\n", " ")[-2000:])
        f["variants"][key] = k
        return k

    def alloc(self, t):
        if len(t) != 2:
            raise proto_error("usage: alloc BYTES")
        n = parse_nonneg(t[1], "byte count")
        try:
            b = self.torch.empty(n, dtype=self.torch.uint8, device=self.dev) if n > 0 else None
        except Exception as e:
            raise gpu_fail(e, "cuMemAlloc")
        i = self.new_id()
        self.buffers[i] = b
        return "ok %d" % i

    def buffer(self, s):
        i = parse_int(s, "buffer id")
        if i not in self.buffers:
            raise proto_error("unknown buffer " + s)
        return self.buffers[i]

    def free(self, t):
        if len(t) != 2:
            raise proto_error("usage: free BUF")
        i = parse_int(t[1], "buffer id")
        if i not in self.buffers:
            raise proto_error("unknown buffer " + t[1])
        del self.buffers[i]
        return "ok"

    def write(self, line, t):
        if len(t) < 3:
            raise proto_error("usage: write BUF PATH")
        b = self.buffer(t[1])
        path = rest(line, 2)
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as e:
            raise Fail("EIO", "open %s: %s" % (path, e.strerror))
        size = 0 if b is None else b.numel()
        if len(data) != size:
            raise Fail("ESIZE", "file %s holds %d bytes, buffer %s holds %d" % (path, len(data), t[1], size))
        if size:
            host = self.torch.frombuffer(bytearray(data), dtype=self.torch.uint8)
            with self.on_stream():
                b.copy_(host)
            self.synchronize()
        return "ok"

    def read(self, line, t):
        if len(t) < 3:
            raise proto_error("usage: read BUF PATH")
        b = self.buffer(t[1])
        path = rest(line, 2)
        data = b""
        if b is not None and b.numel():
            with self.on_stream():
                host = b.to("cpu", non_blocking=False)
            self.synchronize()
            data = host.numpy().tobytes()
        tmp = path + ".tmp"
        try:
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except OSError as e:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise Fail("EIO", "write %s: %s" % (tmp, e.strerror))
        return "ok"

    def fill(self, t):
        if len(t) != 3:
            raise proto_error("usage: fill BUF BYTE")
        b = self.buffer(t[1])
        v = parse_int(t[2], "byte")
        if v < 0 or v > 255:
            raise proto_error("fill byte out of range '%s'" % t[2])
        if b is not None and b.numel():
            with self.on_stream():
                b.fill_(v)
        return "ok"

    def parse_launch(self, t, i):
        """FN GX GY GZ BX BY BZ SMEM NARGS ARG... from t[i:]: returns a
        function that enqueues the launch, and the index after it."""
        if len(t) < i + 9:
            raise proto_error("launch spec: FN GX GY GZ BX BY BZ SMEM NARGS ARG...")
        fid = parse_int(t[i], "function id")
        if fid not in self.funcs:
            raise proto_error("unknown function " + t[i])
        f = self.funcs[fid]
        grid, block = [], []
        for d in range(3):
            g = parse_int(t[i + 1 + d], "grid size")
            b = parse_int(t[i + 4 + d], "block size")
            if g < 1 or g > 0xFFFFFFFF or b < 1 or b > 0xFFFFFFFF:
                raise proto_error("grid and block sizes must be >= 1")
            grid.append(g)
            block.append(b)
        smem = parse_nonneg(t[i + 7], "shared memory bytes")
        if block[0] * block[1] * block[2] != f["threads"] or smem != 0:
            raise Fail("CUDA_ERROR_INVALID_VALUE", "%s runs %d threads with Triton's own shared memory; the launch asks for block (%d, %d, %d) and %d bytes"
                       % (f["name"], f["threads"], block[0], block[1], block[2], smem))
        n = parse_nonneg(t[i + 8], "argument count")
        if len(t) < i + 9 + n:
            raise proto_error("argument count %s is more than the %d arguments given" % (t[i + 8], len(t) - i - 9))
        raw = t[i + 9:i + 9 + n]
        kinds = f["kinds"]
        runtime = [k for k in kinds if k[1] != "constexpr"]
        if len(raw) != len(runtime):
            raise Fail("CUDA_ERROR_INVALID_VALUE", "%s takes %d arguments, the launch gives %d" % (f["name"], len(runtime), len(raw)))
        vals = iter(self.parse_arg(s, k[1]) for s, k in zip(raw, runtime))
        args = [k[2] if k[1] == "constexpr" else next(vals) for k in kinds]
        gx, gy, gz = grid
        if isinstance(self, InterpretRunner):
            # The interpreter's jit function takes the runtime arguments;
            # the constexprs go by name.
            kernel = f["kernel"]
            rt = [self.scalar(a, k[1]) for a, k in zip(args, kinds) if k[1] != "constexpr"]
            consts = {k[0]: k[2] for k in kinds if k[1] == "constexpr"}

            def run():
                kernel[(gx, gy, gz)](*rt, **consts)
            return run, i + 9 + n
        key = tuple((k[1].startswith("*") or k[1] in ("i32", "i64")) and a % 16 == 0 for a, k in zip(args, kinds) if k[1] != "constexpr")
        kernel = self.variant(f, key)
        stream = self.stream.cuda_stream

        def run():
            kernel[(gx, gy, gz)](*args, stream=stream)
        return run, i + 9 + n

    def parse_arg(self, s, ty):
        if len(s) > 1 and s[0] == "b" and ":" not in s:
            b = self.buffer(s[1:])
            return self.pointer(b, ty)
        kind, sep, v = s.partition(":")
        if not sep:
            raise proto_error("bad argument '%s' (bBUF, i64:, i32:, u16:, f32:, f64:)" % s)
        if kind in ("i64", "i32"):
            x = parse_int(v, kind)
            if kind == "i64" and x >= 1 << 63:
                x -= 1 << 64
            return x
        if kind == "u16":
            bits = parse_int(v, "u16")
            if bits < 0 or bits > 0xFFFF:
                raise proto_error("u16 out of range '%s'" % v)
            if ty == "bf16":
                return struct.unpack("<f", struct.pack("<I", bits << 16))[0]
            return struct.unpack("<e", struct.pack("<H", bits))[0]
        if kind in ("f32", "f64"):
            return parse_float(v, kind)
        raise proto_error("bad argument type '%s'" % kind)

    def pointer(self, b, ty):
        """A buffer as a kernel argument of pointer type ty: its address."""
        return 0 if b is None else b.data_ptr()

    def launch(self, t):
        run, end = self.parse_launch(t, 1)
        if end != len(t):
            raise proto_error("argument count %s does not match the %d arguments given" % (t[9], len(t) - 10))
        try:
            run()
        except Exception as e:
            raise gpu_fail(e, "launch")
        return "ok"

    def sync(self, t):
        if len(t) != 1:
            raise proto_error("usage: sync")
        try:
            self.torch.cuda.synchronize(self.dev)
        except Exception as e:
            raise gpu_fail(e, "cuCtxSynchronize")
        return "ok"

    def time_args(self, t, i):
        """A time command's protocol, WARMUP_MS MIN_REPS MIN_MS FLUSH GRAPH
        from t[i]: (warm, min_reps, min_ms, flush, graph)."""
        warm = parse_float(t[i], "warm-up ms")
        min_reps = parse_nonneg(t[i + 1], "minimum repetitions")
        min_ms = parse_float(t[i + 2], "minimum ms")
        # FLUSH: 0, read:BYTES, write:BYTES or clean:BYTES (runner.cpp's
        # Scratch).
        kind, _, size = t[i + 3].partition(":")
        if t[i + 3] == "0":
            kind, size = "read", "0"
        elif kind not in ("read", "write", "clean") or not size:
            raise proto_error("flush must be 0, read:BYTES, write:BYTES or clean:BYTES, not %s" % t[i + 3])
        flush = (kind, parse_nonneg(size, "flush bytes"))
        graph = parse_int(t[i + 4], "graph flag")
        if graph not in (0, 1):
            raise proto_error("graph flag must be 0 or 1")
        return warm, min_reps, min_ms, flush, graph == 1

    def time(self, t):
        if len(t) < 7:
            raise proto_error("usage: time WARMUP_MS MIN_REPS MIN_MS FLUSH GRAPH LAUNCHSPEC...")
        args = self.time_args(t, 1)
        runs = []
        i = 6
        while i < len(t):
            run, i = self.parse_launch(t, i)
            runs.append(run)

        def op():
            for r in runs:
                r()
        try:
            s = self.measure(op, *args)
        except Fail:
            raise
        except Exception as e:
            raise gpu_fail(e, "time")
        return "ok %.4f %.4f %.4f %d %d %d" % s

    def copytime(self, t):
        """A copy of BYTES timed as time times a kernel (torch's copy_, as
        copybw): the ceiling of a memory-bound launch that moves as much."""
        if len(t) != 7:
            raise proto_error("usage: copytime BYTES WARMUP_MS MIN_REPS MIN_MS FLUSH GRAPH")
        n = parse_nonneg(t[1], "byte count")
        if n == 0:
            raise proto_error("copytime needs a positive byte count")
        return "ok %.4f %.4f %.4f %d %d %d" % self.time_copy(n, self.time_args(t, 2), "copytime")

    def time_copy(self, n, args, op):
        """Times torch's copy_ of n bytes under the protocol args
        (time_args' tuple); op names the command in a failure."""
        try:
            src = self.torch.ones(n, dtype=self.torch.uint8, device=self.dev)
            dst = self.torch.empty_like(src)
            with self.torch.cuda.stream(self.stream):
                return self.measure(lambda: dst.copy_(src), *args)
        except Fail:
            raise
        except Exception as e:
            raise gpu_fail(e, op)

    def measure(self, op, warm_ms, min_reps, min_ms, flush_spec, use_graph):
        flush_kind, flush_bytes = flush_spec
        torch = self.torch
        stream = self.stream
        with torch.cuda.stream(stream):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            t0 = time.perf_counter()
            chunk, est = 1, 1e-6
            while True:
                e0.record(stream)
                for _ in range(chunk):
                    op()
                e1.record(stream)
                e1.synchronize()
                est = max(e0.elapsed_time(e1) / chunk, 1e-6)
                if (time.perf_counter() - t0) * 1e3 >= warm_ms:
                    break
                chunk = int(min(max(math.ceil(5.0 / est), 1), 100000))
            if flush_bytes > 0 and (self.flush is None or self.flush.buf.numel() < flush_bytes):
                self.flush = L2Flush(torch, flush_bytes, self.dev)
            flush = (lambda i: self.flush.run(flush_kind, flush_bytes, i)) if flush_bytes > 0 else None
            # With graphs (runner.cpp's measure): K runs, each after its own
            # flush, then the K flushes alone; a sample is the difference
            # over K. The clean flush always takes graphs, each ending with
            # one more flush, which charges the last run its write-backs.
            K, runs, flushes = 1, None, None
            clean = flush_kind == "clean" and flush is not None

            def capture(with_runs):
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g, stream=stream):
                    for k in range(K):
                        if flush is not None:
                            flush(k)
                        if with_runs:
                            op()
                    if clean:
                        flush(K)
                return g
            if use_graph or clean:
                K = int(min(max(math.ceil(0.020 / est), 1), 1000))
                runs = capture(True)
                if flush is not None:
                    flushes = capture(False)
                for _ in range(3):
                    runs.replay()
                    if flushes is not None:
                        flushes.replay()
                stream.synchronize()
            sample_ms = est * K
            if runs is not None and flush is not None:
                sample_ms += (K + (1 if clean else 0)) * flush_bytes / 3e9
            reps = int(min(max(min_reps, math.ceil(min_ms / sample_ms)), 100000))
            reps = max(reps, 1)
            samples = []
            B = 256
            done = 0
            while done < reps:
                n = min(B, reps - done)
                evs = [tuple(torch.cuda.Event(enable_timing=True) for _ in range(3)) for _ in range(n)]
                for j in range(n):
                    e0, e1, e2 = evs[j]
                    if runs is not None:
                        e0.record(stream)
                        if flushes is not None:
                            flushes.replay()
                        e1.record(stream)
                        runs.replay()
                        e2.record(stream)
                        continue
                    if flush is not None:
                        flush(done + j)
                    e1.record(stream)
                    op()
                    e2.record(stream)
                stream.synchronize()
                for e0, e1, e2 in evs:
                    t = e1.elapsed_time(e2)
                    if flushes is not None:
                        t -= e0.elapsed_time(e1)
                    samples.append(t * 1000.0 / K)
                done += n
        samples.sort()

        def pct(p):
            pos = p * (len(samples) - 1)
            lo = int(math.floor(pos))
            hi = min(lo + 1, len(samples) - 1)
            f = pos - lo
            return samples[lo] * (1 - f) + samples[hi] * f
        clock = 0
        try:
            clock = int(torch.cuda.clock_rate(self.dev))
        except Exception:
            clock = 0
        return (pct(0.5), pct(0.2), pct(0.8), len(samples), clock, K if runs is not None else 0)

    def copybw(self, t):
        if len(t) != 2:
            raise proto_error("usage: copybw BYTES")
        n = parse_nonneg(t[1], "byte count")
        if n == 0:
            raise proto_error("copybw needs a positive byte count")
        s = self.time_copy(n, (25, 10, 100, ("read", 0), False), "copybw")
        return "ok %.2f %.4f" % (2.0 * n / (s[0] * 1e-6) / 1e9, s[0])

    def info(self, t):
        if len(t) != 1:
            raise proto_error("usage: info")
        p = self.props
        name = p.name.replace("|", " ").replace("\n", " ")
        l2 = getattr(p, "L2_cache_size", 0)
        optin = getattr(p, "shared_memory_per_block_optin", 0)
        maxt = getattr(p, "max_threads_per_block", 1024)
        drv = 0
        try:
            import ctypes
            lib = ctypes.CDLL("libcuda.so.1")
            v = ctypes.c_int()
            if lib.cuDriverGetVersion(ctypes.byref(v)) == 0:
                drv = v.value
        except Exception:
            drv = 0
        return "ok %s|%d|%d|%d|%d|%d|%d|%d|%d" % (name, p.major, p.minor, p.multi_processor_count, l2, p.total_memory, drv, optin, maxt)

    def handle(self, line):
        t = line.split()
        if not t:
            raise proto_error("empty command")
        c = t[0]
        if c in ("load", "write", "read"):  # the commands that take a path: the rest of the line
            return getattr(self, c)(line, t)
        if c in COMMANDS:
            return getattr(self, c)(t)
        raise proto_error("unknown command '%s'" % c)


# TYPES maps the pointer types of a signature to the torch dtypes that the
# interpreter's arguments are viewed as.
TYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64", "i1": "bool",
         "i8": "int8", "u8": "uint8", "i16": "int16", "i32": "int32", "i64": "int64"}


def _scalars():
    """The numpy and Triton types of each scalar signature type but bf16."""
    import numpy as np
    import triton.language as tl
    return {"fp64": (np.float64, tl.float64), "fp32": (np.float32, tl.float32), "fp16": (np.float16, tl.float16),
            "i64": (np.int64, tl.int64), "i32": (np.int32, tl.int32), "i8": (np.int8, tl.int8),
            "u8": (np.uint8, tl.uint8), "i1": (np.bool_, tl.int1)}


def interpret_gaps():
    """Mends the gaps of Triton 3.6's interpreter that kgen's modules
    meet: the libdevice functions they call (tanh, pow, exp2), which it
    does not run ("extern_elementwise not supported in interpreter mode"),
    become numpy on the interpreter's tensors; bf16 tl.dot, which it
    computes on the raw bits, widens its operands first; conversions to and from bf16
    other than f32's, which it computes on the raw bits too (f64 1.5
    became a NaN), go through f32; f32 to bf16, which it truncates, rounds
    to nearest even, as a GPU does; bf16 constants, which it lacks (no
    get_bf16), are made; and comparisons hold bools, not their operands'
    type."""
    import numpy as np
    import triton.language as tl
    import triton.language.extra.libdevice as libdevice
    from triton.runtime.interpreter import TensorHandle

    def data(v):
        return v.handle.data if hasattr(v, "handle") else v

    def elementwise(f):
        def call(*args, _semantic=None):
            like = max((a for a in args if hasattr(a, "handle")), key=lambda a: np.ndim(data(a)))
            out = f(*[data(a) for a in args]).astype(like.handle.data.dtype)
            return tl.core.tensor(TensorHandle(out, like.handle.dtype), like.type)
        return call
    libdevice.tanh = elementwise(np.tanh)
    libdevice.pow = elementwise(np.power)
    libdevice.exp2 = elementwise(np.exp2)

    # The interpreter keeps bf16 as its uint16 bits and multiplies those
    # in tl.dot: bf16 operands are widened to f32 first (exact).
    from triton.runtime import interpreter
    builder = interpreter.interpreter_builder
    dot = builder.create_dot

    def widen(h):
        if h.dtype != tl.bfloat16:
            return h
        return TensorHandle((h.data.astype(np.uint32) << 16).view(np.float32), tl.float32)

    def create_dot(a, b, d, input_precision, max_num_imprecise_acc):
        return dot(widen(a), widen(b), d, input_precision, max_num_imprecise_acc)
    builder.create_dot = create_dot

    # Its casts convert bf16 only from and to f32 (by the bits); others
    # it computes with numpy on bf16's uint16 bits. Those go through f32:
    # exact from bf16, and to bf16 from f64 rounded twice (to f32, then to
    # bf16), within any bf16 tolerance.
    cast = type(builder).cast_impl

    def cast_impl(self, src, dst_type):
        s, d = src.dtype.scalar, dst_type.scalar
        if s == tl.float32 and d == tl.bfloat16:
            return TensorHandle(bf16_bits(src.data), tl.bfloat16)
        if (s == tl.bfloat16) != (d == tl.bfloat16) and tl.float32 not in (s, d):
            return cast_impl(self, cast(self, src, tl.float32), dst_type)
        return cast(self, src, dst_type)
    type(builder).cast_impl = cast_impl

    # A GPU rounds f32 to bf16 to nearest even; the interpreter truncated,
    # a unit in the last place off half the time, two where a bf16 result
    # fed another (testsuite/results/2026-11-28-difftest-s26/).
    def bf16_bits(a):
        b = np.asarray(a, dtype=np.float32).view(np.uint32)
        r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
        return np.where(np.isnan(a), ((b >> 16) | 0x40).astype(np.uint16), r)

    # tl.full of a bf16 value (kgen's bf16 constants): the interpreter's
    # builder has constants of every other float type.
    type(builder).get_bf16 = lambda self, value: TensorHandle(bf16_bits(np.array([value], dtype=np.float32)), tl.bfloat16)

    # Its comparisons keep their operands' type: a comparison of f32
    # values holds 0.0 and 1.0 as f32, which a splat to a block keeps, and
    # `(c != 1) | (1.5 < s)` of a block and a scalar s failed ("ufunc
    # 'bitwise_or' not supported"; found by the differential tester,
    # testsuite/corpus/interpret-triton_sm_90-s300124.kg). They hold bools.
    binary = type(builder).binary_op
    compares = (np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal)

    def binary_op(self, lhs, rhs, op):
        if op in compares:
            return TensorHandle(op(lhs.data, rhs.data), tl.int1)
        return binary(self, lhs, rhs, op)
    type(builder).binary_op = binary_op


class InterpretRunner(Runner):
    """The runner in Triton's interpreter mode, on the CPU: the same
    protocol, buffers in host memory, each launch executed by numpy. The
    interpreter addresses host tensors by their real addresses, so every
    buffer sits between two red zones of REDZONE bytes of REDBYTE: a
    launch that changes one stored out of bounds, which is reported as the
    GPU would (an illegal address)."""

    REDZONE, REDBYTE = 256, 0xA5

    def __init__(self, torch, triton):
        self.torch, self.triton = torch, triton
        self.dev = torch.device("cpu")
        self.next_id = 1
        self.modules, self.funcs, self.buffers = {}, {}, {}
        self.zoned = {}  # buffer id -> the allocation with its red zones
        interpret_gaps()

    def alloc(self, t):
        if len(t) != 2:
            raise proto_error("usage: alloc BYTES")
        n = parse_nonneg(t[1], "byte count")
        z = self.REDZONE
        full = self.torch.full((n + 2 * z,), self.REDBYTE, dtype=self.torch.uint8)
        i = self.new_id()
        self.zoned[i] = full
        self.buffers[i] = full[z:z + n] if n > 0 else None
        return "ok %d" % i

    def free(self, t):
        out = Runner.free(self, t)
        self.zoned.pop(parse_int(t[1], "buffer id"), None)
        return out

    def launch(self, t):
        out = Runner.launch(self, t)
        z = self.REDZONE
        for i, full in self.zoned.items():
            n = full.numel() - 2 * z
            if bool((full[:z] != self.REDBYTE).any()) or bool((full[z + n:] != self.REDBYTE).any()):
                full[:z] = self.REDBYTE
                full[z + n:] = self.REDBYTE
                raise Fail("CUDA_ERROR_ILLEGAL_ADDRESS", "out-of-bounds store next to buffer %d (its red zone changed)" % i)
        return out

    def func(self, t):
        if len(t) != 3:
            raise proto_error("usage: func MOD NAME")
        i = parse_int(t[1], "module id")
        if i not in self.modules:
            raise proto_error("unknown module " + t[1])
        entry = self.modules[i].get(t[2])
        if entry is None:
            raise Fail("CUDA_ERROR_NOT_FOUND", "no entry point %s in the module" % t[2])
        consts = entry["constexprs"]
        kinds = [(name, ty, consts.get(name)) for name, ty in entry["signature"].items()]
        f = self.new_id()
        self.funcs[f] = {"module": i, "kernel": entry["fn"], "kinds": kinds, "threads": 32 * entry["num_warps"], "name": t[2]}
        return "ok %d 0 0 %d" % (f, 32 * entry["num_warps"])

    def on_stream(self):
        return contextlib.nullcontext()

    def synchronize(self):
        pass

    def scalar(self, v, ty):
        """A scalar argument as the compiled kernel sees it, a value of its
        signature's type: the interpreter itself passes Python floats on
        as they are (which have no .to) and makes ints int32 where they
        fit (an i64 argument is int64 compiled)."""
        if ty.startswith("*"):
            return v
        import numpy as np
        import triton.language as tl
        from triton.runtime.interpreter import TensorHandle
        if ty == "bf16":
            # The interpreter keeps bf16 as its bits; v is a bf16 value.
            bits = np.array([v], dtype=np.float32).view(np.uint32) >> 16
            handle = TensorHandle(bits.astype(np.uint16), tl.bfloat16)
            return tl.tensor(handle, tl.bfloat16)
        np_type, tl_type = _scalars()[ty]
        return tl.tensor(TensorHandle(np.array([v], dtype=np_type), tl_type), tl_type)

    def pointer(self, b, ty):
        dt = getattr(self.torch, TYPES.get(ty[1:], "uint8"))
        if b is None:
            return self.torch.empty(0, dtype=dt)
        # kgen allocates a byte for an empty tensor: whole elements only.
        size = self.torch.empty(0, dtype=dt).element_size()
        return b[: b.numel() // size * size].view(dt)

    def sync(self, t):
        if len(t) != 1:
            raise proto_error("usage: sync")
        return "ok"

    def time(self, t):
        raise Fail("ENOSYS", "the Triton interpreter runs on the CPU: it does not time kernels")

    def copybw(self, t):
        raise Fail("ENOSYS", "the Triton interpreter runs on the CPU: it does not time copies")

    def copytime(self, t):
        raise Fail("ENOSYS", "the Triton interpreter runs on the CPU: it does not time copies")

    def info(self, t):
        if len(t) != 1:
            raise proto_error("usage: info")
        return "ok Triton interpreter (CPU)|0|0|1|0|0|0|0|1024"


def serve(make_runner, inp, proto):
    """Runs the protocol: the greeting, then a reply a command. make_runner
    opens the device (a Fail is the greeting's error)."""
    def reply(s):
        try:
            proto.write(s + "\n")
            proto.flush()
        except OSError:
            os._exit(EXIT_IO)
    try:
        r = make_runner()
    except Fail as f:
        reply("err %s: %s" % (f.code, f.msg))
        return EXIT_INIT
    reply("ok kgen-runner 1")
    for line in inp:
        line = line.rstrip("\r\n")
        if line.split() == ["quit"]:
            break
        try:
            out = r.handle(line)
        except Fail as f:
            reply("err %s: %s" % (f.code, f.msg.replace("\n", " ")))
            if f.code in STICKY:
                sys.stderr.flush()
                os._exit(EXIT_FATAL)  # the context is dead; kgen restarts us
            continue
        except Exception as e:
            f = gpu_fail(e, line.split()[0] if line.split() else "command")
            reply("err %s: %s" % (f.code, f.msg))
            if f.code in STICKY:
                sys.stderr.flush()
                os._exit(EXIT_FATAL)
            continue
        reply(out)
    return 0


def main():
    # Keep the protocol channel private: whatever else writes to stdout
    # (libraries, compilers) goes to stderr.
    fd = os.dup(1)
    os.dup2(2, 1)
    proto = os.fdopen(fd, "w")
    sys.stdout = sys.stderr
    interpret = sys.argv[1:] == ["--interpret"]
    if interpret:
        # Read when triton.jit decorates the module's kernels.
        os.environ["TRITON_INTERPRET"] = "1"
    device = 0 if interpret or len(sys.argv) < 2 else int(sys.argv[1])

    def make():
        try:
            import torch
            import triton
            import triton.compiler  # noqa: F401
        except Exception as e:
            raise Fail("CUDA_ERROR_NOT_INITIALIZED", "the Triton runner needs torch and triton: %s" % e)
        if interpret:
            return InterpretRunner(torch, triton)
        try:
            if not torch.cuda.is_available() or device >= torch.cuda.device_count():
                raise Fail("CUDA_ERROR_NO_DEVICE", "no CUDA device %d (torch sees %d)" % (device, torch.cuda.device_count()))
            return Runner(torch, triton, device)
        except Fail:
            raise
        except Exception as e:
            raise gpu_fail(e, "init")
    sys.exit(serve(make, sys.stdin, proto))


if __name__ == "__main__":
    main()
