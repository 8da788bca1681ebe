package tune

import (
	"slices"
	"testing"
)

// TestModelSeedsFromDefault: with only the default measured, the first
// point the model proposes, alone or in a batch, is a neighbour of the
// default (one parameter one value away), for every seed. The model used
// to spend its first eight proposals on random points, of which few are
// near anything.
func TestModelSeedsFromDefault(t *testing.T) {
	tab := synthetic()
	def := tab.Space.Digits(tab.Default)
	for seed := range uint64(20) {
		for _, batch := range []int{1, 8} {
			st, err := New("model", tab.Space, seed)
			if err != nil {
				t.Fatal(err)
			}
			st.Observe(tab.Default, tab.Costs[tab.Default])
			pts := st.Next(batch)
			if len(pts) != batch {
				t.Fatalf("seed %d: %d points proposed, want %d", seed, len(pts), batch)
			}
			steps := 0
			for k, v := range tab.Space.Digits(pts[0]) {
				steps += max(v-def[k], def[k]-v)
			}
			if steps != 1 {
				t.Errorf("seed %d, batch %d: first proposal %v is %d steps from the default %v, want 1", seed, batch, tab.Space.Digits(pts[0]), steps, def)
			}
		}
	}
}

// TestModelFromScratchDrawsRandomPoints: with nothing measured there is
// nothing to seed from, and the model's first batch is random search's,
// so that from scratch it does no worse than random before it knows a
// cost.
func TestModelFromScratchDrawsRandomPoints(t *testing.T) {
	tab := synthetic()
	m, _ := New("model", tab.Space, 5)
	r, _ := New("random", tab.Space, 5)
	if a, b := m.Next(16), r.Next(16); !slices.Equal(a, b) {
		t.Errorf("model's first batch %v, random's %v", a, b)
	}
}

// TestModelSmallBudget: on the synthetic space, in batches of 16 within
// 40 evaluations (two batches and a half), the model reaches the
// optimum with at least 4 of 10 seeds, from scratch and with the default
// first. The model with eight random warm-up points reached it with none
// (0 of 10 both ways; now 7 and 5 of 10): its first surrogate-guided
// batch came after 48.
func TestModelSmallBudget(t *testing.T) {
	tab := synthetic()
	for _, scratch := range []bool{true, false} {
		r, err := Simulate(tab, "model", 10, 16, 40, scratch)
		if err != nil {
			t.Fatal(err)
		}
		if r.Reached < 4 {
			t.Errorf("scratch %v: the optimum within 40 evaluations with %d of 10 seeds, want at least 4 (%v)", scratch, r.Reached, r.Evals)
		}
	}
}
