package lower_test

import (
	"os"
	"strings"
	"testing"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
)

// TestStrideSums: the sums of backends/cuda's testdata/strides.kg whose
// terms a divisibility test picks become sums over every stride-th point
// of their axis, counted by hand: 4 taps at stride 2 are 2 (no test
// left), 5 at stride 3 are 2 with a range test (the last one, at a start
// of 1 or 2, is past the end), 9 points from 1 at stride 3 are 3, 9 from 0
// at stride 2 are 5 with a range test; a max keeps its test; a 2-D
// transposed convolution's two tests of 3 taps at stride 2 are 2 and 2. Whether the
// rewritten sums compute the same is TestEmulatedStrideSums's and
// TestTritonStrideSumsInterpreted's.
func TestStrideSums(t *testing.T) {
	path := "../backends/cuda/testdata/strides.kg"
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	prog, diags := frontend.CheckSource(path, string(src))
	if diags.HasErrors() {
		t.Fatal(diags.Diags[0].Msg)
	}
	want := map[string][]string{
		// Its output then splits into phases (TestSplitPhases): ol = 2 * ol_q + ol_r.
		"convt_s2_k4": {"sum<f32>[c in 0..3, k in 0..2](", "Wt[c, f, (ol_r + 1) % 2 + 2 * k]"},
		"convt_s3_k5": {"sum<f32>[c in 0..2, k in 0..2]((ol + 2) % 3 + 3 * k < 5 ? ", "(Wt[c, f, (ol + 2) % 3 + 3 * k] ?? 0.0)"},
		"added_s3":    {"sum<f32>[k in 0..3](X[r, (0 - d - 1) % 3 + 1 + 3 * k] * X[r, d])"},
		"first_s2":    {"sum<f32>[k in 0..5](", " + 2 * k < 9 ? "},
		"maxpick_s2":  {"max<f32>[k in 0..7]((d - k) % 2 == 0 ? "},
		// Both tests of the conjunction, one after the other.
		"convt2d_s2_k3": {"sum<f32>[c in 0..2, kh in 0..2, kw in 0..2](", "Wt[c, f, (oh + 1) % 2 + 2 * kh, (ow + 1) % 2 + 2 * kw] ?? 0.0"},
	}
	for name, parts := range want {
		in := prog.Instance(name)
		p, err := lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		got := ir.Format(p.Kernel.Stmts[0].Value)
		for _, part := range parts {
			if !strings.Contains(got, part) {
				t.Errorf("%s: %s\nwant it to contain %s", name, got, part)
			}
		}
		if name != "maxpick_s2" && strings.Contains(got, "== 0") {
			t.Errorf("%s: %s\nstill tests divisibility", name, got)
		}
	}
}
