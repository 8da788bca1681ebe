package lower_test

import (
	"fmt"
	"strings"
	"testing"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
)

// TestSplitOnline checks which softmax statistics lower.splitOnline
// splits, and into what: few long rows in whole chunks of 1024 to 4096
// points (50257 = 29 x 1733), not many rows, short rows, rows without
// such a divisor, or a sum not shifted by the maximum.
func TestSplitOnline(t *testing.T) {
	src := `
kernel softmax<R, D>(X: f32[R, D]) -> (Y: f32[R, D]) {
  let mx[r] = max[d](X[r, d])
  let den[r] = sum[d](exp(X[r, d] - mx[r]))
  Y[r, d] = exp(X[r, d] - mx[r]) / den[r]
}
kernel unshifted<R, D>(X: f32[R, D]) -> (Y: f32[R, D]) {
  let mx[r] = max[d](X[r, d])
  let den[r] = sum[d](exp(X[r, d]))
  Y[r, d] = exp(X[r, d] - mx[r]) / den[r]
}
instance vocab = softmax<R = 128, D = 50257>
instance many_rows = softmax<R = 1024, D = 50257>
instance short_rows = softmax<R = 16, D = 16384>
instance prime_row = softmax<R = 8, D = 40009>
instance not_shifted = unshifted<R = 128, D = 50257>
`
	want := map[string]string{
		"vocab":       "mx_loc[r, chunk] = max<f32>[d in 0..1733](X[r, chunk * 1733 + d]); den_loc[r, chunk] = sum<f32>[d in 0..1733](exp(X[r, chunk * 1733 + d] - mx_loc[r, chunk])); mx[r] = max<f32>[chunk in 0..29](mx_loc[r, chunk]); den[r] = sum<f32>[chunk in 0..29](den_loc[r, chunk] / exp(mx[r] - mx_loc[r, chunk]))",
		"many_rows":   "",
		"short_rows":  "",
		"prime_row":   "",
		"not_shifted": "",
	}
	prog, diags := frontend.CheckSource("online.kg", src)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, in := range prog.Instances {
		p, err := lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		split := strings.HasSuffix(p.Kernel.Stmts[0].Target.Name, "_loc")
		for _, s := range p.Kernel.Stmts {
			if s.Target.Name == "Y" || !split {
				continue
			}
			var ix []string
			for _, x := range s.Index {
				ix = append(ix, x.Name)
			}
			got = append(got, fmt.Sprintf("%s[%s] = %s", s.Target.Name, strings.Join(ix, ", "), ir.Format(s.Value)))
		}
		if g := strings.Join(got, "; "); g != want[in.Name] {
			t.Errorf("%s:\n got %s\nwant %s", in.Name, g, want[in.Name])
		}
	}
}
