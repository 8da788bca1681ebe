package tune

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
)

// fakeEval is a compiler and measurer with scripted outcomes: compile
// errors, resource limits, crashes and wrong results at chosen points.
type fakeEval struct {
	mu       sync.Mutex // Compile runs beside Measure
	tab      *Table
	compiled map[string]bool
	measured []string
	fail     map[string]error // by Key, returned by Measure
	noBuild  map[string]error // by Key, returned by Compile
}

func (f *fakeEval) Compile(_ context.Context, cands []lower.Config) []error {
	f.mu.Lock()
	defer f.mu.Unlock()
	errs := make([]error, len(cands))
	for i, c := range cands {
		errs[i] = f.noBuild[Key(c)]
		if errs[i] == nil {
			f.compiled[Key(c)] = true
		}
	}
	return errs
}

func (f *fakeEval) Measure(_ context.Context, c lower.Config) (kgrt.Timing, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.compiled[Key(c)] {
		return kgrt.Timing{}, fmt.Errorf("measured %s before compiling it", Key(c))
	}
	f.measured = append(f.measured, Key(c))
	if err := f.fail[Key(c)]; err != nil {
		return kgrt.Timing{}, err
	}
	p, _ := f.tab.Space.IndexOf(c)
	return kgrt.Timing{MedianUS: f.tab.Costs[p]}, nil
}

// small is a 3 x 3 space with costs 10 * (1 + |a - 1| + |b - 2|) and
// the default at (0, 0).
func small() *Table {
	s := &Space{Params: []Param{{"A", []int64{1, 2, 3}}, {"B", []int64{1, 2, 3}}}}
	t := &Table{Space: s, Costs: map[int64]float64{}, Default: 0}
	for i := range s.Size() {
		d := s.Digits(i)
		t.Costs[i] = 10 * (1 + math.Abs(float64(d[0]-1)) + math.Abs(float64(d[1]-2)))
	}
	return t
}

func TestLoopTypesFailuresAndNeverChoosesThem(t *testing.T) {
	tab := small()
	// The optimum (A=2, B=3, 10 us) crashes; the three at 20 us fail:
	// A=2, B=2 to compile, A=1, B=3 with a wrong result, A=3, B=3 on a
	// shared-memory limit.
	f := &fakeEval{tab: tab, compiled: map[string]bool{},
		fail: map[string]error{
			"A=2, B=3": &kgrt.Failure{Kind: kgrt.Crash, Op: "sync", Code: "CUDA_ERROR_ILLEGAL_ADDRESS"},
			"A=1, B=3": &kgrt.Failure{Kind: kgrt.WrongResult, Msg: "output C"},
		},
		noBuild: map[string]error{
			"A=2, B=2": errors.New("error: identifier \"x\" is undefined"),
			"A=3, B=3": errors.New("ptxas error   : Entry function 'k' uses too much shared data (0x10000 bytes, 0xc000 max)"),
		}}
	st, _ := New("exhaustive", tab.Space, 1)
	var recorded []Result
	tu := &Tuner{Space: tab.Space, Strategy: st, Eval: f, Default: 0, Batch: 4, Record: func(r Result) error { recorded = append(recorded, r); return nil }}
	res, err := tu.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 9 || len(recorded) != 9 {
		t.Fatalf("%d results, %d recorded; want 9", len(res), len(recorded))
	}
	if Key(res[0].Config) != "A=1, B=1" {
		t.Errorf("first evaluation %s, want the default", Key(res[0].Config))
	}
	kinds := map[string]kgrt.FailureKind{}
	for _, r := range res {
		if r.Failure != nil {
			kinds[Key(r.Config)] = r.Failure.Kind
		}
	}
	want := map[string]kgrt.FailureKind{"A=2, B=3": kgrt.Crash, "A=1, B=3": kgrt.WrongResult, "A=2, B=2": kgrt.CompileError, "A=3, B=3": kgrt.ResourceLimit}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Errorf("failures %v, want %v", kinds, want)
	}
	best, _ := Best(res)
	// Left: (A,B) = (1,1) 40, (1,2) 30, (2,1) 30, (3,1) 40, (3,2) 30:
	// the lowest point at 30 is A=1, B=2.
	if Key(best.Config) != "A=1, B=2" || best.Time.MedianUS != 30 {
		t.Errorf("best %v, want A=1, B=2 at 30 us", best)
	}
}

