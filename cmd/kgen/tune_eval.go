package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
	"kgen.dev/kgen/tensor"
	"kgen.dev/kgen/tune"
)

// Timing protocols of tuning: the search times each candidate with a
// shorter protocol than bench's (a warm-up of 10 ms, then max(10, 40 ms
// worth of) samples); the finalists' confirmation uses bench's full one.
var (
	searchTiming  = kgrt.TimeSpec{WarmupMS: 10, MinReps: 10, MinMS: 40}
	confirmTiming = kgrt.TimeSpec{}
)

// candidateTimeout bounds one candidate's check and timing together: a
// candidate that hangs is a Timeout failure after it, not after the
// runner's default deadlines (a minute a command, five for a timing).
const candidateTimeout = 60 * time.Second

// candidateEval compiles and measures the configurations of one launch of
// one instance through the target's backend: tune.Evaluator on a GPU.
// Each candidate is its own source file, so that compiles run in
// parallel (at most jobs at a time) and a candidate that does not compile
// fails alone; each is checked against outputs computed once (by the
// interpreter, or by the reference kernels for large instances) before it
// is timed.
type candidateEval struct {
	be     backend
	runner *kgrt.Runner
	file   *loaded
	inst   *ir.Instance
	lim    lower.Limits
	dir    string
	jobs   int
	// compileLimit bounds each candidate's compile (0: no bound).
	compileLimit time.Duration
	// launch is the launch searched; configs the configurations of all
	// launches, launch's replaced by each candidate's.
	launch  int
	configs []lower.Config
	inputs  []*tensor.Tensor
	want    []*tensor.Tensor
	tols    []kgrt.Tolerance
	// resident holds inputs in device memory for the timings: each
	// candidate's check writes them afresh (and reads them back, to see
	// that they came back unchanged), its timings and the confirmation's
	// rounds do not.
	resident *kgrt.Resident

	mu       sync.Mutex
	n        int                   // sources written, for their names
	compiled map[string]*candidate // by tune.Key of launch's config
}

type candidate struct {
	plan *lower.Plan
	x    *kgrt.Executor
}

// plan plans the instance with launch's configuration c.
func (e *candidateEval) plan(c lower.Config) (*lower.Plan, error) {
	p, err := lower.Build(e.inst.Kernel, e.inst.Env, e.inst.Name, e.lim)
	if err != nil {
		return nil, err
	}
	if len(p.Launches) != len(e.configs) {
		return nil, fmt.Errorf("%s: %d launches, tuned with %d", e.inst.Name, len(p.Launches), len(e.configs))
	}
	for i, l := range p.Launches {
		l.Config = e.configs[i]
		if i == e.launch {
			l.Config = c
		}
	}
	return p, nil
}

func (e *candidateEval) Compile(ctx context.Context, cands []lower.Config) []error {
	errs := make([]error, len(cands))
	units := make([]*unit, len(cands))
	for i, c := range cands {
		p, err := e.plan(c)
		if err != nil {
			errs[i] = err
			continue
		}
		e.mu.Lock()
		e.n++
		stem := fmt.Sprintf("%s_l%d_c%d", e.inst.Name, e.launch, e.n)
		e.mu.Unlock()
		u := &unit{file: e.file, stem: stem, source: filepath.Join(e.dir, stem+e.be.ext()), plans: []*lower.Plan{p}, manifest: &lower.Manifest{}, scratch: true}
		if err := writeFileAtomic(u.source, e.be.emit(u.plans), 0o644); err != nil {
			errs[i] = err
			continue
		}
		units[i] = u
	}
	// One compile per candidate, each with its own diagnostics, so that a
	// failure is the candidate's.
	sem := make(chan struct{}, max(e.jobs, 1))
	var wg sync.WaitGroup
	for i, u := range units {
		if u == nil {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			var dl diag.List
			cctx, cancel := ctx, context.CancelFunc(func() {})
			if e.compileLimit > 0 {
				cctx, cancel = context.WithTimeout(ctx, e.compileLimit)
			}
			e.be.compile(cctx, []*unit{u}, 1, false, &dl)
			cancel()
			if u.binary == "" && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
				errs[i] = fmt.Errorf("compiling took longer than %s (--compile-time)", e.compileLimit)
				return
			}
			if u.binary == "" {
				var msgs []string
				for _, d := range dl.Diags {
					msgs = append(msgs, d.Msg)
				}
				errs[i] = errors.New(strings.Join(msgs, "\n"))
				return
			}
			e.mu.Lock()
			e.compiled[tune.Key(cands[i])] = &candidate{plan: u.plans[0], x: &kgrt.Executor{Runner: e.runner, Binary: u.binary}}
			e.mu.Unlock()
		}()
	}
	wg.Wait()
	return errs
}

