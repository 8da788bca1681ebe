package tune

import (
	"context"
	"errors"
	"testing"

	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
)

func TestConfirmInterleaves(t *testing.T) {
	fin := []lower.Config{{"X": 1}, {"X": 2}, {"X": 3}}
	var order []int64
	// X=3 fails on its second timing and is out after it.
	calls := map[int64]int{}
	times := map[int64][]float64{1: {10, 12, 11}, 2: {20, 20, 20}}
	got := Confirm(context.Background(), fin, 3, func(_ context.Context, c lower.Config) (kgrt.Timing, error) {
		order = append(order, c["X"])
		calls[c["X"]]++
		if c["X"] == 3 && calls[3] == 2 {
			return kgrt.Timing{}, errors.New("crash")
		}
		return kgrt.Timing{MedianUS: append(times[c["X"]], 30, 30, 30)[calls[c["X"]]-1]}, nil
	})
	want := []int64{1, 2, 3, 1, 2, 3, 1, 2}
	if len(order) != len(want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("order %v, want %v", order, want)
		}
	}
	// X=1: rounds 10, 12, 11: median 11, noise (12 - 10) / 2 = 1.
	if got[0].Median != 11 || got[0].Noise != 1 {
		t.Errorf("X=1: median %g noise %g, want 11 and 1", got[0].Median, got[0].Noise)
	}
	if got[2].Err == nil {
		t.Error("X=3 failed and should be out")
	}
	if w := Winner(got, nil); w != 0 {
		t.Errorf("winner %d, want 0", w)
	}
}

func TestWinnerTieRule(t *testing.T) {
	c := func(bm int64, med, noise float64) Confirmed {
		return Confirmed{Config: lower.Config{"BM": bm, "BN": 64}, Rounds: []float64{med}, Median: med, Noise: noise}
	}
	cases := []struct {
		name string
		fin  []Confirmed
		def  lower.Config
		want int64 // the winner's BM
	}{
		// 100 vs 100.5: within 1% of 100: tie; no default among them:
		// the smallest config, BM=64 (numerically, though "128" < "64"
		// as text).
		{"tie-smallest", []Confirmed{c(128, 100, 0.1), c(64, 100.5, 0.1)}, nil, 64},
		// The same tie with BM=128 the default: the default.
		{"tie-default", []Confirmed{c(64, 100.5, 0.1), c(128, 100, 0.1)}, lower.Config{"BM": 128, "BN": 64}, 128},
		// 100 vs 103 with noise 0.5: a real difference: the fastest.
		{"real", []Confirmed{c(64, 103, 0.5), c(128, 100, 0.5)}, lower.Config{"BM": 64, "BN": 64}, 128},
		// 100 vs 103 but the slower one's rounds spread by 4: a tie.
		{"noisy", []Confirmed{c(256, 100, 0.5), c(64, 103, 4)}, nil, 64},
	}
	for _, tc := range cases {
		w := Winner(tc.fin, tc.def)
		if w < 0 || tc.fin[w].Config["BM"] != tc.want {
			t.Errorf("%s: winner %d, want BM=%d", tc.name, w, tc.want)
		}
		// The order of the finalists does not matter.
		rev := []Confirmed{tc.fin[1], tc.fin[0]}
		if w2 := Winner(rev, tc.def); rev[w2].Config["BM"] != tc.want {
			t.Errorf("%s reversed: winner BM=%d, want %d", tc.name, rev[w2].Config["BM"], tc.want)
		}
	}
	if w := Winner([]Confirmed{{Config: lower.Config{"BM": 1}, Err: errors.New("x")}}, nil); w != -1 {
		t.Errorf("all failed: winner %d, want -1", w)
	}
}
