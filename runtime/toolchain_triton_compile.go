package runtime

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Triton is a python3 that imports triton: the Triton backend's compiler
// (and, with torch on a GPU machine, its runner).
type Triton struct {
	Python        string // the interpreter's path
	PythonVersion string // "3.11.7"
	Version       string // triton's, "3.6.0"
}

// FindTriton finds python (a path, or "" for python3 on PATH) and checks
// that it imports triton, recording the versions.
func FindTriton(ctx context.Context, python string) (*Triton, error) {
	py, err := FindPythonAt(ctx, python, "triton")
	if err != nil {
		return nil, err
	}
	m := py.Modules[0]
	if m.Version == "" {
		return nil, fmt.Errorf("%s cannot import triton (%s); install it with: %s -m pip install triton==%s", py.Path, m.Error, py.Path, TritonPin)
	}
	return &Triton{Python: py.Path, PythonVersion: py.Version, Version: m.Version}, nil
}

// TritonPin is the triton version kgen is tested with: the one on kgen's
// H100 machine, and CI's (.ci/install-torch, whose torch brings it).
const TritonPin = "3.6.0"

// String names the toolchain for reports: "triton 3.6.0 (python 3.11.7)".
func (t *Triton) String() string {
	return fmt.Sprintf("triton %s (python %s)", t.Version, t.PythonVersion)
}

//go:embed python/triton_compile.py
var tritonCompileScript string

// TritonKernel is one entry point's compile result.
type TritonKernel struct {
	Name        string `json:"name"`
	OK          bool   `json:"ok"`
	Error       string `json:"error"`
	Registers   int    `json:"registers"`
	LocalBytes  int    `json:"local_bytes"`
	SharedBytes int    `json:"shared_bytes"`
	NumWarps    int    `json:"num_warps"`
}

func (k TritonKernel) String() string {
	return fmt.Sprintf("%d registers, %d bytes local memory, %d bytes shared memory, %d warps", k.Registers, k.LocalBytes, k.SharedBytes, k.NumWarps)
}

// GPUTarget is a target as Triton's compiler names it:
// GPUTarget(backend, arch, warp_size).
type GPUTarget struct {
	Backend string // "cuda", "hip"
	Arch    string // "90", "gfx90a"
	Warp    int
}

// TritonTarget is t's GPUTarget.
func TritonTarget(t Target) GPUTarget {
	f := t.Facts()
	return GPUTarget{Backend: "cuda", Arch: strconv.Itoa(f.CCMajor*10 + f.CCMinor), Warp: f.WarpSize}
}

// CompileModule compiles every entry point of the Triton module at path
// for target gt without a GPU (jobs processes at a time) and returns each
// one's result, in the module's order. The error is for a module that
// cannot be loaded or a helper that fails; a kernel that does not compile
// is a result with OK false.
func (t *Triton) CompileModule(ctx context.Context, path string, gt GPUTarget, jobs int) ([]TritonKernel, error) {
	dir, err := os.MkdirTemp("", "kgen-triton-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "triton_compile.py")
	if err := os.WriteFile(script, []byte(tritonCompileScript), 0o644); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	out, err := runTool(ctx, t.Python, script, abs, gt.Backend, gt.Arch, strconv.Itoa(gt.Warp), strconv.Itoa(max(jobs, 1)))
	if err != nil {
		return nil, fmt.Errorf("compiling %s with triton: %v", path, err)
	}
	var ks []TritonKernel
	sc := bufio.NewScanner(strings.NewReader(out.Stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var k TritonKernel
		if err := json.Unmarshal(sc.Bytes(), &k); err != nil {
			return nil, fmt.Errorf("compiling %s with triton: unexpected output %q", path, sc.Text())
		}
		ks = append(ks, k)
	}
	return ks, nil
}
