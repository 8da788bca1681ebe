package runtime

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPythonRunnerArgs checks the Triton runner's argument decoding
// against values computed here: raw u16 bits as f16 and bf16 scalars,
// i64 beyond 2^63 wrapping, hex floats, and rest() keeping a path's
// spaces.
func TestPythonRunnerArgs(t *testing.T) {
	out := runPythonRunner(t, `
import runner_triton as r
x = r.Runner.__new__(r.Runner)
print(x.parse_arg("u16:15360", "fp16"), x.parse_arg("u16:16256", "bf16"), x.parse_arg("u16:0xc000", "fp16"))
print(x.parse_arg("i64:18446744073709551615", "i64"), x.parse_arg("i32:-7", "i32"))
print(x.parse_arg("f32:0x1.8p+1", "fp32"), x.parse_arg("f64:-0.25", "fp64"))
print(repr(r.rest("write 3 /tmp/a b", 2)))
try:
    x.parse_arg("q:1", "i64")
except r.Fail as f:
    print(f.code)
`)
	want := "1.0 1.0 -2.0\n-1 -7\n3.0 -0.25\n'/tmp/a b'\nEPROTO\n"
	if string(out) != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

// TestPythonRunnerStartFailure: a python without torch answers the
// greeting with an error, which StartPythonRunner returns as a
// RunnerError of the start.
func TestPythonRunnerStartFailure(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	if exec.Command(python, "-c", "import torch").Run() == nil {
		t.Skip("this python has torch")
	}
	_, err = StartPythonRunner(context.Background(), python, t.TempDir(), 0)
	var re *RunnerError
	if !errors.As(err, &re) || re.Op != "start" || !strings.Contains(re.Msg, "torch") {
		t.Fatalf("got %v, want a start error naming torch", err)
	}
}

// TestPythonRunnerWrapper: the Triton runner starts under
// $KGEN_RUNNER_WRAPPER (a profiler such as ncu), which is given the
// python, the runner's script and the device: here a script that records
// its arguments and exits, so that the start fails after it ran.
func TestPythonRunnerWrapper(t *testing.T) {
	dir := t.TempDir()
	wrap, args := filepath.Join(dir, "wrap.sh"), filepath.Join(dir, "args")
	if err := os.WriteFile(wrap, []byte("#!/bin/sh\necho \"$@\" > "+args+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KGEN_RUNNER_WRAPPER", wrap)
	if _, err := StartPythonRunner(context.Background(), "/no/python", dir, 3); err == nil {
		t.Fatal("started, want the start to fail once the wrapper exits")
	}
	got, err := os.ReadFile(args)
	if err != nil {
		t.Fatalf("the wrapper did not run: %v", err)
	}
	if f := strings.Fields(string(got)); len(f) != 3 || f[0] != "/no/python" || !strings.HasSuffix(f[1], ".py") || f[2] != "3" {
		t.Errorf("wrapper's arguments %q, want the python, the runner's script and the device", got)
	}
}

// TestPythonRunnerFlush drives the Triton runner's timing protocol with a
// fake torch that counts what it is asked to do: a read flush sums the
// scratch buffer before each sample and never writes it, a write flush
// fills it and never sums it, copybw times without a flush, copytime
// times a copy under the flush it is given, and a flush token of an
// unknown kind is a protocol error.
func TestPythonRunnerFlush(t *testing.T) {
	out := runPythonRunner(t, `
import contextlib, types
import runner_triton as r
calls = []
`+fakeClock+`class T:
    def __init__(self, n): self.n = n
    def numel(self): return self.n
    def __getitem__(self, s): return self
    def view(self, dt): return self
    def fill_(self, v): calls.append("fill")
    def copy_(self, o): calls.append("op")
def tensor(n=1, *a, **k): return T(n if isinstance(n, int) else 1)
fake = types.SimpleNamespace(
    cuda=types.SimpleNamespace(Event=Ev, stream=lambda s: contextlib.nullcontext()),
    zeros=tensor, ones=tensor, empty=tensor, empty_like=lambda x: T(x.n),
    uint8="u8", float32="f32",
    sum=lambda x, dim, out=None: calls.append("sum"))
x = r.Runner.__new__(r.Runner)
x.torch, x.stream, x.dev, x.flush = fake, Stream(), "cuda", None
for kind in ("read", "write"):
    del calls[:]
    s = x.measure(lambda: calls.append("op"), 0, 3, 0, (kind, 4096), False)
    print(kind, s[3], calls.count("op") - 1, calls.count("sum"), calls.count("fill"))
del calls[:]
x.copybw(["copybw", "64"])
print("copybw", calls.count("sum"), calls.count("fill"))
del calls[:]
reply = x.copytime(["copytime", "64", "0", "3", "0", "read:4096", "0"])
print("copytime", reply.split()[4], calls.count("op") - 1, calls.count("sum"), calls.count("fill"))
try:
    x.time(["time", "0", "3", "0", "flush:4096", "0", "f"])
except r.Fail as f:
    print(f.code)
`)
	// Three samples, one warm-up run: each sample after its own flush.
	want := "read 3 3 3 0\nwrite 3 3 0 3\ncopybw 0 0\ncopytime 3 3 3 0\nEPROTO\n"
	if string(out) != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

// TestPythonRunnerCleanFlush: under the clean flush the Triton runner
// reads (never fills) the scratch buffer, times every run in CUDA graphs
// even when not asked for graphs, and ends both graphs, the K flushed
// runs and the K flushes alone, with one more flush: K + 1 reads in each,
// the last op of each a read. A fake torch records what each graph holds.
func TestPythonRunnerCleanFlush(t *testing.T) {
	out := runPythonRunner(t, `
import contextlib, types
import runner_triton as r
calls, graphs, capturing = [], [], []
def emit(x): (capturing[-1].ops if capturing else calls).append(x)
`+fakeClock+`class Graph:
    def __init__(self): self.ops = []; graphs.append(self)
    def replay(self): calls.extend(self.ops)
@contextlib.contextmanager
def graph(g, stream=None):
    capturing.append(g)
    yield
    capturing.pop()
class T:
    def __init__(self, n): self.n = n
    def numel(self): return self.n
    def __getitem__(self, s): return self
    def view(self, dt): return self
    def fill_(self, v): emit("fill")
def tensor(n=1, *a, **k): return T(n if isinstance(n, int) else 1)
fake = types.SimpleNamespace(
    cuda=types.SimpleNamespace(Event=Ev, stream=lambda s: contextlib.nullcontext(), CUDAGraph=Graph, graph=graph),
    zeros=tensor, ones=tensor, empty=tensor, empty_like=lambda x: T(x.n),
    uint8="u8", float32="f32",
    sum=lambda x, dim, out=None: emit("sum"))
x = r.Runner.__new__(r.Runner)
x.torch, x.stream, x.dev, x.flush = fake, Stream(), "cuda", None
s = x.measure(lambda: emit("op"), 0, 3, 0, ("clean", 4096), False)
K = s[5]
for g in graphs:
    print(g.ops.count("sum") - K, g.ops.count("op"), g.ops[-1], g.ops.count("fill"))
print(K > 0, calls.count("fill"))
`)
	// The runs' graph, then the flushes'.
	want := "1 20 sum 0\n1 0 sum 0\nTrue 0\n"
	if string(out) != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

// fakeClock is CUDA events whose clock advances 1 us at each record and
// a stream with nothing to wait for, for the fake torch of the runner's
// tests.
const fakeClock = `class Ev:
    now = 0.0
    def __init__(self, enable_timing=True): self.at = 0.0
    def record(self, stream=None): Ev.now += 0.001; self.at = Ev.now
    def synchronize(self): pass
    def elapsed_time(self, o): return o.at - self.at
class Stream:
    def synchronize(self): pass
`

// runPythonRunner runs prog with python3 beside a copy of the Triton
// runner (importable as runner_triton) and returns its output; the test
// is skipped without python3.
func runPythonRunner(t *testing.T, prog string) []byte {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "runner_triton.py"), runnerTritonSource, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "-c", prog)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return out
}
