package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompareVerdict checks the noise rule on figures whose verdicts were
// worked out by hand: each median must lie in the other's p20-p80 range
// widened by the tolerance, [p20 (1 - tol), p80 (1 + tol)], bounds included.
func TestCompareVerdict(t *testing.T) {
	cases := []struct {
		name     string
		old, cur figure
		tol      float64
		want     string
	}{
		// 103 in [93.1, 107.1] and 100 in [95.95, 110.25].
		{"agree", figure{100, 98, 102}, figure{103, 101, 105}, 0.05, "same"},
		// 90 below 99 x 0.95 = 94.05.
		{"faster", figure{100, 99, 101}, figure{90, 89, 91}, 0.05, "faster"},
		// 60 above 50.5 x 1.05 = 53.025.
		{"slower", figure{50, 49.5, 50.5}, figure{60, 59, 61}, 0.05, "slower"},
		// 110 lies in the noisy old range [76, 126], but 100 lies below
		// the steady new one's [103.55, 116.55]: both must hold.
		{"one way only", figure{100, 80, 120}, figure{110, 109, 111}, 0.05, "slower"},
		{"one way only, swapped", figure{110, 109, 111}, figure{100, 80, 120}, 0.05, "faster"},
		// Bounds count as inside: 105 is old's p80, 100 new's p20.
		{"on the bounds", figure{100, 95, 105}, figure{105, 100, 110}, 0, "same"},
		{"just past the bound", figure{100, 95, 105}, figure{105.5, 100.5, 110}, 0, "slower"},
		// 105 in [94.05, 106.05] and 100 in [98.8, 111.3] at 5%; at 1%,
		// 105 is above 101 x 1.01 = 102.01.
		{"tolerance widens", figure{100, 99, 101}, figure{105, 104, 106}, 0.05, "same"},
		{"tolerance narrower", figure{100, 99, 101}, figure{105, 104, 106}, 0.01, "slower"},
		// No recorded spread: only the tolerance is left. 104 <= 105, 100 >= 98.8.
		{"no spread", figure{100, 0, 0}, figure{104, 0, 0}, 0.05, "same"},
		{"no spread, beyond", figure{100, 0, 0}, figure{106, 0, 0}, 0.05, "slower"},
	}
	for _, c := range cases {
		if got := verdict(c.old, c.cur, c.tol); got != c.want {
			t.Errorf("%s: verdict(%v, %v, %g) = %s, want %s", c.name, c.old, c.cur, c.tol, got, c.want)
		}
	}
}

// The old report of TestCompareReports, in the current schema: agree's
// figures agree, fast's kgen time halves, slow's doubles, gone is only in
// the old report, broken failed its check in the old one.
const compareOld = `{
  "date": "2026-11-01T00:00:00Z", "target": "cuda:sm_90", "gpu": "NVIDIA H100 80GB HBM3",
  "baselines": ["eager", "compile"],
  "fast_p": [{"baseline": "eager", "p": 1, "count": 1, "total": 5, "fraction": 0.2}],
  "rows": [
    {"name": "agree", "time": {"median_us": 100, "p20_us": 98, "p80_us": 102},
     "torch": {"timings": {"eager": {"median_us": 200, "p20_us": 198, "p80_us": 202}}}, "speedups": {"eager": 2}},
    {"name": "fast", "time": {"median_us": 100, "p20_us": 99, "p80_us": 101},
     "torch": {"timings": {"eager": {"median_us": 50, "p20_us": 49, "p80_us": 51}}}, "speedups": {"eager": 0.5}},
    {"name": "slow", "time": {"median_us": 50, "p20_us": 49.5, "p80_us": 50.5},
     "torch": {"timings": {"eager": {"median_us": 80, "p20_us": 79, "p80_us": 81}}}, "speedups": {"eager": 1.6}},
    {"name": "gone", "time": {"median_us": 10, "p20_us": 9, "p80_us": 11}},
    {"name": "broken", "error": "wrong: 3 elements out of tolerance\nfirst at [0, 1]", "time": {"median_us": 0, "p20_us": 0, "p80_us": 0}}
  ]
}
`

