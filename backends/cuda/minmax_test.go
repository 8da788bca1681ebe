package cuda

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestHostMinMaxConvert runs the prelude's min, max, clamp and narrow
// float-to-integer conversions, as the host emulator and HIP on AMD GPUs
// compile them (NVIDIA GPUs take max.NaN, min.NaN and cvt instead), on
// NaN, infinities and signed zeros, and compares every result bit for bit
// with Go's: min and max are IEEE 754-2019's minimum and maximum there as
// in the reference interpreter (NaN when either operand is; -0 below +0),
// and a conversion truncates toward zero, saturates and gives 0 for NaN.
func TestHostMinMaxConvert(t *testing.T) {
	gxx := emulatorGxx(t)
	negZero := math.Copysign(0, -1)
	values := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, negZero, 1, -1, 2.5, -2.5, 127.9, 128, -128.5, -129, 255.5, 256, 3e9, -3e9, 1e39}
	dir := t.TempDir()
	src := filepath.Join(dir, "m.cpp")
	main := `
#include <cstdio>
#include <cstring>
static unsigned long long bits(double x) { unsigned long long u; memcpy(&u, &x, 8); return u; }
static unsigned bitsf(float x) { unsigned u; memcpy(&u, &x, 4); return u; }
int main() {
  double a, b;
  while (scanf("%lf %lf", &a, &b) == 2) {
    float fa = (float)a, fb = (float)b;
    printf("%08x %08x %08x %016llx %016llx %d %d %d %d\n",
      bitsf(kg_max<float>(fa, fb)), bitsf(kg_min<float>(fa, fb)), bitsf(kg_clamp<float>(fa, -1.0f, fb)),
      bits(kg_max<double>(a, b)), bits(kg_min<double>(a, b)),
      kg_f2i32(fa, -128, 127), kg_f2i32(fa, 0, 255), kg_f2i32(a, -2147483647 - 1, 2147483647), kg_f2i32(fa, -2147483647 - 1, 2147483647));
  }
}
`
	if err := os.WriteFile(src, []byte(CUDA.Emit(nil, 32)+main), 0o644); err != nil {
		t.Fatal(err)
	}
	shim, _ := filepath.Abs("testdata/host/shim.h")
	bin := filepath.Join(dir, "m")
	if out, err := exec.Command(gxx, "-std=c++20", "-O1", "-w", "-include", shim, "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	var in strings.Builder
	var pairs [][2]float64
	for _, a := range values {
		for _, b := range values {
			fmt.Fprintf(&in, "%s %s\n", cNumber(a), cNumber(b))
			pairs = append(pairs, [2]float64{a, b})
		}
	}
	cmd := exec.Command(bin)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	f32 := func(x float64) float64 { return float64(float32(x)) }
	i := 0
	for ; sc.Scan(); i++ {
		a, b := pairs[i][0], pairs[i][1]
		f := strings.Fields(sc.Text())
		check := func(what string, got string, want float64, single bool) {
			t.Helper()
			u, err := strconv.ParseUint(got, 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			g := math.Float64frombits(u)
			if single {
				g = float64(math.Float32frombits(uint32(u)))
			}
			if math.IsNaN(want) && math.IsNaN(g) {
				return
			}
			if g != want || math.Signbit(g) != math.Signbit(want) {
				t.Errorf("%s(%v, %v) = %v, want %v", what, a, b, g, want)
			}
		}
		fa, fb := f32(a), f32(b)
		check("kg_max<float>", f[0], max(fa, fb), true)
		check("kg_min<float>", f[1], min(fa, fb), true)
		check("kg_clamp<float>(a, -1, b)", f[2], min(max(fa, -1), fb), true)
		check("kg_max<double>", f[3], max(a, b), false)
		check("kg_min<double>", f[4], min(a, b), false)
		for j, c := range []struct {
			x      float64
			lo, hi int64
		}{{fa, -128, 127}, {fa, 0, 255}, {a, math.MinInt32, math.MaxInt32}, {fa, math.MinInt32, math.MaxInt32}} {
			want := int64(0)
			switch {
			case math.IsNaN(c.x):
			case c.x <= float64(c.lo):
				want = c.lo
			case c.x >= float64(c.hi):
				want = c.hi
			default:
				want = int64(math.Trunc(c.x))
			}
			if got, _ := strconv.ParseInt(f[5+j], 10, 64); got != want {
				t.Errorf("kg_f2i32(%v, %d, %d) = %d, want %d", c.x, c.lo, c.hi, got, want)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if i != len(pairs) {
		t.Fatalf("%d results for %d pairs", i, len(pairs))
	}
}

// cNumber writes x as scanf's %lf reads it.
func cNumber(x float64) string {
	switch {
	case math.IsNaN(x):
		return "nan"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}
