package frontend

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/ir"
)

// Tests of the IR the checker builds from valid specs, against
// expectations written by hand: ranges, types, inlining, hashing,
// instance sizes and statement classes.

// mustCheck checks src and fails on any error.
func mustCheck(t *testing.T, src string) *ir.Program {
	t.Helper()
	prog, diags := CheckSource("test.kg", src)
	for _, d := range diags.Diags {
		if d.Severity == diag.Error {
			var sb strings.Builder
			diags.Print(&sb)
			t.Fatalf("unexpected errors:\n%s", sb.String())
		}
	}
	return prog
}

// mustKernel checks src and returns its kernel called name.
func mustKernel(t *testing.T, src, name string) *ir.Kernel {
	t.Helper()
	k := mustCheck(t, src).Kernel(name)
	if k == nil {
		t.Fatalf("no kernel %s", name)
	}
	return k
}

// stmtFor returns the statement that writes the tensor called name.
func stmtFor(t *testing.T, k *ir.Kernel, name string) *ir.Stmt {
	t.Helper()
	for _, s := range k.Stmts {
		if s.Target.Name == name {
			return s
		}
	}
	t.Fatalf("kernel %s has no statement writing %s", k.Name, name)
	return nil
}

func collect[T ir.Expr](e ir.Expr) []T {
	var out []T
	ir.Walk(e, func(x ir.Expr) bool {
		if v, ok := x.(T); ok {
			out = append(out, v)
		}
		return true
	})
	return out
}

// parents maps every node under root to its parent.
func parents(root ir.Expr) map[ir.Expr]ir.Expr {
	m := map[ir.Expr]ir.Expr{}
	ir.Walk(root, func(x ir.Expr) bool {
		for _, c := range ir.Children(x) {
			m[c] = x
		}
		return true
	})
	return m
}

func formatIndices(ixs []*ir.Index) string {
	var parts []string
	for _, ix := range ixs {
		parts = append(parts, fmt.Sprintf("%s in %s..%s", ix.Name, ir.Format(ix.Lo), ir.Format(ix.Hi)))
	}
	return strings.Join(parts, ", ")
}

