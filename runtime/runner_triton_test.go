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
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "runner_triton.py"), runnerTritonSource, 0o644); err != nil {
		t.Fatal(err)
	}
	prog := `
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
`
	cmd := exec.Command(python, "-c", prog)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
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
