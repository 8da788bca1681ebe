package tensor

import (
	"math"
	"math/bits"
)

// format describes an IEEE 754 binary interchange format by its field
// widths. All narrowing goes through one integer implementation so that
// f16, bf16, f32 and f64 round identically on every platform: Go leaves
// out-of-range float conversions implementation-defined, and converting
// through float32 first would round twice.
type format struct {
	frac    uint // stored fraction bits (precision minus the implicit bit)
	expBits uint
	bias    int
}

var (
	fmtF16  = format{frac: 10, expBits: 5, bias: 15}
	fmtBF16 = format{frac: 7, expBits: 8, bias: 127}
	fmtF32  = format{frac: 23, expBits: 8, bias: 127}
	fmtF64  = format{frac: 52, expBits: 11, bias: 1023}
)

func (f format) expMask() uint64  { return 1<<f.expBits - 1 }
func (f format) infBits() uint64  { return f.expMask() << f.frac }
func (f format) signBit() uint64  { return 1 << (f.frac + f.expBits) }
func (f format) quietBit() uint64 { return 1 << (f.frac - 1) }

// roundMag returns the encoding (sign clear) of m·2^e rounded to nearest,
// ties to even, overflowing to infinity. m must be nonzero.
func (f format) roundMag(m uint64, e int) uint64 {
	top := bits.Len64(m) - 1 + e // exponent of the leading bit
	emin := 1 - f.bias
	q := max(top, emin) - int(f.frac) // exponent of one ulp at this magnitude
	s := q - e                        // bits of m that fall below the ulp
	var r uint64
	switch {
	case s <= 0:
		// Exact: the shifted value has at most frac+1 bits.
		r = m << uint(-s)
	case s > 64:
		r = 0 // below half the smallest ulp
	case s == 64:
		if m > 1<<63 { // above the halfway point between 0 and one ulp
			r = 1
		}
	default:
		r = m >> uint(s)
		rem := m & (1<<uint(s) - 1)
		half := uint64(1) << uint(s-1)
		if rem > half || rem == half && r&1 == 1 {
			r++
		}
	}
	if top < emin {
		// Subnormal range: r is the fraction field directly, and a carry to
		// 1<<frac yields the smallest normal's encoding.
		return r
	}
	if top-emin >= int(f.expMask()) {
		return f.infBits() // far too large; also keeps the shift below sane
	}
	// r includes the implicit bit, so adding it to (biased exponent - 1)
	// carries into the exponent when rounding reaches the next binade.
	b := uint64(top+f.bias-1)<<f.frac + r
	return min(b, f.infBits())
}

// fromFloat64 rounds v to the format and returns its encoding. NaNs stay
// NaN with the sign and the leading payload bits kept and the quiet bit set.
func (f format) fromFloat64(v float64) uint64 {
	b := math.Float64bits(v)
	var sign uint64
	if b>>63 != 0 {
		sign = f.signBit()
	}
	exp := int(b >> 52 & 0x7FF)
	frac := b & (1<<52 - 1)
	switch {
	case exp == 0x7FF && frac != 0:
		return sign | f.infBits() | f.quietBit() | frac>>(52-f.frac)
	case exp == 0x7FF:
		return sign | f.infBits()
	case exp == 0 && frac == 0:
		return sign
	case exp == 0:
		return sign | f.roundMag(frac, -1074)
	}
	return sign | f.roundMag(frac|1<<52, exp-1075)
}

// fromInt64 rounds v to the format in one step, so that i64 values beyond
// 2^53 are not first rounded to float64.
func (f format) fromInt64(v int64) uint64 {
	if v == 0 {
		return 0
	}
	if v < 0 {
		return f.signBit() | f.roundMag(uint64(-v), 0) // -MinInt64 wraps to 1<<63, its magnitude
	}
	return f.roundMag(uint64(v), 0)
}

// toFloat64 decodes an encoding of the format; every value, NaN payloads
// included, widens exactly.
func (f format) toFloat64(b uint64) float64 {
	var sign uint64
	if b&f.signBit() != 0 {
		sign = 1 << 63
	}
	exp := b >> f.frac & f.expMask()
	frac := b & (1<<f.frac - 1)
	var v uint64 // float64 encoding without the sign
	switch {
	case exp == f.expMask():
		v = 0x7FF<<52 | frac<<(52-f.frac)
	case exp == 0 && frac == 0:
		v = 0
	case exp == 0:
		// Normalize the subnormal: float64's range covers every smaller format.
		shift := f.frac + 1 - uint(bits.Len64(frac)) // moves the leading bit to the implicit position
		e := 1 - f.bias - int(shift)
		v = uint64(e+1023)<<52 | (frac<<shift&(1<<f.frac-1))<<(52-f.frac)
	default:
		v = uint64(int(exp)-f.bias+1023)<<52 | frac<<(52-f.frac)
	}
	return math.Float64frombits(sign | v)
}

func f16Bits(v float64) uint16   { return uint16(fmtF16.fromFloat64(v)) }
func f16Float(b uint16) float64  { return fmtF16.toFloat64(uint64(b)) }
func bf16Bits(v float64) uint16  { return uint16(fmtBF16.fromFloat64(v)) }
func bf16Float(b uint16) float64 { return fmtBF16.toFloat64(uint64(b)) }
func f32Bits(v float64) uint32   { return uint32(fmtF32.fromFloat64(v)) }
func f32Float(b uint32) float64  { return float64(math.Float32frombits(b)) }
func f64FromInt(v int64) float64 { return math.Float64frombits(fmtF64.fromInt64(v)) }
func f32FromInt(v int64) uint32  { return uint32(fmtF32.fromInt64(v)) }
func f16FromInt(v int64) uint16  { return uint16(fmtF16.fromInt64(v)) }
func bf16FromInt(v int64) uint16 { return uint16(fmtBF16.fromInt64(v)) }
func isNaN(v float64) bool       { return v != v }

// truncSat truncates v toward zero and clamps it to [lo, hi], mapping NaN to
// 0, which is what a saturating float-to-int cast does.
func truncSat(v float64, lo, hi int64) int64 {
	if isNaN(v) {
		return 0
	}
	// 2^63 is exact in float64; comparing against it avoids converting an
	// out-of-range float to int64, whose result Go leaves unspecified.
	const two63 = 1 << 63
	var i int64
	switch {
	case v >= two63:
		i = math.MaxInt64
	case v <= -two63:
		i = math.MinInt64
	default:
		i = int64(v) // Go truncates toward zero
	}
	return min(max(i, lo), hi)
}
