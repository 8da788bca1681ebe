package ir

import (
	"fmt"
	"math"
)

// DType is the element type of a tensor or the type of a scalar expression.
type DType uint8

// The element types of the language. Invalid is the zero value and marks an
// expression whose type could not be determined (an error was reported).
const (
	Invalid DType = iota
	Bool
	I8
	U8
	I32
	I64
	F16
	BF16
	F32
	F64
)

var dtypeNames = [...]string{
	Invalid: "invalid",
	Bool:    "bool",
	I8:      "i8",
	U8:      "u8",
	I32:     "i32",
	I64:     "i64",
	F16:     "f16",
	BF16:    "bf16",
	F32:     "f32",
	F64:     "f64",
}

func (t DType) String() string {
	if int(t) < len(dtypeNames) {
		return dtypeNames[t]
	}
	return fmt.Sprintf("dtype(%d)", uint8(t))
}

// ParseDType returns the dtype spelled s, or Invalid.
func ParseDType(s string) DType {
	for i, n := range dtypeNames {
		if i != int(Invalid) && n == s {
			return DType(i)
		}
	}
	return Invalid
}

// DTypeNames lists the spellings of every valid dtype, in declaration order.
func DTypeNames() []string { return append([]string(nil), dtypeNames[1:]...) }

// IsFloat reports whether t is a floating-point type.
func (t DType) IsFloat() bool { return t == F16 || t == BF16 || t == F32 || t == F64 }

// IsInt reports whether t is an integer type.
func (t DType) IsInt() bool { return t == I8 || t == U8 || t == I32 || t == I64 }

// Size is the storage size of one element in bytes.
func (t DType) Size() int {
	switch t {
	case Bool, I8, U8:
		return 1
	case F16, BF16:
		return 2
	case I32, F32:
		return 4
	case I64, F64:
		return 8
	}
	return 0
}

// Compute is the type arithmetic on a t value runs in: f16 and bf16 widen
// to f32, every integer type to i64; f32, f64 and bool are kept.
func (t DType) Compute() DType {
	switch {
	case t == F16 || t == BF16:
		return F32
	case t.IsInt():
		return I64
	}
	return t
}

// IntRange is the range of values an integer dtype holds; bool counts as
// 0..1. Float types report the i64 range, which conversions to them never
// need.
func (t DType) IntRange() (lo, hi int64) {
	switch t {
	case Bool:
		return 0, 1
	case I8:
		return math.MinInt8, math.MaxInt8
	case U8:
		return 0, math.MaxUint8
	case I32:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}
