package ir

import (
	"math"
	"testing"
)

// TestRoundTF32 checks tf32 rounding on hand-computed cases: the tf32 ulp
// of 1 is 2^-10, so 1 + 2^-11 is a tie (away from zero), 1 + 2^-12 rounds
// down, 1 + 3 * 2^-12 rounds up.
func TestRoundTF32(t *testing.T) {
	p := func(e int) float32 { return float32(math.Ldexp(1, e)) }
	cases := []struct{ in, want float32 }{
		{1, 1},
		{1 + p(-11), 1 + p(-10)},
		{-(1 + p(-11)), -(1 + p(-10))},
		{1 + p(-12), 1},
		{1 + 3*p(-12), 1 + p(-10)},
		{3.140625, 3.140625},
		{math.MaxFloat32, float32(math.Inf(1))},
		{float32(math.Inf(-1)), float32(math.Inf(-1))},
		{0, 0},
	}
	for _, c := range cases {
		if got := RoundTF32(c.in); got != c.want {
			t.Errorf("RoundTF32(%g) = %g, want %g", c.in, got, c.want)
		}
	}
	if got := RoundTF32(float32(math.NaN())); got == got {
		t.Errorf("RoundTF32(NaN) = %g, want NaN", got)
	}
}
