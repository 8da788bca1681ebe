package runtime

import (
	"math"
	"testing"

	"kgen.dev/kgen/frontend"
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
		name           string
		got, want, alt []float64 // alt: CompareEither's, when not nil
		bad, nans      int64
	}{
		{"equal", []float64{1, 2, 3}, []float64{1, 2, 3}, nil, 0, 0},
		// rms(want) = 2.16; element 0 may differ by 1e-3 * (1 + 2.16).
		{"within", []float64{1.003, 2, 3}, []float64{1, 2, 3}, nil, 0, 0},
		{"outside", []float64{1.004, 2, 3}, []float64{1, 2, 3}, nil, 1, 0},
		// A value near zero after cancellation is judged by the rms.
		{"cancellation", []float64{1e-4, 100, -100}, []float64{0, 100, -100}, nil, 0, 0},
		{"nan poison", []float64{nan, 2, 3}, []float64{1, 2, 3}, nil, 1, 1},
		{"nan both", []float64{nan, 2, 3}, []float64{nan, 2, 3}, nil, 0, 0},
		{"inf sign", []float64{math.Inf(1), 2}, []float64{math.Inf(-1), 2}, nil, 1, 0},
		// An element may match alt (the evaluation rounded to the
		// declared types) instead, on want's scale; a NaN passes only
		// where want has one. floor(sigmoid(24)): 1 in f32, 0 in f64.
		{"a jump", []float64{1, 1}, []float64{0, 0}, []float64{1, 1}, 0, 0},
		{"neither", []float64{2, 1}, []float64{0, 0}, []float64{1, 1}, 1, 0},
		{"want, not alt", []float64{0, 1}, []float64{0, 0}, []float64{1, 1}, 0, 0},
		{"overflow", []float64{math.Inf(1), 3}, []float64{3e38, 3}, []float64{math.Inf(1), 3}, 0, 0},
		{"nan in alt", []float64{nan, 3}, []float64{1, 3}, []float64{nan, 3}, 1, 1},
		{"nan in want", []float64{nan, 3}, []float64{nan, 3}, []float64{1, 3}, 0, 0},
	}
	for _, c := range cases {
		var alt *tensor.Tensor
		if c.alt != nil {
			alt = vec(ir.F64, c.alt...)
		}
		_, m, err := CompareEither(vec(ir.F64, c.got...), vec(ir.F64, c.want...), alt, tol)
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
	if _, _, err := CompareEither(vec(ir.F32, 1, 2), vec(ir.F32, 1, 2), vec(ir.F32, 1), tol); err == nil {
		t.Error("an alternative of another length was compared")
	}
	// Integers match exactly.
	_, m, _ := Compare(vec(ir.I32, 1, 2, 4), vec(ir.I32, 1, 2, 3), ToleranceFor(ir.I32, 1))
	if m == nil || m.Bad != 1 || m.First != 2 {
		t.Errorf("i32 off by one passed: %v", m)
	}
}

