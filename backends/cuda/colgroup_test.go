package cuda

import (
	"os"
	"testing"

	"kgen.dev/kgen/lower"
)

// TestEmulatedColGroups: col-group launches (softmax and norms over an
// outer axis, one launch each) compute what the interpreter does, on the
// CPU: columns that are no whole number of vectors (13, 6, 10 and the
// collapsed 3 x 7), reduced axes that are no whole number of the block's
// rows of threads, points kept in registers and (TY=8 over 300 points,
// beyond MaxCached) read from memory each pass, f16 data with f32
// statistics and a weight along the columns.
func TestEmulatedColGroups(t *testing.T) {
	text, err := os.ReadFile("testdata/colgroups.kg")
	if err != nil {
		t.Fatal(err)
	}
	spec := string(text)
	var plans []*lower.Plan
	for _, p := range plansFor(t, "colgroups.kg", spec, sm80) {
		if p.Env == nil {
			continue
		}
		l := p.Launches[0]
		if len(p.Launches) != 1 || l.Template.Name() != "col-group" {
			t.Fatalf("%s: %d launches, the first %s; want one col-group", p.Name, len(p.Launches), l.Template.Name())
		}
		if p.Name == "softmax_uncached" {
			if _, err := lower.Override(p, lower.Config{"col-group.TY": 8, "col-group.TX": 4}, sm80); err != nil {
				t.Fatal(err)
			}
		}
		if cached, want := lower.ColGroupCache(l) > 0, p.Name != "softmax_uncached"; cached != want {
			t.Errorf("%s (%s): points cached %t, want %t", p.Name, l.Config, cached, want)
		}
		plans = append(plans, p)
	}
	emulatePlans(t, plans, nil)
}
