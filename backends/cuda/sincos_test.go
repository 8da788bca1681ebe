package cuda

import (
	"os"
	"strings"
	"testing"

	"kgen.dev/kgen/lower"
)

// TestEmulatedSincos checks which sines and cosines the emitter computes
// together (a pair's both evaluated whenever the expression is: not in
// the arms of ?:, nor right of &&), and runs the kernels on the host
// emulator against the interpreter, which computes each call on its own.
func TestEmulatedSincos(t *testing.T) {
	spec, err := os.ReadFile("testdata/sincos.kg")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"sc_f64_odd": true, "sc_f32_odd": true, "sc_arms_odd": false, "sc_rows_odd": true}
	var plans []*lower.Plan
	for _, p := range plansFor(t, "sincos.kg", string(spec), sm80) {
		if p.Env == nil {
			continue
		}
		src := Emit([]*lower.Plan{p})
		if got := strings.Contains(src, ", &kg_sn"); got != want[p.Name] {
			t.Errorf("%s: sin and cos computed together: %v, want %v:\n%s", p.Name, got, want[p.Name], src)
		}
		plans = append(plans, p)
	}
	if len(plans) != len(want) {
		t.Fatalf("%d instances, want %d", len(plans), len(want))
	}
	emulatePlans(t, plans, nil)
}
