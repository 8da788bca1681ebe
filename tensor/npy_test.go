package tensor

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kgen.dev/kgen/ir"
)

// Files as numpy.save writes them (NumPy 2.x, checked against its output):
// the dict, 21 - len(str(shape[0])) spare spaces for rank > 0, padding and
// a newline, so that the data starts at byte 128.
var (
	npyF32x2x3 = "\x93NUMPY\x01\x00\x76\x00" +
		"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" + strings.Repeat(" ", 58) + "\n" +
		"\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40\x00\x00\xa0\x40\x00\x00\xc0\x40"
	npyF64Scalar = "\x93NUMPY\x01\x00\x76\x00" +
		"{'descr': '<f8', 'fortran_order': False, 'shape': (), }" + strings.Repeat(" ", 62) + "\n" +
		"\x00\x00\x00\x00\x00\x00\xf8\x3f"
	npyBool5 = "\x93NUMPY\x01\x00\x76\x00" +
		"{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }" + strings.Repeat(" ", 60) + "\n" +
		"\x01\x00\x01\x01\x00"
)

// npyFile builds a file around a hand-written header, padding it like
// NumPy does.
func npyFile(major byte, header string, data []byte) []byte {
	lenSize := 2
	if major > 1 {
		lenSize = 4
	}
	hlen := len(header) + 1
	pad := 64 - (8+lenSize+hlen)%64
	b := []byte("\x93NUMPY")
	b = append(b, major, 0)
	if lenSize == 2 {
		b = binary.LittleEndian.AppendUint16(b, uint16(hlen+pad))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(hlen+pad))
	}
	b = append(b, header...)
	b = append(b, strings.Repeat(" ", pad)...)
	b = append(b, '\n')
	return append(b, data...)
}

func mustRead(t *testing.T, b []byte) *Tensor {
	t.Helper()
	x, err := ReadNPY(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("ReadNPY: %v", err)
	}
	return x
}

func checkTensor(t *testing.T, x *Tensor, dt ir.DType, shape []int64, vals []float64) {
	t.Helper()
	if x.DType != dt || !slices.Equal(x.Shape, shape) {
		t.Fatalf("got %v %v, want %v %v", x.DType, x.Shape, dt, shape)
	}
	if x.Len() != int64(len(vals)) || len(x.Data) != len(vals)*dt.Size() {
		t.Fatalf("Len = %d, len(Data) = %d, want %d elements", x.Len(), len(x.Data), len(vals))
	}
	for i, v := range vals {
		if got := x.Float(int64(i)); !sameF(got, v) {
			t.Errorf("element %d = %v, want %v", i, got, v)
		}
	}
}

func TestNPYHandFiles(t *testing.T) {
	for _, tc := range []struct {
		file  string
		dt    ir.DType
		shape []int64
		vals  []float64
	}{
		{npyF32x2x3, ir.F32, []int64{2, 3}, []float64{1, 2, 3, 4, 5, 6}},
		{npyF64Scalar, ir.F64, []int64{}, []float64{1.5}},
		{npyBool5, ir.Bool, []int64{5}, []float64{1, 0, 1, 1, 0}},
	} {
		if len(tc.file)-len(tc.vals)*tc.dt.Size() != 128 {
			t.Fatalf("test file header is %d bytes", len(tc.file)-len(tc.vals)*tc.dt.Size())
		}
		x := mustRead(t, []byte(tc.file))
		checkTensor(t, x, tc.dt, tc.shape, tc.vals)

		// Built from scratch, not from the decoded tensor.
		y := New(tc.dt, tc.shape)
		for i, v := range tc.vals {
			y.SetFloat(int64(i), v)
		}
		var buf bytes.Buffer
		if err := WriteNPY(&buf, y); err != nil {
			t.Fatal(err)
		}
		if buf.String() != tc.file {
			t.Errorf("WriteNPY:\n got %q\nwant %q", buf.String(), tc.file)
		}
	}
}

