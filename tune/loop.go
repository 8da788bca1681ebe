package tune

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
)

// Result is one evaluation: a point's time, or how it failed.
type Result struct {
	Point   int64
	Config  lower.Config
	Time    kgrt.Timing   // when Failure is nil
	Failure *kgrt.Failure // nil when the candidate compiled, checked and timed
	// Cached results come from the database rather than from a
	// measurement in this run.
	Cached bool
}

// Cost is what strategies minimize: the median time, +Inf for a failure.
func (r Result) Cost() float64 {
	if r.Failure != nil {
		return math.Inf(1)
	}
	return r.Time.MedianUS
}

// Evaluator compiles and measures candidates: a backend and a GPU, or a
// table of known costs in simulation and tests.
type Evaluator interface {
	// Compile builds a batch of candidates, in parallel where it can,
	// returning one error per candidate (nil: ready to measure).
	Compile(ctx context.Context, cands []lower.Config) []error
	// Measure checks one compiled candidate's output and then times it.
	// An error that is not a *runtime.Failure counts as a launch
	// failure.
	Measure(ctx context.Context, c lower.Config) (kgrt.Timing, error)
}

// Progress is the state of a run, for progress lines.
type Progress struct {
	Done, Failed int
	Total        int // the budget in evaluations, 0 when unknown
	Best         *Result
	DefaultUS    float64 // 0 when the default failed or is not in the space
	Elapsed      time.Duration
	ETA          time.Duration // 0 when unknown
	Last         *Result
}

// Tuner runs one strategy over one space.
type Tuner struct {
	Space    *Space
	Strategy Strategy
	Eval     Evaluator
	// Default is the point of the heuristic default, measured first as
	// the baseline, or -1.
	Default int64
	// Budget bounds the evaluations (cached ones included), 0 for none;
	// Time bounds the run's wall time, 0 for none.
	Budget int
	Time   time.Duration
	// Expect, when Budget is 0, is how many evaluations the run is
	// expected to take (an exhaustive search's valid points), for the
	// progress and its ETA; 0 when unknown.
	Expect int
	// Batch is how many candidates are compiled at once (at least 1).
	Batch int
	// Known returns a result recorded earlier for configuration c, which
	// is then not measured again: a killed run resumes where it was.
	Known func(c lower.Config) (Result, bool)
	// Record stores a fresh result; an error stops the run.
	Record   func(Result) error
	Progress func(Progress)
	now      func() time.Time
}

// Run evaluates points until the strategy is done, the budget or time is
// spent, or ctx ends, and returns every result in evaluation order.
// Failures are results, never errors: only a failure to record (or ctx)
// stops the run early with an error.
//
// Compilation overlaps measurement: while one batch is measured on the
// GPU, the next is proposed and compiled on the CPUs. The strategy
// therefore proposes each batch knowing the results of all batches but
// the one being measured; the default, measured alone first, is known
// to it before it proposes anything.
func (t *Tuner) Run(ctx context.Context) ([]Result, error) {
	now := t.now
	if now == nil {
		now = time.Now
	}
	start := now()
	var results []Result
	var prog Progress
	prog.Total = t.Budget
	if prog.Total == 0 {
		prog.Total = t.Expect
	}
	// left is what the budget allows beyond the results and the batch in
	// flight.
	left := func(inFlight int) int {
		if t.Budget > 0 {
			return t.Budget - len(results) - inFlight
		}
		return math.MaxInt
	}
	overTime := func() bool { return t.Time > 0 && now().Sub(start) >= t.Time }
	first := t.Default >= 0 && t.Space.Check(t.Default) == nil
	next := func(inFlight int) *batch {
		if left(inFlight) <= 0 || overTime() || ctx.Err() != nil {
			return nil
		}
		var pts []int64
		if first {
			pts, first = []int64{t.Default}, false
		} else {
			pts = t.Strategy.Next(min(max(t.Batch, 1), left(inFlight)))
		}
		if len(pts) == 0 {
			return nil
		}
		return t.prepare(ctx, pts)
	}
	cur := next(0)
	for cur != nil {
		<-cur.compiled
		// The default's batch is not overlapped: the strategy must know
		// it was taken before it proposes.
		var following *batch
		if !cur.isDefault(t.Default) {
			following = next(len(cur.pts))
		}
		abort := func(err error) ([]Result, error) {
			if following != nil {
				<-following.compiled // no compile outlives the run
			}
			return results, err
		}
		for n, k := range cur.todo {
			if ctx.Err() != nil {
				return abort(ctx.Err())
			}
			r := Result{Point: cur.pts[k], Config: cur.cfgs[n]}
			if cur.errs[n] != nil {
				r.Failure = compileFailure(cur.errs[n])
			} else if tm, err := t.Eval.Measure(ctx, cur.cfgs[n]); err != nil {
				if ctx.Err() != nil {
					return abort(ctx.Err())
				}
				r.Failure = asFailure(err)
			} else {
				r.Time = tm
			}
			if t.Record != nil {
				if err := t.Record(r); err != nil {
					return abort(err)
				}
			}
			cur.res[k] = &r
		}
		for _, r := range cur.res {
			t.Strategy.Observe(r.Point, r.Cost())
			results = append(results, *r)
			t.report(&prog, *r, start, now())
		}
		if following == nil {
			following = next(0)
		}
		cur = following
	}
	return results, nil
}