const compareNew = `{
  "date": "2026-11-02T00:00:00Z", "target": "cuda:sm_90", "gpu": "NVIDIA H100 80GB HBM3",
  "baselines": ["eager", "compile"],
  "fast_p": [{"baseline": "eager", "p": 1, "count": 2, "total": 5, "fraction": 0.4},
             {"baseline": "compile", "p": 1, "count": 1, "total": 5, "fraction": 0.2}],
  "rows": [
    {"name": "new_one", "time": {"median_us": 5, "p20_us": 4.9, "p80_us": 5.1}},
    {"name": "slow", "time": {"median_us": 100, "p20_us": 99, "p80_us": 101},
     "torch": {"timings": {"eager": {"median_us": 80, "p20_us": 79, "p80_us": 81}}}, "speedups": {"eager": 0.8}},
    {"name": "fast", "time": {"median_us": 50, "p20_us": 49.5, "p80_us": 50.5},
     "torch": {"timings": {"eager": {"median_us": 50.5, "p20_us": 49.5, "p80_us": 51.5}}}, "speedups": {"eager": 2}},
    {"name": "agree", "time": {"median_us": 103, "p20_us": 101, "p80_us": 105},
     "torch": {"timings": {"eager": {"median_us": 196, "p20_us": 194, "p80_us": 199},
                           "compile": {"median_us": 150, "p20_us": 148, "p80_us": 152}}}, "speedups": {"eager": 2, "compile": 1.5}},
    {"name": "broken", "time": {"median_us": 20, "p20_us": 19.8, "p80_us": 20.2}}
  ]
}
`

// readComparison decodes the JSON that --json wrote.
func readComparison(t *testing.T, path string) comparison {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c comparison
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCompareReports compares two small reports whose verdicts, ratios
// and means were worked out by hand.
func TestCompareReports(t *testing.T) {
	dir := t.TempDir()
	old := writeFile(t, dir, "old.json", compareOld)
	cur := writeFile(t, dir, "new.json", compareNew)
	out := filepath.Join(dir, "cmp.json")
	code, stdout, stderr := kgen(t, "bench", "--compare", "--json", out, old, cur)
	if code != exitOK {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr)
	}
	type fig struct {
		verdict string
		ratio   float64
		reason  string
	}
	want := map[string]fig{
		// 103 in [93.1, 107.1], 100 in [95.95, 110.25].
		"agree kgen": {"same", 1.03, ""},
		// 196 in [188.1, 212.1], 200 in [184.3, 208.95].
		"agree eager":   {"same", 0.98, ""},
		"agree compile": {"not compared", 0, "old has no compile time"},
		// 50 below 99 x 0.95 = 94.05.
		"fast kgen": {"faster", 0.5, ""},
		// 50.5 in [46.55, 53.55], 50 in [47.025, 54.075].
		"fast eager": {"same", 1.01, ""},
		// 100 above 50.5 x 1.05 = 53.025.
		"slow kgen":   {"slower", 2, ""},
		"slow eager":  {"same", 1, ""},
		"broken kgen": {"not compared", 0, "old failed: wrong: 3 elements out of tolerance"},
	}
	c := readComparison(t, out)
	if len(c.Figures) != len(want) {
		t.Errorf("%d figures, want %d: %+v", len(c.Figures), len(want), c.Figures)
	}
	for _, f := range c.Figures {
		key := f.Instance + " " + f.Figure
		w, ok := want[key]
		if !ok {
			t.Errorf("unexpected figure %s", key)
			continue
		}
		if f.Verdict != w.verdict || math.Abs(f.Ratio-w.ratio) > 1e-12 || f.Reason != w.reason {
			t.Errorf("%s: %s, ratio %g, reason %q; want %s, ratio %g, reason %q", key, f.Verdict, f.Ratio, f.Reason, w.verdict, w.ratio, w.reason)
		}
	}
	if strings.Join(c.OnlyOld, ",") != "gone" || strings.Join(c.OnlyNew, ",") != "new_one" {
		t.Errorf("only in old %q, only in new %q; want [gone] and [new_one]", c.OnlyOld, c.OnlyNew)
	}
	// kgen's ratios 1.03, 0.5 and 2: the geometric mean is the cube root of 1.03.
	s := c.Summary
	if s.Compared != 6 || s.Same != 4 || s.Faster != 1 || s.Slower != 1 || s.NotCompared != 2 || s.KgenCount != 3 || math.Abs(s.KgenRatio-math.Cbrt(1.03)) > 1e-12 {
		t.Errorf("summary %+v; want 6 compared, 4 same, 1 faster, 1 slower, 2 not compared, kgen ratio %g over 3", s, math.Cbrt(1.03))
	}
	if !strings.Contains(stdout, "summary: 6 figures compared: 4 agree within the noise, 2 differ (1 faster, 1 slower); 2 not compared; kgen's new/old geometric mean 1.010 over 3 instances") {
		t.Errorf("no summary line in:\n%s", stdout)
	}
	// Speedups over eager of agree, fast and slow: 2, 0.5, 1.6 old; 2, 2, 0.8 new.
	if len(c.Speedups) != 1 || c.Speedups[0].Baseline != "eager" || c.Speedups[0].Instances != 3 ||
		math.Abs(c.Speedups[0].Old-math.Cbrt(1.6)) > 1e-12 || math.Abs(c.Speedups[0].New-math.Cbrt(3.2)) > 1e-12 {
		t.Errorf("speedups %+v; want eager over 3: old %g, new %g", c.Speedups, math.Cbrt(1.6), math.Cbrt(3.2))
	}
	if len(c.FastP) != 1 || c.FastP[0].Baseline != "eager" || c.FastP[0].P != 1 || c.FastP[0].Old.Count != 1 || c.FastP[0].New.Count != 2 {
		t.Errorf("fast_p %+v; want fast_1 vs eager, 1/5 then 2/5", c.FastP)
	}
	for _, line := range []string{
		"only in old (1): gone",
		"only in new (1): new_one",
		"fast_1 vs eager (each report's instances): old 0.20 (1/5), new 0.40 (2/5)",
	} {
		if !strings.Contains(stdout, line) {
			t.Errorf("no %q in:\n%s", line, stdout)
		}
	}
}