func TestNPYReadVariants(t *testing.T) {
	for _, tc := range []struct {
		name  string
		file  []byte
		dt    ir.DType
		shape []int64
		vals  []float64
	}{
		{"big-endian i4", npyFile(1, "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }",
			[]byte{0, 0, 1, 2, 0xFF, 0xFF, 0xFF, 0xFE}), ir.I32, []int64{2}, []float64{258, -2}},
		{"big-endian f2", npyFile(1, "{'descr': '>f2', 'fortran_order': False, 'shape': (1,), }",
			[]byte{0x3C, 0x00}), ir.F16, []int64{1}, []float64{1}},
		{"big-endian f8", npyFile(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (), }",
			[]byte{0x3F, 0xF8, 0, 0, 0, 0, 0, 0}), ir.F64, []int64{}, []float64{1.5}},
		{"big-endian i8", npyFile(1, "{'descr': '>i8', 'fortran_order': False, 'shape': (1,), }",
			[]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFD}), ir.I64, []int64{1}, []float64{-3}},
		{"native f4", npyFile(1, "{'descr': '=f4', 'fortran_order': False, 'shape': (1,), }",
			binary.NativeEndian.AppendUint32(nil, math.Float32bits(-0.25))), ir.F32, []int64{1}, []float64{-0.25}},
		{"i1 u1", npyFile(1, "{'descr': '|i1', 'fortran_order': False, 'shape': (2,), }",
			[]byte{0x80, 0x7F}), ir.I8, []int64{2}, []float64{-128, 127}},
		{"u1", npyFile(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }",
			[]byte{0x80, 0x7F}), ir.U8, []int64{2}, []float64{128, 127}},
		{"bool not 0/1", npyFile(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }",
			[]byte{7, 0}), ir.Bool, []int64{2}, []float64{1, 0}},
		{"other spelling", npyFile(1, `{ "shape" : ( 3 , 1 ) , "fortran_order":False,'descr':"<i8"}`,
			[]byte{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0}),
			ir.I64, []int64{3, 1}, []float64{1, 2, 3}},
		{"python2 long", npyFile(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (1L, 2L), }",
			[]byte{0, 0x3C, 0, 0xC0}), ir.F16, []int64{1, 2}, []float64{1, -2}},
		{"version 2.0", npyFile(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }",
			[]byte{0, 0, 0x80, 0x3F}), ir.F32, []int64{1}, []float64{1}},
		{"version 3.0", npyFile(3, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }",
			[]byte{0, 0, 0x80, 0x3F}), ir.F32, []int64{1}, []float64{1}},
		{"empty", npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }",
			nil), ir.F32, []int64{0, 3}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkTensor(t, mustRead(t, tc.file), tc.dt, tc.shape, tc.vals)
		})
	}
}

