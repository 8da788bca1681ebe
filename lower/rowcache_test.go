package lower_test

import (
	"testing"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/lower"
)

// TestRowCacheSkipsEmptyRows: rows of length 0 are not cached (the CUDA
// emitted a register array of size 0, which nvcc rejects;
// testsuite/corpus/compile-s174.kg is the differential tester's
// reproducer), while rows of a few elements are.
func TestRowCacheSkipsEmptyRows(t *testing.T) {
	src := `
kernel rowmin<M, R>(X: f32[M, R]) -> (Y: f32[M, R]) {
  let t[i] = min[j](X[i, j])
  Y[i, j] = X[i, j] - t[i]
}
instance empty = rowmin<M = 1, R = 0>
instance short = rowmin<M = 1, R = 3>
`
	prog, diags := frontend.CheckSource("rowcache.kg", src)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, in := range prog.Instances {
		p, err := lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		l := p.Launches[0]
		if l.Template.Name() != "row-reduce" {
			t.Fatalf("%s: template %s, want row-reduce", in.Name, l.Template.Name())
		}
		n, _, ok := lower.RowCache(l)
		if want := in.Name == "short"; ok != want {
			t.Errorf("%s: RowCache = %d, %v; want cached: %v", in.Name, n, ok, want)
		}
	}
}
