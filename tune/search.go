package tune

import (
	"math"
	"slices"
)

// neighbourTries bounds the attempts to find a fresh neighbour before a
// strategy falls back to a random point.
const neighbourTries = 64

// anneal is simulated annealing: it proposes fresh neighbours of the
// current point and moves to one when it is faster, or slower by a
// relative margin d with probability exp(-d / T). The temperature falls
// as 1 / (1 + evaluations / 8) from T0 = 0.3, so that early on a point
// 30% slower is taken a third of the time, and late almost never. When
// the current point has no fresh neighbour it restarts from the best
// point seen, then from a random one.
type anneal struct {
	base
	cur     int64
	curCost float64
}

func (a *anneal) temperature() float64 { return 0.3 / (1 + float64(len(a.order))/8) }

func (a *anneal) Next(n int) []int64 {
	var out []int64
	for len(out) < n {
		var i int64 = -1
		if a.cur >= 0 {
			i = a.freshNear(a.cur, neighbourTries)
			if i < 0 {
				if best := a.best(); len(best) > 0 && best[0] != a.cur {
					a.cur, a.curCost = best[0], a.costs[best[0]]
					continue
				}
			}
		}
		if i < 0 {
			i = a.random()
		}
		if i < 0 {
			break
		}
		out = a.propose(out, i)
	}
	return out
}

func (a *anneal) Observe(i int64, cost float64) {
	a.base.Observe(i, cost)
	if math.IsInf(cost, 1) {
		return
	}
	if a.cur < 0 || cost < a.curCost {
		a.cur, a.curCost = i, cost
		return
	}
	d := cost/a.curCost - 1
	if a.rng.Float64() < math.Exp(-d/a.temperature()) {
		a.cur, a.curCost = i, cost
	}
}

// genetic keeps the best popSize points measured as its population and
// breeds children from it: two parents, each the better of two drawn at
// random (tournament), crossed parameter by parameter, then mutated with
// probability 1/2 by a neighbour move. Until the population is full it
// proposes random points.
type genetic struct{ base }

const popSize = 12

func (g *genetic) Next(n int) []int64 {
	var out []int64
	for len(out) < n {
		pop := g.best()
		var i int64 = -1
		if len(pop) >= popSize/2 {
			pop = pop[:min(len(pop), popSize)]
			for range neighbourTries {
				child := g.cross(g.tournament(pop), g.tournament(pop))
				if g.rng.IntN(2) == 0 {
					child = g.neighbour(child)
				}
				if g.fresh(child) {
					i = child
					break
				}
			}
		}
		if i < 0 {
			i = g.random()
		}
		if i < 0 {
			break
		}
		out = g.propose(out, i)
	}
	return out
}

func (g *genetic) tournament(pop []int64) int64 {
	x, y := pop[g.rng.IntN(len(pop))], pop[g.rng.IntN(len(pop))]
	if g.costs[y] < g.costs[x] {
		return y
	}
	return x
}

func (g *genetic) cross(x, y int64) int64 {
	dx, dy := g.s.Digits(x), g.s.Digits(y)
	for j := range dx {
		if g.rng.IntN(2) == 0 {
			dx[j] = dy[j]
		}
	}
	return g.s.Index(dx)
}

// model is cost-model-guided evolution, after Ansor: a surrogate
// predicts each unmeasured candidate's cost, and the batch is the
// candidates the surrogate ranks best. The surrogate is k-nearest-
// neighbour regression of log cost over the points measured (distance:
// the sum over parameters of the difference of value indices, each
// divided by its range); a failed point counts as twice the slowest
// time, so failures repel the search from their region. Candidates are
// neighbours of the best points measured and random points; each is
// scored by its predicted log cost less an exploration bonus of 0.1 per
// unit of distance to the nearest measured point. Until eight points are
// measured it proposes random points.
type model struct{ base }

const (
	modelWarmup  = 8
	modelK       = 3
	modelExplore = 0.1
)

func (m *model) Next(n int) []int64 {
	var out []int64
	if len(m.order) < modelWarmup {
		for len(out) < n {
			i := m.random()
			if i < 0 {
				return out
			}
			out = m.propose(out, i)
		}
		return out
	}
	// Candidates: neighbours of the best eight, and random points.
	cands := map[int64]bool{}
	best := m.best()
	for _, b := range best[:min(len(best), 8)] {
		for range 16 {
			if j := m.neighbour(b); m.fresh(j) {
				cands[j] = true
			}
		}
	}
	for range 32 {
		j := m.rng.Int64N(m.s.Size())
		if m.fresh(j) {
			cands[j] = true
		}
	}
	type scored struct {
		i     int64
		score float64
	}
	var list []scored
	for i := range cands {
		pred, dist := m.predict(i)
		list = append(list, scored{i, pred - modelExplore*dist})
	}
	slices.SortFunc(list, func(a, b scored) int {
		if c := compareFloat(a.score, b.score); c != 0 {
			return c
		}
		return compareInt(a.i, b.i)
	})
	for _, c := range list {
		if len(out) == n {
			break
		}
		out = m.propose(out, c.i)
	}
	for len(out) < n {
		i := m.random()
		if i < 0 {
			break
		}
		out = m.propose(out, i)
	}
	return out
}

// predict returns the surrogate's log cost at i and the distance from i
// to the nearest measured point.
func (m *model) predict(i int64) (float64, float64) {
	worst := 0.0
	for _, j := range m.order {
		if c := m.costs[j]; !math.IsInf(c, 1) {
			worst = max(worst, c)
		}
	}
	if worst == 0 {
		worst = 1
	}
	di := m.s.Digits(i)
	type nb struct{ d, logc float64 }
	var nbs []nb
	for _, j := range m.order {
		dj := m.s.Digits(j)
		d := 0.0
		for k := range di {
			if r := len(m.s.Params[k].Values) - 1; r > 0 {
				d += math.Abs(float64(di[k]-dj[k])) / float64(r)
			}
		}
		c := m.costs[j]
		if math.IsInf(c, 1) {
			c = 2 * worst
		}
		nbs = append(nbs, nb{d, math.Log(c)})
	}
	slices.SortStableFunc(nbs, func(a, b nb) int { return compareFloat(a.d, b.d) })
	var sum, wsum float64
	for _, x := range nbs[:min(modelK, len(nbs))] {
		w := 1 / (x.d + 0.05)
		sum += w * x.logc
		wsum += w
	}
	return sum / wsum, nbs[0].d
}
