package tune

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
)

// TestSimulateReport compares the strategies over the measured spaces of
// the databases that KGEN_SIMULATE_DB names (paths separated by commas),
// of at least 30 points each, and over the synthetic space: mean
// evaluations to within 5% of the best with no budget, and the fraction of
// seeds there within 12 evaluations (a real run's budget per launch),
// batches of 1 and 16. The searches start from scratch; with the
// recorded default first; with a slow default first (a point drawn per
// seed among those more than 5% slower than the best, as the default is
// on shapes its heuristic does not suit); and with a good default first
// (drawn among those 5% to 25% slower). The recorded defaults of the
// measured spaces are mostly within 5% of the best already, which makes
// "default first" a tie at 1 evaluation. KGEN_SIMULATE_SEEDS sets the
// seeds (default 20). It is a report, not a check, and is skipped
// without the variable:
//
//	KGEN_SIMULATE_DB=a.jsonl,b.jsonl go test ./tune/ -run TestSimulateReport -v
func TestSimulateReport(t *testing.T) {
	paths := os.Getenv("KGEN_SIMULATE_DB")
	if paths == "" {
		t.Skip("KGEN_SIMULATE_DB names no database")
	}
	tables, from := []*Table{synthetic()}, []string{"-"}
	for _, p := range strings.Split(paths, ",") {
		recs, _, err := (&DB{Path: p}).Load()
		if err != nil {
			t.Fatal(err)
		}
		for _, tab := range Tables(recs) {
			if len(tab.Costs) >= 30 {
				tables, from = append(tables, tab), append(from, filepath.Base(p))
			}
		}
	}
	const budget = 12
	seeds := 20
	if s := os.Getenv("KGEN_SIMULATE_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("KGEN_SIMULATE_SEEDS=%q: want a positive number", s)
		}
		seeds = n
	}
	strategies := slices.DeleteFunc(slices.Clone(Strategies), func(s string) bool { return s == "exhaustive" })
	var b strings.Builder
	fmt.Fprintf(&b, "mean evaluations to within 5%% of the best over %d seeds (fraction of seeds there within %d evaluations)\n", seeds, budget)
	for _, mode := range []string{"scratch", "default", "slow default", "good default"} {
		for _, batch := range []int{1, 16} {
			fmt.Fprintf(&b, "\n%s first, batches of %d\n", mode, batch)
			tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
			fmt.Fprintf(tw, "database\tspace\tpoints\t%s\n", strings.Join(strategies, "\t"))
			for n, tab := range tables {
				start := startOf(tab, mode)
				row := []string{from[n], strings.SplitN(tab.Name, " on ", 2)[0], fmt.Sprint(len(tab.Costs))}
				for _, name := range strategies {
					all, err := simulate(tab, name, seeds, batch, 0, start, Within)
					if err != nil {
						t.Fatal(err)
					}
					small, err := simulate(tab, name, seeds, batch, budget, start, Within)
					if err != nil {
						t.Fatal(err)
					}
					row = append(row, fmt.Sprintf("%.1f (%.2f)", all.Mean, float64(small.Reached)/float64(seeds)))
				}
				fmt.Fprintln(tw, strings.Join(row, "\t"))
			}
			tw.Flush()
		}
	}
	t.Log("\n" + b.String())
}

// startOf returns the point a simulation of tab measures first for each
// seed in mode: none from scratch, the recorded default, or a slow or
// good default, drawn per seed among the points measured more than
// Within slower than the best (good: and at most 25% slower), or the
// recorded default where no point is.
func startOf(tab *Table, mode string) func(seed int) int64 {
	switch mode {
	case "scratch":
		return func(int) int64 { return -1 }
	case "default":
		return func(int) int64 { return tab.Default }
	}
	lo, hi := 1+Within, math.Inf(1)
	if mode == "good default" {
		hi = 1.25
	}
	var slow []int64
	for p, c := range tab.Costs {
		if c > tab.Best()*lo && c <= tab.Best()*hi {
			slow = append(slow, p)
		}
	}
	slices.Sort(slow)
	if len(slow) == 0 {
		// Every point is within the margin: the recorded default stands
		// in for the drawn one.
		return func(int) int64 { return tab.Default }
	}
	return func(seed int) int64 {
		return slow[rand.New(rand.NewPCG(uint64(seed), 0x5eed)).IntN(len(slow))]
	}
}
