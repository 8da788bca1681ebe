package tensor

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"kgen.dev/kgen/ir"
)

// Dist is a distribution of random inputs. The distributions exercise
// different numerics: Normal and Uniform are typical activations, Large
// stresses overflow and precision loss in low-precision accumulation, Ints
// makes float results exact so they can be compared bit for bit, and
// Specials mixes NaN, infinities and signed zeros into Normal's values, for
// a kernel's edge cases (NaN propagation in min, max and reductions,
// saturating conversions).
type Dist int

// The distributions of random inputs.
const (
	Normal   Dist = iota // mean 0, standard deviation 1
	Uniform              // uniform in [-1, 1)
	Large                // magnitude log-uniform in [1e2, 1e4), random sign
	Ints                 // integers uniform in [-8, 8]; [0, 16] for u8
	Specials             // one value in four from specialValues, the others as Normal's; integers as Ints's
)

var distNames = [...]string{Normal: "normal", Uniform: "uniform", Large: "large", Ints: "ints", Specials: "specials"}

// specialValues are Specials' edge cases: NaN, both infinities, both
// zeros, and magnitudes that overflow f16 (1e5) and f32 (1e39, which f32
// holds as infinity).
var specialValues = [...]float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1e5, -1e5, 1e39, -1e39}

// ParseDist returns the distribution named s, as spelled by String.
func ParseDist(s string) (Dist, error) {
	for i, n := range distNames {
		if n == s {
			return Dist(i), nil
		}
	}
	return 0, fmt.Errorf("unknown distribution %q (valid: %s)", s, strings.Join(distNames[:], ", "))
}

// String returns the name ParseDist accepts.
func (d Dist) String() string {
	if d >= 0 && int(d) < len(distNames) {
		return distNames[d]
	}
	return fmt.Sprintf("dist(%d)", int(d))
}

// Random returns a tensor of values drawn from d and rounded to dt. The
// bytes depend only on the arguments: element i's value is a function of
// seed and i alone (SplitMix, below), so large tensors are filled in
// parallel, in chunks, with the same bytes on any number of cores; the
// float math below is fused-multiply-add-proof and free of
// platform-specific assembly. Integer dtypes always get integers in their
// range: Normal gives round(3x) saturated, Uniform, Ints and Specials
// [-8, 8], Large [-100, 100] (u8: [0, 16] and [0, 200]). Bool gets fair
// coin flips for every distribution.
func Random(dt ir.DType, shape []int64, d Dist, seed uint64) *Tensor {
	if d < 0 || int(d) >= len(distNames) {
		panic(fmt.Sprintf("tensor.Random: invalid distribution %v", d))
	}
	t := New(dt, shape)
	ForChunks(t.Len(), func(lo, hi int64) {
		for i := lo; i < hi; i++ {
			src := elemSource{seed: seed, i: uint64(i)}
			switch {
			case dt == ir.Bool:
				t.SetInt(i, int64(src.Uint64()>>63))
			case dt.IsInt():
				t.SetInt(i, randInt(&src, dt, d))
			default:
				t.SetFloat(i, randFloat(&src, d))
			}
		}
	})
	return t
}

// SplitMix returns the i'th output (from 0) of the SplitMix64 generator
// seeded with seed: its state after i+1 steps is seed + (i+1)·γ, so any
// output is computed directly, without the ones before it.
func SplitMix(seed, i uint64) uint64 {
	z := seed + (i+1)*0x9E3779B97F4A7C15
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// elemSource is the stream of random words that element i of a tensor
// draws from: its first word is SplitMix(seed, i); the rare value that
// needs more (a rejected draw in uniformN) takes them from a SplitMix
// generator of its own, seeded by that first word.
type elemSource struct {
	seed, i uint64
	n       uint64 // words drawn
	first   uint64
}

func (s *elemSource) Uint64() uint64 {
	s.n++
	if s.n == 1 {
		s.first = SplitMix(s.seed, s.i)
		return s.first
	}
	return SplitMix(s.first, s.n-2)
}

// ChunkLen is the number of elements each parallel task of ForChunks
// covers. It is fixed, not derived from the core count, so that a
// computation whose result depends on its chunks (a sum of per-chunk
// sums) does not depend on the machine.
const ChunkLen = 1 << 16

// ForChunks calls f on [0, n) split into chunks of ChunkLen elements, on
// all cores, and returns when every call has.
func ForChunks(n int64, f func(lo, hi int64)) {
	chunks := (n + ChunkLen - 1) / ChunkLen
	workers := min(int64(runtime.GOMAXPROCS(0)), chunks)
	if workers <= 1 {
		for lo := int64(0); lo < n; lo += ChunkLen {
			f(lo, min(lo+ChunkLen, n))
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				c := next.Add(1) - 1
				if c >= chunks {
					return
				}
				lo := c * ChunkLen
				f(lo, min(lo+ChunkLen, n))
			}
		})
	}
	wg.Wait()
}

func randInt(src *elemSource, dt ir.DType, d Dist) int64 {
	lo, hi := int64(-8), int64(8)
	switch d {
	case Normal:
		lo, hi := dt.IntRange()
		return min(max(int64(math.Round(3*normal(src))), lo), hi) // |3x| < 30, no overflow
	case Large:
		lo, hi = -100, 100
	}
	if dt == ir.U8 {
		lo, hi = 0, hi-lo // same width of range, shifted to be representable
	}
	return lo + int64(uniformN(src, uint64(hi-lo+1)))
}

