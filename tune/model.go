package tune

import (
	"math"
	"slices"
)

// model is cost-model-guided search, after Ansor: a surrogate fitted to
// every point measured predicts the cost of each unmeasured candidate,
// and the strategy proposes the candidate it predicts fastest. It has no
// random warm-up: whatever is measured (in a real run, the default,
// measured first) seeds it, which matters where a launch's budget is a
// dozen evaluations. Only while nothing at all is measured (a search from
// scratch, whose first batch, and second while the first is measured,
// know no cost) does it draw random points, the same ones random search
// would.
//
// The surrogate predicts y = min(log(cost / fastest), modelCap), a
// failure counting as modelCap: times more than 65% above the fastest
// are all just slow. It is the sum of an additive model (one shrunken
// effect per parameter value, which carries "BK=32 is fast" across the
// space) and inverse-distance k-nearest-neighbour regression of what the
// additive model leaves (the interactions, near points measured). On the
// bf16 GEMM from scratch (20 seeds, batches of 1, evaluations to within
// 5% of the best; random search: 53.6), while this design was worked
// out: with uncapped log times, whose spills (up to 28495 us against a
// best of 411) swamp their neighbours' estimates, 71.3 evaluations; with
// the cap, 44.0; with a cap of 0.3, kNN alone took 87.0 and kNN on the
// additive model's residuals 39.4.
//
// Candidates are every fresh point of a space of at most modelEnumerate
// points, else the neighbours of the best points measured and random
// points. Every modelDiverse-th proposal is instead a diverse point, the
// farthest from all points measured or proposed of modelDiverseTries
// fresh random ones, so that the search leaves a basin the surrogate
// likes. There is no bonus for distance from what is measured: it drew
// the search to the space's corners, where extreme tiles are slow.
//
// Ties in the prediction (all candidates tie while one point is known)
// are broken at random, except for the first proposal of each batch when
// the run measured a default: that goes to the candidate nearest the
// best point measured, so that the search starts from the default's
// neighbours. The default is the template's heuristic choice, often near
// the best (each of the three spaces' defaults is within 1% of it); with
// a default drawn among the points 5-25% slower than the best, seeding
// from its neighbours brought the wgmma GEMM within 5% in 10.6
// evaluations instead of 12.0 (100 seeds). A random first point is no
// such prior: from scratch, seeding from it took softmax 4.5 evaluations
// instead of 3.9 (200 seeds). Seeding every proposal of a batch, not
// just the first, packed a batch of 16 around a slow default (depthwise
// convolution: 13.5 evaluations against random's 8.9, 100 seeds).
type model struct {
	base
	pending []int64   // proposed and not yet observed
	digits  [][]int   // of order's points
	first   bool      // the proposal being chosen is its batch's first
	given   bool      // a point was observed without being proposed: the default
	sur     surrogate // fitted to order, refitted when it grows
	fitted  int       // len(order) when sur was fitted
}

const (
	modelCap          = 0.5
	modelK            = 3
	modelShrink       = 1.0 // pseudo-observations at zero effect, per value
	modelSweeps       = 5
	modelEnumerate    = 4096
	modelDiverse      = 4
	modelDiverseTries = 4
)

func (m *model) Observe(i int64, cost float64) {
	if !m.seen[i] {
		m.given = true
	}
	if _, ok := m.costs[i]; !ok {
		m.digits = append(m.digits, m.s.Digits(i))
	}
	m.base.Observe(i, cost)
}

func (m *model) Next(n int) []int64 {
	var out []int64
	m.pending = slices.DeleteFunc(m.pending, func(i int64) bool {
		_, ok := m.costs[i]
		return ok
	})
	for len(out) < n {
		m.first = len(out) == 0
		i := m.pick()
		if i < 0 {
			break
		}
		out = m.propose(out, i)
		m.pending = append(m.pending, i)
	}
	return out
}

// pick chooses the next point to propose, or -1 when none is left.
func (m *model) pick() int64 {
	if len(m.order) == 0 {
		return m.random()
	}
	if (len(m.order)+len(m.pending))%modelDiverse == modelDiverse-1 {
		if i := m.diverse(); i >= 0 {
			return i
		}
	}
	if m.fitted != len(m.order) {
		m.sur = m.fit()
		m.fitted = len(m.order)
	}
	anchor := m.order[0]
	if best := m.best(); len(best) > 0 {
		anchor = best[0]
	}
	ad := m.s.Digits(anchor)
	cands := m.candidates()
	m.rng.Shuffle(len(cands), func(a, b int) { cands[a], cands[b] = cands[b], cands[a] })
	pick, pickY, pickD := int64(-1), math.Inf(1), math.Inf(1)
	for _, i := range cands {
		d := m.s.Digits(i)
		y := m.sur.predict(d)
		if y > pickY {
			continue
		}
		near := 0.0
		if m.first && m.given {
			near = m.dist(ad, d)
		}
		if y < pickY || near < pickD {
			pick, pickY, pickD = i, y, near
		}
	}
	if pick < 0 {
		return m.random()
	}
	return pick
}

