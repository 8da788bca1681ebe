package interp

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/tensor"
)

// matmulKernel is C[m, n] = sum[k](A[m, k] * B[k, n]) in dt, accumulating
// in f32 (f64 for f64), as the checker produces it.
func matmulKernel(dt ir.DType) *ir.Kernel {
	k := kernel("matmul")
	M, N, K := dim(k, "M"), dim(k, "N"), dim(k, "K")
	A := input(k, "A", dt, dr(M), dr(K))
	B := input(k, "B", dt, dr(K), dr(N))
	C := output(k, "C", dt, dr(M), dr(N))
	acc := ir.F32
	if dt == ir.F64 {
		acc = ir.F64
	}
	widen := func(e ir.Expr) ir.Expr {
		if dt == acc {
			return e
		}
		return cast(acc, e)
	}
	ix := over(C, "m", "n")
	kk := idx("k", ic(0), dr(K))
	var v ir.Expr = sum(acc, axes(kk), mul(widen(load(A, ref(ix[0]), ref(kk))), widen(load(B, ref(kk), ref(ix[1])))))
	if dt != acc {
		v = cast(dt, v)
	}
	stmt(k, C, ix, v)
	return k
}

func TestMatmulExact(t *testing.T) {
	k := verified(t, matmulKernel(ir.F32))
	const M, N, K = 3, 5, 4
	env := bind(t, k, map[string]int64{"M": M, "N": N, "K": K}, nil)
	a := make([]float64, M*K)
	b := make([]float64, K*N)
	for i := range a {
		a[i] = float64(i%7 - 3)
	}
	for i := range b {
		b[i] = float64((i*5)%9 - 4)
	}
	outs := run(t, k, env, fromFloats(ir.F32, []int64{M, K}, a...), fromFloats(ir.F32, []int64{K, N}, b...))
	want := make([]float64, M*N)
	for m := range M {
		for n := range N {
			for kk := range K {
				want[m*N+n] += a[m*K+kk] * b[kk*N+n]
			}
		}
	}
	if diff := cmp.Diff(want, floats(outs[0])); diff != "" {
		t.Errorf("matmul (-want +got):\n%s", diff)
	}
	if !cmp.Equal(outs[0].Shape, []int64{M, N}) {
		t.Errorf("shape %v, want [3 5]", outs[0].Shape)
	}
}