func TestRanges(t *testing.T) {
	tests := []struct {
		name, src string
		target    string // the statement's target
		lhs       string // its left-hand indices
		reduce    string // the axes of its reductions, in order, ";"-separated
	}{{
		name:   "matmul infers k from A and B",
		src:    `kernel k<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) { C[m, n] = sum[k](A[m, k] * B[k, n]) }`,
		target: "C", lhs: "m in 0..M, n in 0..N", reduce: "k in 0..K",
	}, {
		name:   "explicit range",
		src:    `kernel k<M, K>(A: f32[M, K]) -> (C: f32[M]) { C[m] = sum[k in 1..K - 1](A[m, k]) }`,
		target: "C", lhs: "m in 0..M", reduce: "k in 1..K - 1",
	}, {
		name:   "explicit range settles disagreeing extents",
		src:    `kernel k<M, N, K>(A: f32[M, K], B: f32[N, K]) -> (C: f32[M, N]) { C[m, n] = sum[k in 0..K](A[m, k] * B[k, n]) }`,
		target: "C", lhs: "m in 0..M, n in 0..N", reduce: "k in 0..K",
	}, {
		name:   "one axis explicit, one inferred",
		src:    `kernel k<B, M, K>(A: f32[B, M, K]) -> (C: f32) { C = sum[k in 0..K, b, m](A[b, m, k]) }`,
		target: "C", lhs: "", reduce: "k in 0..K, b in 0..B, m in 0..M",
	}, {
		name:   "range from an integer param",
		src:    `kernel k<N; w: i32 = 2>(X: f32[N]) -> (Y: f32[N]) { Y[i] = sum[k in 0..w](X[i + k] ?? 0) }`,
		target: "Y", lhs: "i in 0..N", reduce: "k in 0..i64(w)",
	}, {
		name: "conv axes from the weights, output indices from derived dims",
		src: `kernel k<N, C, H, W, F, KH, KW; stride: i32 = 1, pad: i32 = 0>(X: f32[N, C, H, W], Wt: f32[F, C, KH, KW])
		    -> (Y: f32[N, F, OH, OW]) where OH = (H + 2*pad - KH) / stride + 1, OW = (W + 2*pad - KW) / stride + 1 {
		  Y[n, f, oh, ow] = sum[c, kh, kw]((X[n, c, oh*stride + kh - pad, ow*stride + kw - pad] ?? 0) * Wt[f, c, kh, kw])
		}`,
		target: "Y", lhs: "n in 0..N, f in 0..F, oh in 0..OH, ow in 0..OW", reduce: "c in 0..C, kh in 0..KH, kw in 0..KW",
	}, {
		name:   "let range inferred from its reads",
		src:    `kernel k<R, D>(X: f32[R, D]) -> (Y: f32[R, D]) { let mx[r] = max[d](X[r, d]); Y[r, d] = X[r, d] - mx[r] }`,
		target: "mx", lhs: "r in 0..R", reduce: "d in 0..D",
	}, {
		name:   "explicit let range",
		src:    `kernel k<N>(X: f32[N]) -> (Y: f32[N]) { let t[j in 0..N] = j * 2; Y[i] = X[i] + t[i] }`,
		target: "t", lhs: "j in 0..N", reduce: "",
	}, {
		name:   "scalar let",
		src:    `kernel k<N>(X: f32[N]) -> (Y: f32[N]) { let s = sum[i](X[i]); Y[i] = X[i] / s }`,
		target: "s", lhs: "", reduce: "i in 0..N",
	}, {
		name:   "nested reductions",
		src:    `kernel k<R, D>(X: f32[R, D]) -> (Y: f32) { Y = max[r](sum[d](X[r, d])) }`,
		target: "Y", lhs: "", reduce: "r in 0..R; d in 0..D",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := mustKernel(t, tt.src, "k")
			s := stmtFor(t, k, tt.target)
			if got := formatIndices(s.Index); got != tt.lhs {
				t.Errorf("left-hand indices: got %q, want %q", got, tt.lhs)
			}
			var reds []string
			for _, r := range collect[*ir.Reduce](s.Value) {
				reds = append(reds, formatIndices(r.Axes))
			}
			if got := strings.Join(reds, "; "); got != tt.reduce {
				t.Errorf("reduction axes: got %q, want %q", got, tt.reduce)
			}
			if s.Target.Kind == ir.Let {
				var shape []string
				for _, e := range s.Target.Shape {
					shape = append(shape, ir.Format(e))
				}
				var want []string
				for _, ix := range s.Index {
					want = append(want, ir.Format(ix.Hi))
				}
				if strings.Join(shape, ",") != strings.Join(want, ",") {
					t.Errorf("let shape %v, want the ranges of its indices %v", shape, want)
				}
			}
		})
	}
}