// TestCompareChunks compares a tensor long enough to be compared in
// several parallel chunks: the counts add up over the chunks, the first
// bad element is the lowest index, and the rms (here 1: every element of
// want is ±1) is taken over all of them.
func TestCompareChunks(t *testing.T) {
	n := 3*tensor.ChunkLen + 5
	want := tensor.New(ir.F32, []int64{int64(n)})
	for i := range int64(n) {
		want.SetFloat(i, float64(1-2*(i%2)))
	}
	got := tensor.New(ir.F32, []int64{int64(n)})
	copy(got.Data, want.Data)
	bad1, nan, bad2 := int64(tensor.ChunkLen+7), int64(2*tensor.ChunkLen+3), int64(3*tensor.ChunkLen+2)
	got.SetFloat(bad2, 5) // error 4 / (1 + 1) = 2
	got.SetFloat(nan, math.NaN())
	got.SetFloat(bad1, 1.25) // want -1 (odd index): error 2.25 / 2
	e, m, err := Compare(got, want, Tolerance{Rtol: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	if m == nil || m.Bad != 3 || m.NaNs != 1 || m.First != bad1 || m.Got != 1.25 || m.Want != -1 || e != 2 {
		t.Errorf("max error %g, mismatch %+v; want 3 bad, 1 NaN, first %d (got 1.25, want -1), max error 2", e, m, bad1)
	}
}

// TestTolerancesFloatToInt: an integer output converted from float
// arithmetic, directly or through an output it reads, may be off by one;
// one computed from integers alone must match exactly.
func TestTolerancesFloatToInt(t *testing.T) {
	prog, diags := frontend.CheckSource("q.kg", `
kernel q<R, D>(X: f32[R, D], N: i32[R, D]) -> (S: f32[R], Q: u8[R, D], C: i32[R, D]) {
  S[r] = max[d](abs(X[r, d])) / 127
  Q[r, d] = u8(clamp(floor(X[r, d] / S[r] + 0.5) + 128, 0, 255))
  C[r, d] = N[r, d] * 2
}
`)
	if diags.HasErrors() {
		t.Fatal(diags.Diags[0].Msg)
	}
	k := prog.Kernel("q")
	env := &ir.Env{Kernel: k, Dims: map[*ir.Dim]int64{k.Dims[0]: 4, k.Dims[1]: 100}}
	tols := Tolerances(k, env)
	if tols[0].Rtol != ToleranceFor(ir.F32, 100).Rtol {
		t.Errorf("S: %+v, want the f32 tolerance for 100 terms", tols[0])
	}
	if tols[1].Atol != 1 {
		t.Errorf("Q: %+v, want off by one allowed", tols[1])
	}
	if tols[2] != (Tolerance{}) {
		t.Errorf("C: %+v, want exact", tols[2])
	}
}

// TestTolerancesComputeType: an output is judged by the least precise
// float type its value was rounded to, its own or one it was computed in
// (difftest's reproducer testsuite/corpus/emulate-s9217.kg: an f64 output
// of an f32 sum was held to f64's tolerance), through what it reads;
// exact widening keeps the output's own.
func TestTolerancesComputeType(t *testing.T) {
	prog, diags := frontend.CheckSource("p.kg", `
kernel p<R, D>(X: f32[R, D], Z: f64[R, D]) -> (S: f64[R], W: f64[R, D], V: f64[R], H: f32[R, D], M: f64[R, D]) {
  S[r] = sum[d](X[r, d])
  W[r, d] = f64(X[r, d]) * 2.0
  V[r] = sum[d](Z[r, d])
  H[r, d] = f32(f16(X[r, d]))
  M[r, d] = S[r] + Z[r, d]
}
`)
	if diags.HasErrors() {
		t.Fatal(diags.Diags[0].Msg)
	}
	k := prog.Kernel("p")
	env := &ir.Env{Kernel: k, Dims: map[*ir.Dim]int64{k.Dims[0]: 4, k.Dims[1]: 100}}
	want := []ir.DType{ir.F32, ir.F64, ir.F64, ir.F16, ir.F32}
	for i, tol := range Tolerances(k, env) {
		if w := ToleranceFor(want[i], 100); tol != w {
			t.Errorf("%s: %+v, want %s's tolerance %+v", k.Outputs[i].Name, tol, want[i], w)
		}
	}
}

// TestConditioned: a float output whose rounded-sum reference is off by
// more than its tolerance allows twice that error (hand-computed below);
// one within tolerance, an integer output, and a rounded output with a
// NaN where the reference has a number keep their tolerances.
func TestConditioned(t *testing.T) {
	prog, diags := frontend.CheckSource("c.kg", `
kernel c<R, D>(X: f32[R, D], N: i32[R]) -> (Y: f32[R], Z: f32[R], C: i32[R], W: f32[R]) {
  Y[r] = exp(sum[d](X[r, d]))
  Z[r] = sum[d](X[r, d])
  C[r] = N[r] * 2
  W[r] = sum[d](X[r, d])
}
`)
	if diags.HasErrors() {
		t.Fatal(diags.Diags[0].Msg)
	}
	k := prog.Kernel("c")
	tols := []Tolerance{{Rtol: 1e-5}, {Rtol: 1e-5}, {}, {Rtol: 1e-5}}
	want := []*tensor.Tensor{vec(ir.F32, 1, 2, 3, 4), vec(ir.F32, 1, 2, 3, 4), vec(ir.I32, 1, 2, 3, 4), vec(ir.F32, 1, 2, 3, 4)}
	rounded := []*tensor.Tensor{vec(ir.F32, 1, 2, 3, 4.00390625), vec(ir.F32, 1, 2, 3, 4.0000152587890625), vec(ir.I32, 1, 2, 3, 5), vec(ir.F32, 1, math.NaN(), 3, 40)}
	got := Conditioned(tols, k, rounded, want)
	// rms(want) = sqrt(7.5); Y's error 2^-8 / (4 + sqrt(7.5)).
	wantY := 2 * 0.00390625 / (4 + math.Sqrt(7.5))
	if math.Abs(got[0].Rtol-wantY) > 1e-6*wantY {
		t.Errorf("Y: Rtol %g, want %g", got[0].Rtol, wantY)
	}
	if got[1] != tols[1] || got[2] != tols[2] || got[3] != tols[3] {
		t.Errorf("Z, C, W: %+v, want %+v unchanged", got[1:], tols[1:])
	}
	if tols[0].Rtol != 1e-5 {
		t.Errorf("Conditioned changed its argument: %+v", tols[0])
	}
}