func TestMatmulGeneralLoop(t *testing.T) {
	// C[m, n] = sum[k]((A[m, k] ?? 0) * B[k, n]) over k in 0..K+1: the
	// read of A is padded, the read of B faults at k = K, and both take the
	// general loop rather than the strided one.
	k := matmulKernel(ir.F32)
	K := k.Dims[2]
	red := k.Stmts[0].Value.(*ir.Reduce)
	red.Axes[0].Hi = add(dr(K), ic(1))
	mulExpr := red.Body.(*ir.Binary)
	verified(t, k)
	env := bind(t, k, map[string]int64{"M": 2, "N": 2, "K": 3}, nil)
	a := fromFloats(ir.F32, []int64{2, 3}, 1, 2, 3, 4, 5, 6)
	b := fromFloats(ir.F32, []int64{3, 2}, 1, -1, 2, -2, 3, -3)
	_, err := Run(k, env, []*tensor.Tensor{a, b}, Options{})
	if err == nil || !strings.Contains(err.Error(), "out-of-range read A[0, 3]: index 3 is outside dim 2 of A (extent K = 3) at m=0, n=0, k=3") {
		t.Errorf("got error %v, want one reading A[0, 3]", err)
	}
	mulExpr.X.(*ir.Load).Default = fc(0)
	_, err = Run(k, env, []*tensor.Tensor{a, b}, Options{})
	if err == nil || !strings.Contains(err.Error(), "out-of-range read B[3, 0]: index 3 is outside dim 1 of B (extent K = 3) at m=0, n=0, k=3") {
		t.Errorf("got error %v, want one reading B[3, 0]", err)
	}
	mulExpr.Y.(*ir.Load).Default = fc(100)
	got := floats(run(t, k, env, a, b)[0])
	// Row m of A dotted with column n of B, plus A's padding 0 times 100.
	want := []float64{1 + 4 + 9, -(1 + 4 + 9), 4 + 10 + 18, -(4 + 10 + 18)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestMatmulBF16(t *testing.T) {
	// bf16 inputs widen to f32, accumulate unrounded, and round once on store.
	k := verified(t, matmulKernel(ir.BF16))
	env := bind(t, k, map[string]int64{"M": 1, "N": 1, "K": 2}, nil)
	// 1 + 2^-7 and 1: the exact sum 2 + 2^-7 is halfway between 2 and 2 + 2^-6 in
	// bf16 and rounds to even, 2.
	a := fromFloats(ir.BF16, []int64{1, 2}, 1+0x1p-7, 1)
	b := fromFloats(ir.BF16, []int64{2, 1}, 1, 1)
	got := floats(run(t, k, env, a, b)[0])
	if got[0] != 2 {
		t.Errorf("bf16 matmul = %v, want 2", got[0])
	}
}

func TestSoftmax(t *testing.T) {
	k := kernel("softmax")
	R, D := dim(k, "R"), dim(k, "D")
	X := input(k, "X", ir.F32, dr(R), dr(D))
	Y := output(k, "Y", ir.F32, dr(R), dr(D))
	mx := let(k, "mx", ir.F32, dr(R))
	den := let(k, "den", ir.F32, dr(R))
	{
		ix := over(mx, "r")
		d := idx("d", ic(0), dr(D))
		stmt(k, mx, ix, reduce(ir.Max, ir.F32, axes(d), load(X, ref(ix[0]), ref(d))))
	}
	{
		ix := over(den, "r")
		d := idx("d", ic(0), dr(D))
		stmt(k, den, ix, sum(ir.F32, axes(d), call(ir.Exp, ir.F32, sub(load(X, ref(ix[0]), ref(d)), load(mx, ref(ix[0]))))))
	}
	{
		ix := over(Y, "r", "d")
		r, d := ref(ix[0]), ref(ix[1])
		stmt(k, Y, ix, div(call(ir.Exp, ir.F32, sub(load(X, r, d), load(mx, r))), load(den, r)))
	}
	verified(t, k)
	const nr, nd = 3, 7
	env := bind(t, k, map[string]int64{"R": nr, "D": nd}, nil)
	xs := make([]float64, nr*nd)
	for i := range xs {
		xs[i] = float64(float32(math.Sin(float64(i)) * 3))
	}
	xs[nd+2] = 80 // large logits must not overflow
	got := floats(run(t, k, env, fromFloats(ir.F32, []int64{nr, nd}, xs...))[0])
	for r := range nr {
		row := xs[r*nd : (r+1)*nd]
		var total float64
		for _, x := range row {
			total += math.Exp(x)
		}
		rowSum := 0.0
		for d, x := range row {
			want := math.Exp(x) / total
			g := got[r*nd+d]
			if math.Abs(g-want) > 1e-6*want+1e-30 {
				t.Errorf("Y[%d, %d] = %v, want %v", r, d, g, want)
			}
			if g != float64(float32(g)) {
				t.Errorf("Y[%d, %d] = %v is not an f32 value", r, d, g)
			}
			rowSum += g
		}
		if math.Abs(rowSum-1) > 1e-6 {
			t.Errorf("row %d sums to %v", r, rowSum)
		}
	}
}

// convKernel is conv2d with stride and padding, reading X with ?? 0.
func convKernel() *ir.Kernel {
	k := kernel("conv2d")
	N, C, H, W, F, KH, KW := dim(k, "N"), dim(k, "C"), dim(k, "H"), dim(k, "W"), dim(k, "F"), dim(k, "KH"), dim(k, "KW")
	stride := param(k, "stride", ir.I32, &ir.Const{T: ir.I32, I: 1})
	pad := param(k, "pad", ir.I32, &ir.Const{T: ir.I32, I: 0})
	s, p := cast(ir.I64, pr(stride)), cast(ir.I64, pr(pad))
	out := func(in, kd *ir.Dim) ir.Expr {
		return add(div(sub(add(dr(in), mul(ic(2), p)), dr(kd)), s), ic(1))
	}
	OH := derived(k, "OH", out(H, KH))
	OW := derived(k, "OW", out(W, KW))
	X := input(k, "X", ir.F32, dr(N), dr(C), dr(H), dr(W))
	Wt := input(k, "Wt", ir.F32, dr(F), dr(C), dr(KH), dr(KW))
	Y := output(k, "Y", ir.F32, dr(N), dr(F), dr(OH), dr(OW))
	ix := over(Y, "n", "f", "oh", "ow")
	c, kh, kw := idx("c", ic(0), dr(C)), idx("kh", ic(0), dr(KH)), idx("kw", ic(0), dr(KW))
	x := loadOr(X, fc(0), ref(ix[0]), ref(c),
		sub(add(mul(ref(ix[2]), s), ref(kh)), p),
		sub(add(mul(ref(ix[3]), s), ref(kw)), p))
	stmt(k, Y, ix, sum(ir.F32, axes(c, kh, kw), mul(x, load(Wt, ref(ix[1]), ref(c), ref(kh), ref(kw)))))
	return k
}

func TestConvPadding(t *testing.T) {
	k := verified(t, convKernel())
	for _, tc := range []struct{ stride, pad int64 }{{1, 0}, {1, 1}, {2, 1}, {2, 2}} {
		const n, c, h, w, f, kh, kw = 2, 3, 6, 5, 4, 3, 2
		env := bind(t, k, map[string]int64{"N": n, "C": c, "H": h, "W": w, "F": f, "KH": kh, "KW": kw},
			map[string]*ir.Const{"stride": {T: ir.I32, I: tc.stride}, "pad": {T: ir.I32, I: tc.pad}})
		oh := (h+2*tc.pad-kh)/tc.stride + 1
		ow := (w+2*tc.pad-kw)/tc.stride + 1
		xs := make([]float64, n*c*h*w)
		for i := range xs {
			xs[i] = float64(i%11 - 5)
		}
		ws := make([]float64, f*c*kh*kw)
		for i := range ws {
			ws[i] = float64(i%5 - 2)
		}
		got := run(t, k, env, fromFloats(ir.F32, []int64{n, c, h, w}, xs...), fromFloats(ir.F32, []int64{f, c, kh, kw}, ws...))[0]
		if !cmp.Equal(got.Shape, []int64{n, f, oh, ow}) {
			t.Fatalf("stride %d pad %d: shape %v, want %v", tc.stride, tc.pad, got.Shape, []int64{n, f, oh, ow})
		}
		want := make([]float64, 0, n*f*oh*ow)
		for in := range int64(n) {
			for jf := range int64(f) {
				for y := range oh {
					for x := range ow {
						var acc float64
						for jc := range int64(c) {
							for dy := range int64(kh) {
								for dx := range int64(kw) {
									iy, ix := y*tc.stride+dy-tc.pad, x*tc.stride+dx-tc.pad
									if iy < 0 || iy >= h || ix < 0 || ix >= w {
										continue // zero padding
									}
									acc += xs[((in*c+jc)*h+iy)*w+ix] * ws[((jf*c+jc)*kh+dy)*kw+dx]
								}
							}
						}
						want = append(want, acc)
					}
				}
			}
		}
		if diff := cmp.Diff(want, floats(got)); diff != "" {
			t.Errorf("stride %d pad %d (-want +got):\n%s", tc.stride, tc.pad, diff)
		}
	}
}

// castKernel is Y[i] = to(X[i]).
func castKernel(from, to ir.DType) *ir.Kernel {
	k := kernel("cast")
	N := dim(k, "N")
	X := input(k, "X", from, dr(N))
	Y := output(k, "Y", to, dr(N))
	ix := over(Y, "i")
	stmt(k, Y, ix, cast(to, load(X, ref(ix[0]))))
	return k
}

func TestBF16StoreRounding(t *testing.T) {
	k := verified(t, castKernel(ir.F64, ir.BF16))
	in := []float64{
		1 + 0x1p-8,           // halfway between 1 and 1+2^-7: ties to even, 1
		1 + 3*0x1p-8,         // halfway between 1+2^-7 and 1+2^-6: ties to even, 1+2^-6
		1 + 0x1p-8 + 0x1p-30, // just above halfway: 1+2^-7
		-(1 + 3*0x1p-8),      // sign is kept
		3.4e38,               // beyond bf16's largest finite value after rounding: +Inf
		0x1p-133,             // smallest bf16 subnormal
		math.NaN(),           //
		math.Inf(-1),         //
		0.1,                  // 0x3DCD
		65504,                // 0x477FE0 in f32: bf16 0x4780 (65536)
	}
	wantBits := []uint16{0x3F80, 0x3F82, 0x3F81, 0xBF82, 0x7F80, 0x0001, 0x7FC0, 0xFF80, 0x3DCD, 0x4780}
	env := bind(t, k, map[string]int64{"N": int64(len(in))}, nil)
	got := run(t, k, env, fromFloats(ir.F64, []int64{int64(len(in))}, in...))[0]
	for i, w := range wantBits {
		b := uint16(got.Data[2*i]) | uint16(got.Data[2*i+1])<<8
		if b != w {
			t.Errorf("bf16(%v) = %#04x, want %#04x", in[i], b, w)
		}
	}
}

func TestIntCasts(t *testing.T) {
	// i64 -> i32 wraps (two's complement).
	k := verified(t, castKernel(ir.I64, ir.I32))
	in := []int64{1 << 31, 3_000_000_000, -(1 << 31) - 1, 1<<32 + 5, -7}
	want := []int64{-(1 << 31), 3_000_000_000 - (1 << 32), 1<<31 - 1, 5, -7}
	got := ints(run(t, k, bind(t, k, map[string]int64{"N": 5}, nil), fromInts(ir.I64, []int64{5}, in...))[0])
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("i32(i64) (-want +got):\n%s", diff)
	}

	// f64 -> i32 truncates toward zero and saturates; NaN gives 0.
	k = verified(t, castKernel(ir.F64, ir.I32))
	fin := []float64{-2.7, 2.7, 1e10, -1e10, math.NaN(), math.Inf(1), -0.5}
	want = []int64{-2, 2, math.MaxInt32, math.MinInt32, 0, math.MaxInt32, 0}
	got = ints(run(t, k, bind(t, k, map[string]int64{"N": 7}, nil), fromFloats(ir.F64, []int64{7}, fin...))[0])
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("i32(f64) (-want +got):\n%s", diff)
	}

	// i64 -> u8 wraps.
	k = verified(t, castKernel(ir.I64, ir.U8))
	got = ints(run(t, k, bind(t, k, map[string]int64{"N": 3}, nil), fromInts(ir.I64, []int64{3}, 256, -1, 300))[0])
	if diff := cmp.Diff([]int64{0, 255, 44}, got); diff != "" {
		t.Errorf("u8(i64) (-want +got):\n%s", diff)
	}

	// i64 -> f32 rounds once, to nearest even, also beyond 2^53.
	k = verified(t, castKernel(ir.I64, ir.F32))
	iin := []int64{1<<24 + 1, 1<<24 + 3, 1<<62 + 1<<38 + 1}
	wantF := []float64{1 << 24, 1<<24 + 4, 1<<62 + 1<<39}
	gotF := floats(run(t, k, bind(t, k, map[string]int64{"N": 3}, nil), fromInts(ir.I64, []int64{3}, iin...))[0])
	if diff := cmp.Diff(wantF, gotF); diff != "" {
		t.Errorf("f32(i64) (-want +got):\n%s", diff)
	}
}