// candidates returns the fresh points the surrogate ranks: all of them
// in a small space, else the one-step and random neighbours of the best
// eight points measured and random points.
func (m *model) candidates() []int64 {
	var out []int64
	if m.s.Size() <= modelEnumerate {
		for i := range m.s.Size() {
			if m.fresh(i) {
				out = append(out, i)
			}
		}
		return out
	}
	set := map[int64]bool{}
	best := m.best()
	for _, b := range best[:min(len(best), 8)] {
		d := m.s.Digits(b)
		for k := range d {
			for _, step := range []int{-1, 1} {
				if v := d[k] + step; v >= 0 && v < len(m.s.Params[k].Values) {
					e := slices.Clone(d)
					e[k] = v
					if j := m.s.Index(e); m.fresh(j) {
						set[j] = true
					}
				}
			}
		}
		for range 16 {
			if j := m.neighbour(b); m.fresh(j) {
				set[j] = true
			}
		}
	}
	for range 64 {
		if j := m.rng.Int64N(m.s.Size()); m.fresh(j) {
			set[j] = true
		}
	}
	for j := range set {
		out = append(out, j)
	}
	slices.Sort(out) // map order is random; the shuffle after is seeded
	return out
}

// diverse returns, of modelDiverseTries fresh random points, the one
// farthest from every point measured or proposed, or -1 when it finds
// none.
func (m *model) diverse() int64 {
	pick, pickD, found := int64(-1), -1.0, 0
	for range neighbourTries {
		j := m.rng.Int64N(m.s.Size())
		if !m.fresh(j) {
			continue
		}
		dj := m.s.Digits(j)
		near := math.Inf(1)
		for _, d := range m.digits {
			near = min(near, m.dist(dj, d))
		}
		for _, p := range m.pending {
			near = min(near, m.dist(dj, m.s.Digits(p)))
		}
		if near > pickD {
			pick, pickD = j, near
		}
		if found++; found == modelDiverseTries {
			break
		}
	}
	return pick
}

// dist is the distance between two points' value indices: the sum over
// parameters of their difference, each divided by its range.
func (m *model) dist(a, b []int) float64 {
	d := 0.0
	for k := range a {
		if r := len(m.s.Params[k].Values) - 1; r > 0 {
			d += math.Abs(float64(a[k]-b[k])) / float64(r)
		}
	}
	return d
}

// surrogate is the model's prediction of y (see model): the mean, an
// effect per parameter value, and the residuals of the points measured
// for the nearest-neighbour part.
type surrogate struct {
	m      *model
	mean   float64
	effect [][]float64 // [parameter][value index]
	resid  []float64   // per point of m.order
}

// fit fits the surrogate to the points measured: the additive part by
// backfitting, each value's effect the mean residual of the points with
// that value shrunk toward zero by modelShrink pseudo-points, so that a
// value measured once moves the prediction by half its residual.
func (m *model) fit() surrogate {
	lo := math.Inf(1)
	for _, j := range m.order {
		lo = min(lo, m.costs[j])
	}
	y := make([]float64, len(m.order))
	s := surrogate{m: m, effect: make([][]float64, len(m.s.Params))}
	for n, j := range m.order {
		y[n] = modelCap
		if c := m.costs[j]; !math.IsInf(c, 1) {
			y[n] = min(math.Log(c/lo), modelCap)
		}
		s.mean += y[n]
	}
	s.mean /= float64(len(y))
	for k, p := range m.s.Params {
		s.effect[k] = make([]float64, len(p.Values))
	}
	for range modelSweeps {
		for k := range s.effect {
			sum := make([]float64, len(s.effect[k]))
			count := make([]float64, len(s.effect[k]))
			for n, d := range m.digits {
				r := y[n] - s.additive(d) + s.effect[k][d[k]]
				sum[d[k]] += r
				count[d[k]]++
			}
			for v := range sum {
				s.effect[k][v] = sum[v] / (count[v] + modelShrink)
			}
		}
	}
	s.resid = make([]float64, len(y))
	for n, d := range m.digits {
		s.resid[n] = y[n] - s.additive(d)
	}
	return s
}

func (s *surrogate) additive(d []int) float64 {
	a := s.mean
	for k, v := range d {
		a += s.effect[k][v]
	}
	return a
}

// predict is the surrogate at the point with value indices d: the
// additive part plus the residuals of the modelK nearest points
// measured, weighted by 1 / (distance + 0.05).
func (s *surrogate) predict(d []int) float64 {
	type nb struct{ d, r float64 }
	var near [modelK]nb
	n := 0
	for j, dj := range s.m.digits {
		x := nb{s.m.dist(d, dj), s.resid[j]}
		// Insertion into the modelK nearest so far, the earlier point
		// first on a tie.
		k := min(n, modelK-1)
		if n == modelK && x.d >= near[k].d {
			continue
		}
		for ; k > 0 && near[k-1].d > x.d; k-- {
			near[k] = near[k-1]
		}
		near[k] = x
		n = min(n+1, modelK)
	}
	var sum, wsum float64
	for _, x := range near[:n] {
		w := 1 / (x.d + 0.05)
		sum += w * x.r
		wsum += w
	}
	return s.additive(d) + sum/wsum
}
