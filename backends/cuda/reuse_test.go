package cuda

import (
	"os"
	"strings"
	"testing"

	"kgen.dev/kgen/lower"
)

// TestEmulatedReuseOrder: elementwise launches that visit their points in
// the reuse order (REUSE=1, lower.Reuse) compute every point once, on the
// CPU (testdata/reuse.kg).
func TestEmulatedReuseOrder(t *testing.T) {
	spec, err := os.ReadFile("testdata/reuse.kg")
	if err != nil {
		t.Fatal(err)
	}
	cfg := lower.Config{"elementwise.REUSE": 1, "elementwise.THREADS": 64, "elementwise.UNROLL": 2, "elementwise.VEC": 4}
	var plans []*lower.Plan
	for _, p := range plansFor(t, "reuse.kg", string(spec), sm80) {
		if p.Env == nil {
			continue
		}
		_, reuse := lower.ReuseOrder(p.Launches[0], 1024)
		if want := strings.HasSuffix(p.Name, "_big"); reuse != want {
			t.Errorf("%s: the default configuration %s takes the reuse order: %v, want %v", p.Name, p.Launches[0].Config, reuse, want)
		}
		c := cfg
		if p.Name == "odd_rows" {
			// Tiles of 64 x 1 x 4 points divide a plane of 128 x 6, but
			// rows of 6 are no whole vectors: the scalar loop runs, in
			// tiles of 64.
			c = lower.Config{"elementwise.REUSE": 1, "elementwise.THREADS": 64, "elementwise.UNROLL": 1, "elementwise.VEC": 4}
		}
		if _, err := lower.Override(p, c, sm80); err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if src := Emit([]*lower.Plan{p}); !strings.Contains(src, "the reuse order") {
			t.Fatalf("%s: no reuse order:\n%s", p.Name, src)
		}
		plans = append(plans, p)
	}
	emulatePlans(t, plans, nil)
}
