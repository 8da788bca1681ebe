// Package tensor holds dense host tensors for kgen's reference interpreter:
// element access with the exact rounding and saturation rules the generated
// kernels are checked against, NumPy .npy files for exchanging inputs and
// outputs with other tools, and seeded random inputs that are identical on
// every platform.
package tensor

import (
	"encoding/binary"
	"fmt"
	"math"

	"kgen.dev/kgen/ir"
)

// Tensor is a dense row-major (C order) host tensor; Data holds little-endian
// elements of DType. Little-endian storage keeps Data byte-identical to the
// payload of an .npy file and to device buffers on every target kgen has.
type Tensor struct {
	DType ir.DType
	Shape []int64
	Data  []byte
}

var le = binary.LittleEndian

// New returns a zeroed tensor. It panics on an invalid dtype or a negative
// or overflowing shape: both are programming errors, and npy input is
// validated before it gets here.
func New(dt ir.DType, shape []int64) *Tensor {
	if dt.Size() == 0 {
		panic(fmt.Sprintf("tensor.New: invalid dtype %v", dt))
	}
	n, ok := numElements(shape, dt.Size())
	if !ok {
		panic(fmt.Sprintf("tensor.New: invalid shape %v for %v", shape, dt))
	}
	return &Tensor{
		DType: dt,
		Shape: append([]int64{}, shape...), // never aliases the caller's slice; rank 0 is non-nil
		Data:  make([]byte, n*int64(dt.Size())),
	}
}

// numElements returns the product of shape, and false when a dimension is
// negative or the byte size of elements of size sz would not fit in an int.
func numElements(shape []int64, sz int) (int64, bool) {
	limit := int64(math.MaxInt) / int64(sz)
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return 0, false
		}
		if d != 0 && n > limit/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// Len returns the number of elements, 1 for rank 0.
func (t *Tensor) Len() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Float returns element i as a float64. The widening is exact except for
// i64 values beyond 2^53, which are rounded to nearest even.
func (t *Tensor) Float(i int64) float64 {
	d := t.Data
	switch t.DType {
	case ir.Bool:
		if d[i] != 0 {
			return 1
		}
		return 0
	case ir.I8:
		return float64(int8(d[i]))
	case ir.U8:
		return float64(d[i])
	case ir.I32:
		return float64(int32(le.Uint32(d[4*i:])))
	case ir.I64:
		return f64FromInt(int64(le.Uint64(d[8*i:])))
	case ir.F16:
		return f16Float(le.Uint16(d[2*i:]))
	case ir.BF16:
		return bf16Float(le.Uint16(d[2*i:]))
	case ir.F32:
		return f32Float(le.Uint32(d[4*i:]))
	case ir.F64:
		return math.Float64frombits(le.Uint64(d[8*i:]))
	}
	panic(fmt.Sprintf("tensor: invalid dtype %v", t.DType))
}

// Int returns element i as an int64. Floats are truncated toward zero and
// saturated, with NaN read as 0, so that the result never depends on Go's
// unspecified out-of-range conversions.
func (t *Tensor) Int(i int64) int64 {
	d := t.Data
	switch t.DType {
	case ir.Bool:
		if d[i] != 0 {
			return 1
		}
		return 0
	case ir.I8:
		return int64(int8(d[i]))
	case ir.U8:
		return int64(d[i])
	case ir.I32:
		return int64(int32(le.Uint32(d[4*i:])))
	case ir.I64:
		return int64(le.Uint64(d[8*i:]))
	}
	return truncSat(t.Float(i), math.MinInt64, math.MaxInt64)
}

