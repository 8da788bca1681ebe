package tensor

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

var (
	inf    = math.Inf(1)
	nan    = math.NaN()
	negZ   = math.Copysign(0, -1)
	ldexp  = math.Ldexp
	p2     = func(e int) float64 { return math.Ldexp(1, e) }
	fBits  = math.Float64bits
	sameF  = func(a, b float64) bool { return fBits(a) == fBits(b) || a != a && b != b }
	f16Min = p2(-24) // smallest f16 subnormal
)

func TestF16Hand(t *testing.T) {
	tests := []struct {
		v    float64
		want uint16
	}{
		{1, 0x3C00},
		{-2, 0xC000},
		{0, 0x0000},
		{negZ, 0x8000},
		{0.1, 0x2E66},
		{1.0 / 3, 0x3555},
		{65504, 0x7BFF},
		{65519.99, 0x7BFF},
		{65520, 0x7C00}, // tie between 65504 (odd) and 2^16: even is Inf
		{-65520, 0xFC00},
		{1e10, 0x7C00},
		{inf, 0x7C00},
		{-inf, 0xFC00},
		{5.960464477539063e-08, 0x0001}, // 2^-24, smallest subnormal
		{p2(-25), 0x0000},               // tie between 0 and 2^-24: even is 0
		{p2(-25) + p2(-60), 0x0001},
		{-p2(-25), 0x8000},
		{1.5 * f16Min, 0x0002},          // tie 1|2 -> 2
		{2.5 * f16Min, 0x0002},          // tie 2|3 -> 2
		{1023 * f16Min, 0x03FF},         // largest subnormal
		{p2(-14), 0x0400},               // smallest normal
		{p2(-14) - p2(-26), 0x0400},     // above the tie 0x03FF|0x0400 -> normal
		{1 + p2(-11), 0x3C00},           // tie to even
		{1 + 3*p2(-11), 0x3C02},         // tie to even, upwards: 1+2^-9
		{1 + p2(-11) + p2(-40), 0x3C01}, // f32 would first round onto the tie, then to 1.0
		{1 + p2(-11) - p2(-40), 0x3C00}, // just below the tie
		{2049, 0x6800},                  // integer tie 2048|2050 -> 2048
		{2051, 0x6802},                  // integer tie 2050|2052 -> 2052
		{1e-30, 0x0000},                 // far below the subnormals
		{math.SmallestNonzeroFloat64, 0x0000},
	}
	for _, tc := range tests {
		if got := f16Bits(tc.v); got != tc.want {
			t.Errorf("f16Bits(%v) = %#04x, want %#04x", tc.v, got, tc.want)
		}
	}
	if got := f16Bits(nan); got&0x7C00 != 0x7C00 || got&0x0200 == 0 {
		t.Errorf("f16Bits(NaN) = %#04x, want a quiet NaN", got)
	}
	if got := f16Bits(math.Copysign(nan, -1)); got&0x8000 == 0 {
		t.Errorf("f16Bits(-NaN) = %#04x lost the sign", got)
	}
}

func TestBF16Hand(t *testing.T) {
	tests := []struct {
		v    float64
		want uint16
	}{
		{1, 0x3F80},
		{-1, 0xBF80},
		{3.140625, 0x4049},
		{math.Pi, 0x4049},
		{1 + p2(-8), 0x3F80},           // tie to even
		{1 + 3*p2(-8), 0x3F82},         // tie to even upwards: 1+2^-6
		{1 + p2(-8) + p2(-40), 0x3F81}, // f32 would first round onto the tie
		{ldexp(1.9921875, 127), 0x7F7F},
		{ldexp(2-p2(-8), 127) - p2(90), 0x7F7F}, // just below the overflow tie
		{ldexp(2-p2(-8), 127), 0x7F80},          // overflow tie: even is Inf
		{3.4e38, 0x7F80},
		{-3.4e38, 0xFF80},
		{math.MaxFloat32, 0x7F80},
		{1e300, 0x7F80},
		{p2(-133), 0x0001}, // smallest subnormal
		{p2(-134), 0x0000}, // tie to even
		{p2(-126), 0x0080}, // smallest normal
	}
	for _, tc := range tests {
		if got := bf16Bits(tc.v); got != tc.want {
			t.Errorf("bf16Bits(%v) = %#04x, want %#04x", tc.v, got, tc.want)
		}
	}
	if got := bf16Bits(nan); got&0x7F80 != 0x7F80 || got&0x0040 == 0 {
		t.Errorf("bf16Bits(NaN) = %#04x, want a quiet NaN", got)
	}
}

