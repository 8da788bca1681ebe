package runtime

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBaselineCompilesLoadedModules runs baseline.py's module loader in
// PyTorch on the CPU and torch.compiles a function of the second module it
// loads, as `kgen bench --baseline compile` does with a spec's reference
// module and kgen's emitted program: dynamo resolves a function's globals
// through sys.modules by the module's name, so a loader that does not
// register its modules fails every compiled baseline
// (ModuleNotFoundError), which the H100 run of the suite hit. The
// compiled function's result is compared with the product computed by
// hand.
func TestBaselineCompilesLoadedModules(t *testing.T) {
	python := torchPython(t)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("baseline.py", string(baselineScript))
	first := write("first.py", "def unused(x):\n    return x\n")
	second := write("second.py", "import torch\n\n\ndef mm(A, B, **kw):\n    return (torch.matmul(A, B) + 1,)\n")
	probe := write("probe.py", `import sys
import torch
import baseline
baseline.load(sys.argv[1])
fn = baseline.load(sys.argv[2]).mm
A = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
B = torch.tensor([[5.0, 6.0], [7.0, 8.0]])
out = torch.compile(lambda: fn(A, B))()[0]
print(out.tolist())
`)
	cmd := exec.Command(python, probe, first, second)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, tail(string(out), 3000))
	}
	// [[1*5+2*7, 1*6+2*8], [3*5+4*7, 3*6+4*8]] + 1
	want := "[[20.0, 23.0], [44.0, 51.0]]"
	if lines := strings.Split(strings.TrimSpace(string(out)), "\n"); lines[len(lines)-1] != want {
		t.Fatalf("torch.compile of a loaded module's function printed\n%s\nwant last line %s", out, want)
	}
}

// TestBaselineCleanFlush drives baseline.py's timing under the clean flush
// with a fake torch.cuda that records what each graph holds: the flush
// reads (never fills) the scratch buffer; a capturable program is timed
// in graphs that end with one more flush, K + 1 reads in each; a program
// that cannot be captured is timed call by call, each run followed by a
// flush inside its sample, and the flush before it (after the previous
// sample's) timed apart.
func TestBaselineCleanFlush(t *testing.T) {
	python := torchPython(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "baseline.py"), baselineScript, 0o644); err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(dir, "probe.py")
	if err := os.WriteFile(probe, []byte(`import contextlib, types
import baseline
calls, graphs, capturing = [], [], []
def emit(x): (capturing[-1].ops if capturing else calls).append(x)
`+fakeClock+`class Graph:
    def __init__(self): self.ops = []; graphs.append(self)
    def replay(self): calls.extend(self.ops)
capturable = True
@contextlib.contextmanager
def graph(g, stream=None):
    if not capturable:
        raise RuntimeError("operation not permitted when stream is capturing")
    capturing.append(g)
    yield
    capturing.pop()
class Side:
    def wait_stream(self, s): pass
class T:
    def __getitem__(self, s): return self
    def view(self, dt): return self
    def fill_(self, v): emit("fill")
fake = types.SimpleNamespace(
    cuda=types.SimpleNamespace(Event=Ev, CUDAGraph=Graph, graph=graph, Stream=Side, current_stream=Side,
                               stream=lambda s: contextlib.nullcontext(), synchronize=lambda: None),
    zeros=lambda *a, **k: T(), uint8="u8", float32="f32",
    sum=lambda x, dim, out=None: emit("sum"))
baseline.torch = fake
job = {"warmup_ms": 0, "min_reps": 3, "min_ms": 0, "flush_bytes": 4096, "flush": "clean"}
r = baseline.measure(lambda: emit("op"), job)
K = r["batch"]
timed = graphs[-2:]  # the flushed runs, then the flushes alone
print(K > 0, [(g.ops.count("sum") - K, g.ops.count("op") - K * (i == 0), g.ops[-1]) for i, g in enumerate(timed)], calls.count("fill"))
capturable = False
del calls[:]
r = baseline.measure(lambda: emit("op"), job)
# The warm-up's calls, then a flush, then per sample: flush, run, flush.
runs = calls[calls.index("sum"):]
print(r["batch"], r["reps"], runs == ["sum"] + ["sum", "op", "sum"] * r["reps"], calls.count("fill"))
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, probe)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, tail(string(out), 3000))
	}
	// Each graph holds one flush more than runs (K runs in the first),
	// and ends with a flush.
	want := "True [(1, 0, 'sum'), (1, 0, 'sum')] 0\n0 3 True 0"
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if got := strings.Join(lines[len(lines)-2:], "\n"); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// torchPython is $KGEN_TORCH_PYTHON, a python with torch; the test is
// skipped without it, or fails with KGEN_REQUIRE_TOOLCHAINS=1.
func torchPython(t *testing.T) string {
	t.Helper()
	python := os.Getenv("KGEN_TORCH_PYTHON")
	if python == "" {
		if os.Getenv("KGEN_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatal("KGEN_TORCH_PYTHON is not set and KGEN_REQUIRE_TOOLCHAINS=1")
		}
		t.Skip("KGEN_TORCH_PYTHON is not set (a python with torch)")
	}
	return python
}
