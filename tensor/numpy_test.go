package tensor

import (
	"math"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"kgen.dev/kgen/ir"
)

// These tests check interoperability with a real NumPy and use it as an
// independent implementation of float64 -> float16/float32 rounding. They
// skip when python3 or numpy is not installed.

func needNumPy(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping NumPy interop in short mode")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		t.Skip("numpy not available")
	}
}

func runPython(t *testing.T, script string, args ...string) string {
	t.Helper()
	cmd := exec.Command("python3", append([]string{"-c", script}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg += "\n" + string(ee.Stderr)
		}
		t.Fatalf("python: %s", msg)
	}
	return string(out)
}

// parsePyFloat parses float.hex() output and Python's spellings of
// infinities and NaN.
func parsePyFloat(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("bad float %q from python", s)
	}
	return v
}

// Python side of TestNumPyReadsGo: for each file print the dtype, the
// shape, whether numpy.save reproduces the file byte for byte, and every
// value as float.hex.
const pyDump = `
import io, sys, numpy as np
for path in sys.argv[1:]:
    a = np.load(path)
    b = io.BytesIO(); np.save(b, a)
    same = b.getvalue() == open(path, 'rb').read()
    vals = ' '.join(float(x).hex() for x in a.ravel())
    print(a.dtype.str, repr(a.shape).replace(' ', ''), same, vals)
`

func TestNumPyReadsGo(t *testing.T) {
	needNumPy(t)
	dir := t.TempDir()
	var paths []string
	var tensors []*Tensor
	for _, dt := range allDTypes {
		for _, shape := range [][]int64{{}, {5}, {2, 3, 4}, {0, 2}} {
			for _, d := range allDists {
				x := Random(dt, shape, d, 3)
				p := filepath.Join(dir, dt.String()+"_"+d.String()+"_"+strconv.Itoa(len(paths))+".npy")
				if err := Save(p, x); err != nil {
					t.Fatal(err)
				}
				paths = append(paths, p)
				tensors = append(tensors, x)
			}
		}
	}
	lines := strings.Split(strings.TrimRight(runPython(t, pyDump, paths...), "\n"), "\n")
	if len(lines) != len(paths) {
		t.Fatalf("python printed %d lines for %d files", len(lines), len(paths))
	}
	for i, line := range lines {
		x := tensors[i]
		f := strings.Fields(line)
		wantDescr := descrs[x.DType]
		var dims []string
		for _, d := range x.Shape {
			dims = append(dims, strconv.FormatInt(d, 10))
		}
		wantShape := "(" + strings.Join(dims, ",") + ")"
		if len(x.Shape) == 1 {
			wantShape = "(" + dims[0] + ",)"
		}
		if f[0] != wantDescr || f[1] != wantShape || f[2] != "True" {
			t.Errorf("%s: numpy sees %s %s, resave identical %s; want %s %s", paths[i], f[0], f[1], f[2], wantDescr, wantShape)
		}
		vals := f[3:]
		if int64(len(vals)) != x.Len() {
			t.Fatalf("%s: numpy read %d values, want %d", paths[i], len(vals), x.Len())
		}
		for j, s := range vals {
			if got, want := parsePyFloat(t, s), x.Float(int64(j)); !sameF(got, want) {
				t.Errorf("%s: element %d: numpy %v, Go %v", paths[i], j, got, want)
			}
		}
	}
}

// Python side of TestGoReadsNumPy: write arrays of every supported dtype,
// both byte orders, awkward values and shapes, plus the expected values.
const pyWrite = `
import sys, os, numpy as np
d = sys.argv[1]
special = [0.0, -0.0, 1.0, -2.5, 65504.0, 6e-8, 1e-40, float('inf'), float('-inf'), float('nan'), 1/3]
arrays = {
  'f8': np.array(special, '<f8'),
  'f8be': np.array(special, '>f8').reshape(11, 1),
  'f4': np.array(special, '<f4'),
  'f4be': np.array(special, '>f4'),
  'f2': np.array(special, '<f2'),
  'f2be': np.array(special, '>f2'),
  'i8': np.array([0, -1, 2**63 - 1, -2**63, 2**53 + 1], '<i8'),
  'i8be': np.array([0, -1, 2**62, -2**40], '>i8'),
  'i4': np.arange(-12, 12, dtype='<i4').reshape(2, 3, 4),
  'i4be': np.array([[-2**31, 2**31 - 1]], '>i4'),
  'i1': np.array([-128, 127, 0, -1], 'i1'),
  'u1': np.array([0, 255, 128], 'u1'),
  'b1': np.array([True, False, True], '?'),
  'scalar': np.array(2.75),
  'empty': np.zeros((3, 0), 'f4'),
  'noncontig': np.arange(12, dtype='f4').reshape(3, 4)[:, ::2],
}
for name, a in arrays.items():
    np.save(os.path.join(d, name + '.npy'), a)
    print(name, ' '.join(float(x).hex() for x in a.ravel()))
np.save(os.path.join(d, 'fortran.npy'), np.asfortranarray(np.zeros((2, 3), 'f4')))
np.save(os.path.join(d, 'complex.npy'), np.zeros(2, 'c8'))
`

