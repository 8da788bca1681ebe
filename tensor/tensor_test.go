package tensor

import (
	"bytes"
	"math"
	"testing"

	"kgen.dev/kgen/ir"
)

var allDTypes = []ir.DType{ir.Bool, ir.I8, ir.U8, ir.I32, ir.I64, ir.F16, ir.BF16, ir.F32, ir.F64}

func TestNew(t *testing.T) {
	shape := []int64{2, 3, 4}
	x := New(ir.F16, shape)
	shape[0] = 7
	if x.Shape[0] != 2 {
		t.Error("New aliases the caller's shape")
	}
	if x.Len() != 24 || len(x.Data) != 48 {
		t.Errorf("Len = %d, len(Data) = %d, want 24, 48", x.Len(), len(x.Data))
	}
	if s := New(ir.F64, nil); s.Len() != 1 || len(s.Data) != 8 || s.Shape == nil || len(s.Shape) != 0 {
		t.Errorf("rank 0: Len = %d, len(Data) = %d, Shape = %#v", s.Len(), len(s.Data), s.Shape)
	}
	if e := New(ir.I32, []int64{3, 0}); e.Len() != 0 || len(e.Data) != 0 {
		t.Errorf("empty: Len = %d, len(Data) = %d", e.Len(), len(e.Data))
	}
	for _, bad := range []func(){
		func() { New(ir.Invalid, []int64{1}) },
		func() { New(ir.F32, []int64{-1}) },
		func() { New(ir.F64, []int64{1 << 40, 1 << 40}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("New did not panic on a bad argument")
				}
			}()
			bad()
		}()
	}
}

// TestSetHand stores hand-picked values and checks the raw little-endian
// bytes against values worked out by hand.
func TestSetHand(t *testing.T) {
	tests := []struct {
		dt   ir.DType
		set  func(x *Tensor)
		want []byte
	}{
		{ir.I8, func(x *Tensor) { x.SetInt(0, 300) }, []byte{44}}, // 300 mod 256
		{ir.I8, func(x *Tensor) { x.SetInt(0, -129) }, []byte{0x7F}},
		{ir.I8, func(x *Tensor) { x.SetFloat(0, 300.7) }, []byte{0x7F}},
		{ir.I8, func(x *Tensor) { x.SetFloat(0, -300.7) }, []byte{0x80}},
		{ir.I8, func(x *Tensor) { x.SetFloat(0, -2.9) }, []byte{0xFE}},
		{ir.I8, func(x *Tensor) { x.SetFloat(0, math.NaN()) }, []byte{0}},
		{ir.U8, func(x *Tensor) { x.SetInt(0, -1) }, []byte{0xFF}},
		{ir.U8, func(x *Tensor) { x.SetFloat(0, -1) }, []byte{0}},
		{ir.U8, func(x *Tensor) { x.SetFloat(0, 255.9) }, []byte{0xFF}},
		{ir.U8, func(x *Tensor) { x.SetFloat(0, math.NaN()) }, []byte{0}},
		{ir.I32, func(x *Tensor) { x.SetInt(0, 1<<31) }, []byte{0, 0, 0, 0x80}},
		{ir.I32, func(x *Tensor) { x.SetInt(0, 1<<40+5) }, []byte{5, 0, 0, 0}},
		{ir.I32, func(x *Tensor) { x.SetFloat(0, 3e9) }, []byte{0xFF, 0xFF, 0xFF, 0x7F}},
		{ir.I32, func(x *Tensor) { x.SetFloat(0, math.Inf(-1)) }, []byte{0, 0, 0, 0x80}},
		{ir.I32, func(x *Tensor) { x.SetFloat(0, math.NaN()) }, []byte{0, 0, 0, 0}},
		{ir.I64, func(x *Tensor) { x.SetFloat(0, 1e19) }, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F}},
		{ir.I64, func(x *Tensor) { x.SetFloat(0, -1e19) }, []byte{0, 0, 0, 0, 0, 0, 0, 0x80}},
		{ir.I64, func(x *Tensor) { x.SetFloat(0, math.NaN()) }, []byte{0, 0, 0, 0, 0, 0, 0, 0}},
		{ir.I64, func(x *Tensor) { x.SetInt(0, -2) }, []byte{0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}},
		{ir.Bool, func(x *Tensor) { x.SetFloat(0, 0.5) }, []byte{1}},
		{ir.Bool, func(x *Tensor) { x.SetFloat(0, math.Copysign(0, -1)) }, []byte{0}},
		{ir.Bool, func(x *Tensor) { x.SetInt(0, 256) }, []byte{1}},
		{ir.F16, func(x *Tensor) { x.SetFloat(0, 1) }, []byte{0x00, 0x3C}},
		{ir.F16, func(x *Tensor) { x.SetFloat(0, 65520) }, []byte{0x00, 0x7C}},
		{ir.F16, func(x *Tensor) { x.SetInt(0, 2049) }, []byte{0x00, 0x68}},
		{ir.BF16, func(x *Tensor) { x.SetFloat(0, 1+p2(-8)+p2(-40)) }, []byte{0x81, 0x3F}},
		{ir.F32, func(x *Tensor) { x.SetFloat(0, 1) }, []byte{0, 0, 0x80, 0x3F}},
		{ir.F32, func(x *Tensor) { x.SetInt(0, 1<<60+1<<36+1) }, []byte{0x01, 0x00, 0x80, 0x5D}},
		{ir.F64, func(x *Tensor) { x.SetFloat(0, 1.5) }, []byte{0, 0, 0, 0, 0, 0, 0xF8, 0x3F}},
		{ir.F64, func(x *Tensor) { x.SetFloat(0, math.Float64frombits(0x7FF0000000000001)) }, []byte{1, 0, 0, 0, 0, 0, 0xF8, 0x7F}}, // signalling NaN quieted
		{ir.F16, func(x *Tensor) { x.SetFloat(0, math.Float64frombits(0xFFF0000000000001)) }, []byte{0x00, 0xFE}},
		{ir.F64, func(x *Tensor) { x.SetInt(0, 1<<53+1) }, []byte{0, 0, 0, 0, 0, 0, 0x40, 0x43}}, // 2^53
	}
	for i, tc := range tests {
		x := New(tc.dt, nil)
		tc.set(x)
		if !bytes.Equal(x.Data, tc.want) {
			t.Errorf("case %d (%v): Data = % x, want % x", i, tc.dt, x.Data, tc.want)
		}
	}
}

