package tensor

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"kgen.dev/kgen/ir"
)

var allDists = []Dist{Normal, Uniform, Large, Ints, Specials}

func TestParseDist(t *testing.T) {
	for _, d := range allDists {
		got, err := ParseDist(d.String())
		if err != nil || got != d {
			t.Errorf("ParseDist(%q) = %v, %v", d.String(), got, err)
		}
	}
	names := []string{"normal", "uniform", "large", "ints"}
	for i, n := range names {
		if allDists[i].String() != n {
			t.Errorf("Dist %d prints as %q, want %q", i, allDists[i], n)
		}
	}
	_, err := ParseDist("gauss")
	if err == nil {
		t.Fatal("ParseDist(gauss) succeeded")
	}
	for _, n := range append(names, "gauss") {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not mention %q", err, n)
		}
	}
	if s := Dist(9).String(); s != "dist(9)" {
		t.Errorf("Dist(9).String() = %q", s)
	}
}

func TestRandomDeterministic(t *testing.T) {
	for _, dt := range allDTypes {
		for _, d := range allDists {
			a := Random(dt, []int64{10, 10}, d, 42)
			b := Random(dt, []int64{10, 10}, d, 42)
			c := Random(dt, []int64{10, 10}, d, 43)
			if !bytes.Equal(a.Data, b.Data) {
				t.Errorf("%v %v: same seed, different data", dt, d)
			}
			if bytes.Equal(a.Data, c.Data) {
				t.Errorf("%v %v: seeds 42 and 43 give the same data", dt, d)
			}
		}
	}
}

// TestRandomGolden pins the output so that a change of platform, Go release
// or implementation that alters generated inputs is noticed: recorded test
// inputs would silently stop matching. Uniform is also recomputed
// independently, from SplitMix64 stepped one state at a time as its
// authors define it, and a tensor long enough to be filled in parallel
// chunks must equal the same draws made one element at a time.
func TestRandomGolden(t *testing.T) {
	state := uint64(5)
	splitmix64 := func() uint64 {
		state += 0x9e3779b97f4a7c15
		z := state
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		return z ^ (z >> 31)
	}
	n := int64(3*ChunkLen + 17)
	x := Random(ir.F64, []int64{n}, Uniform, 5)
	for i := range n {
		want := float64(splitmix64()>>11)/(1<<52) - 1
		if got := x.Float(i); got != want {
			t.Fatalf("Uniform element %d = %v, want %v", i, got, want)
		}
	}
	// One hash for the first four distributions, pinned before Specials
	// existed, and one for Specials.
	for _, c := range []struct {
		dists []Dist
		want  string
	}{
		{[]Dist{Normal, Uniform, Large, Ints}, "97dcb4897dc5767bbd4fb0f5da1f971cf481e62864e925dd5b06c11b1ce9b82e"},
		{[]Dist{Specials}, "86b699a7891675aba4c4bec4edf4e26207de5859ffff20a47944e847a10fe98f"},
	} {
		h := sha256.New()
		for _, dt := range allDTypes {
			for _, d := range c.dists {
				h.Write(Random(dt, []int64{1000}, d, 1).Data)
			}
		}
		if got := fmt.Sprintf("%x", h.Sum(nil)); got != c.want {
			t.Errorf("random inputs of %v changed: hash %s, want %s", c.dists, got, c.want)
		}
	}
}

// TestSpecials: about one value in four is special, each special value
// turns up (f32 holds 1e39 as an infinity), and the rest are finite.
func TestSpecials(t *testing.T) {
	const n = 40000
	x := Random(ir.F32, []int64{n}, Specials, 3)
	var nan, inf, negZero, posZero, big, finite int
	for i := range int64(n) {
		v := x.Float(i)
		switch {
		case math.IsNaN(v):
			nan++
		case math.IsInf(v, 0):
			inf++
		case v == 0 && math.Signbit(v):
			negZero++
		case v == 0:
			posZero++
		case math.Abs(v) == float64(float32(1e5)):
			big++
		default:
			finite++
		}
	}
	special := nan + inf + negZero + posZero + big
	if special < n/4-n/40 || special > n/4+n/40 {
		t.Errorf("%d special values of %d, want about a quarter", special, n)
	}
	for name, c := range map[string]int{"NaN": nan, "infinity": inf, "-0": negZero, "+0": posZero, "1e5": big} {
		if c == 0 {
			t.Errorf("no %s among %d values", name, n)
		}
	}
	// The infinities are ±Inf and ±1e39: four of the nine special values.
	if inf < special*4/9-special/20 || inf > special*4/9+special/20 {
		t.Errorf("%d infinities of %d special values, want about 4/9", inf, special)
	}
}