// batch is a batch of points on its way: the results known from earlier
// runs, and the rest being compiled until compiled is closed.
type batch struct {
	pts      []int64
	res      []*Result
	todo     []int // indices into pts of the points to measure
	cfgs     []lower.Config
	errs     []error
	compiled chan struct{}
}

func (b *batch) isDefault(def int64) bool { return len(b.pts) == 1 && b.pts[0] == def }

// prepare answers what Known can of pts and starts compiling the rest.
func (t *Tuner) prepare(ctx context.Context, pts []int64) *batch {
	b := &batch{pts: pts, res: make([]*Result, len(pts)), compiled: make(chan struct{})}
	for k, p := range pts {
		c := t.Space.Config(p)
		if t.Known != nil {
			if r, ok := t.Known(c); ok {
				r.Point, r.Config, r.Cached = p, c, true
				b.res[k] = &r
				continue
			}
		}
		b.todo = append(b.todo, k)
		b.cfgs = append(b.cfgs, c)
	}
	if len(b.cfgs) == 0 {
		close(b.compiled)
		return b
	}
	go func() {
		defer close(b.compiled)
		b.errs = t.Eval.Compile(ctx, b.cfgs)
	}()
	return b
}

// report updates the progress with result r and passes it on.
func (t *Tuner) report(prog *Progress, r Result, start, now time.Time) {
	if r.Failure != nil {
		prog.Failed++
	} else if prog.Best == nil || r.Cost() < prog.Best.Cost() {
		best := r
		prog.Best = &best
	}
	if r.Point == t.Default && r.Failure == nil {
		prog.DefaultUS = r.Time.MedianUS
	}
	prog.Done++
	prog.Last = &r
	prog.Elapsed = now.Sub(start)
	prog.ETA = 0
	if prog.Total > prog.Done {
		prog.ETA = prog.Elapsed / time.Duration(prog.Done) * time.Duration(prog.Total-prog.Done)
	}
	// A time limit caps the estimate while evaluations remain (or their
	// number is unknown); once all are done nothing is left.
	if t.Time > 0 && (prog.Total == 0 || prog.Total > prog.Done) {
		if rem := t.Time - prog.Elapsed; prog.ETA == 0 || rem < prog.ETA {
			prog.ETA = max(rem, 0)
		}
	}
	if t.Progress != nil {
		t.Progress(*prog)
	}
}

// compileFailure types a compile error: a resource limit when the
// toolchain says the kernel needs more than the target has (registers,
// shared memory), else a compile error.
func compileFailure(err error) *kgrt.Failure {
	var f *kgrt.Failure
	if errors.As(err, &f) {
		return f
	}
	msg := err.Error()
	for _, s := range []string{"too much shared data", "uses too much", "too many resources", "Entry function uses too much"} {
		if strings.Contains(msg, s) {
			return &kgrt.Failure{Kind: kgrt.ResourceLimit, Op: "compile", Msg: msg}
		}
	}
	return &kgrt.Failure{Kind: kgrt.CompileError, Op: "compile", Msg: msg}
}

// asFailure types a measurement error: the runner's *Failure as it is,
// anything else a launch failure.
func asFailure(err error) *kgrt.Failure {
	var f *kgrt.Failure
	if errors.As(err, &f) {
		return &kgrt.Failure{Kind: f.Kind, Op: f.Op, Code: f.Code, Msg: err.Error()}
	}
	return &kgrt.Failure{Kind: kgrt.LaunchFailure, Msg: err.Error()}
}

// Best returns the fastest result that did not fail (the lower point on a
// tie), or false when every one failed.
func Best(results []Result) (Result, bool) {
	var best Result
	found := false
	for _, r := range results {
		if r.Failure != nil {
			continue
		}
		if !found || r.Cost() < best.Cost() || (r.Cost() == best.Cost() && r.Point < best.Point) {
			best, found = r, true
		}
	}
	return best, found
}

func (r Result) String() string {
	if r.Failure != nil {
		return fmt.Sprintf("%s: %s", Key(r.Config), r.Failure.Kind)
	}
	return fmt.Sprintf("%s: %.2f us", Key(r.Config), r.Time.MedianUS)
}
