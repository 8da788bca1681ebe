package interp

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/tensor"
)

// Specs checked from source text and evaluated, against loops written
// here.
const specs = `
fn gelu(x) = 0.5 * x * (1 + erf(x * 0.7071067811865476))

kernel matmul<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  C[m, n] = sum[k](A[m, k] * B[k, n])
}

kernel gemm_bias_relu<M, N, K>(A: bf16[M, K], B: bf16[K, N], bias: bf16[N]) -> (C: bf16[M, N]) @acc(f32) {
  C[m, n] = relu(sum[k](A[m, k] * B[k, n]) + bias[n])
}

kernel conv2d<N, C, H, W, F, KH, KW; stride: i32 = 1, pad: i32 = 0>(X: f32[N, C, H, W], Wt: f32[F, C, KH, KW])
    -> (Y: f32[N, F, OH, OW])
    where OH = (H + 2*pad - KH) / stride + 1, OW = (W + 2*pad - KW) / stride + 1 {
  Y[n, f, oh, ow] = sum[c, kh, kw]((X[n, c, oh*stride + kh - pad, ow*stride + kw - pad] ?? 0) * Wt[f, c, kh, kw])
}

kernel softmax<R, D>(X: f32[R, D]) -> (Y: f32[R, D]) {
  let mx[r] = max[d](X[r, d])
  let den[r] = sum[d](exp(X[r, d] - mx[r]))
  Y[r, d] = exp(X[r, d] - mx[r]) / den[r]
}

kernel act<N>(X: f64[N]) -> (Y: f64[N]) {
  Y[i] = gelu(X[i])
}

kernel pool<N>(X: i32[N]) -> (Y: i32[H]) where H = N / 2 {
  Y[i] = max(X[2*i], X[2*i + 1]) / 2 - i % 3
}

kernel shift<N>(X: f32[N]) -> (Y: f32[N]) {
  Y[i] = X[i + 1]
}

kernel softplus<N>(X: f32[N]) -> (Y: f32[N]) {
  Y[i] = log(1 + exp(-abs(X[i])))
}
`

func checkSpecs(t *testing.T) *ir.Program {
	t.Helper()
	prog, diags := frontend.CheckSource("specs.kg", specs)
	if diags.HasErrors() {
		var sb strings.Builder
		diags.Print(&sb)
		t.Fatalf("specs do not check:\n%s", sb.String())
	}
	return prog
}

func specKernel(t *testing.T, prog *ir.Program, name string) *ir.Kernel {
	t.Helper()
	k := prog.Kernel(name)
	if k == nil {
		t.Fatalf("no kernel %s", name)
	}
	return k
}

