package runtime

import (
	"fmt"
	"math"
	"slices"

	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/tensor"
)

// Tolerance is how far a backend's output may be from the reference
// interpreter's: element i passes when |got - want| <= Atol + Rtol *
// (|want| + rms(want)). The rms term scales the bound to the tensor's
// magnitude, so that outputs near zero after cancellation (a sum of
// normal values) are judged against the size of what was summed.
type Tolerance struct {
	Rtol, Atol float64
}

// ToleranceFor is the default tolerance for an output dtype, given the
// longest reduction that feeds it: accumulated rounding grows with the
// square root of the number of terms when the order is not the
// reference's.
func ToleranceFor(dt ir.DType, reduceLen int64) Tolerance {
	grow := math.Sqrt(float64(max(1, reduceLen)))
	switch dt {
	case ir.F64:
		return Tolerance{Rtol: 1e-12 * grow, Atol: 1e-300}
	case ir.F32:
		return Tolerance{Rtol: 2e-6 * grow, Atol: 1e-30}
	case ir.F16:
		return Tolerance{Rtol: 1e-3 * max(1, grow/8), Atol: 1e-7}
	case ir.BF16:
		return Tolerance{Rtol: 8e-3 * max(1, grow/8), Atol: 1e-30}
	}
	return Tolerance{} // integers and bools must match exactly
}

// Tolerances is the tolerance of each output of k at env: that of its
// dtype and the longest reduction, or of a less precise float type that
// its value was computed in (an f64 output of f32 arithmetic or an f32
// sum is as exact as f32, the interpreter's float64 is not what the
// kernel computes: section 11 of docs/language.md), directly or through a
// let or output it reads. An integer output that a float value was
// converted into (u8(floor(x / s + 0.5)), likewise) may be off by one: the
// kernel rounds its float arithmetic to the compute type where the
// interpreter keeps float64, and a value that lands on a rounding
// boundary in one may not in the other.
func Tolerances(k *ir.Kernel, env *ir.Env) []Tolerance {
	reduceLen := LongestReduction(k, env)
	fromFloat := map[*ir.Tensor]bool{}
	computed := map[*ir.Tensor]ir.DType{} // the least precise float type a tensor's value was rounded to on its way
	lower := func(t *ir.Tensor, dt ir.DType) {
		if c, ok := computed[t]; !ok || dt.Size() < c.Size() {
			computed[t] = dt
		}
	}
	for _, s := range k.Stmts {
		ir.Walk(s.Value, func(e ir.Expr) bool {
			switch x := e.(type) {
			case *ir.Cast:
				if x.T.IsInt() && x.X.Type().IsFloat() {
					fromFloat[s.Target] = true
				}
				if x.T.IsFloat() && x.X.Type().IsFloat() && x.T.Size() < x.X.Type().Size() {
					lower(s.Target, x.T) // a narrowing cast rounds
				}
			case *ir.Load:
				if fromFloat[x.Tensor] {
					fromFloat[s.Target] = true
				}
				if c, ok := computed[x.Tensor]; ok {
					lower(s.Target, c)
				}
			case *ir.Unary, *ir.Binary, *ir.Call, *ir.Reduce:
				if dt := e.Type(); dt.IsFloat() {
					lower(s.Target, dt) // arithmetic rounds to its type
				}
			}
			return true
		})
	}
	var tols []Tolerance
	for _, t := range k.Outputs {
		dt := t.DType
		if c, ok := computed[t]; ok && dt.IsFloat() && c.Size() < dt.Size() {
			dt = c
		}
		tol := ToleranceFor(dt, reduceLen)
		if t.DType.IsInt() && fromFloat[t] {
			tol.Atol = 1
		}
		tols = append(tols, tol)
	}
	return tols
}

// Conditioned widens tols where the computation amplifies the rounding
// of its sums: rounded is what the reference kernels compute with their
// sums in the declared accumulation types (lower.BuildRounding), want
// what they compute with f64 sums. A kernel accumulating in those types
// may be off by about as much, so output i allows twice rounded's
// largest relative error (Compare's measure) when that exceeds its
// tolerance. Integer outputs stay exact; a rounded output with NaNs or
// infinities where want has numbers widens nothing.
func Conditioned(tols []Tolerance, k *ir.Kernel, rounded, want []*tensor.Tensor) []Tolerance {
	out := slices.Clone(tols)
	for i, t := range k.Outputs {
		if !t.DType.IsFloat() || i >= len(rounded) || i >= len(want) {
			continue
		}
		e, m, err := Compare(rounded[i], want[i], Tolerance{Rtol: math.Inf(1)})
		if err != nil || (m != nil && m.NaNs > 0) || math.IsInf(e, 0) || math.IsNaN(e) {
			continue
		}
		out[i].Rtol = max(out[i].Rtol, 2*e)
	}
	return out
}

