package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
)

// CompileJob is one CUDA source to compile for one target.
type CompileJob struct {
	Source  string // path of the .cu file
	Target  Target
	OutDir  string   // where the .cubin and .ptx go; created if missing
	Defines []string // preprocessor definitions, "NAME" or "NAME=VALUE"
	// Language, when set, is the source's language for nvcc's -x where
	// its extension does not say it: "cu" for a HIP source (hip:nvidia).
	Language string
	// Scratch says that Source lives in a directory that goes away (kgen
	// test's, bench's, tune's): with a cache, nvcc compiles the cache's
	// copy of it (CompileCache.stage), whose path the outputs' line
	// tables and the messages then name, so that the same text hits the
	// cache wherever it was written. The outputs still go to OutDir under
	// Source's name.
	Scratch bool
}

// CompileResult is what a successful compile produced.
type CompileResult struct {
	Cubin     string // OutDir/BASE.ARCH.cubin
	PTX       string // OutDir/BASE.ARCH.ptx
	Resources []FuncResources
	Warnings  []ToolMessage
	Log       string // everything the tools printed, for -v and bug reports
	Cached    bool   // copied from the compile cache: nvcc did not run
}

// NVCCError is a compile that failed: the tools' diagnostics, with
// their positions, and the full log.
type NVCCError struct {
	Source   string
	Target   Target
	Messages []ToolMessage // errors first, then warnings
	Log      string
	Err      error // how the tool failed (exit status, missing output, timeout)
}

func (e *NVCCError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "nvcc could not compile %s for %s", e.Source, e.Target)
	n := 0
	for _, m := range e.Messages {
		if m.Severity == "warning" || m.Severity == "remark" || m.Severity == "note" {
			continue
		}
		b.WriteString("\n" + m.String())
		n++
	}
	if n == 0 {
		// Nothing we could parse: show how it failed and the end of the log.
		fmt.Fprintf(&b, ": %v", e.Err)
		if tail := lastLines(e.Log, 10); tail != "" && !strings.Contains(e.Err.Error(), tail) {
			b.WriteString("\n" + tail)
		}
	}
	return b.String()
}

func (e *NVCCError) Unwrap() error { return e.Err }

// Compile compiles job.Source to PTX and then the PTX to a cubin, both
// for job.Target: one C++ front-end pass, and the cubin is exactly the
// assembled PTX that is kept next to it. Outputs are written to temporary
// files and renamed into place only once they exist and are not empty, so
// a failed or interrupted compile never leaves a truncated cubin behind.
// With n.Cache, a compile of the same source at the same path with the
// same nvcc and flags is copied from the cache instead (res.Cached), and
// a successful compile is kept there. A failed compile returns a
// *NVCCError.
func (n *NVCC) Compile(ctx context.Context, job CompileJob) (*CompileResult, error) {
	if _, ok := targetFacts[job.Target.Arch]; !ok || job.Target.Backend != "cuda" {
		return nil, fmt.Errorf("compile %s: invalid target %q; valid targets: %s", job.Source, job.Target.Arch, validTargets())
	}
	if err := n.SupportsTarget(job.Target); err != nil {
		return nil, fmt.Errorf("compile %s: %w", job.Source, err)
	}
	if _, err := os.Stat(job.Source); err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	if err := os.MkdirAll(job.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("compile %s: %w", job.Source, err)
	}
	base := strings.TrimSuffix(filepath.Base(job.Source), filepath.Ext(job.Source)) + "." + job.Target.Arch
	res := &CompileResult{
		PTX:   filepath.Join(job.OutDir, base+".ptx"),
		Cubin: filepath.Join(job.OutDir, base+".cubin"),
	}
	fail := func(log string, err error) (*CompileResult, error) {
		msgs := ParseCompilerOutput(log)
		// Errors first: they are what the user must fix.
		var sorted []ToolMessage
		for _, warn := range []bool{false, true} {
			for _, m := range msgs {
				if (m.Severity == "warning" || m.Severity == "remark" || m.Severity == "note") == warn {
					sorted = append(sorted, m)
				}
			}
		}
		return nil, &NVCCError{Source: job.Source, Target: job.Target, Messages: sorted, Log: log, Err: err}
	}

	arch := "-arch=" + job.Target.Arch
	ptxArgs := []string{"-ptx", arch, "-O3", "-std=c++17", "-lineinfo"}
	for _, d := range job.Defines {
		ptxArgs = append(ptxArgs, "-D"+d)
	}
	if job.Language != "" {
		ptxArgs = append(ptxArgs, "-x", job.Language)
	}
	// The PTX already carries the line info; -Xptxas -v asks ptxas for
	// the resource report.
	cubinArgs := []string{"-cubin", arch, "-O3", "-Xptxas", "-v"}
	key, src := "", job.Source
	if n.Cache != nil {
		if job.Scratch {
			if staged, err := n.Cache.stage(job.Source); err == nil {
				src = staged
			}
		}
		args := append(append(append([]string{"ptx"}, ptxArgs...), "cubin"), cubinArgs...)
		if k, err := compileKey(n.Fingerprint(), args, src); err == nil {
			key = k
			if logs, ok := n.Cache.fetch(key, []string{res.PTX, res.Cubin}, 2); ok {
				res.Cached = true
				res.Log = logs[0] + logs[1]
				res.Resources = ParsePtxasReport(logs[1])
				res.Warnings = ParseCompilerOutput(res.Log)
				return res, nil
			}
		}
	}
	ptxLog, err := n.produce(ctx, res.PTX, append(ptxArgs, src))
	res.Log = ptxLog
	if err != nil {
		return fail(res.Log, err)
	}
	cubinLog, err := n.produce(ctx, res.Cubin, append(cubinArgs, res.PTX))
	res.Log += cubinLog
	if err != nil {
		return fail(res.Log, err)
	}
	res.Resources = ParsePtxasReport(cubinLog)
	res.Warnings = ParseCompilerOutput(res.Log) // a successful compile prints only warnings
	if key != "" {
		n.Cache.store(key, []string{res.PTX, res.Cubin}, []string{ptxLog, cubinLog})
	}
	return res, nil
}

