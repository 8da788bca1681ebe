package tune

import "math"

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