// lookup returns the compiled candidate of c, or nil; the next batch may
// be compiling meanwhile.
func (e *candidateEval) lookup(c lower.Config) *candidate {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.compiled[tune.Key(c)]
}

func (e *candidateEval) Measure(ctx context.Context, c lower.Config) (kgrt.Timing, error) {
	cand := e.lookup(c)
	if cand == nil {
		return kgrt.Timing{}, fmt.Errorf("%s was not compiled", tune.Key(c))
	}
	defer cand.x.Unload(ctx)
	ctx, cancel := context.WithTimeout(ctx, candidateTimeout)
	defer cancel()
	if err := e.check(ctx, cand); err != nil {
		return kgrt.Timing{}, err
	}
	return e.time(ctx, cand, searchTiming)
}

// check runs a compiled candidate on freshly written inputs and compares
// its outputs with the reference's.
func (e *candidateEval) check(ctx context.Context, cand *candidate) error {
	return cand.x.CheckOutputsWithin(ctx, cand.plan, e.inst.Env, e.inputs, e.want, e.tols, 1, tensor.Normal).Err
}

// time times a compiled candidate with spec, in CUDA graphs when one run
// is under kgrt.GraphBelowUS (as bench does), restarting the runner after
// a crash.
func (e *candidateEval) time(ctx context.Context, cand *candidate, spec kgrt.TimeSpec) (kgrt.Timing, error) {
	tm, err := kgrt.TimeShortAsGraphs(spec, func(s kgrt.TimeSpec) (kgrt.Timing, error) {
		return cand.x.TimeResident(ctx, cand.plan, e.inst.Env, e.resident, s)
	})
	var f *kgrt.Failure
	if errors.As(err, &f) && (f.Kind == kgrt.Crash || f.Kind == kgrt.Timeout) {
		if rerr := e.runner.Restart(); rerr != nil {
			return tm, fmt.Errorf("%w; restarting the runner failed: %v", err, rerr)
		}
	}
	return tm, err
}

// confirmTime times configuration c with the full protocol for the
// confirmation, compiling it first when its result came from the
// database (and checking it then, as its timing runs on the resident
// inputs).
func (e *candidateEval) confirmTime(ctx context.Context, c lower.Config) (kgrt.Timing, error) {
	check := false
	if e.lookup(c) == nil {
		if err := e.Compile(ctx, []lower.Config{c})[0]; err != nil {
			return kgrt.Timing{}, err
		}
		check = true
	}
	cand := e.lookup(c)
	defer cand.x.Unload(ctx)
	ctx, cancel := context.WithTimeout(ctx, candidateTimeout)
	defer cancel()
	if check {
		if err := e.check(ctx, cand); err != nil {
			return kgrt.Timing{}, err
		}
	}
	return e.time(ctx, cand, confirmTiming)
}

// removeSources deletes the candidates' files once a launch is tuned.
func (e *candidateEval) removeSources() {
	matches, _ := filepath.Glob(filepath.Join(e.dir, fmt.Sprintf("%s_l%d_c*", e.inst.Name, e.launch)))
	for _, m := range matches {
		os.Remove(m)
	}
}
