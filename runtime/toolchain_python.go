package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
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
