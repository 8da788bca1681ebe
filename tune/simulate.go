package tune

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
)

// Table is a measured space: every point's cost, for replaying a tuning
// run without a GPU.
type Table struct {
	Name    string // kernel, shape, device and launch, for reports
	Space   *Space
	Costs   map[int64]float64 // +Inf for a failure; points not in it are invalid
	Default int64             // -1 when not recorded
}

// Best is the lowest cost of the table.
func (t *Table) Best() float64 {
	best := math.Inf(1)
	for _, c := range t.Costs {
		best = min(best, c)
	}
	return best
}

// Tables groups evaluation records into measured spaces: one per kernel,
// shape, device, target, toolchain, templates, launch searched and
// configuration of the other launches. A space's parameters and values are
// those its records hold; points without a record are taken to be
// outside the space (which is exact for a space measured exhaustively).
func Tables(recs []Record) []*Table {
	type group struct {
		name string
		recs []Record
	}
	groups := map[string]*group{}
	var order []string
	for _, r := range recs {
		if r.Kind != KindEval || r.Launch < 0 || r.Launch >= len(r.Configs) {
			continue
		}
		others := slices.Clone(r.Configs)
		others[r.Launch] = "*"
		k := strings.Join([]string{r.Hash, r.Shape, r.Device.Name, r.Target, r.Toolchain, strings.Join(r.Templates, "+"), fmt.Sprint(r.Launch), strings.Join(others, "; ")}, "|")
		g := groups[k]
		if g == nil {
			g = &group{name: fmt.Sprintf("%s (%s) on %s, launch %d (%s)", r.Kernel, r.Shape, r.Device.Name, r.Launch, r.Templates[r.Launch])}
			groups[k] = g
			order = append(order, k)
		}
		g.recs = append(g.recs, r)
	}
	var tables []*Table
	for _, k := range order {
		g := groups[k]
		values := map[string]map[int64]bool{}
		var cfgs []lower.Config
		for _, r := range g.recs {
			c, err := ParseConfig(r.Configs[r.Launch])
			if err != nil {
				continue
			}
			cfgs = append(cfgs, c)
			for name, v := range c {
				if values[name] == nil {
					values[name] = map[int64]bool{}
				}
				values[name][v] = true
			}
		}
		s := &Space{}
		for _, name := range slices.Sorted(maps.Keys(values)) {
			s.Params = append(s.Params, Param{Name: name, Values: slices.Sorted(maps.Keys(values[name]))})
		}
		t := &Table{Name: g.name, Space: s, Costs: map[int64]float64{}, Default: -1}
		for i, r := range g.recs {
			p, ok := s.IndexOf(cfgs[i])
			if !ok {
				continue
			}
			cost := math.Inf(1)
			if r.Time != nil {
				cost = r.Time.MedianUS
			}
			t.Costs[p] = cost // the latest record of a point wins
			if r.Default {
				t.Default = p
			}
		}
		s.Valid = func(c lower.Config) error {
			if p, ok := s.IndexOf(c); ok {
				if _, ok := t.Costs[p]; ok {
					return nil
				}
			}
			return fmt.Errorf("not measured")
		}
		tables = append(tables, t)
	}
	return tables
}

// tableEval answers a tuner's compiles and measurements from a table.
type tableEval struct{ t *Table }

func (e tableEval) Compile(_ context.Context, cands []lower.Config) []error {
	return make([]error, len(cands))
}

func (e tableEval) Measure(_ context.Context, c lower.Config) (kgrt.Timing, error) {
	p, _ := e.t.Space.IndexOf(c)
	cost := e.t.Costs[p]
	if math.IsInf(cost, 1) {
		return kgrt.Timing{}, &kgrt.Failure{Kind: kgrt.LaunchFailure, Msg: "failed when measured"}
	}
	return kgrt.Timing{MedianUS: cost, P20US: cost, P80US: cost}, nil
}

// SimResult is how one strategy did on one table over several seeds.
type SimResult struct {
	Strategy string
	// Evals is, per seed, the evaluations (the default's included) until
	// one came within Within of the best cost; 0 when none did within the
	// budget.
	Evals []int
	// Mean is the mean of Evals over the seeds that got there; Reached
	// counts them.
	Mean    float64
	Reached int
}

// Within is the margin simulation asks of a strategy: within 5% of the
// best cost.
const Within = 0.05

// Simulate replays strategy on t for each seed 1..seeds, proposing batch
// points at a time (the compile parallelism of a real run) with at most
// budget evaluations (0: the whole space), through the same loop as a
// real run: the default configuration first, unless scratch, which
// compares the strategies' own searches where the default is already
// close to the best.
func Simulate(t *Table, strategy string, seeds, batch, budget int, scratch bool) (SimResult, error) {
	start := func(int) int64 { return t.Default }
	if scratch {
		start = func(int) int64 { return -1 }
	}
	return simulate(t, strategy, seeds, batch, budget, start, Within)
}

// simulate is Simulate with the point measured first for each seed
// (start, -1 for none) and the margin (within) as parameters, for tests
// that ask what a strategy makes of a default far from the best.
func simulate(t *Table, strategy string, seeds, batch, budget int, start func(seed int) int64, within float64) (SimResult, error) {
	res := SimResult{Strategy: strategy}
	goal := t.Best() * (1 + within)
	sum := 0
	for seed := 1; seed <= seeds; seed++ {
		st, err := New(strategy, t.Space, uint64(seed))
		if err != nil {
			return res, err
		}
		n := 0
		ctx, stop := context.WithCancel(context.Background())
		tu := &Tuner{Space: t.Space, Strategy: st, Eval: tableEval{t}, Default: start(seed), Budget: budget, Batch: batch}
		tu.Progress = func(p Progress) {
			if n == 0 && p.Last.Cost() <= goal {
				n = p.Done
				stop() // the rest of the run cannot change n
			}
		}
		_, err = tu.Run(ctx)
		stop()
		if err != nil && ctx.Err() == nil {
			return res, err
		}
		res.Evals = append(res.Evals, n)
		if n > 0 {
			res.Reached++
			sum += n
		}
	}
	if res.Reached > 0 {
		res.Mean = float64(sum) / float64(res.Reached)
	}
	return res, nil
}