func TestTypes(t *testing.T) {
	const header = `kernel k<N>(A: bf16[N], B: bf16[N], X: f32[N], D: f64[N], I: i32[N], L: i64[N], M: bool[N])`
	tests := []struct {
		name string
		out  string // the output declaration
		stmt string
		// check inspects the statement's value.
		check func(t *testing.T, v ir.Expr)
	}{{
		name: "bf16 loads widen to f32 and the store rounds to bf16",
		out:  "Y: bf16[N]", stmt: "Y[i] = A[i] * B[i]",
		check: func(t *testing.T, v ir.Expr) {
			c, ok := v.(*ir.Cast)
			if !ok || c.T != ir.BF16 {
				t.Fatalf("the value is %s, want a cast to bf16 around it", ir.Format(v))
			}
			mul, ok := c.X.(*ir.Binary)
			if !ok || mul.Type() != ir.F32 {
				t.Fatalf("the product is %s, want f32 arithmetic", ir.Format(c.X))
			}
			up := parents(v)
			for _, l := range collect[*ir.Load](v) {
				if p, ok := up[l].(*ir.Cast); !ok || p.T != ir.F32 {
					t.Errorf("load %s is not widened to f32", ir.Format(l))
				}
			}
		},
	}, {
		name: "a bf16 reduction accumulates in f32",
		out:  "Y: bf16", stmt: "Y = sum[i](A[i] * B[i])",
		check: func(t *testing.T, v ir.Expr) {
			r := collect[*ir.Reduce](v)
			if len(r) != 1 || r[0].T != ir.F32 || r[0].Body.Type() != ir.F32 {
				t.Fatalf("got %s, want sum<f32> with an f32 body", ir.Format(v))
			}
		},
	}, {
		name: "f32 with f64 computes in f64",
		out:  "Y: f64[N]", stmt: "Y[i] = X[i] * D[i]",
		check: func(t *testing.T, v ir.Expr) {
			b, ok := v.(*ir.Binary)
			if !ok || b.Type() != ir.F64 {
				t.Fatalf("got %s, want f64 arithmetic without a final cast", ir.Format(v))
			}
			if c, ok := b.X.(*ir.Cast); !ok || c.T != ir.F64 || c.X.Type() != ir.F32 {
				t.Errorf("left operand %s, want X converted from f32 to f64", ir.Format(b.X))
			}
		},
	}, {
		name: "an untyped literal adopts f64",
		out:  "Y: f64[N]", stmt: "Y[i] = 0.5 * D[i]",
		check: func(t *testing.T, v ir.Expr) {
			b, ok := v.(*ir.Binary)
			if !ok || b.Type() != ir.F64 {
				t.Fatalf("got %s, want f64 arithmetic", ir.Format(v))
			}
			if c, ok := b.X.(*ir.Const); !ok || c.T != ir.F64 || c.F != 0.5 {
				t.Errorf("the literal is %s, want the f64 constant 0.5", ir.Format(b.X))
			}
			if _, ok := b.Y.(*ir.Load); !ok {
				t.Errorf("D[i] is %s, want a plain load (no conversion)", ir.Format(b.Y))
			}
		},
	}, {
		name: "an integer literal adopts f32",
		out:  "Y: f32[N]", stmt: "Y[i] = X[i] * 2",
		check: func(t *testing.T, v ir.Expr) {
			b := v.(*ir.Binary)
			if c, ok := b.Y.(*ir.Const); !ok || c.T != ir.F32 || c.F != 2 {
				t.Errorf("the literal is %s, want the f32 constant 2", ir.Format(b.Y))
			}
		},
	}, {
		name: "an integer mixed with a float converts to the float",
		out:  "Y: f32[N]", stmt: "Y[i] = I[i] + X[i]",
		check: func(t *testing.T, v ir.Expr) {
			b, ok := v.(*ir.Binary)
			if !ok || b.Type() != ir.F32 {
				t.Fatalf("got %s, want f32 arithmetic", ir.Format(v))
			}
			if c, ok := b.X.(*ir.Cast); !ok || c.T != ir.F32 || !c.X.Type().IsInt() {
				t.Errorf("I[i] is %s, want an integer converted to f32", ir.Format(b.X))
			}
		},
	}, {
		name: "integers compute in i64 and the store narrows to i32",
		out:  "Y: i32[N]", stmt: "Y[i] = I[i] * 2 + L[i]",
		check: func(t *testing.T, v ir.Expr) {
			c, ok := v.(*ir.Cast)
			if !ok || c.T != ir.I32 || c.X.Type() != ir.I64 {
				t.Fatalf("got %s, want an i64 computation cast to i32", ir.Format(v))
			}
			for _, k := range collect[*ir.Const](v) {
				if k.T != ir.I64 || k.I != 2 {
					t.Errorf("the literal is %s, want the i64 constant 2", ir.Format(k))
				}
			}
		},
	}, {
		name: "a float literal with an integer makes f32 arithmetic",
		out:  "Y: f32[N]", stmt: "Y[i] = I[i] * 0.5",
		check: func(t *testing.T, v ir.Expr) {
			if v.Type() != ir.F32 {
				t.Fatalf("got %s of type %s, want f32", ir.Format(v), v.Type())
			}
			if _, ok := v.(*ir.Binary); !ok {
				t.Errorf("got %s, want the product itself (already f32)", ir.Format(v))
			}
		},
	}, {
		name: "an integer reduction accumulates in i64",
		out:  "Y: i64", stmt: "Y = sum[i](I[i])",
		check: func(t *testing.T, v ir.Expr) {
			if r := collect[*ir.Reduce](v); len(r) != 1 || r[0].T != ir.I64 {
				t.Fatalf("got %s, want sum<i64>", ir.Format(v))
			}
		},
	}, {
		name: "an f64 reduction accumulates in f64",
		out:  "Y: f64", stmt: "Y = sum[i](D[i] * X[i])",
		check: func(t *testing.T, v ir.Expr) {
			if r := collect[*ir.Reduce](v); len(r) != 1 || r[0].T != ir.F64 {
				t.Fatalf("got %s, want sum<f64>", ir.Format(v))
			}
		},
	}, {
		name: "exp of an integer computes in f32, abs keeps it an integer",
		out:  "Y: f32[N]", stmt: "Y[i] = exp(I[i]) + abs(I[i])",
		check: func(t *testing.T, v ir.Expr) {
			for _, c := range collect[*ir.Call](v) {
				want := ir.F32
				if c.Fn == ir.Abs {
					want = ir.I64
				}
				if c.T != want {
					t.Errorf("%s computes in %s, want %s", ir.Format(c), c.T, want)
				}
			}
		},
	}, {
		name: "a comparison yields bool; select unifies its branches",
		out:  "Y: f32[N]", stmt: "Y[i] = X[i] > 0 && M[i] ? X[i] : 0",
		check: func(t *testing.T, v ir.Expr) {
			s, ok := v.(*ir.Select)
			if !ok || s.Cond.Type() != ir.Bool || s.Type() != ir.F32 {
				t.Fatalf("got %s, want an f32 select on a bool", ir.Format(v))
			}
			if c, ok := s.Y.(*ir.Const); !ok || c.T != ir.F32 {
				t.Errorf("else branch %s, want an f32 constant", ir.Format(s.Y))
			}
		},
	}, {
		name: "a default takes the tensor's dtype",
		out:  "Y: f32[N]", stmt: "Y[i] = A[i - 1] ?? -inf",
		check: func(t *testing.T, v ir.Expr) {
			l := collect[*ir.Load](v)
			if len(l) != 1 || l[0].Default == nil {
				t.Fatalf("got %s, want one load with a default", ir.Format(v))
			}
			if c, ok := l[0].Default.(*ir.Const); !ok || c.T != ir.BF16 || c.F > -1e308 {
				t.Errorf("default %s, want the bf16 constant -inf", ir.Format(l[0].Default))
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := fmt.Sprintf("%s -> (%s) {\n  %s\n}\n", header, tt.out, tt.stmt)
			prog, diags := CheckSource("test.kg", src)
			if diags.HasErrors() {
				var sb strings.Builder
				diags.Print(&sb)
				t.Fatalf("unexpected errors:\n%s", sb.String())
			}
			k := prog.Kernel("k")
			if len(k.Stmts) != 1 {
				t.Fatalf("%d statements", len(k.Stmts))
			}
			v := k.Stmts[0].Value
			if v.Type() != k.Outputs[0].DType {
				t.Errorf("the value has type %s, want the output's %s", v.Type(), k.Outputs[0].DType)
			}
			tt.check(t, v)
		})
	}
}

func TestAccAttribute(t *testing.T) {
	k := mustKernel(t, `kernel k<N>(A: bf16[N], B: bf16[N]) -> (C: bf16) @acc(f64) {
  C = sum[i](A[i] * B[i])
}`, "k")
	if k.Acc != ir.F64 {
		t.Errorf("kernel Acc = %s, want f64", k.Acc)
	}
	if a := k.Attr("acc"); a == nil || len(a.Args) != 1 || a.Args[0].Values[0] != "f64" {
		t.Errorf("the @acc attribute is not kept in the IR: %+v", k.Attrs)
	}
	r := collect[*ir.Reduce](k.Stmts[0].Value)
	if len(r) != 1 || r[0].T != ir.F64 || r[0].Body.Type() != ir.F64 {
		t.Fatalf("got %s, want sum<f64> over an f64 body", ir.Format(k.Stmts[0].Value))
	}
	if c, ok := k.Stmts[0].Value.(*ir.Cast); !ok || c.T != ir.BF16 || c.X.Type() != ir.F64 {
		t.Errorf("got %s, want the f64 sum rounded to bf16", ir.Format(k.Stmts[0].Value))
	}
	// Unknown attributes are kept too (and warned about).
	prog, diags := CheckSource("t.kg", `kernel k<N>(A: f32[N]) -> (C: f32) @tile(BM = [64, 128]) { C = sum[i](A[i]) }`)
	if diags.HasErrors() || len(diags.Diags) != 1 || diags.Diags[0].Severity != diag.Warning {
		t.Errorf("want exactly one warning for @tile, got %d diagnostics", len(diags.Diags))
	}
	if a := prog.Kernel("k").Attr("tile"); a == nil || a.Args[0].Key != "BM" || !a.Args[0].List || strings.Join(a.Args[0].Values, ",") != "64,128" {
		t.Errorf("@tile(BM = [64, 128]) is not kept: %+v", a)
	}
}

// hashOf checks src and returns the hash of its only kernel.
func hashOf(t *testing.T, src string) string {
	t.Helper()
	prog := mustCheck(t, src)
	if len(prog.Kernels) != 1 {
		t.Fatalf("%d kernels", len(prog.Kernels))
	}
	return ir.Hash(prog.Kernels[0])
}

func TestFnInlining(t *testing.T) {
	tests := []struct{ name, withFn, inline string }{{
		name: "gelu",
		withFn: `fn gelu(x) = 0.5 * x * (1 + erf(x * 0.7071067811865476))
kernel k<N>(X: f32[N]) -> (Y: f32[N]) { Y[i] = gelu(X[i]) }`,
		inline: `kernel k<N>(X: f32[N]) -> (Y: f32[N]) { Y[i] = 0.5 * X[i] * (1 + erf(X[i] * 0.7071067811865476)) }`,
	}, {
		name: "fns calling fns declared later, with expression arguments",
		withFn: `fn silu(x) = x * sig(x)
kernel k<N>(X: f32[N], B: f32[N]) -> (Y: f32[N]) { Y[i] = silu(X[i] + B[i]) }
fn sig(z) = 1 / (1 + exp(-z))`,
		inline: `kernel k<N>(X: f32[N], B: f32[N]) -> (Y: f32[N]) { Y[i] = (X[i] + B[i]) * (1 / (1 + exp(-(X[i] + B[i])))) }`,
	}, {
		name: "parameters take the types of the arguments",
		withFn: `fn axpy(a, x, y) = a * x + y
kernel k<N>(X: f64[N], Y: f64[N]) -> (Z: f64[N]) { Z[i] = axpy(2, X[i], Y[i]) }`,
		inline: `kernel k<N>(X: f64[N], Y: f64[N]) -> (Z: f64[N]) { Z[i] = 2 * X[i] + Y[i] }`,
	}, {
		name: "a fn applied to a reduction",
		withFn: `fn sq(x) = x * x
kernel k<R, D>(X: f32[R, D]) -> (Y: f32[R]) { Y[r] = sq(sum[d](X[r, d])) }`,
		inline: `kernel k<R, D>(X: f32[R, D]) -> (Y: f32[R]) { Y[r] = sum[d](X[r, d]) * sum[d](X[r, d]) }`,
	}, {
		// The inner call is an argument of the outer one, not recursion:
		// it was once taken for recursion and the kernel silently dropped.
		name: "a fn applied to its own result",
		withFn: `fn sq(x) = x * x
kernel k<N>(X: f32[N]) -> (Y: f32[N]) { Y[i] = sq(sq(X[i] + 1)) }`,
		inline: `kernel k<N>(X: f32[N]) -> (Y: f32[N]) { Y[i] = (X[i] + 1) * (X[i] + 1) * ((X[i] + 1) * (X[i] + 1)) }`,
	}, {
		name: "nested through another fn",
		withFn: `fn sq(x) = x * x
fn quad(y) = sq(sq(y))
kernel k<N>(X: f32[N]) -> (Y: f32[N]) { Y[i] = quad(X[i]) }`,
		inline: `kernel k<N>(X: f32[N]) -> (Y: f32[N]) { Y[i] = X[i] * X[i] * (X[i] * X[i]) }`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := hashOf(t, tt.withFn), hashOf(t, tt.inline)
			if a != b {
				ka, kb := mustCheck(t, tt.withFn).Kernels[0], mustCheck(t, tt.inline).Kernels[0]
				t.Errorf("inlined fn and hand-written expression differ:\n%s\n%s", ir.Print(ka), ir.Print(kb))
			}
		})
	}
}