// refDecode decodes a binary16-like encoding from its definition, with
// none of the bit tricks of format.toFloat64.
func refDecode(b uint16, fracBits, bias int) float64 {
	s := 1.0
	if b&0x8000 != 0 {
		s = -1
	}
	e := int(b>>fracBits) & (1<<(15-fracBits) - 1)
	m := float64(int(b) & (1<<fracBits - 1))
	switch {
	case e == 1<<(15-fracBits)-1 && m == 0:
		return s * inf
	case e == 1<<(15-fracBits)-1:
		return nan
	case e == 0:
		return s * ldexp(m, 1-bias-fracBits)
	}
	return s * ldexp(1+m/float64(int(1)<<fracBits), e-bias)
}

// TestExhaustive16 checks decoding of every 16-bit pattern and, for every
// pair of adjacent finite values, that the values, the midpoint and its
// neighbours round as round-to-nearest-even demands.
func TestExhaustive16(t *testing.T) {
	for _, f := range []struct {
		name           string
		fracBits, bias int
		enc            func(float64) uint16
		dec            func(uint16) float64
		maxFinite      uint16
	}{
		{"f16", 10, 15, f16Bits, f16Float, 0x7BFF},
		{"bf16", 7, 127, bf16Bits, bf16Float, 0x7F7F},
	} {
		for b := range 1 << 16 {
			want := refDecode(uint16(b), f.fracBits, f.bias)
			if got := f.dec(uint16(b)); !sameF(got, want) {
				t.Fatalf("%s decode(%#04x) = %v, want %v", f.name, b, got, want)
			}
		}
		for b := uint16(0); b <= f.maxFinite; b++ {
			lo := refDecode(b, f.fracBits, f.bias)
			hi := refDecode(b+1, f.fracBits, f.bias)
			if b == f.maxFinite {
				hi = 2 * refDecode(b&^(1<<f.fracBits-1), f.fracBits, f.bias) // where the next value would be
			}
			mid := (lo + hi) / 2 // exact: both have few bits
			even := b
			if b&1 != 0 {
				even = b + 1
			}
			checks := []struct {
				v    float64
				want uint16
			}{
				{lo, b},
				{mid, even},
				{math.Nextafter(mid, 0), b},
				{math.Nextafter(mid, inf), b + 1},
			}
			for _, c := range checks {
				if got := f.enc(c.v); got != c.want {
					t.Fatalf("%s encode(%v) = %#04x, want %#04x", f.name, c.v, got, c.want)
				}
				if got := f.enc(-c.v); got != c.want|0x8000 {
					t.Fatalf("%s encode(%v) = %#04x, want %#04x", f.name, -c.v, got, c.want|0x8000)
				}
			}
		}
	}
}