// TestGetHand reads hand-encoded bytes.
func TestGetHand(t *testing.T) {
	tests := []struct {
		dt    ir.DType
		data  []byte
		float float64
		int   int64
	}{
		{ir.Bool, []byte{1}, 1, 1},
		{ir.Bool, []byte{0}, 0, 0},
		{ir.I8, []byte{0xFE}, -2, -2},
		{ir.U8, []byte{0xFE}, 254, 254},
		{ir.I32, []byte{0xFE, 0xFF, 0xFF, 0xFF}, -2, -2},
		{ir.I64, []byte{1, 0, 0, 0, 0, 0, 0x20, 0}, 1 << 53, 1<<53 + 1}, // Float rounds, Int is exact
		{ir.F16, []byte{0x01, 0x00}, p2(-24), 0},
		{ir.F16, []byte{0x00, 0xC1}, -2.5, -2},
		{ir.F16, []byte{0xFF, 0x7B}, 65504, 65504},
		{ir.F16, []byte{0x00, 0x7C}, math.Inf(1), math.MaxInt64},
		{ir.BF16, []byte{0x49, 0x40}, 3.140625, 3},
		{ir.F32, []byte{0x00, 0x00, 0x6E, 0xC3}, -238, -238},
		{ir.F32, []byte{0x00, 0x00, 0xC0, 0x7F}, math.NaN(), 0},
		{ir.F32, []byte{0x01, 0x00, 0x00, 0x00}, float64(math.SmallestNonzeroFloat32), 0},
		{ir.F64, []byte{0, 0, 0, 0, 0, 0, 0xF0, 0xC3}, -p2(64), math.MinInt64},
		{ir.F64, []byte{0x9A, 0x99, 0x99, 0x99, 0x99, 0x99, 0x0D, 0xC0}, -3.7, -3},
	}
	for i, tc := range tests {
		x := &Tensor{DType: tc.dt, Shape: []int64{}, Data: tc.data}
		if got := x.Float(0); !sameF(got, tc.float) {
			t.Errorf("case %d (%v): Float = %v, want %v", i, tc.dt, got, tc.float)
		}
		if got := x.Int(0); got != tc.int {
			t.Errorf("case %d (%v): Int = %d, want %d", i, tc.dt, got, tc.int)
		}
	}
}

func TestSetFloatNaN(t *testing.T) {
	for _, dt := range []ir.DType{ir.F16, ir.BF16, ir.F32, ir.F64} {
		x := New(dt, nil)
		x.SetFloat(0, math.NaN())
		if v := x.Float(0); !math.IsNaN(v) {
			t.Errorf("%v: NaN stored as %v", dt, v)
		}
	}
}