// TestRandomParallel fills tensors of several chunks on one core and on
// several: the bytes must not depend on the number of cores.
func TestRandomParallel(t *testing.T) {
	shape := []int64{2*ChunkLen + 5}
	var serial [][]byte
	old := runtime.GOMAXPROCS(1)
	for _, d := range allDists {
		serial = append(serial, Random(ir.BF16, shape, d, 9).Data)
	}
	runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(old)
	for k, d := range allDists {
		if !bytes.Equal(Random(ir.BF16, shape, d, 9).Data, serial[k]) {
			t.Errorf("%v: 4 cores and 1 give different bytes", d)
		}
	}
}

// TestUniformNRejects draws from a range so wide that half of all words
// are rejected: every value must be in range, and the draws beyond the
// first must come from the element's own stream (deterministic).
func TestUniformNRejects(t *testing.T) {
	const n = 1<<63 + 1
	retried := 0
	for i := range uint64(200) {
		a := elemSource{seed: 3, i: i}
		b := elemSource{seed: 3, i: i}
		x, y := uniformN(&a, n), uniformN(&b, n)
		if x >= n || x != y {
			t.Fatalf("element %d: %d and %d, want equal and below %d", i, x, y, uint64(n))
		}
		if a.n > 1 {
			retried++
		}
	}
	if retried < 50 {
		t.Errorf("%d of 200 elements drew more than one word; about half should", retried)
	}
}

func TestRandomIntRanges(t *testing.T) {
	type rng struct{ lo, hi int64 }
	for _, tc := range []struct {
		dt ir.DType
		d  Dist
		r  rng
	}{
		{ir.I8, Uniform, rng{-8, 8}}, {ir.I8, Ints, rng{-8, 8}}, {ir.I8, Large, rng{-100, 100}},
		{ir.I32, Uniform, rng{-8, 8}}, {ir.I32, Ints, rng{-8, 8}}, {ir.I32, Large, rng{-100, 100}},
		{ir.I64, Ints, rng{-8, 8}}, {ir.I64, Large, rng{-100, 100}},
		{ir.U8, Uniform, rng{0, 16}}, {ir.U8, Ints, rng{0, 16}}, {ir.U8, Large, rng{0, 200}},
		{ir.F32, Ints, rng{-8, 8}}, {ir.F16, Ints, rng{-8, 8}}, {ir.BF16, Ints, rng{-8, 8}}, {ir.F64, Ints, rng{-8, 8}},
		{ir.Bool, Normal, rng{0, 1}}, {ir.Bool, Uniform, rng{0, 1}}, {ir.Bool, Large, rng{0, 1}}, {ir.Bool, Ints, rng{0, 1}},
	} {
		x := Random(tc.dt, []int64{20000}, tc.d, 9)
		seen := map[int64]int{}
		for i := range x.Len() {
			v := x.Float(i)
			if v != math.Trunc(v) || v < float64(tc.r.lo) || v > float64(tc.r.hi) {
				t.Fatalf("%v %v: element %d = %v outside the integers of [%d, %d]", tc.dt, tc.d, i, v, tc.r.lo, tc.r.hi)
			}
			seen[int64(v)]++
		}
		// Every value occurs, about equally often.
		n := tc.r.hi - tc.r.lo + 1
		expect := 20000 / float64(n)
		for v := tc.r.lo; v <= tc.r.hi; v++ {
			if c := float64(seen[v]); c < expect*0.6 || c > expect*1.4 {
				t.Errorf("%v %v: value %d occurs %v times, expected about %.0f", tc.dt, tc.d, v, c, expect)
			}
		}
	}
	// Normal on integer types: round(3x), saturated.
	for _, dt := range []ir.DType{ir.I8, ir.U8, ir.I32, ir.I64} {
		x := Random(dt, []int64{20000}, Normal, 3)
		lo, hi := dt.IntRange()
		var sum, sq float64
		for i := range x.Len() {
			v := x.Int(i)
			if v < lo || v > hi || v < -40 || v > 40 {
				t.Fatalf("%v normal: element %d = %d", dt, i, v)
			}
			sum += float64(v)
			sq += float64(v * v)
		}
		if dt == ir.U8 {
			continue // the negative half saturates to 0
		}
		mean, sd := sum/20000, math.Sqrt(sq/20000-sum*sum/20000/20000)
		if math.Abs(mean) > 0.1 || math.Abs(sd-3) > 0.1 {
			t.Errorf("%v normal: mean %v, sd %v, want about 0 and 3", dt, mean, sd)
		}
	}
}

func moments(x *Tensor) (mean, sd float64) {
	n := float64(x.Len())
	var sum float64
	for i := range x.Len() {
		sum += x.Float(i)
	}
	mean = sum / n
	var sq float64
	for i := range x.Len() {
		d := x.Float(i) - mean
		sq += d * d
	}
	return mean, math.Sqrt(sq / n)
}