// TestF32AgainstGo compares with Go's own float64->float32 conversion, an
// independent single-step rounding, on values near ties and subnormals.
func TestF32AgainstGo(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	check := func(v float64) {
		t.Helper()
		if got, want := f32Bits(v), math.Float32bits(float32(v)); got != want {
			t.Fatalf("f32Bits(%v [%#016x]) = %#08x, want %#08x", v, fBits(v), got, want)
		}
	}
	for range 200000 {
		// A random f32, then nudged to its upper tie or near it.
		f := math.Float32frombits(r.Uint32() & 0x7F7FFFFF)
		v := float64(f)
		up := float64(math.Nextafter32(f, float32(inf)))
		tie := v + (up-v)/2
		check(v)
		check(tie)
		check(math.Nextafter(tie, 0))
		check(math.Nextafter(tie, inf))
		check(-tie)
		check(math.Float64frombits(r.Uint64() &^ (1 << 62))) // exponent below 1: tiny to moderate
	}
	for _, v := range []float64{0, negZ, inf, -inf, math.MaxFloat32, math.SmallestNonzeroFloat32,
		math.SmallestNonzeroFloat32 / 2, math.SmallestNonzeroFloat32 * 0.75} {
		check(v)
	}
	// Overflow is implementation-defined in Go, so these are by hand.
	for _, tc := range []struct {
		v    float64
		want uint32
	}{
		{math.MaxFloat32, 0x7F7FFFFF},
		{ldexp(2-p2(-24), 127), 0x7F800000}, // overflow tie: even is Inf
		{ldexp(2-p2(-24), 127) - p2(80), 0x7F7FFFFF},
		{-1e39, 0xFF800000},
	} {
		if got := f32Bits(tc.v); got != tc.want {
			t.Errorf("f32Bits(%v) = %#08x, want %#08x", tc.v, got, tc.want)
		}
	}
}

// TestIntRounding compares one-step integer rounding with math/big, which
// rounds an exact integer to the given precision (the formats' exponent
// ranges only matter for f16 overflow, handled below).
func TestIntRounding(t *testing.T) {
	ref := func(v int64, prec uint) float64 {
		f, _ := new(big.Float).SetMode(big.ToNearestEven).SetPrec(prec).SetInt64(v).Float64()
		return f
	}
	vals := []int64{0, 1, -1, 3, 2049, 2051, 65519, 65520, -65520, 1 << 24, 1<<24 + 1, 1<<53 + 1, 1<<53 + 3,
		-(1<<53 + 1), 1<<60 + 1<<36 + 1, math.MaxInt64, math.MinInt64, math.MinInt64 + 1}
	r := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		vals = append(vals, int64(r.Uint64())>>r.IntN(64))
	}
	for _, v := range vals {
		if got, want := f64FromInt(v), ref(v, 53); got != want {
			t.Fatalf("f64FromInt(%d) = %v, want %v", v, got, want)
		}
		if got, want := f32Float(f32FromInt(v)), ref(v, 24); got != want {
			t.Fatalf("f32FromInt(%d) = %v, want %v", v, got, want)
		}
		if got, want := bf16Float(bf16FromInt(v)), ref(v, 8); got != want {
			t.Fatalf("bf16FromInt(%d) = %v, want %v", v, got, want)
		}
		want := ref(v, 11)
		if math.Abs(want) > 65504 {
			want = math.Copysign(inf, want)
		}
		if got := f16Float(f16FromInt(v)); got != want {
			t.Fatalf("f16FromInt(%d) = %v, want %v", v, got, want)
		}
	}
	// Rounding through float64 first would land on a tie and go to 2^60.
	if got := f32FromInt(1<<60 + 1<<36 + 1); got != 0x5D800001 {
		t.Errorf("f32FromInt(2^60+2^36+1) = %#08x, want 0x5D800001", got)
	}
}

func TestTruncSat(t *testing.T) {
	tests := []struct {
		v      float64
		lo, hi int64
		want   int64
	}{
		{2.9, -128, 127, 2},
		{-2.9, -128, 127, -2},
		{300.7, -128, 127, 127},
		{-300.7, -128, 127, -128},
		{nan, -128, 127, 0},
		{inf, 0, 255, 255},
		{-inf, 0, 255, 0},
		{p2(63), math.MinInt64, math.MaxInt64, math.MaxInt64},
		{-p2(63), math.MinInt64, math.MaxInt64, math.MinInt64},
		{p2(62) + p2(61), math.MinInt64, math.MaxInt64, 1<<62 + 1<<61},
		{1e300, math.MinInt64, math.MaxInt64, math.MaxInt64},
	}
	for _, tc := range tests {
		if got := truncSat(tc.v, tc.lo, tc.hi); got != tc.want {
			t.Errorf("truncSat(%v, %d, %d) = %d, want %d", tc.v, tc.lo, tc.hi, got, tc.want)
		}
	}
}