func TestI32OverflowWrapOnStore(t *testing.T) {
	// Y[i] = i32(A[i] * B[i]) with i32 inputs widened to i64: the product is
	// exact in i64 and wraps on the store conversion.
	k := kernel("mul32")
	N := dim(k, "N")
	A := input(k, "A", ir.I32, dr(N))
	B := input(k, "B", ir.I32, dr(N))
	Y := output(k, "Y", ir.I32, dr(N))
	ix := over(Y, "i")
	i := ref(ix[0])
	stmt(k, Y, ix, cast(ir.I32, mul(cast(ir.I64, load(A, i)), cast(ir.I64, load(B, i)))))
	verified(t, k)
	a := []int64{65536, 2_000_000_000, -3, 46341}
	b := []int64{32768, 2, 5, 46341}
	want := []int64{math.MinInt32, 2*2_000_000_000 - 1<<32, -15, 46341*46341 - 1<<32}
	env := bind(t, k, map[string]int64{"N": 4}, nil)
	got := ints(run(t, k, env, fromInts(ir.I32, []int64{4}, a...), fromInts(ir.I32, []int64{4}, b...))[0])
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestFloorDivMod(t *testing.T) {
	k := kernel("divmod")
	N := dim(k, "N")
	A := input(k, "A", ir.I64, dr(N))
	B := input(k, "B", ir.I64, dr(N))
	Q := output(k, "Q", ir.I64, dr(N))
	R := output(k, "R", ir.I64, dr(N))
	ix := over(Q, "i")
	stmt(k, Q, ix, div(load(A, ref(ix[0])), load(B, ref(ix[0]))))
	ix = over(R, "i")
	stmt(k, R, ix, mod(load(A, ref(ix[0])), load(B, ref(ix[0]))))
	verified(t, k)
	a := []int64{-7, 7, -7, 7, -8, 0, math.MinInt64}
	b := []int64{2, -2, -2, 2, 2, -3, -1}
	wantQ := []int64{-4, -4, 3, 3, -4, 0, math.MinInt64}
	wantR := []int64{1, -1, -1, 1, 0, 0, 0}
	env := bind(t, k, map[string]int64{"N": 7}, nil)
	outs := run(t, k, env, fromInts(ir.I64, []int64{7}, a...), fromInts(ir.I64, []int64{7}, b...))
	if diff := cmp.Diff(wantQ, ints(outs[0])); diff != "" {
		t.Errorf("a / b (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantR, ints(outs[1])); diff != "" {
		t.Errorf("a %% b (-want +got):\n%s", diff)
	}

	// Division by zero is a run-time error at the division.
	src := diag.NewSource("divmod.kg", "kernel divmod<N>(A: i64[N], B: i64[N]) -> (Q: i64[N]) { Q[i] = A[i] / B[i] }")
	start := strings.Index(src.Text, "A[i] / B[i]")
	k.Stmts[0].Value.(*ir.Binary).Span = diag.Span{Src: src, Start: start, End: start + len("A[i] / B[i]")}
	b[4] = 0
	_, err := Run(k, env, []*tensor.Tensor{fromInts(ir.I64, []int64{7}, a...), fromInts(ir.I64, []int64{7}, b...)}, Options{})
	var re *RunError
	if !errors.As(err, &re) {
		t.Fatalf("division by zero: got %v, want a *RunError", err)
	}
	if want := "integer division by zero in A[i] / B[i] at i=4"; re.Msg != want {
		t.Errorf("message %q, want %q", re.Msg, want)
	}
	if want := "divmod.kg:1:64: integer division by zero"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q, want prefix %q", err, want)
	}
}

func TestFloatMod(t *testing.T) {
	k := kernel("fmod")
	N := dim(k, "N")
	A := input(k, "A", ir.F64, dr(N))
	Y := output(k, "Y", ir.F64, dr(N))
	ix := over(Y, "i")
	stmt(k, Y, ix, mod(load(A, ref(ix[0])), fc64(2)))
	verified(t, k)
	in := []float64{-7.5, 7.5, -2, 0.25}
	want := []float64{0.5, 1.5, 0, 0.25}
	got := floats(run(t, k, bind(t, k, map[string]int64{"N": 4}, nil), fromFloats(ir.F64, []int64{4}, in...))[0])
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// shiftKernel is Y[i] = X[i + 1], with def as ?? fallback when non-nil.
func shiftKernel(def ir.Expr, span diag.Span) *ir.Kernel {
	k := kernel("shift")
	N := dim(k, "N")
	X := input(k, "X", ir.F32, dr(N))
	Y := output(k, "Y", ir.F32, dr(N))
	ix := over(Y, "i")
	l := loadOr(X, def, add(ref(ix[0]), ic(1)))
	l.Span = span
	stmt(k, Y, ix, l)
	return k
}

func TestOutOfRangeRead(t *testing.T) {
	text := "kernel shift<N>(X: f32[N]) -> (Y: f32[N]) {\n  Y[i] = X[i + 1]\n}\n"
	src := diag.NewSource("shift.kg", text)
	start := strings.Index(text, "X[i + 1]")
	span := diag.Span{Src: src, Start: start, End: start + len("X[i + 1]")}
	k := verified(t, shiftKernel(nil, span))
	env := bind(t, k, map[string]int64{"N": 5}, nil)
	for _, workers := range []int{1, 4} {
		_, err := Run(k, env, []*tensor.Tensor{fromFloats(ir.F32, []int64{5}, 1, 2, 3, 4, 5)}, Options{Workers: workers})
		var re *RunError
		if !errors.As(err, &re) {
			t.Fatalf("got %v, want a *RunError", err)
		}
		if re.Span != span {
			t.Errorf("span %v, want %v", re.Span, span)
		}
		want := "out-of-range read X[5]: index 5 is outside dim 1 of X (extent N = 5) at i=4; write 'X[...] ?? v' to read v outside X"
		if re.Msg != want {
			t.Errorf("message\n%q, want\n%q", re.Msg, want)
		}
		if want := "shift.kg:2:10: out-of-range read X[5]"; !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Error() = %q, want prefix %q", err, want)
		}
	}
}

func TestFirstErrorIsDeterministic(t *testing.T) {
	// Y[i, j] = X[i, j - 60]: out of range for every j < 60 of every row; the
	// error must name the first point, (0, 0), whatever the worker count.
	k := kernel("many")
	N := dim(k, "N")
	X := input(k, "X", ir.F32, dr(N), dr(N))
	Y := output(k, "Y", ir.F32, dr(N), dr(N))
	ix := over(Y, "i", "j")
	stmt(k, Y, ix, load(X, ref(ix[0]), sub(ref(ix[1]), ic(60))))
	verified(t, k)
	env := bind(t, k, map[string]int64{"N": 100}, nil)
	in, err := RandomInputs(k, env, tensor.Normal, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{1, 2, 3, 8, 64} {
		_, err := Run(k, env, in, Options{Workers: w})
		if err == nil || !strings.Contains(err.Error(), "X[0, -60]") || !strings.Contains(err.Error(), "at i=0, j=0") {
			t.Errorf("workers %d: error %v, want one at X[0, -60], i=0, j=0", w, err)
		}
	}
}

func TestDefault(t *testing.T) {
	k := verified(t, shiftKernel(fc(7), diag.Span{}))
	got := floats(run(t, k, bind(t, k, map[string]int64{"N": 4}, nil), fromFloats(ir.F32, []int64{4}, 1, 2, 3, 4))[0])
	if diff := cmp.Diff([]float64{2, 3, 4, 7}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	// The default is evaluated only out of range: here it would fault.
	k = kernel("lazy")
	N := dim(k, "N")
	X := input(k, "X", ir.F32, dr(N))
	Y := output(k, "Y", ir.F32, dr(N))
	ix := over(Y, "i")
	i := ref(ix[0])
	stmt(k, Y, ix, loadOr(X, load(X, add(i, ic(100))), i))
	verified(t, k)
	got = floats(run(t, k, bind(t, k, map[string]int64{"N": 3}, nil), fromFloats(ir.F32, []int64{3}, 5, 6, 7))[0])
	if diff := cmp.Diff([]float64{5, 6, 7}, got); diff != "" {
		t.Errorf("lazy default (-want +got):\n%s", diff)
	}
}

func TestSelectEvaluatesOneBranch(t *testing.T) {
	// Y[i] = i < N - 1 ? X[i + 1] : -1: the guarded read never faults.
	k := kernel("guard")
	N := dim(k, "N")
	X := input(k, "X", ir.I64, dr(N))
	Y := output(k, "Y", ir.I64, dr(N))
	ix := over(Y, "i")
	i := ref(ix[0])
	stmt(k, Y, ix, sel(lt(i, sub(dr(N), ic(1))), load(X, add(i, ic(1))), ic(-1)))
	verified(t, k)
	got := ints(run(t, k, bind(t, k, map[string]int64{"N": 4}, nil), fromInts(ir.I64, []int64{4}, 10, 20, 30, 40))[0])
	if diff := cmp.Diff([]int64{20, 30, 40, -1}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestEmptyReductions(t *testing.T) {
	// Y*[i] = red[k](X[i, k]) with K = 0.
	for _, dt := range []ir.DType{ir.F32, ir.I64} {
		k := kernel("empty")
		N, K := dim(k, "N"), dim(k, "K")
		X := input(k, "X", dt, dr(N), dr(K))
		ops := []ir.ReduceOp{ir.Sum, ir.Prod, ir.Max, ir.Min}
		for _, op := range ops {
			Y := output(k, "Y"+op.String(), dt, dr(N))
			ix := over(Y, "i")
			kk := idx("k", ic(0), dr(K))
			stmt(k, Y, ix, reduce(op, dt, axes(kk), load(X, ref(ix[0]), ref(kk))))
		}
		verified(t, k)
		outs := run(t, k, bind(t, k, map[string]int64{"N": 2, "K": 0}, nil), tensor.New(dt, []int64{2, 0}))
		if dt == ir.F32 {
			want := [][]float64{{0, 0}, {1, 1}, {math.Inf(-1), math.Inf(-1)}, {math.Inf(1), math.Inf(1)}}
			for i, o := range outs {
				if diff := cmp.Diff(want[i], floats(o)); diff != "" {
					t.Errorf("f32 %s (-want +got):\n%s", ops[i], diff)
				}
			}
		} else {
			want := [][]int64{{0, 0}, {1, 1}, {math.MinInt64, math.MinInt64}, {math.MaxInt64, math.MaxInt64}}
			for i, o := range outs {
				if diff := cmp.Diff(want[i], ints(o)); diff != "" {
					t.Errorf("i64 %s (-want +got):\n%s", ops[i], diff)
				}
			}
		}
	}

	// An explicit empty range, sum[k in 3..1], is empty too.
	k := kernel("explicit")
	Y := output(k, "Y", ir.F64)
	kk := idx("k", ic(3), ic(1))
	stmt(k, Y, nil, sum(ir.F64, axes(kk), add(cast(ir.F64, ref(kk)), fc64(1))))
	verified(t, k)
	if got := floats(run(t, k, bind(t, k, nil, nil))[0]); got[0] != 0 {
		t.Errorf("sum over [3, 1) = %v, want 0", got[0])
	}
}

func TestMaxMinNaN(t *testing.T) {
	// With a default (never used here) the reductions take the general loop,
	// without it the strided one.
	for _, def := range []ir.Expr{nil, fc(0)} {
		testMaxMinNaN(t, def)
	}
}

func testMaxMinNaN(t *testing.T, def ir.Expr) {
	k := kernel("nan")
	N, D := dim(k, "N"), dim(k, "D")
	X := input(k, "X", ir.F32, dr(N), dr(D))
	for _, op := range []ir.ReduceOp{ir.Max, ir.Min} {
		Y := output(k, "Y"+op.String(), ir.F32, dr(N))
		ix := over(Y, "i")
		d := idx("d", ic(0), dr(D))
		stmt(k, Y, ix, reduce(op, ir.F32, axes(d), loadOr(X, def, ref(ix[0]), ref(d))))
	}
	// The builtins too: Z[i] = max(X[i, 0], X[i, 1]).
	for _, fn := range []ir.Builtin{ir.MaxFn, ir.MinFn, ir.Relu} {
		Z := output(k, "Z"+fn.String(), ir.F32, dr(N))
		ix := over(Z, "i")
		args := []ir.Expr{load(X, ref(ix[0]), ic(0)), load(X, ref(ix[0]), ic(1))}
		if fn == ir.Relu {
			args = args[:1]
		}
		stmt(k, Z, ix, call(fn, ir.F32, args...))
	}
	verified(t, k)
	nan := math.NaN()
	xs := []float64{
		nan, 1, 2, // NaN first
		1, nan, 2, // in the middle
		1, 2, nan, // last
		3, 1, 2, // none
	}
	res := run(t, k, bind(t, k, map[string]int64{"N": 4, "D": 3}, nil), fromFloats(ir.F32, []int64{4, 3}, xs...))
	eq := cmp.Comparer(func(a, b float64) bool { return a == b || a != a && b != b })
	check := func(name string, want []float64, got *tensor.Tensor) {
		t.Helper()
		if diff := cmp.Diff(want, floats(got), eq); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	check("max", []float64{nan, nan, nan, 3}, res[0])
	check("min", []float64{nan, nan, nan, 1}, res[1])
	check("max()", []float64{nan, nan, 2, 3}, res[2])
	check("min()", []float64{nan, nan, 1, 1}, res[3])
	check("relu", []float64{nan, 1, 1, 3}, res[4])
}

func TestReductionOrder(t *testing.T) {
	// Y = sum[i, j](X[i, j]) in f64 visits (0,0) (0,1) (1,0) (1,1): with
	// X = [[1e16, 1], [-1e16, 1]] that is ((1e16 + 1) - 1e16) + 1 = 1, where
	// the other order, j outermost, would give 2.
	k := kernel("order")
	X := input(k, "X", ir.F64, ic(2), ic(2))
	Y := output(k, "Y", ir.F64)
	i, j := idx("i", ic(0), ic(2)), idx("j", ic(0), ic(2))
	stmt(k, Y, nil, sum(ir.F64, axes(i, j), load(X, ref(i), ref(j))))
	verified(t, k)
	got := floats(run(t, k, bind(t, k, nil, nil), fromFloats(ir.F64, []int64{2, 2}, 1e16, 1, -1e16, 1))[0])
	if got[0] != 1 {
		t.Errorf("sum = %v, want 1", got[0])
	}
}

func TestOutputsReadBackRounded(t *testing.T) {
	// H[i] = bf16(X[i]); Y[i] = f32(H[i]) * 3 reads H as stored (rounded),
	// while a let keeps full precision: L[i] = X[i] * 2 (f64), Z[i] = f32(L[i] / 2).
	k := kernel("readback")
	N := dim(k, "N")
	X := input(k, "X", ir.F64, dr(N))
	H := output(k, "H", ir.BF16, dr(N))
	Y := output(k, "Y", ir.F32, dr(N))
	Z := output(k, "Z", ir.F64, dr(N))
	L := let(k, "L", ir.F64, dr(N))
	ix := over(H, "i")
	stmt(k, H, ix, cast(ir.BF16, load(X, ref(ix[0]))))
	ix = over(Y, "i")
	stmt(k, Y, ix, mul(cast(ir.F32, load(H, ref(ix[0]))), fc(3)))
	ix = over(L, "i")
	stmt(k, L, ix, mul(load(X, ref(ix[0])), fc64(2)))
	ix = over(Z, "i")
	stmt(k, Z, ix, div(load(L, ref(ix[0])), fc64(2)))
	verified(t, k)
	x := 1 + 0x1p-8 + 0x1p-30 // bf16: 1 + 2^-7
	outs := run(t, k, bind(t, k, map[string]int64{"N": 1}, nil), fromFloats(ir.F64, []int64{1}, x))
	if got, want := floats(outs[1])[0], 3*(1+0x1p-7); got != want {
		t.Errorf("Y = %v, want %v", got, want)
	}
	if got := floats(outs[2])[0]; got != x {
		t.Errorf("Z = %v, want %v", got, x)
	}
}

func TestScalarsAndLets(t *testing.T) {
	// alpha: f32 (rank 0); let s = sum[i](X[i]); Y[i] = X[i] * alpha - s
	k := kernel("scal")
	N := dim(k, "N")
	X := input(k, "X", ir.F32, dr(N))
	alpha := input(k, "alpha", ir.F32)
	Y := output(k, "Y", ir.F32, dr(N))
	s := let(k, "s", ir.F32)
	i := idx("i", ic(0), dr(N))
	stmt(k, s, nil, sum(ir.F32, axes(i), load(X, ref(i))))
	ix := over(Y, "i")
	stmt(k, Y, ix, sub(mul(load(X, ref(ix[0])), load(alpha)), load(s)))
	verified(t, k)
	got := floats(run(t, k, bind(t, k, map[string]int64{"N": 3}, nil),
		fromFloats(ir.F32, []int64{3}, 1, 2, 4), fromFloats(ir.F32, nil, 0.5))[0])
	if diff := cmp.Diff([]float64{0.5 - 7, 1 - 7, 2 - 7}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestBuiltins(t *testing.T) {
	x := []float64{-2, -0.5, 0, 0.75, 3}
	type fn struct {
		b    ir.Builtin
		want func(x float64) float64
	}
	fns := []fn{
		{ir.Exp, math.Exp}, {ir.Exp2, math.Exp2}, {ir.Sin, math.Sin}, {ir.Cos, math.Cos},
		{ir.Tanh, math.Tanh}, {ir.Erf, math.Erf}, {ir.Abs, math.Abs}, {ir.Floor, math.Floor}, {ir.Ceil, math.Ceil},
		{ir.Sigmoid, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }},
		{ir.Relu, func(x float64) float64 { return math.Max(x, 0) }},
	}
	k := kernel("builtins")
	N := dim(k, "N")
	X := input(k, "X", ir.F64, dr(N))
	for _, f := range fns {
		Y := output(k, f.b.String(), ir.F64, dr(N))
		ix := over(Y, "i")
		stmt(k, Y, ix, call(f.b, ir.F64, load(X, ref(ix[0]))))
	}
	// clamp(x, -1, 1), pow(x, 2), fma(x, x, 1), i64 clamp and abs
	three := []struct {
		name string
		e    func(i ir.Expr) ir.Expr
		want func(x float64) float64
	}{
		{"clamp", func(i ir.Expr) ir.Expr { return call(ir.Clamp, ir.F64, load(X, i), fc64(-1), fc64(1)) }, func(x float64) float64 { return math.Min(math.Max(x, -1), 1) }},
		{"pow", func(i ir.Expr) ir.Expr { return call(ir.Pow, ir.F64, load(X, i), fc64(2)) }, func(x float64) float64 { return x * x }},
		{"fma", func(i ir.Expr) ir.Expr { return call(ir.Fma, ir.F64, load(X, i), load(X, i), fc64(1)) }, func(x float64) float64 { return x*x + 1 }},
		{"iclamp", func(i ir.Expr) ir.Expr {
			return cast(ir.F64, call(ir.Clamp, ir.I64, cast(ir.I64, load(X, i)), ic(-1), ic(1)))
		}, func(x float64) float64 { return math.Min(math.Max(math.Trunc(x), -1), 1) }},
		{"iabs", func(i ir.Expr) ir.Expr { return cast(ir.F64, call(ir.Abs, ir.I64, cast(ir.I64, load(X, i)))) },
			func(x float64) float64 { return math.Abs(math.Trunc(x)) }},
	}
	for _, f := range three {
		Y := output(k, f.name, ir.F64, dr(N))
		ix := over(Y, "i")
		stmt(k, Y, ix, f.e(ref(ix[0])))
	}
	verified(t, k)
	outs := run(t, k, bind(t, k, map[string]int64{"N": int64(len(x))}, nil), fromFloats(ir.F64, []int64{int64(len(x))}, x...))
	for i, f := range fns {
		for j, v := range x {
			if got, want := floats(outs[i])[j], f.want(v); got != want {
				t.Errorf("%s(%v) = %v, want %v", f.b, v, got, want)
			}
		}
	}
	for i, f := range three {
		for j, v := range x {
			if got, want := floats(outs[len(fns)+i])[j], f.want(v); got != want {
				t.Errorf("%s(%v) = %v, want %v", f.name, v, got, want)
			}
		}
	}
}

func TestRoundF32MatchesTensor(t *testing.T) {
	vs := []float64{0, math.Copysign(0, -1), 1, 1 + 0x1p-24, 1 + 0x1p-24 + 0x1p-50, math.MaxFloat32,
		math.MaxFloat32 * (1 + 0x1p-25), math.MaxFloat32 * (1 + 0x1p-24), 0x1p-149, 0x1p-150, 0x1.8p-150, 0x1p-151, 1e-300, 1e300}
	seed := uint64(1)
	for range 100000 {
		seed = InputSeed(seed, 0)
		vs = append(vs, math.Float64frombits(seed))
	}
	for _, v := range vs {
		got, want := roundF32(v), tensor.RoundFloat(ir.F32, v)
		if math.Float64bits(got) != math.Float64bits(want) && !(got != got && want != want) {
			t.Errorf("roundF32(%v) = %v, want %v", v, got, want)
		}
	}
}

func TestWorkersIndependent(t *testing.T) {
	k := verified(t, convKernel())
	env := bind(t, k, map[string]int64{"N": 2, "C": 5, "H": 13, "W": 11, "F": 6, "KH": 3, "KW": 3},
		map[string]*ir.Const{"stride": {T: ir.I32, I: 2}, "pad": {T: ir.I32, I: 1}})
	in, err := RandomInputs(k, env, tensor.Normal, 42)
	if err != nil {
		t.Fatal(err)
	}
	var ref []byte
	for _, w := range []int{1, 4, 3, 16} {
		outs, err := Run(k, env, in, Options{Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = outs[0].Data
			continue
		}
		if !bytes.Equal(ref, outs[0].Data) {
			t.Errorf("workers %d: output differs from workers 1", w)
		}
	}
}

func TestRandomInputs(t *testing.T) {
	k := verified(t, matmulKernel(ir.F32))
	env := bind(t, k, map[string]int64{"M": 8, "N": 8, "K": 8}, nil)
	a, err := RandomInputs(k, env, tensor.Uniform, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := RandomInputs(k, env, tensor.Uniform, 7)
	c, _ := RandomInputs(k, env, tensor.Uniform, 8)
	for i := range a {
		if !bytes.Equal(a[i].Data, b[i].Data) {
			t.Errorf("input %d differs between runs with one seed", i)
		}
		if bytes.Equal(a[i].Data, c[i].Data) {
			t.Errorf("input %d is the same for seeds 7 and 8", i)
		}
		if want := tensor.Random(ir.F32, []int64{8, 8}, tensor.Uniform, InputSeed(7, i)); !bytes.Equal(a[i].Data, want.Data) {
			t.Errorf("input %d is not tensor.Random with InputSeed(7, %d)", i, i)
		}
	}
	if bytes.Equal(a[0].Data, a[1].Data) {
		t.Errorf("inputs 0 and 1 are equal")
	}
	for _, v := range floats(a[0]) {
		if v < -1 || v >= 1 {
			t.Errorf("uniform value %v outside [-1, 1)", v)
		}
	}
	if _, err := RandomInputs(k, env, tensor.Dist(99), 1); err == nil {
		t.Errorf("invalid distribution accepted")
	}
}

func TestBadInputs(t *testing.T) {
	k := verified(t, matmulKernel(ir.F32))
	env := bind(t, k, map[string]int64{"M": 2, "N": 3, "K": 4}, nil)
	good := tensor.New(ir.F32, []int64{2, 4})
	for _, tc := range []struct {
		ins  []*tensor.Tensor
		want string
	}{
		{[]*tensor.Tensor{good}, "takes 2 inputs (A, B), got 1"},
		{[]*tensor.Tensor{good, tensor.New(ir.F32, []int64{3, 4})}, "input B must be f32[4 3] at M=2, N=3, K=4, got f32[3 4]"},
		{[]*tensor.Tensor{good, tensor.New(ir.F16, []int64{4, 3})}, "input B must be f32[4 3]"},
	} {
		_, err := Run(k, env, tc.ins, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want an error containing %q", err, tc.want)
		}
	}
}

func BenchmarkMatmul256(b *testing.B) {
	k := matmulKernel(ir.F32)
	env := bind(b, k, map[string]int64{"M": 256, "N": 256, "K": 256}, nil)
	in, err := RandomInputs(k, env, tensor.Normal, 1)
	if err != nil {
		b.Fatal(err)
	}
	benchWorkers(b, k, env, in)
}

// benchWorkers runs k with the default number of workers, and with 1, 2
// and 4 as sub-benchmarks.
func benchWorkers(b *testing.B, k *ir.Kernel, env *ir.Env, in []*tensor.Tensor) {
	for _, w := range []int{0, 1, 2, 4} {
		name := "workers=" + strconv.Itoa(w)
		if w == 0 {
			name = "workers=default"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Run(k, env, in, Options{Workers: w}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkConv is conv_s2 of the language reference at batch 1: 58M
// multiply-adds through padded reads.
func BenchmarkConv(b *testing.B) {
	k := convKernel()
	env := bind(b, k, map[string]int64{"N": 1, "C": 64, "H": 56, "W": 56, "F": 128, "KH": 3, "KW": 3},
		map[string]*ir.Const{"stride": {T: ir.I32, I: 2}, "pad": {T: ir.I32, I: 1}})
	in, err := RandomInputs(k, env, tensor.Normal, 1)
	if err != nil {
		b.Fatal(err)
	}
	benchWorkers(b, k, env, in)
}

func TestAffineReads(t *testing.T) {
	// Y[i] = sum[k](X[i, K - 1 - k] * V[2*k + 1]) reads X backwards and V with
	// a stride; Z = max[i, k](X[i, k]) reduces over two axes; P[i] =
	// sum[k]((X[i, k - 1] ?? 100) * V[k]) pads at k = 0 only.
	k := kernel("affine")
	N, K := dim(k, "N"), dim(k, "K")
	X := input(k, "X", ir.F32, dr(N), dr(K))
	V := input(k, "V", ir.F32, mul(ic(2), dr(K)))
	Y := output(k, "Y", ir.F32, dr(N))
	Z := output(k, "Z", ir.F32)
	P := output(k, "P", ir.F32, dr(N))
	ix := over(Y, "i")
	kk := idx("k", ic(0), dr(K))
	stmt(k, Y, ix, sum(ir.F32, axes(kk), mul(
		load(X, ref(ix[0]), sub(sub(dr(K), ic(1)), ref(kk))),
		load(V, add(mul(ic(2), ref(kk)), ic(1))))))
	i2, k2 := idx("i", ic(0), dr(N)), idx("k", ic(0), dr(K))
	stmt(k, Z, nil, reduce(ir.Max, ir.F32, axes(i2, k2), load(X, ref(i2), ref(k2))))
	ix = over(P, "i")
	kk = idx("k", ic(0), dr(K))
	stmt(k, P, ix, sum(ir.F32, axes(kk), mul(loadOr(X, fc(100), ref(ix[0]), sub(ref(kk), ic(1))), load(V, ref(kk)))))
	verified(t, k)
	const n, kn = 3, 4
	env := bind(t, k, map[string]int64{"N": n, "K": kn}, nil)
	xs := []float64{1, 2, 3, 4, -5, 6, 7, -8, 9, 10, 11, -12}
	vs := []float64{1, -1, 2, -2, 3, -3, 4, -4}
	outs := run(t, k, env, fromFloats(ir.F32, []int64{n, kn}, xs...), fromFloats(ir.F32, []int64{2 * kn}, vs...))
	var wantY, wantP []float64
	for i := range n {
		var y, p float64
		for j := range kn {
			y += xs[i*kn+kn-1-j] * vs[2*j+1]
			x := 100.0
			if j >= 1 {
				x = xs[i*kn+j-1]
			}
			p += x * vs[j]
		}
		wantY = append(wantY, y)
		wantP = append(wantP, p)
	}
	if diff := cmp.Diff(wantY, floats(outs[0])); diff != "" {
		t.Errorf("Y (-want +got):\n%s", diff)
	}
	if got := floats(outs[1])[0]; got != 11 {
		t.Errorf("Z = %v, want 11", got)
	}
	if diff := cmp.Diff(wantP, floats(outs[2])); diff != "" {
		t.Errorf("P (-want +got):\n%s", diff)
	}
}

func TestBoolsAndCompares(t *testing.T) {
	k := kernel("bools")
	N := dim(k, "N")
	alpha := param(k, "alpha", ir.F32, ir.FloatConst(ir.F32, 0.5))
	flip := param(k, "flip", ir.Bool, &ir.Const{T: ir.Bool, I: 0})
	X := input(k, "X", ir.F32, dr(N))
	M := input(k, "M", ir.Bool, dr(N))
	Z := input(k, "Z", ir.I8, dr(N))
	B1 := output(k, "B1", ir.Bool, dr(N))
	B2 := output(k, "B2", ir.Bool, dr(N))
	F := output(k, "F", ir.F32, dr(N))
	E := output(k, "E", ir.Bool, dr(N))
	U := output(k, "U", ir.U8, dr(N))
	Any := output(k, "Any", ir.Bool)
	All := output(k, "All", ir.Bool)
	G := output(k, "G", ir.Bool, dr(N))
	L := let(k, "L", ir.Bool, dr(N))
	x := func(i ir.Expr) ir.Expr { return load(X, i) }
	m := func(i ir.Expr) ir.Expr { return load(M, i) }
	z := func(i ir.Expr) ir.Expr { return cast(ir.I64, load(Z, i)) }
	not := func(e ir.Expr) ir.Expr { return &ir.Unary{Op: ir.Not, X: e} }
	each := func(out *ir.Tensor, v func(i ir.Expr) ir.Expr) {
		ix := over(out, "i")
		stmt(k, out, ix, v(ref(ix[0])))
	}
	// B1 = flip ? !v : v with v = (X > 0 && M) || !(Z < 0)
	each(B1, func(i ir.Expr) ir.Expr {
		v := func() ir.Expr { return bin(ir.Or, bin(ir.And, bin(ir.Gt, x(i), fc(0)), m(i)), not(lt(z(i), ic(0)))) }
		return sel(pr(flip), not(v()), v())
	})
	each(B2, func(i ir.Expr) ir.Expr { return cast(ir.Bool, x(i)) })
	// F = f32(M) * alpha + (M ? X : -X)
	each(F, func(i ir.Expr) ir.Expr {
		return add(mul(cast(ir.F32, m(i)), pr(alpha)), sel(m(i), x(i), &ir.Unary{Op: ir.Neg, X: x(i)}))
	})
	// E = M && X != X
	each(E, func(i ir.Expr) ir.Expr { return bin(ir.And, m(i), bin(ir.Ne, x(i), x(i))) })
	each(U, func(i ir.Expr) ir.Expr { return cast(ir.U8, mul(z(i), ic(3))) })
	ia := idx("i", ic(0), dr(N))
	stmt(k, Any, nil, reduce(ir.Max, ir.Bool, axes(ia), load(M, ref(ia))))
	ia = idx("i", ic(0), dr(N))
	stmt(k, All, nil, reduce(ir.Min, ir.Bool, axes(ia), load(M, ref(ia))))
	each(L, func(i ir.Expr) ir.Expr { return bin(ir.Ge, x(i), fc(0)) })
	each(G, func(i ir.Expr) ir.Expr { return not(load(L, i)) })
	verified(t, k)

	nan := math.NaN()
	xs := []float64{1.5, -2, 0, nan, math.Copysign(0, -1), 3}
	ms := []int64{1, 1, 0, 1, 0, 1}
	zs := []int64{-1, 5, -128, 0, 127, -3}
	n := int64(len(xs))
	for _, flipped := range []bool{false, true} {
		env := bind(t, k, map[string]int64{"N": n}, map[string]*ir.Const{"flip": {T: ir.Bool, I: b2i(flipped)}})
		outs := run(t, k, env, fromFloats(ir.F32, []int64{n}, xs...), fromInts(ir.Bool, []int64{n}, ms...), fromInts(ir.I8, []int64{n}, zs...))
		var b1, b2, e, g []int64
		var f []float64
		var u []int64
		for i := range n {
			xv, mv, zv := xs[i], ms[i] != 0, zs[i]
			b1 = append(b1, b2i((xv > 0 && mv || !(zv < 0)) != flipped))
			b2 = append(b2, b2i(xv != 0))
			fv := -xv
			if mv {
				fv = xv
			}
			f = append(f, float64(ms[i])*0.5+fv)
			e = append(e, b2i(mv && xv != xv))
			u = append(u, int64(uint8(zv*3)))
			g = append(g, b2i(!(xv >= 0)))
		}
		eq := cmp.Comparer(func(a, b float64) bool { return a == b || a != a && b != b })
		for _, c := range []struct {
			name string
			want any
			got  any
		}{
			{"B1", b1, ints(outs[0])}, {"B2", b2, ints(outs[1])}, {"F", f, floats(outs[2])},
			{"E", e, ints(outs[3])}, {"U", u, ints(outs[4])},
			{"Any", []int64{1}, ints(outs[5])}, {"All", []int64{0}, ints(outs[6])}, {"G", g, ints(outs[7])},
		} {
			if diff := cmp.Diff(c.want, c.got, eq); diff != "" {
				t.Errorf("flip=%v %s (-want +got):\n%s", flipped, c.name, diff)
			}
		}
	}
}