func TestNPYErrors(t *testing.T) {
	f4 := func(h string) []byte { return npyFile(1, h, make([]byte, 64)) }
	for _, tc := range []struct {
		name, want string
		file       []byte
	}{
		{"fortran", "fortran_order", f4("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }")},
		{"complex", "<c8", f4("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }")},
		{"u2", "<u2", f4("{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }")},
		{"object", "|O", f4("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }")},
		{"structured", "structured", f4("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }")},
		{"bad magic", "magic", []byte("\x93NUMPZ\x01\x00\x00\x00")},
		{"version", "version 4.0", []byte("\x93NUMPY\x04\x00\x00\x00")},
		{"not a dict", "not a dict", f4("('<f4', False, (2,))")},
		{"missing key", "shape", f4("{'descr': '<f4', 'fortran_order': False}")},
		{"extra key", "extra", f4("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}")},
		{"shape not tuple", "shape", f4("{'descr': '<f4', 'fortran_order': False, 'shape': [1], }")},
		{"shape (5) is an int", "shape", f4("{'descr': '<f4', 'fortran_order': False, 'shape': (5), }")},
		{"negative dim", "shape", f4("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }")},
		{"overflow", "too large", f4("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }")},
		{"huge but short", "truncated", f4("{'descr': '<f8', 'fortran_order': False, 'shape': (134217728,), }")},
		{"garbage", "malformed", f4("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), } x")},
		{"unterminated", "malformed", f4("{'descr': '<f4")},
		{"deep", "malformed", f4(strings.Repeat("(", 10000))},
		{"short data", "truncated", npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", make([]byte, 11))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadNPY(bytes.NewReader(tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

// TestNPYTruncated cuts a valid file at every length.
func TestNPYTruncated(t *testing.T) {
	for _, f := range []string{npyF32x2x3, npyF64Scalar, npyBool5} {
		for n := range len(f) {
			if _, err := ReadNPY(strings.NewReader(f[:n])); err == nil {
				t.Errorf("ReadNPY of %d of %d bytes succeeded", n, len(f))
			} else if n > 0 && !errors.Is(err, io.ErrUnexpectedEOF) && !strings.Contains(err.Error(), "truncated") && !strings.Contains(err.Error(), "malformed") {
				t.Errorf("ReadNPY of %d of %d bytes: %v", n, len(f), err)
			}
		}
	}
}

func TestNPYRoundTrip(t *testing.T) {
	for _, dt := range allDTypes {
		for _, shape := range [][]int64{{}, {5}, {2, 3, 4}, {0}} {
			x := Random(dt, shape, Normal, 7)
			var buf bytes.Buffer
			if err := WriteNPY(&buf, x); err != nil {
				t.Fatal(err)
			}
			dataLen := len(x.Data)
			if dt == ir.BF16 {
				dataLen *= 2 // written as f32
			}
			if (buf.Len()-dataLen)%64 != 0 {
				t.Errorf("%v %v: data does not start on a 64-byte boundary", dt, shape)
			}
			y := mustRead(t, buf.Bytes())
			want := dt
			if dt == ir.BF16 {
				want = ir.F32
			}
			if y.DType != want || !slices.Equal(y.Shape, x.Shape) {
				t.Fatalf("%v %v: read back %v %v", dt, shape, y.DType, y.Shape)
			}
			if dt != ir.BF16 && !bytes.Equal(x.Data, y.Data) {
				t.Errorf("%v %v: data differs", dt, shape)
			}
			for i := range x.Len() {
				if !sameF(x.Float(i), y.Float(i)) {
					t.Errorf("%v %v: element %d: %v became %v", dt, shape, i, x.Float(i), y.Float(i))
				}
			}
		}
	}
}

func TestWriteBF16AsF32(t *testing.T) {
	x := New(ir.BF16, []int64{3})
	x.SetFloat(0, 1)
	x.SetFloat(1, -2.5)
	x.SetFloat(2, math.Pi) // 0x4049 = 3.140625
	var buf bytes.Buffer
	if err := WriteNPY(&buf, x); err != nil {
		t.Fatal(err)
	}
	want := "\x93NUMPY\x01\x00\x76\x00" +
		"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }" + strings.Repeat(" ", 60) + "\n" +
		"\x00\x00\x80\x3f\x00\x00\x20\xc0\x00\x00\x49\x40"
	if buf.String() != want {
		t.Errorf("got  %q\nwant %q", buf.String(), want)
	}
}

func TestNPYConcatenated(t *testing.T) {
	r := strings.NewReader(npyF64Scalar + npyBool5)
	a, err1 := ReadNPY(r)
	b, err2 := ReadNPY(r)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	checkTensor(t, a, ir.F64, []int64{}, []float64{1.5})
	checkTensor(t, b, ir.Bool, []int64{5}, []float64{1, 0, 1, 1, 0})
	if _, err := ReadNPY(r); err == nil {
		t.Error("reading past the end succeeded")
	}
}

// TestNPYVersion2 needs a header over 64 KiB, which only a very high rank
// produces.
func TestNPYVersion2(t *testing.T) {
	shape := make([]int64, 30000)
	for i := range shape {
		shape[i] = 1
	}
	x := New(ir.I32, shape)
	x.SetInt(0, -7)
	var buf bytes.Buffer
	if err := WriteNPY(&buf, x); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if b[6] != 2 || b[7] != 0 {
		t.Fatalf("version %d.%d, want 2.0", b[6], b[7])
	}
	if hlen := binary.LittleEndian.Uint32(b[8:]); (12+int(hlen))%64 != 0 || int(hlen)+12+4 != len(b) {
		t.Errorf("header length %d, file %d bytes", hlen, len(b))
	}
	y := mustRead(t, b)
	if len(y.Shape) != 30000 || y.Int(0) != -7 {
		t.Errorf("read back rank %d value %d", len(y.Shape), y.Int(0))
	}
}

func TestWriteNPYErrors(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteNPY(&buf, &Tensor{DType: ir.F32, Shape: []int64{2}, Data: make([]byte, 4)}); err == nil {
		t.Error("inconsistent data size accepted")
	}
	if err := WriteNPY(&buf, &Tensor{DType: ir.Invalid, Shape: []int64{}, Data: nil}); err == nil {
		t.Error("invalid dtype accepted")
	}
}

func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.npy")
	x := Random(ir.F16, []int64{3, 5}, Uniform, 1)
	if err := Save(path, x); err != nil {
		t.Fatal(err)
	}
	y, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x.Data, y.Data) || !slices.Equal(x.Shape, y.Shape) || y.DType != ir.F16 {
		t.Error("Load(Save(x)) != x")
	}

	// A failing Save leaves the old file and no temporaries behind.
	bad := &Tensor{DType: ir.F32, Shape: []int64{4}, Data: make([]byte, 3)}
	if err := Save(path, bad); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Save of a bad tensor: %v, want an error naming %s", err, path)
	}
	if y, err := Load(path); err != nil || !bytes.Equal(y.Data, x.Data) {
		t.Errorf("old file damaged by a failed Save: %v", err)
	}
	// Overwriting works.
	z := Random(ir.I8, []int64{2}, Ints, 2)
	if err := Save(path, z); err != nil {
		t.Fatal(err)
	}
	if y, err := Load(path); err != nil || y.DType != ir.I8 || !bytes.Equal(y.Data, z.Data) {
		t.Errorf("overwrite: %v", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 1 || ents[0].Name() != "x.npy" {
		t.Errorf("directory holds %v, want just x.npy", ents)
	}

	missing := filepath.Join(dir, "missing.npy")
	if _, err := Load(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("Load of a missing file: %v", err)
	}
	corrupt := filepath.Join(dir, "corrupt.npy")
	if err := os.WriteFile(corrupt, []byte(npyF32x2x3[:140]), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(corrupt); err == nil || !strings.Contains(err.Error(), corrupt) {
		t.Errorf("Load of a truncated file: %v", err)
	}
	if err := Save(filepath.Join(dir, "nodir", "x.npy"), x); err == nil || !strings.Contains(err.Error(), "nodir") {
		t.Errorf("Save into a missing directory: %v", err)
	}
}

func FuzzReadNPY(f *testing.F) {
	for _, s := range []string{npyF32x2x3, npyF64Scalar, npyBool5, npyF32x2x3[:100], ""} {
		f.Add([]byte(s))
	}
	f.Add(npyFile(3, "{'descr': '>f2', 'fortran_order': False, 'shape': (2, 1), }", []byte{1, 2, 3, 4}))
	f.Add(npyFile(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", []byte{1, 2, 3, 4}))
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := ReadNPY(bytes.NewReader(b))
		if err != nil {
			return
		}
		if int64(len(x.Data)) != x.Len()*int64(x.DType.Size()) {
			t.Fatalf("%v %v with %d bytes", x.DType, x.Shape, len(x.Data))
		}
		var buf bytes.Buffer
		if err := WriteNPY(&buf, x); err != nil {
			t.Fatalf("WriteNPY of a read tensor: %v", err)
		}
		y, err := ReadNPY(&buf)
		if err != nil {
			t.Fatalf("re-reading: %v", err)
		}
		if y.DType != x.DType || !slices.Equal(y.Shape, x.Shape) || !bytes.Equal(y.Data, x.Data) {
			t.Fatal("round trip changed the tensor")
		}
	})
}
