package cuda

import (
	"os"
	"strings"
	"testing"

	"kgen.dev/kgen/lower"
)

// TestEmulatedHoistedLoads: elementwise launches with HOIST=1 (a step's
// vector loads issued before its arithmetic) compute what the interpreter
// does, on steps of 2 and 4 groups of 2, 4 and 8 points, the last steps
// partly past the end; and their source hoists the loads.
func TestEmulatedHoistedLoads(t *testing.T) {
	spec, err := os.ReadFile("testdata/hoist.kg")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ unroll, vec int64 }{{2, 4}, {4, 2}, {2, 8}} {
		var plans []*lower.Plan
		for _, p := range plansFor(t, "hoist.kg", string(spec), sm80) {
			if p.Env == nil {
				continue
			}
			cfg := lower.Config{"elementwise.HOIST": 1, "elementwise.THREADS": 64, "elementwise.UNROLL": c.unroll, "elementwise.VEC": c.vec}
			if _, err := lower.Override(p, cfg, sm80); err != nil {
				t.Fatalf("%s: %v", p.Name, err)
			}
			if src := Emit([]*lower.Plan{p}); !strings.Contains(src, "the step's groups' loads, issued together") {
				t.Fatalf("%s at UNROLL %d, VEC %d: no hoisted loads:\n%s", p.Name, c.unroll, c.vec, src)
			}
			plans = append(plans, p)
		}
		emulatePlans(t, plans, nil)
	}
}

// TestHoistChecks: HOIST=1 needs steps of several vector groups.
func TestHoistChecks(t *testing.T) {
	spec, err := os.ReadFile("testdata/hoist.kg")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plansFor(t, "hoist.kg", string(spec), sm80) {
		if p.Name != "quantize_odd" {
			continue
		}
		for _, cfg := range []lower.Config{{"HOIST": 1, "UNROLL": 1, "VEC": 4}, {"HOIST": 1, "UNROLL": 2, "VEC": 1}} {
			if _, err := lower.Override(p, cfg, sm80); err == nil || !strings.Contains(err.Error(), "HOIST=1 needs UNROLL and VEC above 1") {
				t.Errorf("%v: %v, want HOIST's constraint", cfg, err)
			}
		}
		return
	}
	t.Fatal("no quantize_odd plan")
}
