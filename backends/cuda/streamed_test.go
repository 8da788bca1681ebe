package cuda

import (
	"os"
	"strings"
	"testing"

	"kgen.dev/kgen/lower"
)

// TestEmulatedStreamedVectorRows: row-reduce launches that stream their
// rows read them in 16-byte chunks wherever the row's points are
// consecutive elements (lower.Contiguous), on the CPU: a reduction whose
// axis starts past 0 (sum[d in 4..D]: the chunks start at the row's
// fourth element, not its first), and a group's sum over three axes
// through a compound index (X[n, g * CG + j, h, w] over [j, h, w]);
// testdata/streamed.kg. Then the default plans.
func TestEmulatedStreamedVectorRows(t *testing.T) {
	spec, err := os.ReadFile("testdata/streamed.kg")
	if err != nil {
		t.Fatal(err)
	}
	cfg := lower.Config{"THREADS": 64, "STAGE": 0, "PREFETCH": 0, "CLUSTER": 1, "BLOCK_ROWS": 1, "VEC": 4}
	var plans []*lower.Plan
	for _, p := range plansFor(t, "streamed.kg", string(spec), sm80) {
		if p.Env == nil {
			continue
		}
		if _, err := lower.Override(p, cfg, sm80); err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if l := p.Launches[0]; len(p.Launches) != 1 || l.Template.Name() != "row-reduce" {
			t.Fatalf("%s: %d launches, the first %s; the test needs one row-reduce", p.Name, len(p.Launches), l.Template.Name())
		}
		if _, _, cached := lower.RowCache(p.Launches[0]); cached {
			t.Fatalf("%s: rows kept in registers; the test needs them streamed", p.Name)
		}
		if src := Emit([]*lower.Plan{p}); !strings.Contains(src, "the row of X") {
			t.Errorf("%s: no vector loads of X's rows:\n%s", p.Name, src)
		}
		plans = append(plans, p)
	}
	emulatePlans(t, plans, nil)

	// The default plans too: a row that registers or shared memory would
	// hold from its first element is streamed where its loop starts past
	// 0 (lower.RowCache).
	var defaults []*lower.Plan
	for _, p := range plansFor(t, "streamed.kg", string(spec), sm80) {
		if p.Env != nil {
			defaults = append(defaults, p)
		}
	}
	emulatePlans(t, defaults, nil)
}