func TestHash(t *testing.T) {
	const base = `kernel matmul<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  C[m, n] = sum[k](A[m, k] * B[k, n]) + 1
}`
	same := map[string]string{
		"renamed": `kernel mm<P, Q, R>(X: f32[P, R], Y: f32[R, Q]) -> (Z: f32[P, Q]) {
  Z[i, j] = sum[r](X[i, r] * Y[r, j]) + 1
}`,
		"comments and formatting": `// matrix product
kernel matmul<M,N,K>( A : f32[M,K] , /* left */ B:f32[K,N] )
    -> ( C: f32[M, N] )
{
  C[m,n] = sum[k]( A[m,k]*B[k,n] )   +   1 ;  // plus one
}`,
		"redundant parentheses": `kernel matmul<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  C[m, n] = (sum[k]((A[m, k]) * (B[k, n]))) + (1)
}`,
		"explicit range equal to the inferred one": `kernel matmul<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  C[m, n] = sum[k in 0..K](A[m, k] * B[k, n]) + 1
}`,
		"constant written as an expression": `kernel matmul<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  C[m, n] = sum[k](A[m, k] * B[k, n]) + (3 - 2) * (0.5 * 2)
}`,
	}
	different := map[string]string{
		"- instead of +": `kernel matmul<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  C[m, n] = sum[k](A[m, k] * B[k, n]) - 1
}`,
		"another constant": `kernel matmul<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  C[m, n] = sum[k](A[m, k] * B[k, n]) + 2
}`,
		"max instead of sum": `kernel matmul<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  C[m, n] = max[k](A[m, k] * B[k, n]) + 1
}`,
		"another dtype": `kernel matmul<M, N, K>(A: f16[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  C[m, n] = sum[k](A[m, k] * B[k, n]) + 1
}`,
		"transposed operand": `kernel matmul<M, N, K>(A: f32[M, K], B: f32[N, K]) -> (C: f32[M, N]) {
  C[m, n] = sum[k](A[m, k] * B[n, k]) + 1
}`,
		"@acc(f64)": `kernel matmul<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) @acc(f64) {
  C[m, n] = sum[k](A[m, k] * B[k, n]) + 1
}`,
		"another range": `kernel matmul<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  C[m, n] = sum[k in 1..K](A[m, k] * B[k, n]) + 1
}`,
	}
	h := hashOf(t, base)
	for name, src := range same {
		if got := hashOf(t, src); got != h {
			t.Errorf("%s: hash changed", name)
		}
	}
	for name, src := range different {
		if got := hashOf(t, src); got == h {
			t.Errorf("%s: hash did not change", name)
		}
	}
}

