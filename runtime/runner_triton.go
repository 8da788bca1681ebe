package runtime

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// runnerTritonSource is the Triton runner: runner.cpp's protocol for
// kgen-emitted Triton modules, in Python (torch allocates, Triton
// compiles and launches).
//
//go:embed runner/runner_triton.py
var runnerTritonSource []byte

// StartPythonRunner starts the Triton runner with python on the given
// CUDA device, under $KGEN_RUNNER_WRAPPER as the CUDA runner is
// (RunnerWrapper). The script is written to cacheDir (the user's cache
// when "") under a name that hashes its contents, so concurrent starts
// share it safely.
func StartPythonRunner(ctx context.Context, python, cacheDir string, device int) (*Runner, error) {
	script, err := writeRunnerScript(cacheDir)
	if err != nil {
		return nil, err
	}
	return startRunner(ctx, append(RunnerWrapper(), python, script, strconv.Itoa(device)), nil)
}

// StartTritonInterpreter starts the Triton runner in Triton's interpreter
// mode: kernels run on the CPU (numpy executes each program), buffers are
// host memory, and timing is refused. It checks emitted kernels where
// there is no GPU.
func StartTritonInterpreter(ctx context.Context, python, cacheDir string) (*Runner, error) {
	script, err := writeRunnerScript(cacheDir)
	if err != nil {
		return nil, err
	}
	r, err := startRunner(ctx, []string{python, script, "--interpret"}, nil)
	if err == nil {
		r.OpTimeout = InterpretOpTimeout
	}
	return r, err
}

// InterpretOpTimeout bounds each command of a runner in Triton's
// interpreter mode, where a launch is numpy running every program on the
// CPU: TestTritonPhasesInterpreted's 29 checks take about 170 s on an
// idle two-core machine, and a transposed convolution's launch among them
// took more than DefaultOpTimeout while other tests shared the cores
// (twice, in the thirty-third and thirty-fourth sessions' CI runs).
const InterpretOpTimeout = 5 * time.Minute

func writeRunnerScript(cacheDir string) (string, error) {
	cacheDir, err := runnerCache(cacheDir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(cacheDir, fmt.Sprintf("runner_triton-%x.py", sha256.Sum256(runnerTritonSource)))
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	tmp, err := os.CreateTemp(cacheDir, "runner_triton-*.tmp")
	if err != nil {
		return "", err
	}
	if _, err := tmp.Write(runnerTritonSource); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return path, nil
}