func TestRoundFloat(t *testing.T) {
	tests := []struct {
		dt   ir.DType
		v    float64
		want float64
	}{
		{ir.F16, 65520, math.Inf(1)},
		{ir.F16, 1 + p2(-11) + p2(-40), 1 + p2(-10)},
		{ir.BF16, 1 + p2(-8) + p2(-40), 1 + p2(-7)},
		{ir.F32, 0.1, float64(float32(0.1))},
		{ir.F64, 0.1, 0.1},
		{ir.I8, 300.7, 127},
		{ir.I8, -2.9, -2},
		{ir.U8, -5, 0},
		{ir.I32, math.NaN(), 0},
		{ir.I64, 1e300, p2(63)},
		{ir.Bool, math.NaN(), 1},
		{ir.Bool, 0, 0},
	}
	for _, tc := range tests {
		if got := RoundFloat(tc.dt, tc.v); !sameF(got, tc.want) {
			t.Errorf("RoundFloat(%v, %v) = %v, want %v", tc.dt, tc.v, got, tc.want)
		}
	}
}

// TestRoundFloatMatchesSetFloat checks the documented equivalence on
// awkward values for every dtype.
func TestRoundFloatMatchesSetFloat(t *testing.T) {
	vals := []float64{0, -0.5, 0.5, 1.5, -2.5, 127.5, 255.5, 65519, 65520, 1e10, -1e10, 1e300, math.Inf(-1), math.NaN(), p2(-24), p2(-140)}
	for _, dt := range allDTypes {
		x := New(dt, nil)
		for _, v := range vals {
			x.SetFloat(0, v)
			if got, want := RoundFloat(dt, v), x.Float(0); !sameF(got, want) && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Errorf("%v: RoundFloat(%v) = %v, SetFloat stores %v", dt, v, got, want)
			}
		}
	}
}

func TestConvert(t *testing.T) {
	src := New(ir.F32, []int64{2, 2})
	for i, v := range []float64{1.5, -2.7, 300, math.NaN()} {
		src.SetFloat(int64(i), v)
	}
	i8 := src.Convert(ir.I8)
	if !bytes.Equal(i8.Data, []byte{1, 0xFE, 0x7F, 0}) || i8.Shape[0] != 2 || i8.Shape[1] != 2 {
		t.Errorf("f32->i8 = % x shape %v", i8.Data, i8.Shape)
	}

	ints := New(ir.I32, []int64{3})
	for i, v := range []int64{300, -1, 65520} {
		ints.SetInt(int64(i), v)
	}
	if got := ints.Convert(ir.I8).Data; !bytes.Equal(got, []byte{44, 0xFF, 0xF0}) {
		t.Errorf("i32->i8 = % x, want 2c ff f0", got)
	}
	if got := ints.Convert(ir.U8).Data; !bytes.Equal(got, []byte{44, 0xFF, 0xF0}) {
		t.Errorf("i32->u8 = % x, want 2c ff f0", got)
	}
	if got := ints.Convert(ir.F16).Data; !bytes.Equal(got, []byte{0xB0, 0x5C, 0x00, 0xBC, 0x00, 0x7C}) {
		t.Errorf("i32->f16 = % x", got) // 300 = 0x5CB0, -1 = 0xBC00, 65520 = Inf
	}
	if got := ints.Convert(ir.Bool).Data; !bytes.Equal(got, []byte{1, 1, 1}) {
		t.Errorf("i32->bool = % x", got)
	}

	big := New(ir.I64, []int64{1})
	big.SetInt(0, 1<<60+1<<36+1)
	if got := big.Convert(ir.F32).Data; !bytes.Equal(got, []byte{0x01, 0x00, 0x80, 0x5D}) {
		t.Errorf("i64->f32 = % x, want 01 00 80 5d (rounded once)", got)
	}

	h := New(ir.F64, []int64{1})
	h.SetFloat(0, 1+p2(-11)+p2(-40))
	if got := h.Convert(ir.F16).Data; !bytes.Equal(got, []byte{0x01, 0x3C}) {
		t.Errorf("f64->f16 = % x, want 01 3c", got)
	}
	if got := h.Convert(ir.F16).Convert(ir.BF16).Data; !bytes.Equal(got, []byte{0x80, 0x3F}) {
		t.Errorf("f16->bf16 = % x, want 80 3f", got)
	}

	same := h.Convert(ir.F64)
	same.Data[0] ^= 1
	if same.Data[0] == h.Data[0] {
		t.Error("Convert to the same dtype aliases the source")
	}
}