func TestSpecs(t *testing.T) {
	prog := checkSpecs(t)

	t.Run("matmul", func(t *testing.T) {
		k := specKernel(t, prog, "matmul")
		const M, N, K = 3, 5, 4
		env := bind(t, k, map[string]int64{"M": M, "N": N, "K": K}, nil)
		in, err := RandomInputs(k, env, tensor.Ints, 3)
		if err != nil {
			t.Fatal(err)
		}
		a, b := floats(in[0]), floats(in[1])
		want := make([]float64, M*N)
		for m := range M {
			for n := range N {
				for kk := range K {
					want[m*N+n] += a[m*K+kk] * b[kk*N+n]
				}
			}
		}
		if diff := cmp.Diff(want, floats(run(t, k, env, in...)[0])); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})

	t.Run("gemm_bias_relu", func(t *testing.T) {
		k := specKernel(t, prog, "gemm_bias_relu")
		const M, N, K = 4, 6, 9
		env := bind(t, k, map[string]int64{"M": M, "N": N, "K": K}, nil)
		in, err := RandomInputs(k, env, tensor.Normal, 5)
		if err != nil {
			t.Fatal(err)
		}
		a, b, bias := floats(in[0]), floats(in[1]), floats(in[2])
		got := run(t, k, env, in...)[0]
		if got.DType != ir.BF16 {
			t.Fatalf("C is %s", got.DType)
		}
		for m := range M {
			for n := range N {
				// The products of bf16 values are exact; the f32 sum and the
				// bias add are computed unrounded (the IR has no conversion
				// there) and the result rounds once, to bf16.
				var acc float64
				for kk := range K {
					acc += a[m*K+kk] * b[kk*N+n]
				}
				want := tensor.RoundFloat(ir.BF16, math.Max(acc+bias[n], 0))
				if g := got.Float(int64(m*N + n)); g != want {
					t.Errorf("C[%d, %d] = %v, want %v", m, n, g, want)
				}
			}
		}
	})

	t.Run("conv2d", func(t *testing.T) {
		k := specKernel(t, prog, "conv2d")
		const n, c, h, w, f, kh, kw, stride, pad = 2, 3, 7, 6, 4, 3, 3, 2, 1
		env := bind(t, k, map[string]int64{"N": n, "C": c, "H": h, "W": w, "F": f, "KH": kh, "KW": kw},
			map[string]*ir.Const{"stride": {T: ir.I32, I: stride}, "pad": {T: ir.I32, I: pad}})
		in, err := RandomInputs(k, env, tensor.Ints, 9)
		if err != nil {
			t.Fatal(err)
		}
		xs, ws := floats(in[0]), floats(in[1])
		const oh, ow = (h+2*pad-kh)/stride + 1, (w+2*pad-kw)/stride + 1
		got := run(t, k, env, in...)[0]
		if !cmp.Equal(got.Shape, []int64{n, f, oh, ow}) {
			t.Fatalf("shape %v", got.Shape)
		}
		var want []float64
		for in := range n {
			for jf := range f {
				for y := range oh {
					for x := range ow {
						var acc float64
						for jc := range c {
							for dy := range kh {
								for dx := range kw {
									iy, ix := y*stride+dy-pad, x*stride+dx-pad
									if iy >= 0 && iy < h && ix >= 0 && ix < w {
										acc += xs[((in*c+jc)*h+iy)*w+ix] * ws[((jf*c+jc)*kh+dy)*kw+dx]
									}
								}
							}
						}
						want = append(want, acc)
					}
				}
			}
		}
		if diff := cmp.Diff(want, floats(got)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})

	t.Run("softmax", func(t *testing.T) {
		k := specKernel(t, prog, "softmax")
		const R, D = 4, 9
		env := bind(t, k, map[string]int64{"R": R, "D": D}, nil)
		in, err := RandomInputs(k, env, tensor.Normal, 11)
		if err != nil {
			t.Fatal(err)
		}
		xs := floats(in[0])
		got := floats(run(t, k, env, in...)[0])
		for r := range R {
			var total float64
			for d := range D {
				total += math.Exp(xs[r*D+d])
			}
			for d := range D {
				want := math.Exp(xs[r*D+d]) / total
				if g := got[r*D+d]; math.Abs(g-want) > 1e-6*want {
					t.Errorf("Y[%d, %d] = %v, want %v", r, d, g, want)
				}
			}
		}
	})

	t.Run("gelu", func(t *testing.T) {
		k := specKernel(t, prog, "act")
		x := []float64{-3, -1, -0.25, 0, 0.5, 2}
		env := bind(t, k, map[string]int64{"N": int64(len(x))}, nil)
		got := floats(run(t, k, env, fromFloats(ir.F64, []int64{int64(len(x))}, x...))[0])
		for i, v := range x {
			want := 0.5 * v * (1 + math.Erf(v/math.Sqrt2))
			if math.Abs(got[i]-want) > 1e-15 {
				t.Errorf("gelu(%v) = %v, want %v", v, got[i], want)
			}
		}
	})

	t.Run("pool", func(t *testing.T) {
		// Integer max, floor division of negatives and floor modulo.
		k := specKernel(t, prog, "pool")
		x := []int64{-7, -9, 5, 3, -1, -2, 8, 9, -3, 0, 7}
		env := bind(t, k, map[string]int64{"N": int64(len(x))}, nil)
		got := ints(run(t, k, env, fromInts(ir.I32, []int64{int64(len(x))}, x...))[0])
		want := []int64{-4 - 0, 2 - 1, -1 - 2, 4 - 0, 0 - 1} // max(pair) / 2 - i % 3
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})

	t.Run("rounded operations", func(t *testing.T) {
		// log(1 + exp(-9)) in f32: 1 + exp(-9) keeps few of exp's
		// digits. By default the operations are evaluated in f64 and the
		// result rounded once; with RoundOps each is rounded to f32, as
		// the same arithmetic in Go's float32 does.
		k := specKernel(t, prog, "softplus")
		env := bind(t, k, map[string]int64{"N": 2}, nil)
		in := fromFloats(ir.F32, []int64{2}, -9, 0.5)
		f32 := func(x float64) float32 {
			e := float32(math.Exp(float64(float32(-math.Abs(x)))))
			return float32(math.Log(float64(1 + e)))
		}
		wantRounded := []float64{float64(f32(-9)), float64(f32(0.5))}
		wantExact := []float64{float64(float32(math.Log1p(math.Exp(-9)))), float64(float32(math.Log1p(math.Exp(-0.5))))}
		exact, err := Run(k, env, []*tensor.Tensor{in}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		rounded, err := Run(k, env, []*tensor.Tensor{in}, Options{RoundOps: true})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantExact, floats(exact[0])); diff != "" {
			t.Errorf("default (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(wantRounded, floats(rounded[0])); diff != "" {
			t.Errorf("RoundOps (-want +got):\n%s", diff)
		}
		if wantRounded[0] == wantExact[0] {
			t.Errorf("log(1 + exp(-9)) the same rounded and not (%g): the case tests nothing", wantExact[0])
		}
	})

	t.Run("out of range", func(t *testing.T) {
		k := specKernel(t, prog, "shift")
		env := bind(t, k, map[string]int64{"N": 3}, nil)
		_, err := Run(k, env, []*tensor.Tensor{fromFloats(ir.F32, []int64{3}, 1, 2, 3)}, Options{})
		var re *RunError
		if !errors.As(err, &re) {
			t.Fatalf("got %v, want a *RunError", err)
		}
		if got := re.Span.Src.Text[re.Span.Start:re.Span.End]; got != "X[i + 1]" {
			t.Errorf("error spans %q, want the read X[i + 1]", got)
		}
		line := strings.Count(specs[:strings.Index(specs, "Y[i] = X[i + 1]")], "\n") + 1
		col := strings.Index(strings.Split(specs, "\n")[line-1], "X[i + 1]") + 1
		want := "specs.kg:" + strconv.Itoa(line) + ":" + strconv.Itoa(col) + ": out-of-range read X[3]: index 3 is outside dim 1 of X (extent N = 3) at i=2"
		if !strings.HasPrefix(err.Error(), want) {
			t.Errorf("error\n%s\nwant prefix\n%s", err, want)
		}
	})
}
