package lower_test

import (
	"testing"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
)

// TestInlineAtOwnPoints: a let holding a reduction that one statement
// reads only at the let's own points (silu(z), a leaky ReLU's g > 0 ? g :
// g * slope of a product z) is inlined there and computed once a point:
// the product and its epilogue are one launch. A let read at a broadcast
// point (each of its points read by many), inside a reduction, with a
// default, or by a statement with a reduction of its own stays a launch
// of its own. Every plan computes what the kernel does (the interpreter
// runs both).
func TestInlineAtOwnPoints(t *testing.T) {
	prog, diags := frontend.CheckSource("inline.kg", `
kernel silu<M, N, K>(X: f32[M, K], W: f32[N, K], bias: f32[N]) -> (Y: f32[M, N]) {
  let z[m, n] = 0.5 * (sum[k](X[m, k] * W[n, k]) + bias[n])
  Y[m, n] = z[m, n] * sigmoid(z[m, n])
}
kernel leaky<M, N, K>(X: f32[M, K], W: f32[N, K]) -> (Y: f32[M, N]) {
  let g[m, n] = sum[k](X[m, k] * W[n, k]) * 2.0
  Y[m, n] = g[m, n] > 0 ? g[m, n] : g[m, n] * 0.1
}
kernel swapped<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (Y: f32[N, M]) {
  let c[m, n] = sum[k](A[m, k] * B[k, n])
  Y[n, m] = relu(c[m, n])
}
kernel broadcast<M, N, K, R>(A: f32[M, K], B: f32[K, N]) -> (Y: f32[M, N, R]) {
  let c[m, n] = sum[k](A[m, k] * B[k, n])
  Y[m, n, r] = c[m, n] * r
}
kernel reduced<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (Y: f32[M]) {
  let c[m, n] = sum[k](A[m, k] * B[k, n])
  Y[m] = sum[n](c[m, n])
}
kernel own<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (Y: f32[M, N]) {
  let c[m, n] = sum[k](A[m, k] * B[k, n])
  Y[m, n] = c[m, n] + sum[k](A[m, k])
}
kernel shifted<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (Y: f32[M, N]) {
  let c[m, n] = sum[k](A[m, k] * B[k, n])
  Y[m, n] = c[m, n] + (c[m, n + 1] ?? 0.0)
}
kernel twice<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (Y: f32[M, N], Z: f32[M, N]) {
  let c[m, n] = sum[k](A[m, k] * B[k, n])
  Y[m, n] = relu(c[m, n])
  Z[m, n] = c[m, n] * 2.0
}
instance silu_i = silu<M = 37, N = 19, K = 23>
instance leaky_i = leaky<M = 37, N = 19, K = 23>
instance swapped_i = swapped<M = 37, N = 19, K = 23>
instance broadcast_i = broadcast<M = 7, N = 5, K = 9, R = 3>
instance reduced_i = reduced<M = 7, N = 5, K = 9>
instance own_i = own<M = 7, N = 5, K = 9>
instance shifted_i = shifted<M = 7, N = 5, K = 9>
instance twice_i = twice<M = 7, N = 5, K = 9>
`)
	if diags.HasErrors() {
		t.Fatal(diags.Diags[0].Msg)
	}
	for _, tc := range []struct {
		kernel, let string
		inlined     bool
	}{
		{"silu", "z", true},
		{"leaky", "g", true},
		{"swapped", "c", true},
		{"broadcast", "c", false},
		{"reduced", "c", false},
		{"own", "c", false},
		{"shifted", "c", false},
		{"twice", "c", false},
	} {
		k := prog.Kernel(tc.kernel)
		var let *ir.Tensor
		for _, l := range k.Lets {
			if l.Name == tc.let {
				let = l
			}
		}
		if ok, why := ir.Inlinable(k, let); ok != tc.inlined {
			t.Errorf("%s: %s inlinable %v (%s), want %v", tc.kernel, tc.let, ok, why, tc.inlined)
		}
		in := prog.Instance(tc.kernel + "_i")
		p, err := lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if tc.inlined && (len(p.Launches) != 1 || p.Launches[0].Template.Name() != "matmul-simt") {
			t.Errorf("%s: %s, want one matmul-simt launch", tc.kernel, launchTemplates(p))
		}
		samePlan(t, in, p, 3, 1e-5)
	}
}

// TestAttentionPlan: causal attention's masked scores are a matrix
// product whose epilogue picks -inf above the diagonal (the product is
// computed for every output and the mask applied after), and its
// probabilities stay a let that the weighted sum of V reads as a matrix:
// a product; one row reduction that takes each row's max, stores its
// probabilities and sums them (storedRowGroup: the sum computes the
// probabilities again rather than reading them back); and a product with
// the division as its epilogue, three launches where the generic template
// took the scores and the output. The plan computes what the kernel does
// (the interpreter runs both).
func TestAttentionPlan(t *testing.T) {
	prog, diags := frontend.CheckSource("attention.kg", `
kernel causal_attention<NB, NH, S, HD>(Q: f16[NB, NH, S, HD], K: f16[NB, NH, S, HD], V: f16[NB, NH, S, HD]) -> (O: f16[NB, NH, S, HD]) @acc(f32) {
  let s[b, h, i, j] = j > i ? -inf : sum[d](Q[b, h, i, d] * K[b, h, j, d]) / sqrt(HD)
  let mx[b, h, i] = max[j](s[b, h, i, j])
  let p[b, h, i, j] = exp(s[b, h, i, j] - mx[b, h, i])
  let den[b, h, i] = sum[j](p[b, h, i, j])
  O[b, h, i, e] = sum[j](p[b, h, i, j] * V[b, h, j, e]) / den[b, h, i]
}
instance small = causal_attention<NB = 2, NH = 3, S = 37, HD = 8>
`)
	if diags.HasErrors() {
		t.Fatal(diags.Diags[0].Msg)
	}
	in := prog.Instance("small")
	p, err := lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := "small_0_s:matmul-mma small_1_den:row-reduce small_2_O:matmul-simt"
	if got := launchTemplates(p); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	samePlan(t, in, p, 4, 2e-3)
}