// TestCompareLegacyReport reads a report of the first schema (timings
// under Go field names, PyTorch eager's as "eager", "speedup_vs_eager").
func TestCompareLegacyReport(t *testing.T) {
	dir := t.TempDir()
	old := writeFile(t, dir, "old.json", `{"date": "2026-11-01", "target": "cuda:sm_90", "gpu": "H100", "nvcc": "13.0.88",
  "rows": [{"name": "k", "time": {"MedianUS": 100, "P20US": 98, "P80US": 102, "Reps": 50, "ClockMHz": 1980, "Batch": 0},
            "eager": {"name": "k", "torch": "2.11.0", "median_us": 40, "p20_us": 39, "p80_us": 41, "reps": 50, "batch": 0},
            "speedup_vs_eager": 0.4}]}`)
	cur := writeFile(t, dir, "new.json", `{"date": "2026-11-02", "target": "cuda:sm_90", "gpu": "H100", "baselines": ["eager"],
  "rows": [{"name": "k", "time": {"median_us": 100, "p20_us": 99, "p80_us": 101},
            "torch": {"timings": {"eager": {"median_us": 30, "p20_us": 29.5, "p80_us": 30.5}}}, "speedups": {"eager": 0.3}}]}`)
	out := filepath.Join(dir, "cmp.json")
	if code, _, stderr := kgen(t, "bench", "--compare", old, cur, "--json", out); code != exitOK {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr)
	}
	c := readComparison(t, out)
	// kgen: 100 in [93.1, 107.1] and in [94.05, 106.05]. eager: 30 below
	// 39 x 0.95 = 37.05.
	if len(c.Figures) != 2 ||
		c.Figures[0].Figure != "kgen" || c.Figures[0].Verdict != "same" || c.Figures[0].Ratio != 1 ||
		c.Figures[1].Figure != "eager" || c.Figures[1].Verdict != "faster" || math.Abs(c.Figures[1].Ratio-0.75) > 1e-12 {
		t.Errorf("figures %+v; want kgen same (1) and eager faster (0.75)", c.Figures)
	}
	if len(c.Speedups) != 1 || math.Abs(c.Speedups[0].Old-0.4) > 1e-12 || math.Abs(c.Speedups[0].New-0.3) > 1e-12 {
		t.Errorf("speedups %+v; want eager 0.4 then 0.3", c.Speedups)
	}
}

