package cuda

import (
	"os"
	"strings"
	"testing"

	"kgen.dev/kgen/lower"
)

// TestEmulatedOnline: row-reduce launches that stream their rows compute
// each max and its sum of shifted exponentials, and each mean and its
// squared deviations, in one pass (testdata/online.kg), and the results
// are the interpreter's, on the
// CPU: with blocks of 64 threads (each thread 35 points of a row; in
// chunks of 4 where the rows are whole chunks; rows enough that the sums
// are not split), with groups of 8 threads a row, and staged in shared
// memory (STAGE=1), where the copy of a row takes its first let's
// reductions, and their pairs where no other pass is left, as it goes.
// not_paired and softmax keep their passes (staged, softmax's max takes
// the copy's); layernorm's mean and variance take one, then its output
// another. A mean and its variance combine across the row's threads in
// one reduction.
func TestEmulatedOnline(t *testing.T) {
	spec, err := os.ReadFile("testdata/online.kg")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		cfg  lower.Config
	}{
		{"blocks", lower.Config{"THREADS": 64, "STAGE": 0, "PREFETCH": 0, "CLUSTER": 1, "BLOCK_ROWS": 1, "VEC": 4}},
		{"groups of 8", lower.Config{"THREADS": 64, "STAGE": 0, "PREFETCH": 0, "CLUSTER": 1, "BLOCK_ROWS": 8, "VEC": 1}},
		{"staged", lower.Config{"THREADS": 64, "STAGE": 1, "PREFETCH": 0, "CLUSTER": 1, "BLOCK_ROWS": 1, "VEC": 1}},
	} {
		staged := c.cfg["STAGE"] == 1
		t.Run(c.name, func(t *testing.T) {
			var plans []*lower.Plan
			for _, p := range plansFor(t, "online.kg", string(spec), sm80) {
				if p.Env == nil {
					continue
				}
				if _, err := lower.Override(p, c.cfg, sm80); err != nil {
					t.Fatalf("%s: %v", p.Name, err)
				}
				if l := p.Launches[0]; len(p.Launches) != 1 || l.Template.Name() != "row-reduce" {
					t.Fatalf("%s: %d launches, the first %s; the test needs one row-reduce", p.Name, len(p.Launches), l.Template.Name())
				}
				if _, _, cached := lower.RowCache(p.Launches[0]); cached {
					t.Fatalf("%s: rows kept in registers; the test needs them streamed", p.Name)
				}
				src := Emit([]*lower.Plan{p})
				_, _, stages := lower.RowStage(p.Launches[0])
				if staged && stages != strings.Contains(src, "the chunk's first point") {
					t.Errorf("%s: the row is staged (%v) but its copy takes no points, or the reverse:\n%s", p.Name, stages, src)
				}
				want := 1
				if p.Name == "not_paired_odd" || p.Name == "softmax_odd" {
					want = 0
				}
				if got := strings.Count(src, "in one pass"); got != want {
					t.Errorf("%s: %d online passes, want %d:\n%s", p.Name, got, want, src)
				}
				// A mean and its squared deviations take one reduction
				// across the row's threads, their moments (moments.go).
				if moments := strings.Count(src, "the row's moments"); moments > 0 {
					reductions := strings.Count(src, "kg_block_reduce<") + strings.Count(src, "kg_group_reduce<")
					if moments != 1 || reductions != 1 {
						t.Errorf("%s: %d moments and %d reductions across the row's threads, want 1 and 1:\n%s", p.Name, moments, reductions, src)
					}
				}
				plans = append(plans, p)
			}
			emulatePlans(t, plans, nil)
		})
	}
}

// TestEmulatedSplitCentered: a mean and its variance over few long rows
// split together (testdata/split_centered.kg): one launch computes each
// chunk's mean and squared deviations in one pass, and the plan's
// results are the interpreter's, on the CPU.
func TestEmulatedSplitCentered(t *testing.T) {
	spec, err := os.ReadFile("testdata/split_centered.kg")
	if err != nil {
		t.Fatal(err)
	}
	var plans []*lower.Plan
	for _, p := range plansFor(t, "split_centered.kg", string(spec), sm80) {
		if p.Env == nil {
			continue
		}
		// Blocks of 64 threads, as the emulator runs a thread each.
		if _, err := lower.Override(p, lower.Config{"row-reduce.THREADS": 64}, sm80); err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		first := p.Launches[0]
		if len(first.Fused) != 1 || !strings.HasSuffix(first.Stmt.Target.Name, "_part") {
			t.Fatalf("%s: the first launch is %s; the test needs the chunks' means and deviations in one", p.Name, first.Stmt.Target.Name)
		}
		if src := Emit([]*lower.Plan{p}); strings.Count(src, "in one pass") != 1 {
			t.Errorf("%s: the chunks' statistics are not one pass:\n%s", p.Name, src)
		}
		plans = append(plans, p)
	}
	emulatePlans(t, plans, nil)
}
