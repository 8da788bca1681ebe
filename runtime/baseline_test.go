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
	python := os.Getenv("KGEN_TORCH_PYTHON")
	if python == "" {
		if os.Getenv("KGEN_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatal("KGEN_TORCH_PYTHON is not set and KGEN_REQUIRE_TOOLCHAINS=1")
		}
		t.Skip("KGEN_TORCH_PYTHON is not set (a python with torch)")
	}
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