// TestCompareMatching: instances match by name and target, repeated
// names occurrence by occurrence.
func TestCompareMatching(t *testing.T) {
	dir := t.TempDir()
	row := func(name string, us float64) string {
		return fmt.Sprintf(`{"name": %q, "time": {"median_us": %g, "p20_us": 0, "p80_us": 0}}`, name, us)
	}
	old := writeFile(t, dir, "old.json", `{"target": "cuda:sm_90", "rows": [`+row("dup", 10)+`, `+row("dup", 20)+`]}`)
	cur := writeFile(t, dir, "new.json", `{"target": "cuda:sm_90", "rows": [`+row("dup", 10)+`, `+row("dup", 40)+`]}`)
	other := writeFile(t, dir, "other.json", `{"target": "cuda:sm_90a", "rows": [`+row("dup", 10)+`]}`)
	out := filepath.Join(dir, "cmp.json")

	kgen(t, "bench", "--compare", "--json", out, old, cur)
	c := readComparison(t, out)
	if len(c.Figures) != 2 || c.Figures[0].Instance != "dup" || c.Figures[0].Verdict != "same" ||
		c.Figures[1].Instance != "dup#2" || c.Figures[1].Verdict != "slower" || c.Figures[1].Ratio != 2 {
		t.Errorf("figures %+v; want dup same, dup#2 slower (2)", c.Figures)
	}

	_, stdout, _ := kgen(t, "bench", "--compare", "--json", out, old, other)
	c = readComparison(t, out)
	if len(c.Figures) != 0 || len(c.OnlyOld) != 2 || len(c.OnlyNew) != 1 || !strings.Contains(stdout, "different targets") {
		t.Errorf("different targets: figures %+v, only in old %q, only in new %q; want none matched\n%s", c.Figures, c.OnlyOld, c.OnlyNew, stdout)
	}
	kgen(t, "bench", "--compare", "--any-target", "--json", out, old, other)
	c = readComparison(t, out)
	if len(c.Figures) != 1 || c.Figures[0].Verdict != "same" || strings.Join(c.OnlyOld, ",") != "dup#2" {
		t.Errorf("--any-target: figures %+v, only in old %q; want dup matched", c.Figures, c.OnlyOld)
	}
}

