package tune

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Strategy chooses which points of a space to measure next. The loop asks
// for a batch (as many points as it compiles at once), measures them and
// reports each cost back before asking again. Strategies are
// deterministic given their seed and the costs they are told.
type Strategy interface {
	// Next proposes up to n valid points that were neither proposed nor
	// observed before; none when the strategy has nothing left to try.
	Next(n int) []int64
	// Observe reports point i's cost (a time, lower is better), or +Inf
	// when it failed. Points observed without being proposed (the
	// default, measured first as the baseline) are never proposed again.
	Observe(i int64, cost float64)
}

// Strategies names the strategies New knows, for help texts and
// simulation.
var Strategies = []string{"exhaustive", "random", "anneal", "genetic", "model"}

// New returns the strategy called name over space s, seeded with seed.
func New(name string, s *Space, seed uint64) (Strategy, error) {
	b := newBase(s, seed)
	switch name {
	case "exhaustive":
		return &exhaustive{base: b}, nil
	case "random":
		return &randomSearch{base: b}, nil
	case "anneal":
		return &anneal{base: b, cur: -1}, nil
	case "genetic":
		return &genetic{base: b}, nil
	case "model":
		return &model{base: b}, nil
	}
	return nil, fmt.Errorf("unknown strategy %q (have: exhaustive, random, anneal, genetic, model)", name)
}

// base is what every strategy keeps: the space, its random source, the
// points already proposed or observed, and the costs observed.
type base struct {
	s     *Space
	rng   *rand.Rand
	seen  map[int64]bool
	costs map[int64]float64
	order []int64 // observed points, in order
	// perm is a sparse Fisher-Yates shuffle of [0, Size): draws points
	// without replacement, holding only the positions swapped so far.
	perm  map[int64]int64
	drawn int64
}

func newBase(s *Space, seed uint64) base {
	return base{s: s, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), seen: map[int64]bool{}, costs: map[int64]float64{}, perm: map[int64]int64{}}
}

func (b *base) Observe(i int64, cost float64) {
	if _, ok := b.costs[i]; !ok {
		b.order = append(b.order, i)
	}
	b.seen[i] = true
	b.costs[i] = cost
}

// fresh reports whether i may be proposed: valid, and neither proposed
// nor observed.
func (b *base) fresh(i int64) bool {
	return !b.seen[i] && b.s.Check(i) == nil
}

// propose marks i proposed and returns it.
func (b *base) propose(out []int64, i int64) []int64 {
	b.seen[i] = true
	return append(out, i)
}

// random draws the next fresh point of a random permutation of the
// space, or -1 when every point has been drawn.
func (b *base) random() int64 {
	n := b.s.Size()
	for b.drawn < n {
		j := b.drawn + b.rng.Int64N(n-b.drawn)
		at := func(k int64) int64 {
			if v, ok := b.perm[k]; ok {
				return v
			}
			return k
		}
		vi, vj := at(b.drawn), at(j)
		b.perm[j] = vi
		delete(b.perm, b.drawn)
		b.drawn++
		if b.fresh(vj) {
			return vj
		}
	}
	return -1
}

// best returns the observed points with finite cost, fastest first (ties
// by point, so that the order is deterministic).
func (b *base) best() []int64 {
	var pts []int64
	for _, i := range b.order {
		if !math.IsInf(b.costs[i], 1) {
			pts = append(pts, i)
		}
	}
	slices.SortStableFunc(pts, func(x, y int64) int {
		if c := compareFloat(b.costs[x], b.costs[y]); c != 0 {
			return c
		}
		return compareInt(x, y)
	})
	return pts
}

// neighbour changes one or two parameters of point i by one step (or,
// one time in five, to any value), the moves of annealing and mutation.
func (b *base) neighbour(i int64) int64 {
	d := b.s.Digits(i)
	moves := 1 + b.rng.IntN(2)
	for range moves {
		j := b.rng.IntN(len(d))
		n := len(b.s.Params[j].Values)
		if n < 2 {
			continue
		}
		if b.rng.IntN(5) == 0 {
			d[j] = b.rng.IntN(n)
		} else if d[j] == 0 || (d[j] < n-1 && b.rng.IntN(2) == 0) {
			d[j]++
		} else {
			d[j]--
		}
	}
	return b.s.Index(d)
}

// freshNear tries to find a fresh point near i, with tries attempts.
func (b *base) freshNear(i int64, tries int) int64 {
	for range tries {
		if j := b.neighbour(i); b.fresh(j) {
			return j
		}
	}
	return -1
}

func compareFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func compareInt(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// exhaustive visits every valid point in index order.
type exhaustive struct {
	base
	next int64
}

func (e *exhaustive) Next(n int) []int64 {
	var out []int64
	for ; e.next < e.s.Size() && len(out) < n; e.next++ {
		if e.fresh(e.next) {
			out = e.propose(out, e.next)
		}
	}
	return out
}

// randomSearch visits valid points in a random order, without repeats.
type randomSearch struct{ base }

func (r *randomSearch) Next(n int) []int64 {
	var out []int64
	for len(out) < n {
		i := r.random()
		if i < 0 {
			break
		}
		out = r.propose(out, i)
	}
	return out
}
