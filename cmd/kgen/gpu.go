package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
)

// gpuSession is what test and bench share: every file built for the
// target (with its reference kernels), compiled, and a runner on GPU 0.
type gpuSession struct {
	be     backend
	units  []*unit
	refs   []*unit // refs[i] holds the reference kernels of units[i]
	runner *kgrt.Runner
	close  func()
}

// openGPU builds and compiles files for target into out (a temporary
// directory when empty), with the tuning database's configurations when
// tuned is set, only the instances named by only when it is set, and
// starts a runner. On failure it has printed
// why and returns the exit code.
func openGPU(ctx context.Context, cmd, target, out string, tools toolPaths, config lower.Config, tuned *tunedConfigs, only, files []string) (*gpuSession, int) {
	fail := func(err error) (*gpuSession, int) {
		fmt.Fprintf(stderr, "kgen %s: %v\n", cmd, err)
		return nil, exitUser
	}
	tgt, err := kgrt.ParseTarget(target)
	if err != nil {
		return nil, usageError(cmd, "%v", err)
	}
	be, err := openBackend(tgt, tools, true)
	if err != nil {
		return fail(err)
	}
	s := &gpuSession{be: be, close: func() {}}
	dir := out
	if dir == "" {
		if dir, err = os.MkdirTemp("", "kgen-"+cmd+"-"); err != nil {
			return fail(err)
		}
		s.close = func() { os.RemoveAll(dir) }
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	done := false
	defer func() {
		if !done {
			s.close()
		}
	}()
	var diags diag.List
	loaded := loadFiles(files, &diags)
	if diags.HasErrors() {
		return nil, report(&diags, false)
	}
	b := &builder{target: tgt, be: be, out: dir, config: config, tuned: tuned, only: only, scratch: out == ""}
	if err := checkOnly(only, loaded); err != nil {
		return nil, usageError(cmd, "%v", err)
	}
	if s.units, err = b.emit(loaded); err != nil {
		return fail(err)
	}
	if s.refs, err = b.emitReference(loaded); err != nil {
		return fail(err)
	}
	be.compile(ctx, append(slices.Clone(s.units), s.refs...), runtime.NumCPU(), false, &diags)
	if code := report(&diags, false); code != exitOK {
		return nil, code
	}
	if s.runner, err = be.startRunner(ctx, 0); err != nil {
		return fail(err)
	}
	rmdir := s.close
	s.close = func() {
		s.runner.Close()
		rmdir()
	}
	done = true
	return s, exitOK
}