func randFloat(src *elemSource, d Dist) float64 {
	switch d {
	case Normal:
		return normal(src)
	case Uniform:
		return float64(src.Uint64()>>11)*0x1p-52 - 1 // exact: k·2^-52 - 1 for k < 2^53
	case Specials:
		u := src.Uint64()
		if u&3 == 0 {
			return specialValues[(u>>2)%uint64(len(specialValues))]
		}
		return normalQuantile(float64(2*(u>>12)+1) * 0x1p-53)
	case Large:
		u := src.Uint64()
		mag := detExp(float64(math.Ln10 * (2 + float64(float64(u>>11)*0x1p-52))))
		if u&1 != 0 {
			return -mag
		}
		return mag
	}
	return float64(uniformN(src, 17)) - 8
}

// uniformN returns an integer uniform in [0, n) by Lemire's multiply and
// reject method.
func uniformN(src *elemSource, n uint64) uint64 {
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}

// normal draws a standard normal by inverting the CDF of a uniform in
// (0, 1). One draw per value keeps the stream position independent of the
// values, unlike rejection methods.
func normal(src *elemSource) float64 {
	k := src.Uint64() >> 12
	p := float64(2*k+1) * 0x1p-53 // exact, in (0, 1), symmetric: 1-p is exact too
	return normalQuantile(p)
}

// Coefficients of Peter Acklam's rational approximation to the normal
// quantile (relative error below 1.15e-9), highest degree first.
var (
	acklamA = [...]float64{-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00}
	acklamB = [...]float64{-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01, -1.328068155288572e+01, 1}
	acklamC = [...]float64{-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00}
	acklamD = [...]float64{7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00, 1}
)

const acklamLow = 0.02425

// normalQuantile returns x with Φ(x) = p for p in (0, 1).
func normalQuantile(p float64) float64 {
	switch {
	case p < acklamLow:
		q := math.Sqrt(float64(-2 * detLog(p))) // Sqrt is correctly rounded everywhere
		return horner(q, acklamC[:]) / horner(q, acklamD[:])
	case p > 1-acklamLow:
		q := math.Sqrt(float64(-2 * detLog(1-p)))
		return -horner(q, acklamC[:]) / horner(q, acklamD[:])
	}
	q := p - 0.5
	r := float64(q * q)
	return float64(horner(r, acklamA[:])*q) / horner(r, acklamB[:])
}

// horner evaluates a polynomial. The explicit float64 conversions forbid
// the compiler from fusing multiply and add, which it may do on some
// architectures and not others.
func horner(x float64, c []float64) float64 {
	r := c[0]
	for _, ci := range c[1:] {
		r = float64(r*x) + ci
	}
	return r
}

// detLog is the natural logarithm for finite x > 0, following Go's pure-Go
// math.log (FreeBSD's e_log.c) but with fusion forbidden; math.Log uses
// assembly on amd64 and may differ elsewhere in the last bit.
func detLog(x float64) float64 {
	const (
		ln2Hi = 6.93147180369123816490e-01
		ln2Lo = 1.90821492927058770002e-10
		l1    = 6.666666666666735130e-01
		l2    = 3.999999999940941908e-01
		l3    = 2.857142874366239149e-01
		l4    = 2.222219843214978396e-01
		l5    = 1.818357216161805012e-01
		l6    = 1.531383769920937332e-01
		l7    = 1.479819860511658591e-01
	)
	f1, ki := math.Frexp(x)
	if f1 < math.Sqrt2/2 {
		f1 *= 2
		ki--
	}
	f := f1 - 1
	k := float64(ki)
	s := f / (2 + f)
	s2 := float64(s * s)
	s4 := float64(s2 * s2)
	t1 := float64(s2 * horner(s4, []float64{l7, l5, l3, l1}))
	t2 := float64(s4 * horner(s4, []float64{l6, l4, l2}))
	R := t1 + t2
	hfsq := float64(float64(0.5*f) * f)
	return float64(k*ln2Hi) - ((hfsq - (float64(s*(hfsq+R)) + float64(k*ln2Lo))) - f)
}

// detExp is e^x for moderate x (|x| < 700), following Go's pure-Go
// math.exp with fusion forbidden, for the same reason as detLog.
func detExp(x float64) float64 {
	const (
		ln2Hi = 6.93147180369123816490e-01
		ln2Lo = 1.90821492927058770002e-10
		log2e = 1.44269504088896338700e+00
		p1    = 1.66666666666666657415e-01
		p2    = -2.77777777770155933842e-03
		p3    = 6.61375632143793436117e-05
		p4    = -1.65339022054652515390e-06
		p5    = 4.13813679705723846039e-08
	)
	var k int
	if x < 0 {
		k = int(float64(log2e*x) - 0.5)
	} else {
		k = int(float64(log2e*x) + 0.5)
	}
	hi := x - float64(float64(k)*ln2Hi)
	lo := float64(float64(k) * ln2Lo)
	r := hi - lo
	t := float64(r * r)
	c := r - float64(t*horner(t, []float64{p5, p4, p3, p2, p1}))
	y := 1 - ((lo - float64(r*c)/(2-c)) - hi)
	return math.Ldexp(y, k)
}
