package lower_test

import (
	"testing"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
)

// TestSiblings: consecutive elementwise statements over the same points
// share a launch, unless one reads what another writes or their ranges
// differ; a launch of another template between them keeps them apart.
// What the joined launches compute is checked where they are emitted
// (backends/cuda's emulated examples, the Triton interpreter's).
func TestSiblings(t *testing.T) {
	prog, diags := frontend.CheckSource("s.kg", `
kernel three<R, D>(X: f32[R, D], B: f32[D]) -> (T: f32[R, D], S: f32[R, D], Z: f32[R, D]) {
  T[r, d] = tanh(X[r, d])
  S[r, d] = X[r, d] * B[d]
  Z[r, d] = relu(X[r, d] - B[d])
}
kernel chained<N>(X: f32[N]) -> (P: f32[N], Q: f32[N]) {
  P[i] = X[i] * 2.0
  Q[i] = P[i] + 1.0
}
kernel shapes<N, M>(X: f32[N], Y: f32[M]) -> (P: f32[N], Q: f32[M]) {
  P[i] = X[i] * 2.0
  Q[j] = Y[j] + 1.0
}
kernel between<R, D>(X: f32[R, D]) -> (P: f32[R, D], S: f32[R], Q: f32[R, D]) {
  P[r, d] = X[r, d] * 2.0
  S[r] = sum[d](X[r, d])
  Q[r, d] = X[r, d] + 1.0
}
kernel mixed<N>(X: f32[N]) -> (B: bool[N], H: f16[N]) {
  B[i] = X[i] > 0.5
  H[i] = f16(X[i] * 3.0)
}
instance three_a = three<R = 5, D = 1000>
instance chained_a = chained<N = 77>
instance shapes_eq = shapes<N = 64, M = 64>
instance shapes_ne = shapes<N = 64, M = 65>
instance between_a = between<R = 3, D = 300>
instance mixed_a = mixed<N = 1001>
`)
	if diags.HasErrors() {
		t.Fatal(diags.Diags[0].Msg)
	}
	for name, want := range map[string]string{
		"three":     "three:elementwise",
		"three_a":   "three_a:elementwise",
		"chained_a": "chained_a_0_P:elementwise chained_a_1_Q:elementwise",
		"shapes_eq": "shapes_eq:elementwise",
		"shapes_ne": "shapes_ne_0_P:elementwise shapes_ne_1_Q:elementwise",
		"between_a": "between_a_0_P:elementwise between_a_1_Q:row-reduce", // S fuses into Q's rows
		"mixed_a":   "mixed_a:elementwise",
	} {
		if got := templatesOf(t, prog, name); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	// A sibling is computed over the launch's own indices.
	in := prog.Instance("three_a")
	p, err := lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	l := p.Launches[0]
	if len(l.Also) != 2 {
		t.Fatalf("three_a: %d siblings, want 2", len(l.Also))
	}
	for _, s := range l.Also {
		for d, ix := range s.Index {
			if ix != l.Stmt.Index[d] {
				t.Errorf("three_a: %s's index %d is not the launch's", s.Target.Name, d)
			}
		}
		ir.Walk(s.Value, func(x ir.Expr) bool {
			if ref, ok := x.(*ir.IndexRef); ok && ref.Index != l.Stmt.Index[0] && ref.Index != l.Stmt.Index[1] {
				t.Errorf("three_a: %s reads index %s of its own statement", s.Target.Name, ref.Index.Name)
			}
			return true
		})
	}
}

// TestFusedOutputs: an output that reduces along rows (a row's scale),
// followed by the statement that reads it at its own row, is one
// row-reduce launch that stores it too, and the manifest says the launch
// computes both; an output read at another row keeps its own launch.
func TestFusedOutputs(t *testing.T) {
	prog, diags := frontend.CheckSource("fused.kg", `
kernel scaled<R, D>(X: f32[R, D]) -> (Q: f32[R, D], S: f32[R]) {
  S[r] = max[d](abs(X[r, d])) / 127
  Q[r, d] = X[r, d] / S[r]
}
kernel shifted<R, D>(X: f32[R, D]) -> (Q: f32[R, D], S: f32[R]) {
  S[r] = max[d](abs(X[r, d]))
  Q[r, d] = X[r, d] / (S[(r + 1) % R] + 1)
}
`)
	if diags.HasErrors() {
		t.Fatal(diags.Diags[0].Msg)
	}
	p, err := lower.Build(prog.Kernel("scaled"), nil, "scaled", lower.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Launches) != 1 || p.Launches[0].Template.Name() != "row-reduce" || len(p.Launches[0].Fused) != 1 {
		t.Fatalf("scaled: %s", lower.Print(p))
	}
	if got := lower.Describe(p, "h").Launches[0].Computes; got != "Q,S" {
		t.Errorf("scaled computes %q, want Q,S", got)
	}
	if got := templatesOf(t, prog, "shifted"); got != "shifted_0_S:row-reduce shifted_1_Q:elementwise" {
		t.Errorf("shifted: %s", got)
	}
}

// TestRowPrologue: statements over whole rows that the row group after
// them reads join its launch, which stores them (Also, over the group's
// row indices and their own columns) and whose reductions read their
// values; one read along another axis than its rows (a transpose), one
// the group does not read, and one over other rows than the group's (a
// batch's rows share it) stay launches of their own. What the joined launches compute is checked where they are emitted
// (backends/cuda's TestEmulatedPrologue, the Triton interpreter's).
func TestRowPrologue(t *testing.T) {
	prog, diags := frontend.CheckSource("p.kg", `
kernel mask<R, D>(X: f32[R, D]) -> (M: bool[R, D], A: bool[R]) {
  M[r, d] = X[r, d] > 0.5
  A[r] = max[d](M[r, d] ? 1 : 0) == 1
}
kernel transposed<R, D>(X: f32[D, R]) -> (P: f32[R, D], S: f32[R]) {
  P[r, d] = X[d, r] * 2.0
  S[r] = sum[d](P[r, d])
}
kernel unread<R, D>(X: f32[R, D]) -> (P: f32[R, D], S: f32[R]) {
  P[r, d] = X[r, d] * 2.0
  S[r] = sum[d](X[r, d])
}
kernel batched<B, R, D>(X: f32[R, D], Y: f32[B, R, D]) -> (P: f32[R, D], S: f32[B, R]) {
  P[r, d] = X[r, d] * 2.0
  S[b, r] = sum[d](P[r, d] + Y[b, r, d])
}
instance mask_a = mask<R = 64, D = 1000>
instance transposed_a = transposed<R = 64, D = 1000>
instance unread_a = unread<R = 64, D = 1000>
instance batched_a = batched<B = 4, R = 64, D = 1000>
`)
	if diags.HasErrors() {
		t.Fatal(diags.Diags[0].Msg)
	}
	for name, want := range map[string]string{
		"mask":         "mask:row-reduce",
		"mask_a":       "mask_a:row-reduce",
		"transposed_a": "transposed_a_0_P:transpose transposed_a_1_S:row-reduce",
		"unread_a":     "unread_a_0_P:elementwise unread_a_1_S:row-reduce",
		"batched_a":    "batched_a_0_P:elementwise batched_a_1_S:row-reduce",
	} {
		if got := templatesOf(t, prog, name); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	in := prog.Instance("mask_a")
	p, err := lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	l := p.Launches[0]
	if len(l.Also) != 1 || l.Also[0].Target.Name != "M" {
		t.Fatalf("mask_a: stores %d statements beside A, want M", len(l.Also))
	}
	if m := l.Also[0]; m.Index[0] != l.Stmt.Index[0] || m.Index[1] == l.Stmt.Index[0] {
		t.Errorf("mask_a: M is not over A's rows and its own columns")
	}
	if ir.Any(l.Stmt.Value, func(x ir.Expr) bool { ld, ok := x.(*ir.Load); return ok && ld.Tensor.Name == "M" }) {
		t.Errorf("mask_a: A reads M from memory, which its own launch writes")
	}
}