// Mismatch describes how an output differs from the reference.
type Mismatch struct {
	Bad      int64   // elements out of tolerance
	First    int64   // the first of them (flat index)
	Got      float64 // its value
	Want     float64 // the reference's
	MaxError float64 // the largest |got - want| / (|want| + rms(want)) over all elements
	NaNs     int64   // NaNs where the reference has a number (an unwritten, poisoned element shows up here)
}

func (m *Mismatch) Error() string {
	s := fmt.Sprintf("%d elements out of tolerance; first at flat index %d: got %g, want %g; max relative error %.3g", m.Bad, m.First, m.Got, m.Want, m.MaxError)
	if m.NaNs > 0 {
		s += fmt.Sprintf("; %d NaNs where the reference has numbers (unwritten outputs stay NaN-poisoned)", m.NaNs)
	}
	return s
}

// Compare checks got against want (same dtype and shape) and returns the
// largest relative error, with a nil *Mismatch when every element is
// within tolerance. NaN passes only where the reference is NaN too;
// infinities must match exactly.
func Compare(got, want *tensor.Tensor, tol Tolerance) (float64, *Mismatch, error) {
	return CompareEither(got, want, nil, tol)
}

// CompareEither is Compare where an element may instead match alt (when
// not nil): the reference evaluated with every operation rounded to its
// declared type (RoundedReference). Where a function jumps, the two
// references part by more than any tolerance: floor(sigmoid(t)) at t = 24
// is 1 in f32, whose sigmoid rounds to 1, and 0 in f64, whose sigmoid is
// 1 - 3.8e-11. A kernel computing in f32 may take either side. An element
// matched by alt counts alt's error; the scale of both is want's. A NaN
// passes only where want has one: never by alt, whose f32 arithmetic may
// make one (an overflow less an overflow) where want has a number.
func CompareEither(got, want, alt *tensor.Tensor, tol Tolerance) (float64, *Mismatch, error) {
	for _, t := range []*tensor.Tensor{want, alt} {
		if t != nil && (got.DType != t.DType || len(got.Shape) != len(t.Shape) || got.Len() != t.Len()) {
			return 0, nil, fmt.Errorf("compare: got %s%v, want %s%v", got.DType, got.Shape, t.DType, t.Shape)
		}
	}
	// Both passes run in tensor.ForChunks's fixed chunks, and the chunks'
	// results are combined in order: the same numbers on any machine.
	n := want.Len()
	chunks := (n + tensor.ChunkLen - 1) / tensor.ChunkLen
	sums := make([]float64, chunks)
	counts := make([]int64, chunks)
	tensor.ForChunks(n, func(lo, hi int64) {
		sumsq, finite := 0.0, int64(0)
		for i := lo; i < hi; i++ {
			if w := want.Float(i); !math.IsNaN(w) && !math.IsInf(w, 0) {
				sumsq += w * w
				finite++
			}
		}
		sums[lo/tensor.ChunkLen], counts[lo/tensor.ChunkLen] = sumsq, finite
	})
	sumsq, finite := 0.0, int64(0)
	for c := range sums {
		sumsq += sums[c]
		finite += counts[c]
	}
	rms := 0.0
	if finite > 0 {
		rms = math.Sqrt(sumsq / float64(finite))
	}
	parts := make([]Mismatch, chunks)
	tensor.ForChunks(n, func(lo, hi int64) {
		m := Mismatch{First: -1}
		for i := lo; i < hi; i++ {
			g, w := got.Float(i), want.Float(i)
			ok, e, nan := match(g, w, rms, tol)
			if !ok && alt != nil && !math.IsNaN(g) {
				if aok, ae, _ := match(g, alt.Float(i), rms, tol); aok {
					ok, e, nan = true, ae, false
				}
			}
			m.MaxError = max(m.MaxError, e)
			if nan {
				m.NaNs++
			}
			if !ok {
				if m.Bad == 0 {
					m.First, m.Got, m.Want = i, g, w
				}
				m.Bad++
			}
		}
		parts[lo/tensor.ChunkLen] = m
	})
	m := &Mismatch{First: -1}
	for _, p := range parts {
		if p.Bad > 0 && m.Bad == 0 {
			m.First, m.Got, m.Want = p.First, p.Got, p.Want
		}
		m.Bad += p.Bad
		m.NaNs += p.NaNs
		m.MaxError = max(m.MaxError, p.MaxError)
	}
	if m.Bad == 0 {
		return m.MaxError, nil, nil
	}
	return m.MaxError, m, nil
}

// match compares one element g with its reference w, rms being the
// reference's root mean square: whether it is within tol, its relative
// error, and whether it is a NaN where w is a number.
func match(g, w, rms float64, tol Tolerance) (ok bool, rel float64, nan bool) {
	switch {
	case math.IsNaN(w):
		return math.IsNaN(g), 0, false
	case math.IsNaN(g):
		return false, 0, true
	case math.IsInf(w, 0) || math.IsInf(g, 0):
		return g == w, 0, false
	}
	scale := math.Abs(w) + rms
	diff := math.Abs(g - w)
	if scale > 0 {
		rel = diff / scale
	}
	return diff <= tol.Atol+tol.Rtol*scale, rel, false
}
