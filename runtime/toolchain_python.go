package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Python is a python3 interpreter found on this machine, with the
// versions of the modules kgen cares about (torch for baselines, triton
// for the Triton backend).
type Python struct {
	Path    string
	Version string // "3.12.3"
	Modules []PythonModule
}

// PythonModule is the outcome of importing one module.
type PythonModule struct {
	Name    string
	Version string // "" when it could not be imported
	Error   string // why the import failed, "ModuleNotFoundError: No module named 'torch'"
	CUDA    string `json:",omitempty"` // torch only: the CUDA version torch was built with
}

// pythonTimeout bounds the probe: importing torch reads hundreds of
// megabytes of shared libraries and can take seconds on a cold cache.
const pythonTimeout = 60 * time.Second

// pythonProbe imports each module separately so that one broken install
// does not hide the others, and prints JSON.
const pythonProbe = `
import json, sys
out = {"python": sys.version.split()[0], "modules": []}
for name in sys.argv[1:]:
    m = {"Name": name}
    try:
        mod = __import__(name)
        m["Version"] = str(getattr(mod, "__version__", "unknown"))
        if name == "torch":
            m["CUDA"] = str(getattr(mod.version, "cuda", None) or "")
    except BaseException as e:
        m["Error"] = (type(e).__name__ + ": " + str(e)).splitlines()[0]
    out["modules"].append(m)
print(json.dumps(out))
`

// FindPython finds python3 on PATH and imports modules with it, under a
// timeout. The error says what was not found.
func FindPython(ctx context.Context, modules ...string) (*Python, error) {
	return FindPythonAt(ctx, "", modules...)
}

// FindPythonAt is FindPython with the interpreter at path (looked up on
// PATH when it has no slash); "" means python3 on PATH.
func FindPythonAt(ctx context.Context, path string, modules ...string) (*Python, error) {
	what := path
	if path == "" {
		path, what = "python3", "python3"
	}
	path, err := exec.LookPath(path)
	if err != nil {
		if what == "python3" {
			return nil, fmt.Errorf("python3 not found on PATH")
		}
		return nil, fmt.Errorf("python %s: %v", what, err)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	ctx, cancel := context.WithTimeout(ctx, pythonTimeout)
	defer cancel()
	out, err := runTool(ctx, path, append([]string{"-c", pythonProbe}, modules...)...)
	if err != nil {
		return nil, fmt.Errorf("%s could not run: %v", path, err)
	}
	var r struct {
		Python  string
		Modules []PythonModule
	}
	if err := json.Unmarshal([]byte(lastLines(out.Stdout, 1)), &r); err != nil {
		return nil, fmt.Errorf("%s: unexpected output %q", path, firstLine(out.Stdout))
	}
	return &Python{Path: path, Version: r.Python, Modules: r.Modules}, nil
}

// HIPCC is AMD's HIP compiler driver.
type HIPCC struct {
	Path    string
	Version string // the HIP version, "6.2.41133-dd7f95766"
}

// hipccFallbacks are looked in after PATH: ROCm's default install.
var hipccFallbacks = []string{"/opt/rocm/bin/hipcc"}

var hipVersionRE = regexp.MustCompile(`HIP version: (\S+)`)

// FindHIPCC finds hipcc on PATH or in /opt/rocm/bin and records its
// version.
func FindHIPCC(ctx context.Context) (*HIPCC, error) {
	path, err := exec.LookPath("hipcc")
	if err != nil {
		path = ""
		for _, c := range hipccFallbacks {
			if isExecutable(c) {
				path = c
				break
			}
		}
		if path == "" {
			return nil, fmt.Errorf("hipcc not found (looked in PATH, %s); install ROCm to use the HIP backend", strings.Join(hipccFallbacks, ", "))
		}
	}
	ctx, cancel := context.WithTimeout(ctx, toolTimeout)
	defer cancel()
	out, err := runTool(ctx, path, "--version")
	if err != nil {
		return nil, fmt.Errorf("%s --version: %v", path, err)
	}
	h := &HIPCC{Path: path, Version: "unknown"}
	if m := hipVersionRE.FindStringSubmatch(out.Stdout + out.Stderr); m != nil {
		h.Version = m[1]
	}
	return h, nil
}