// SetFloat stores v at element i, rounded the way a kernel stores it: float
// dtypes round to nearest even in one step from float64 (overflow gives
// ±Inf, NaN stays a quiet NaN), integer dtypes truncate toward zero and
// saturate (NaN gives 0), and bool stores v != 0.
func (t *Tensor) SetFloat(i int64, v float64) {
	d := t.Data
	switch t.DType {
	case ir.Bool:
		d[i] = boolByte(v != 0)
	case ir.I8:
		d[i] = byte(truncSat(v, math.MinInt8, math.MaxInt8))
	case ir.U8:
		d[i] = byte(truncSat(v, 0, math.MaxUint8))
	case ir.I32:
		le.PutUint32(d[4*i:], uint32(truncSat(v, math.MinInt32, math.MaxInt32)))
	case ir.I64:
		le.PutUint64(d[8*i:], uint64(truncSat(v, math.MinInt64, math.MaxInt64)))
	case ir.F16:
		le.PutUint16(d[2*i:], f16Bits(v))
	case ir.BF16:
		le.PutUint16(d[2*i:], bf16Bits(v))
	case ir.F32:
		le.PutUint32(d[4*i:], f32Bits(v))
	case ir.F64:
		le.PutUint64(d[8*i:], math.Float64bits(quiet(v)))
	default:
		panic(fmt.Sprintf("tensor: invalid dtype %v", t.DType))
	}
}

// quiet sets the quiet bit of a NaN, as every narrower store does, so that
// a signalling NaN never reaches a kernel's input.
func quiet(v float64) float64 {
	if isNaN(v) {
		return math.Float64frombits(math.Float64bits(v) | 1<<51)
	}
	return v
}

// SetInt stores v at element i. Integer dtypes wrap like a C cast; float
// dtypes round the exact integer once, so i64 values beyond 2^53 are not
// rounded twice; bool stores v != 0.
func (t *Tensor) SetInt(i int64, v int64) {
	d := t.Data
	switch t.DType {
	case ir.Bool:
		d[i] = boolByte(v != 0)
	case ir.I8, ir.U8:
		d[i] = byte(v)
	case ir.I32:
		le.PutUint32(d[4*i:], uint32(v))
	case ir.I64:
		le.PutUint64(d[8*i:], uint64(v))
	case ir.F16:
		le.PutUint16(d[2*i:], f16FromInt(v))
	case ir.BF16:
		le.PutUint16(d[2*i:], bf16FromInt(v))
	case ir.F32:
		le.PutUint32(d[4*i:], f32FromInt(v))
	case ir.F64:
		le.PutUint64(d[8*i:], math.Float64bits(f64FromInt(v)))
	default:
		panic(fmt.Sprintf("tensor: invalid dtype %v", t.DType))
	}
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// RoundFloat returns the value SetFloat would store for v, read back as a
// float64, so that scalar code can apply the same rounding without a
// tensor.
func RoundFloat(dt ir.DType, v float64) float64 {
	switch dt {
	case ir.Bool:
		if v != 0 {
			return 1
		}
		return 0
	case ir.I8, ir.U8, ir.I32, ir.I64:
		lo, hi := dt.IntRange()
		return float64(truncSat(v, lo, hi)) // i64 extremes round to ±2^63, as Float would
	case ir.F16:
		return f16Float(f16Bits(v))
	case ir.BF16:
		return bf16Float(bf16Bits(v))
	case ir.F32:
		return f32Float(f32Bits(v))
	case ir.F64:
		return quiet(v)
	}
	panic(fmt.Sprintf("tensor: invalid dtype %v", dt))
}

// Convert returns a copy of t converted element-wise to dt. Float sources
// go through Float/SetFloat; integer and bool sources go through
// Int/SetInt, which wraps between integer types and rounds large i64 values
// into float types exactly once.
func (t *Tensor) Convert(dt ir.DType) *Tensor {
	out := New(dt, t.Shape)
	if dt == t.DType {
		copy(out.Data, t.Data)
		return out
	}
	n := t.Len()
	if t.DType.IsFloat() {
		for i := range n {
			out.SetFloat(i, t.Float(i))
		}
	} else {
		for i := range n {
			out.SetInt(i, t.Int(i))
		}
	}
	return out
}