// TestCompareErrors: unreadable or invalid reports exit 1 naming the file
// (and the line and column where the decoder gives one); bad usage exits 2.
func TestCompareErrors(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.json", compareOld)
	// The stray comma puts '}' where a key should be: line 4, column 43.
	syntax := writeFile(t, dir, "syntax.json", "{\n  \"target\": \"cuda:sm_90\",\n  \"rows\": [\n    {\"name\": \"a\", \"time\": {\"median_us\": 1,}}\n  ]\n}\n")
	// A string where a number belongs: "fast" starts at line 2, column 39.
	typed := writeFile(t, dir, "typed.json", "{\"rows\": [\n  {\"name\": \"a\", \"time\": {\"median_us\": \"fast\"}}\n]}\n")
	// 12.5 starts at column 20, the string "x\"y" at column 33.
	number := writeFile(t, dir, "number.json", `{"rows": [{"name": 12.5}]}`)
	escaped := writeFile(t, dir, "escaped.json", `{"rows": [{"name": "a", "time": "x\"y"}]}`)
	notReport := writeFile(t, dir, "difftest.json", `{"command": "kgen difftest", "seed": 1}`)
	array := writeFile(t, dir, "array.json", `[1, 2]`)
	nameless := writeFile(t, dir, "nameless.json", `{"rows": [{"name": "a"}, {"time": {"median_us": 1}}]}`)
	missing := filepath.Join(dir, "missing.json")
	cases := []struct {
		args []string
		code int
		errs []string
	}{
		{[]string{good, syntax}, exitUser, []string{"syntax.json:4:43: error: invalid JSON: invalid character '}'"}},
		{[]string{typed, good}, exitUser, []string{"typed.json:2:39: error: not a kgen bench report: rows.time.median_us should be a number, not a string"}},
		{[]string{number, good}, exitUser, []string{"number.json:1:20: error: not a kgen bench report: rows.name should be a string, not a number"}},
		{[]string{escaped, good}, exitUser, []string{"escaped.json:1:33: error: not a kgen bench report: rows.time should be an object, not a string"}},
		{[]string{good, notReport}, exitUser, []string{`difftest.json: error: not a kgen bench report: it has no "rows"`}},
		{[]string{array, good}, exitUser, []string{"array.json:1:1: error: not a kgen bench report: the report should be an object, not an array"}},
		{[]string{good, nameless}, exitUser, []string{"nameless.json: error: not a kgen bench report: row 2 has no name"}},
		{[]string{missing, syntax}, exitUser, []string{"missing.json: error: cannot read the report: no such file or directory", "syntax.json:4:43"}},
		{[]string{good}, exitUsage, []string{"--compare wants two reports, OLD.json NEW.json; got 1 argument"}},
		{[]string{good, good, good}, exitUsage, []string{"got 3 arguments"}},
		{[]string{"--tolerance", "1.5", good, good}, exitUsage, []string{"--tolerance: want a fraction"}},
		{[]string{"--tolerance", "-0.01", good, good}, exitUsage, []string{"--tolerance: want a fraction"}},
		{[]string{"--target", "cuda:sm_90", good, good}, exitUsage, []string{"--target does not go with --compare"}},
		{[]string{"--md", filepath.Join(dir, "x.md"), good, good}, exitUsage, []string{"--md does not go with --compare"}},
		{[]string{"--tolerance", "0", good, good}, exitOK, nil},
	}
	for _, c := range cases {
		args := append([]string{"bench", "--compare"}, c.args...)
		code, _, stderr := kgen(t, args...)
		if code != c.code {
			t.Errorf("kgen %s: exit %d, want %d; stderr:\n%s", strings.Join(args, " "), code, c.code, stderr)
		}
		for _, e := range c.errs {
			if !strings.Contains(stderr, e) {
				t.Errorf("kgen %s: stderr lacks %q:\n%s", strings.Join(args, " "), e, stderr)
			}
		}
	}
}

// TestCompareFastPByTarget: reports of several targets count fast_p for
// each target; the comparison pairs each target's old figure with its own
// new one, not every target's with every other's.
func TestCompareFastPByTarget(t *testing.T) {
	fp := func(target string, count int) fastP {
		return fastP{Target: target, Baseline: "eager", P: 1, Count: count, Total: 4, Fraction: float64(count) / 4}
	}
	old := &benchReport{FastP: []fastP{fp("cuda:sm_90", 1), fp("triton:sm_90", 2)}}
	cur := &benchReport{FastP: []fastP{fp("cuda:sm_90", 3), fp("triton:sm_90", 4)}}
	c := compareReports(old, cur, 0.05, false)
	if len(c.FastP) != 2 {
		t.Fatalf("%d fast_p comparisons, want 2: %+v", len(c.FastP), c.FastP)
	}
	for i, w := range []struct {
		target   string
		old, new int
	}{{"cuda:sm_90", 1, 3}, {"triton:sm_90", 2, 4}} {
		if f := c.FastP[i]; f.Target != w.target || f.Old.Count != w.old || f.New.Count != w.new {
			t.Errorf("fast_p %d: %+v, want %s %d then %d", i, f, w.target, w.old, w.new)
		}
	}
}
