package runtime

import (
	"math"
	"testing"

	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/tensor"
)

func vec(dt ir.DType, vs ...float64) *tensor.Tensor {
	t := tensor.New(dt, []int64{int64(len(vs))})
	for i, v := range vs {
		t.SetFloat(int64(i), v)
	}
	return t
}

func TestCompare(t *testing.T) {
	tol := Tolerance{Rtol: 1e-3}
	nan := math.NaN()
	cases := []struct {
		name      string
		got, want []float64
		bad, nans int64
	}{
		{"equal", []float64{1, 2, 3}, []float64{1, 2, 3}, 0, 0},
		// rms(want) = 2.16; element 0 may differ by 1e-3 * (1 + 2.16).
		{"within", []float64{1.003, 2, 3}, []float64{1, 2, 3}, 0, 0},
		{"outside", []float64{1.004, 2, 3}, []float64{1, 2, 3}, 1, 0},
		// A value near zero after cancellation is judged by the rms.
		{"cancellation", []float64{1e-4, 100, -100}, []float64{0, 100, -100}, 0, 0},
		{"nan poison", []float64{nan, 2, 3}, []float64{1, 2, 3}, 1, 1},
		{"nan both", []float64{nan, 2, 3}, []float64{nan, 2, 3}, 0, 0},
		{"inf sign", []float64{math.Inf(1), 2}, []float64{math.Inf(-1), 2}, 1, 0},
	}
	for _, c := range cases {
		_, m, err := Compare(vec(ir.F64, c.got...), vec(ir.F64, c.want...), tol)
		if err != nil {
			t.Fatal(err)
		}
		var bad, nans int64
		if m != nil {
			bad, nans = m.Bad, m.NaNs
		}
		if bad != c.bad || nans != c.nans {
			t.Errorf("%s: %d bad, %d NaNs; want %d, %d (%v)", c.name, bad, nans, c.bad, c.nans, m)
		}
	}
	// Integers match exactly.
	_, m, _ := Compare(vec(ir.I32, 1, 2, 4), vec(ir.I32, 1, 2, 3), ToleranceFor(ir.I32, 1))
	if m == nil || m.Bad != 1 || m.First != 2 {
		t.Errorf("i32 off by one passed: %v", m)
	}
}