func TestLoopBudgetAndResume(t *testing.T) {
	tab := small()
	db := &DB{Path: filepath.Join(t.TempDir(), "tune.jsonl")}
	rec := func(r Result) Record {
		x := Record{Kind: KindEval, Hash: "h", Shape: "N=1", Target: "cuda:sm_90", Templates: []string{"t@1"}, Configs: []string{Key(r.Config)}}
		if r.Failure == nil {
			tm := r.Time
			x.Time = &tm
		} else {
			x.Failure = r.Failure.Kind.String()
		}
		return x
	}
	known := func() func(lower.Config) (Result, bool) {
		recs, _, err := db.Load()
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]Record{}
		for _, r := range recs {
			m[r.Configs[0]] = r
		}
		return func(c lower.Config) (Result, bool) {
			r, ok := m[Key(c)]
			if !ok || r.Time == nil {
				return Result{}, false
			}
			return Result{Time: *r.Time}, true
		}
	}
	run := func(budget int, ctx context.Context, f *fakeEval) []Result {
		st, _ := New("random", tab.Space, 5)
		tu := &Tuner{Space: tab.Space, Strategy: st, Eval: f, Default: 0, Batch: 2, Budget: budget, Known: known(),
			Record: func(r Result) error { return db.Append(rec(r)) }}
		res, _ := tu.Run(ctx)
		return res
	}
	// A run killed after four measurements...
	f1 := &fakeEval{tab: tab, compiled: map[string]bool{}}
	ctx, cancel := context.WithCancel(context.Background())
	f1.fail = map[string]error{}
	counting := &countingEval{fakeEval: f1, stopAfter: 4, cancel: cancel}
	st, _ := New("random", tab.Space, 5)
	tu := &Tuner{Space: tab.Space, Strategy: st, Eval: counting, Default: 0, Batch: 2, Known: known(),
		Record: func(r Result) error { return db.Append(rec(r)) }}
	tu.Run(ctx)
	if len(f1.measured) != 4 {
		t.Fatalf("first run measured %d, want 4", len(f1.measured))
	}
	// ...resumes: the same seed proposes the same points, the four known
	// are not measured again, and the other five are.
	f2 := &fakeEval{tab: tab, compiled: map[string]bool{}}
	res := run(0, context.Background(), f2)
	if len(res) != 9 || len(f2.measured) != 5 {
		t.Fatalf("resumed run: %d results, %d measured; want 9 and 5", len(res), len(f2.measured))
	}
	for _, k := range f2.measured {
		for _, k1 := range f1.measured {
			if k == k1 {
				t.Errorf("%s measured again", k)
			}
		}
	}
	// A budget of three evaluations stops at three.
	if res := run(3, context.Background(), &fakeEval{tab: tab, compiled: map[string]bool{}}); len(res) != 3 {
		t.Errorf("budget 3: %d evaluations", len(res))
	}
}

// countingEval cancels the run after stopAfter measurements, as a kill.
type countingEval struct {
	*fakeEval
	stopAfter int
	cancel    func()
}

func (c *countingEval) Measure(ctx context.Context, cfg lower.Config) (kgrt.Timing, error) {
	if len(c.measured) == c.stopAfter {
		c.cancel()
		return kgrt.Timing{}, ctx.Err()
	}
	return c.fakeEval.Measure(ctx, cfg)
}

// overlapEval blocks the measurement of the first batch after the
// default until the next batch's compile has begun.
type overlapEval struct {
	*fakeEval
	compiles, measures atomic.Int32
	second             chan struct{}
}

func (o *overlapEval) Compile(ctx context.Context, cands []lower.Config) []error {
	if o.compiles.Add(1) == 3 { // the default's, the first batch's, then this
		close(o.second)
	}
	return o.fakeEval.Compile(ctx, cands)
}

func (o *overlapEval) Measure(ctx context.Context, c lower.Config) (kgrt.Timing, error) {
	if o.measures.Add(1) == 2 { // the first point after the default
		select {
		case <-o.second:
		case <-time.After(5 * time.Second):
			return kgrt.Timing{}, fmt.Errorf("the next batch was not compiled while this one was measured")
		}
	}
	return o.fakeEval.Measure(ctx, c)
}

// TestLoopOverlapsCompileAndMeasure: the second batch compiles while the
// first is measured, and every point is still evaluated once.
func TestLoopOverlapsCompileAndMeasure(t *testing.T) {
	tab := small()
	o := &overlapEval{fakeEval: &fakeEval{tab: tab, compiled: map[string]bool{}}, second: make(chan struct{})}
	st, _ := New("exhaustive", tab.Space, 1)
	tu := &Tuner{Space: tab.Space, Strategy: st, Eval: o, Default: 0, Batch: 3}
	res, err := tu.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for _, r := range res {
		if r.Failure != nil {
			t.Errorf("%v", r)
		}
		seen[r.Point] = true
	}
	if len(res) != 9 || len(seen) != 9 {
		t.Errorf("%d results of %d points, want 9 of 9", len(res), len(seen))
	}
}

// TestLoopETA: with a time limit, the estimate of the time left is capped
// by it while evaluations remain, and is 0 once the budget's last is done
// (the limit's remainder is no time left to the search).
func TestLoopETA(t *testing.T) {
	tab := small()
	f := &fakeEval{tab: tab, compiled: map[string]bool{}}
	st, _ := New("exhaustive", tab.Space, 1)
	var progs []Progress
	tu := &Tuner{Space: tab.Space, Strategy: st, Eval: f, Default: 0, Batch: 1, Budget: 4, Time: time.Hour,
		Progress: func(p Progress) { progs = append(progs, p) }}
	if _, err := tu.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(progs) != 4 {
		t.Fatalf("%d progress reports, want 4", len(progs))
	}
	for _, p := range progs[:3] {
		if p.ETA <= 0 || p.ETA > time.Hour {
			t.Errorf("after %d of %d: ETA %v, want within (0, 1h]", p.Done, p.Total, p.ETA)
		}
	}
	if last := progs[3]; last.Done != last.Total || last.ETA != 0 {
		t.Errorf("after %d of %d: ETA %v, want 0", last.Done, last.Total, last.ETA)
	}
}