func TestGoReadsNumPy(t *testing.T) {
	needNumPy(t)
	dir := t.TempDir()
	wantDT := map[string]ir.DType{
		"f8": ir.F64, "f8be": ir.F64, "f4": ir.F32, "f4be": ir.F32, "f2": ir.F16, "f2be": ir.F16,
		"i8": ir.I64, "i8be": ir.I64, "i4": ir.I32, "i4be": ir.I32, "i1": ir.I8, "u1": ir.U8, "b1": ir.Bool,
		"scalar": ir.F64, "empty": ir.F32, "noncontig": ir.F32,
	}
	for _, line := range strings.Split(strings.TrimRight(runPython(t, pyWrite, dir), "\n"), "\n") {
		f := strings.Fields(line)
		name := f[0]
		x, err := Load(filepath.Join(dir, name+".npy"))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if x.DType != wantDT[name] {
			t.Errorf("%s: dtype %v, want %v", name, x.DType, wantDT[name])
		}
		if int64(len(f)-1) != x.Len() {
			t.Errorf("%s: %d elements, want %d", name, x.Len(), len(f)-1)
			continue
		}
		for j, s := range f[1:] {
			want := parsePyFloat(t, s)
			if got := x.Float(int64(j)); !sameF(got, want) {
				t.Errorf("%s: element %d = %v, want %v", name, j, got, want)
			}
		}
		if x.DType == ir.I64 {
			// Float rounds beyond 2^53; check the exact values too.
			want := map[string][]int64{
				"i8":   {0, -1, math.MaxInt64, math.MinInt64, 1<<53 + 1},
				"i8be": {0, -1, 1 << 62, -(1 << 40)},
			}[name]
			for j, w := range want {
				if got := x.Int(int64(j)); got != w {
					t.Errorf("%s: element %d = %d, want %d", name, j, got, w)
				}
			}
		}
	}
	x, err := Load(filepath.Join(dir, "noncontig.npy"))
	if err != nil || !slices.Equal(x.Shape, []int64{3, 2}) {
		t.Errorf("noncontig: %v, shape %v", err, x)
	}
	if _, err := Load(filepath.Join(dir, "fortran.npy")); err == nil || !strings.Contains(err.Error(), "fortran") {
		t.Errorf("fortran-order file: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "complex.npy")); err == nil || !strings.Contains(err.Error(), "<c8") {
		t.Errorf("complex file: %v", err)
	}
}

// TestNumPyRounding has NumPy round float64 values, chosen near f16 and f32
// ties and boundaries, and compares with our encodings.
func TestNumPyRounding(t *testing.T) {
	needNumPy(t)
	r := rand.New(rand.NewPCG(8, 9))
	var vals []float64
	near := func(v float64) {
		vals = append(vals, v, -v, math.Nextafter(v, 0), math.Nextafter(v, math.Inf(1)))
	}
	for range 20000 {
		// f16 neighbours and their midpoint, over the whole f16 range.
		b := uint16(r.IntN(0x7C00))
		lo, hi := refDecode(b, 10, 15), refDecode(b+1, 10, 15)
		if b == 0x7BFF {
			hi = 65536
		}
		near((lo + hi) / 2)
		// f32 midpoints.
		f := math.Float32frombits(r.Uint32() & 0x7F7FFFFF)
		near((float64(f) + float64(math.Nextafter32(f, float32(math.Inf(1))))) / 2)
		vals = append(vals, math.Float64frombits(r.Uint64()))
	}
	vals = append(vals, math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1e300, 1e-300, math.MaxFloat32*1.0000001)
	src := New(ir.F64, []int64{int64(len(vals))})
	for i, v := range vals {
		src.SetFloat(int64(i), v)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.npy")
	if err := Save(in, src); err != nil {
		t.Fatal(err)
	}
	const script = `
import sys, numpy as np
a = np.load(sys.argv[1])
with np.errstate(all='ignore'):
    np.save(sys.argv[2], a.astype('<f2'))
    np.save(sys.argv[3], a.astype('<f4'))
`
	f16p, f32p := filepath.Join(dir, "f16.npy"), filepath.Join(dir, "f32.npy")
	runPython(t, script, in, f16p, f32p)
	h, err := Load(f16p)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load(f32p)
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i, v := range vals {
		if math.IsNaN(v) {
			continue // NaN payloads are not specified
		}
		if got, want := f16Bits(v), le.Uint16(h.Data[2*i:]); got != want {
			if bad++; bad < 10 {
				t.Errorf("f16(%v [%#016x]) = %#04x, numpy %#04x", v, math.Float64bits(v), got, want)
			}
		}
		if got, want := f32Bits(v), le.Uint32(s.Data[4*i:]); got != want {
			if bad++; bad < 10 {
				t.Errorf("f32(%v [%#016x]) = %#08x, numpy %#08x", v, math.Float64bits(v), got, want)
			}
		}
	}
	if t.Failed() {
		t.Logf("%d mismatches of %d", bad, len(vals))
	}
}