func TestInstanceEnv(t *testing.T) {
	const src = `kernel conv2d<N, C, H, W, F, KH, KW; stride: i32 = 1, pad: i32 = 0>(X: f32[N, C, H, W], Wt: f32[F, C, KH, KW])
    -> (Y: f32[N, F, OH, OW])
    where OH = (H + 2*pad - KH) / stride + 1, OW = (W + 2*pad - KW) / stride + 1 {
  Y[n, f, oh, ow] = sum[c, kh, kw]((X[n, c, oh*stride + kh - pad, ow*stride + kw - pad] ?? 0) * Wt[f, c, kh, kw])
}
instance conv_s2 = conv2d<N = 8, C = 64, H = 56, W = 56, F = 128, KH = 3, KW = 3, stride = 2, pad = 1>
instance conv_valid = conv2d<N = 1, C = 3, H = 7, W = 5, F = 2, KH = 3, KW = 2>
kernel floor_div<N>(X: f32[N]) -> (Y: f32[H]) where H = (N - 7) / 2 {
  Y[i] = X[i]
}
instance fd = floor_div<N = 10>
`
	prog := mustCheck(t, src)
	tests := []struct {
		instance string
		want     map[string]int64 // dims and params by name
	}{
		{"conv_s2", map[string]int64{"N": 8, "C": 64, "H": 56, "W": 56, "F": 128, "KH": 3, "KW": 3, "stride": 2, "pad": 1, "OH": 28, "OW": 28}},
		// Params left out take their defaults.
		{"conv_valid", map[string]int64{"H": 7, "W": 5, "stride": 1, "pad": 0, "OH": 5, "OW": 4}},
		{"fd", map[string]int64{"N": 10, "H": 1}},
	}
	for _, tt := range tests {
		in := prog.Instance(tt.instance)
		if in == nil {
			t.Errorf("no instance %s", tt.instance)
			continue
		}
		got := map[string]int64{}
		for d, v := range in.Env.Dims {
			got[d.Name] = v
		}
		for p, c := range in.Env.Params {
			got[p.Name] = c.I
		}
		for name, want := range tt.want {
			if v, ok := got[name]; !ok || v != want {
				t.Errorf("%s: %s = %d (set: %v), want %d", tt.instance, name, v, ok, want)
			}
		}
		shape, err := in.Env.Shape(in.Kernel.Outputs[0])
		if err != nil {
			t.Errorf("%s: %v", tt.instance, err)
		} else if tt.instance == "conv_s2" && fmt.Sprint(shape) != "[8 128 28 28]" {
			t.Errorf("conv_s2: output shape %v, want [8 128 28 28]", shape)
		}
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name, src string
		want      map[string]ir.StmtKind // by target
	}{{
		name: "matmul",
		src:  `kernel k<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) { C[m, n] = sum[k](A[m, k] * B[k, n]) }`,
		want: map[string]ir.StmtKind{"C": ir.Contraction},
	}, {
		name: "batched matmul with a bias outside the sum",
		src:  `kernel k<B, M, N, K>(A: f32[B, M, K], W: f32[B, K, N], bias: f32[N]) -> (C: f32[B, M, N]) { C[b, m, n] = sum[k](A[b, m, k] * W[b, k, n]) + bias[n] }`,
		want: map[string]ir.StmtKind{"C": ir.Contraction},
	}, {
		name: "softmax",
		src: `kernel k<R, D>(X: f32[R, D]) -> (Y: f32[R, D]) {
  let mx[r] = max[d](X[r, d])
  let den[r] = sum[d](exp(X[r, d] - mx[r]))
  Y[r, d] = exp(X[r, d] - mx[r]) / den[r]
}`,
		want: map[string]ir.StmtKind{"mx": ir.InnerReduction, "den": ir.InnerReduction, "Y": ir.Elementwise},
	}, {
		name: "column sum",
		src:  `kernel k<R, D>(X: f32[R, D]) -> (Y: f32[D]) { Y[d] = sum[r](X[r, d]) }`,
		want: map[string]ir.StmtKind{"Y": ir.OuterReduction},
	}, {
		name: "conv",
		src: `kernel k<N, C, H, W, F, KH, KW>(X: f32[N, C, H, W], Wt: f32[F, C, KH, KW]) -> (Y: f32[N, F, OH, OW])
    where OH = H - KH + 1, OW = W - KW + 1 {
  Y[n, f, oh, ow] = sum[c, kh, kw](X[n, c, oh + kh, ow + kw] * Wt[f, c, kh, kw])
}`,
		want: map[string]ir.StmtKind{"Y": ir.ConvLike},
	}, {
		name: "elementwise with broadcast and transpose",
		src:  `kernel k<M, N>(A: f32[M, N], b: f32[N]) -> (C: f32[N, M]) { C[n, m] = relu(A[m, n] + b[n]) }`,
		want: map[string]ir.StmtKind{"C": ir.Elementwise},
	}, {
		name: "two reductions in one statement",
		src:  `kernel k<R, D>(X: f32[R, D]) -> (Y: f32[R]) { Y[r] = sum[d](X[r, d]) / max[d](X[r, d]) }`,
		want: map[string]ir.StmtKind{"Y": ir.Generic},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := mustKernel(t, tt.src, "k")
			for target, want := range tt.want {
				if got := ir.Classify(stmtFor(t, k, target)); got != want {
					t.Errorf("%s: %s, want %s", target, got, want)
				}
			}
		})
	}
}

// TestExamplesVerify checks every example spec: no errors, and every
// kernel passes the IR verifier.
func TestExamplesVerify(t *testing.T) {
	paths, err := filepath.Glob("../examples/*.kg")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Skip("no examples yet")
	}
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		prog, diags := CheckSource(path, string(b))
		if diags.HasErrors() {
			var sb strings.Builder
			diags.Print(&sb)
			t.Errorf("%s does not check:\n%s", path, sb.String())
			continue
		}
		if len(prog.Kernels) == 0 {
			t.Errorf("%s: no kernels", path)
		}
		for _, k := range prog.Kernels {
			if errs := ir.Verify(k); len(errs) > 0 {
				t.Errorf("%s: kernel %s: %v", path, k.Name, errs)
			}
		}
	}
}