// produce runs nvcc with args plus `-o TEMP` and renames TEMP to out once
// it is there. It returns what nvcc printed.
func (n *NVCC) produce(ctx context.Context, out string, args []string) (string, error) {
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*.tmp")
	if err != nil {
		return "", err
	}
	tmpName := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpName) // a no-op once renamed
	// nvcc picks the output kind from -ptx/-cubin, not from the name, so the
	// temporary name is fine.
	full := append(append([]string(nil), args...), "-o", tmpName)
	o, err := runTool(ctx, n.Path, full...)
	log := o.Stderr + o.Stdout
	if err != nil {
		return log, err
	}
	// An exit status of 0 is not proof: check the output was written.
	st, err := os.Stat(tmpName)
	if err != nil || st.Size() == 0 {
		return log, fmt.Errorf("nvcc exited successfully but wrote no %s", filepath.Ext(out))
	}
	if err := os.Rename(tmpName, out); err != nil {
		return log, err
	}
	return log, nil
}

// CompileAll compiles jobs concurrently, at most parallel at a time
// (runtime.NumCPU() when parallel <= 0, as -j does). results[i] and
// errs[i] belong to jobs[i]; exactly one of them is nil. Cancelling ctx
// stops running compiles and fails those not yet started.
func (n *NVCC) CompileAll(ctx context.Context, jobs []CompileJob, parallel int) ([]*CompileResult, []error) {
	return compileAll(ctx, jobs, parallel, n.Compile, func(j CompileJob) string { return j.Source + " for " + j.Target.String() })
}

// compileAll runs compile on every job, at most parallel at a time
// (runtime.NumCPU() when parallel <= 0): the one way kgen runs a compiler
// on many sources. results[i] and errs[i] belong to jobs[i]; exactly one
// of them is nil. Cancelling ctx fails the jobs not yet started (what
// names a job in that error).
func compileAll[J any, R any](ctx context.Context, jobs []J, parallel int, compile func(context.Context, J) (*R, error), what func(J) string) ([]*R, []error) {
	if parallel <= 0 {
		parallel = goruntime.NumCPU()
	}
	results := make([]*R, len(jobs))
	errs := make([]error, len(jobs))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, job := range jobs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			for j := i; j < len(jobs); j++ {
				errs[j] = fmt.Errorf("compile %s: not started: %w", what(jobs[j]), ctx.Err())
			}
			wg.Wait()
			return results, errs
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			results[i], errs[i] = compile(ctx, job)
			if errs[i] == nil && results[i] == nil {
				errs[i] = errors.New("compile returned no result") // cannot happen; keeps the contract
			}
		}()
	}
	wg.Wait()
	return results, errs
}