func TestRandomFloatDists(t *testing.T) {
	for _, dt := range []ir.DType{ir.F64, ir.F32, ir.F16, ir.BF16} {
		mean, sd := moments(Random(dt, []int64{100000}, Normal, 11))
		if math.Abs(mean) > 0.02 || math.Abs(sd-1) > 0.02 {
			t.Errorf("%v normal: mean %v, sd %v", dt, mean, sd)
		}
		u := Random(dt, []int64{100000}, Uniform, 12)
		mean, sd = moments(u)
		if math.Abs(mean) > 0.01 || math.Abs(sd-1/math.Sqrt(3)) > 0.01 {
			t.Errorf("%v uniform: mean %v, sd %v, want 0 and %v", dt, mean, sd, 1/math.Sqrt(3))
		}
		for i := range u.Len() {
			if v := u.Float(i); v < -1 || v > 1 {
				t.Fatalf("%v uniform: %v", dt, v)
			}
		}
		l := Random(dt, []int64{100000}, Large, 13)
		var neg int
		var logSum float64
		for i := range l.Len() {
			v := l.Float(i)
			if m := math.Abs(v); m < 100 || m > 10000 || m != RoundFloat(dt, m) {
				t.Fatalf("%v large: %v", dt, v)
			}
			if v < 0 {
				neg++
			}
			logSum += math.Log10(math.Abs(v))
		}
		if neg < 49000 || neg > 51000 {
			t.Errorf("%v large: %d of 100000 negative", dt, neg)
		}
		if m := logSum / 100000; math.Abs(m-3) > 0.02 {
			t.Errorf("%v large: mean log10 magnitude %v, want 3", dt, m)
		}
	}
	// Normal tails reach where the quantile needs the logarithm.
	x := Random(ir.F64, []int64{100000}, Normal, 14)
	var tails int
	for i := range x.Len() {
		if math.Abs(x.Float(i)) > 2 {
			tails++
		}
	}
	if want := 0.0455 * 100000; math.Abs(float64(tails)-want) > 300 {
		t.Errorf("%d values beyond 2 sd, want about %v", tails, want)
	}
}

func TestDetMath(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	ulps := func(a, b float64) int64 {
		d := int64(math.Float64bits(a)) - int64(math.Float64bits(b))
		return max(d, -d)
	}
	for range 100000 {
		x := math.Ldexp(1+r.Float64(), r.IntN(200)-150)
		if u := ulps(detLog(x), math.Log(x)); u > 1 {
			t.Fatalf("detLog(%v) = %v, math.Log = %v", x, detLog(x), math.Log(x))
		}
		y := r.Float64()*40 - 20
		// math.Exp is off by up to a couple of ulps on amd64; compare
		// relatively.
		if e := math.Exp(y); math.Abs(detExp(y)-e) > 1e-15*e {
			t.Fatalf("detExp(%v) = %v, math.Exp = %v", y, detExp(y), math.Exp(y))
		}
	}
}

// TestNormalQuantile checks the quantile against Newton's method on the
// normal CDF computed from math.Erfc.
func TestNormalQuantile(t *testing.T) {
	cdf := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	pdf := func(x float64) float64 { return math.Exp(-x*x/2) / math.Sqrt(2*math.Pi) }
	ps := []float64{0x1p-53, 1e-10, 0.001, 0.02, 0.02425, 0.03, 0.1, 0.3, 0.5, 0.7, 0.9, 0.975, 0.999, 1 - 1e-10, 1 - 0x1p-53}
	for i := 1; i < 1000; i++ {
		ps = append(ps, float64(i)/1000)
	}
	// Newton on the lower tail only: near 1 the CDF has no relative precision.
	ref := func(p float64) float64 {
		x := 0.0
		for range 100 {
			x -= (cdf(x) - p) / math.Max(pdf(x), 1e-300)
		}
		return x
	}
	for _, p := range ps {
		x := normalQuantile(p)
		ref := ref(min(p, 1-p))
		if p > 0.5 {
			ref = -ref
		}
		if math.Abs(x-ref) > 1e-8*math.Max(1, math.Abs(ref)) {
			t.Errorf("normalQuantile(%v) = %v, want %v", p, x, ref)
		}
	}
	if normalQuantile(0.5) != 0 {
		t.Errorf("normalQuantile(0.5) = %v", normalQuantile(0.5))
	}
	// normal draws p = (2k+1)·2^-53, for which 1-p is exact.
	for _, k := range []uint64{0, 1 << 30, 1 << 45, 1 << 50, 1<<51 + 12345} {
		p := float64(2*k+1) * 0x1p-53
		if a, b := normalQuantile(p), normalQuantile(1-p); a != -b {
			t.Errorf("asymmetric: q(%v) = %v, q(1-p) = %v", p, a, b)
		}
	}
}

func TestRandomInvalidDist(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Random accepted Dist(7)")
		}
	}()
	Random(ir.F32, []int64{1}, Dist(7), 0)
}

// BenchmarkRandom fills a 16 Mi-element f32 tensor from each
// distribution.
func BenchmarkRandom(b *testing.B) {
	for _, d := range allDists {
		b.Run(d.String(), func(b *testing.B) {
			b.SetBytes(4 << 24)
			for b.Loop() {
				Random(ir.F32, []int64{1 << 24}, d, 1)
			}
		})
	}
}
