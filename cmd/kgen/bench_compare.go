package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	kgrt "kgen.dev/kgen/runtime"
)

// compareHelp is the part of bench's help about --compare.
const compareHelp = `

kgen bench --compare OLD.json NEW.json compares two reports that bench
--json wrote (both report formats committed under testsuite/results/ are
read). Instances are matched by name within reports of the same target
(--any-target matches them by name alone); those in one report only are
listed. For kgen's time and each PyTorch baseline's time in both, it prints
the old and new medians with their p20-p80 ranges, the ratio new/old, and
a verdict. The noise is the spread each report recorded, widened by
--tolerance (default 0.05): two medians agree ("same") when each lies
within the other's range [p20 x (1 - tolerance), p80 x (1 + tolerance)],
bounds included; otherwise the new time is "faster" or "slower". The
tolerance covers what the in-run spread does not: between two sessions on
H100s (2026-11-23 and 2026-11-25, the same PyTorch), PyTorch eager's
medians on the suite's level 1 moved by 4-6% on small kernels whose p20-p80
ranges were 3-5% wide. A summary line counts the figures that agree and
differ and gives the geometric mean of kgen's new/old ratio; the geometric
mean speedups over each baseline and fast_p are printed old beside new when
both reports hold them. --json FILE writes the comparison as JSON. Exit
status 0 whatever the verdicts, 1 when a report cannot be read or is not a
bench report.`

// compareFlags are bench's flags for comparing reports.
type compareFlags struct {
	on        bool
	tolerance float64
	anyTarget bool
}

func (c *compareFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&c.on, "compare", false, "compare two --json reports, OLD.json NEW.json, within their recorded noise")
	fs.Float64Var(&c.tolerance, "tolerance", 0.05, "with --compare, widen each p20-p80 range by this fraction before comparing medians")
	fs.BoolVar(&c.anyTarget, "any-target", false, "with --compare, match instances by name even when the reports' targets differ")
}

// compareOnly are the flags that go with --compare.
var compareOnly = []string{"compare", "tolerance", "any-target", "json"}

// run is kgen bench --compare: args are the two reports, jsonOut where
// the comparison goes as JSON (none when empty).
func (c *compareFlags) run(fs *flag.FlagSet, args []string, jsonOut string) int {
	var other []string
	fs.Visit(func(f *flag.Flag) {
		if !slices.Contains(compareOnly, f.Name) {
			other = append(other, "--"+f.Name)
		}
	})
	switch {
	case len(other) > 0:
		return usageError("bench", "%s does not go with --compare", strings.Join(other, ", "))
	case len(args) != 2:
		return usageError("bench", "--compare wants two reports, OLD.json NEW.json; got %s", plural(len(args), "argument"))
	case !(c.tolerance >= 0 && c.tolerance < 1):
		return usageError("bench", "--tolerance: want a fraction from 0 up to 1 (0.05 is 5%%), not %g", c.tolerance)
	}
	old, errOld := readReport(args[0])
	cur, errNew := readReport(args[1])
	if errOld != nil || errNew != nil {
		for _, err := range []error{errOld, errNew} {
			if err != nil {
				fmt.Fprintln(stderr, err)
			}
		}
		return exitUser
	}
	cmp := compareReports(old, cur, c.tolerance, c.anyTarget)
	cmp.Old.Path, cmp.New.Path = args[0], args[1]
	cmp.print(stdout)
	if jsonOut != "" {
		if err := writeJSON(jsonOut, cmp); err != nil {
			fmt.Fprintf(stderr, "kgen bench: %v\n", err)
			return exitUser
		}
	}
	return exitOK
}

// figure is one timed figure of a report, in microseconds: the median of
// its samples and their 20th and 80th percentiles.
type figure struct {
	MedianUS float64 `json:"median_us"`
	P20US    float64 `json:"p20_us"`
	P80US    float64 `json:"p80_us"`
}

// admits reports whether t lies within f's noise: its p20-p80 range
// widened by the fraction tol, [p20 (1 - tol), p80 (1 + tol)], bounds
// included. A range that leaves out its own median (no report has one)
// is stretched to include it.
func (f figure) admits(t, tol float64) bool {
	lo, hi := min(f.P20US, f.MedianUS), max(f.P80US, f.MedianUS)
	return lo*(1-tol) <= t && t <= hi*(1+tol)
}

// Verdicts of a figure's comparison.
const (
	verdictSame        = "same"
	verdictFaster      = "faster"
	verdictSlower      = "slower"
	verdictNotCompared = "not compared"
)

// verdict compares a figure of two reports: the same when each median
// lies within the other's noise (figure.admits), else the new time is
// faster or slower. The test is symmetric, so a noisy run cannot hide a
// change that a steady one shows: the steady one's range must admit the
// noisy one's median too.
func verdict(old, cur figure, tol float64) string {
	switch {
	case old.admits(cur.MedianUS, tol) && cur.admits(old.MedianUS, tol):
		return verdictSame
	case cur.MedianUS < old.MedianUS:
		return verdictFaster
	}
	return verdictSlower
}

// comparison is what bench --compare found; it is also its JSON output.
type comparison struct {
	Old       reportID   `json:"old"`
	New       reportID   `json:"new"`
	Tolerance float64    `json:"tolerance"`
	Rule      string     `json:"rule"`
	Notes     []string   `json:"notes,omitempty"`
	Figures   []figCmp   `json:"figures"`
	OnlyOld   []string   `json:"only_in_old"`
	OnlyNew   []string   `json:"only_in_new"`
	Speedups  []speedCmp `json:"speedups,omitempty"`
	FastP     []fastPCmp `json:"fast_p,omitempty"`
	Summary   cmpSummary `json:"summary"`
}

type reportID struct {
	Path   string `json:"path"`
	Date   string `json:"date"`
	GPU    string `json:"gpu"`
	Target string `json:"target"`
}

// figCmp is one figure of one instance in both reports: Figure is "kgen"
// or a baseline mode. Old or New is nil where that report lacks the
// figure, and Reason says why it was not compared.
type figCmp struct {
	Instance string  `json:"instance"`
	Figure   string  `json:"figure"`
	Old      *figure `json:"old"`
	New      *figure `json:"new"`
	Ratio    float64 `json:"ratio,omitempty"` // new median / old median
	Verdict  string  `json:"verdict"`
	Reason   string  `json:"reason,omitempty"`
}

// speedCmp is the geometric mean of kgen's speedup over one baseline, in
// each report, over the instances whose speedups both reports hold.
type speedCmp struct {
	Baseline  string  `json:"baseline"`
	Instances int     `json:"instances"`
	Old       float64 `json:"old_geomean"`
	New       float64 `json:"new_geomean"`
}

// fastPCmp is one fast_p figure of both reports (of all their instances).
type fastPCmp struct {
	Target   string  `json:"target,omitempty"` // in reports of several targets
	Baseline string  `json:"baseline"`
	P        float64 `json:"p"`
	Old      fastP   `json:"old"`
	New      fastP   `json:"new"`
}

type cmpSummary struct {
	Compared    int     `json:"compared"`
	Same        int     `json:"same"`
	Faster      int     `json:"faster"`
	Slower      int     `json:"slower"`
	NotCompared int     `json:"not_compared"`
	KgenRatio   float64 `json:"kgen_geomean_ratio,omitempty"` // geometric mean of kgen's new/old
	KgenCount   int     `json:"kgen_instances"`               // the instances it is over
}

// compareReports compares every figure of the instances of old and cur
// that match (same name; same target unless anyTarget), with tolerance tol.
func compareReports(old, cur *benchReport, tol float64, anyTarget bool) *comparison {
	c := &comparison{
		Old:       reportID{Date: old.Date, GPU: old.GPU, Target: old.Target},
		New:       reportID{Date: cur.Date, GPU: cur.GPU, Target: cur.Target},
		Tolerance: tol,
		Rule:      fmt.Sprintf("two medians agree when each lies within the other's range [p20 x %g, p80 x %g]", 1-tol, 1+tol),
		OnlyOld:   []string{},
		OnlyNew:   []string{},
	}
	oldRows, newRows := keyRows(old.Rows), keyRows(cur.Rows)
	match := old.Target == cur.Target || anyTarget
	if !match {
		c.Notes = append(c.Notes, fmt.Sprintf("the reports are of different targets (%s, %s): no instance matches; --any-target matches them by name", old.Target, cur.Target))
	}
	if old.GPU != cur.GPU {
		c.Notes = append(c.Notes, fmt.Sprintf("the reports are of different GPUs (%s, %s)", old.GPU, cur.GPU))
	}
	logSum := 0.0
	speedLogs := map[string][2]float64{}
	speedN := map[string]int{}
	for _, k := range oldRows.keys {
		o := oldRows.rows[k]
		n, ok := newRows.rows[k]
		if !match || !ok {
			c.OnlyOld = append(c.OnlyOld, k)
			continue
		}
		for _, f := range figureNames(o, n) {
			fc := compareFigure(k, f, o, n, tol)
			c.Figures = append(c.Figures, fc)
			if f == "kgen" && fc.Verdict != verdictNotCompared {
				logSum += math.Log(fc.Ratio)
				c.Summary.KgenCount++
			}
		}
		for m, so := range o.Speedups {
			if sn := n.Speedups[m]; so > 0 && sn > 0 {
				l := speedLogs[m]
				speedLogs[m] = [2]float64{l[0] + math.Log(so), l[1] + math.Log(sn)}
				speedN[m]++
			}
		}
	}
	for _, k := range newRows.keys {
		if _, ok := oldRows.rows[k]; !match || !ok {
			c.OnlyNew = append(c.OnlyNew, k)
		}
	}
	for _, fc := range c.Figures {
		switch fc.Verdict {
		case verdictSame:
			c.Summary.Same++
		case verdictFaster:
			c.Summary.Faster++
		case verdictSlower:
			c.Summary.Slower++
		default:
			c.Summary.NotCompared++
		}
	}
	c.Summary.Compared = c.Summary.Same + c.Summary.Faster + c.Summary.Slower
	if c.Summary.KgenCount > 0 {
		c.Summary.KgenRatio = math.Exp(logSum / float64(c.Summary.KgenCount))
	}
	for _, m := range baselineOrder(old, cur) {
		if n := speedN[m]; n > 0 {
			l := speedLogs[m]
			c.Speedups = append(c.Speedups, speedCmp{Baseline: m, Instances: n, Old: math.Exp(l[0] / float64(n)), New: math.Exp(l[1] / float64(n))})
		}
	}
	for _, fo := range old.FastP {
		for _, fn := range cur.FastP {
			if fo.Baseline == fn.Baseline && fo.P == fn.P && fo.Target == fn.Target {
				c.FastP = append(c.FastP, fastPCmp{Target: fo.Target, Baseline: fo.Baseline, P: fo.P, Old: fo, New: fn})
			}
		}
	}
	return c
}

// keyedRows are a report's rows by instance name, in the report's order.
// An instance that appears again (two files can name instances alike) is
// keyed NAME#2, NAME#3, ..., and so matched occurrence by occurrence.
type keyedRows struct {
	keys []string
	rows map[string]benchRow
}

func keyRows(rows []benchRow) keyedRows {
	kr := keyedRows{rows: map[string]benchRow{}}
	seen := map[string]int{}
	for _, r := range rows {
		k := r.label()
		seen[k]++
		if seen[k] > 1 {
			k = fmt.Sprintf("%s#%d", k, seen[k])
		}
		kr.keys = append(kr.keys, k)
		kr.rows[k] = r
	}
	return kr
}

// baselineOrder is the baseline modes of either report, in their order.
func baselineOrder(a, b *benchReport) []string {
	var modes []string
	for _, m := range append(slices.Clone(a.Baselines), b.Baselines...) {
		if !slices.Contains(modes, m) {
			modes = append(modes, m)
		}
	}
	return modes
}

// figureNames are the figures of an instance in either report: kgen's,
// then each baseline mode's (in BaselineModes' order, then by name).
func figureNames(a, b benchRow) []string {
	var modes []string
	for _, r := range []benchRow{a, b} {
		if r.Torch == nil {
			continue
		}
		for m := range r.Torch.Timings {
			if !slices.Contains(modes, m) {
				modes = append(modes, m)
			}
		}
	}
	slices.SortFunc(modes, func(x, y string) int {
		ix, iy := slices.Index(kgrt.BaselineModes, x), slices.Index(kgrt.BaselineModes, y)
		if ix < 0 {
			ix = len(kgrt.BaselineModes)
		}
		if iy < 0 {
			iy = len(kgrt.BaselineModes)
		}
		if ix != iy {
			return ix - iy
		}
		return strings.Compare(x, y)
	})
	return append([]string{"kgen"}, modes...)
}

// rowFigure is figure name of r, or nil and why there is none.
func rowFigure(r benchRow, name string) (*figure, string) {
	if name == "kgen" {
		if r.Error != "" {
			return nil, "failed: " + firstLine(r.Error)
		}
		if r.Time.MedianUS <= 0 {
			return nil, "has no kgen time"
		}
		return &figure{r.Time.MedianUS, r.Time.P20US, r.Time.P80US}, ""
	}
	var t *kgrt.BaselineTiming
	if r.Torch != nil {
		t = r.Torch.Timings[name]
	}
	if t == nil || t.MedianUS <= 0 {
		return nil, "has no " + name + " time"
	}
	return &figure{t.MedianUS, t.P20US, t.P80US}, ""
}

func compareFigure(inst, name string, o, n benchRow, tol float64) figCmp {
	fc := figCmp{Instance: inst, Figure: name}
	var whyOld, whyNew string
	fc.Old, whyOld = rowFigure(o, name)
	fc.New, whyNew = rowFigure(n, name)
	if fc.Old == nil || fc.New == nil {
		var why []string
		if fc.Old == nil {
			why = append(why, "old "+whyOld)
		}
		if fc.New == nil {
			why = append(why, "new "+whyNew)
		}
		fc.Verdict, fc.Reason = verdictNotCompared, strings.Join(why, "; ")
		return fc
	}
	fc.Ratio = fc.New.MedianUS / fc.Old.MedianUS
	fc.Verdict = verdict(*fc.Old, *fc.New, tol)
	return fc
}

func (f *figure) String() string {
	if f == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f (%.2f-%.2f)", f.MedianUS, f.P20US, f.P80US)
}

func (c *comparison) print(w io.Writer) {
	for _, r := range []struct {
		label string
		id    reportID
	}{{"old", c.Old}, {"new", c.New}} {
		fmt.Fprintf(w, "%s: %s (%s, %s, %s)\n", r.label, r.id.Path, r.id.Date, r.id.GPU, r.id.Target)
	}
	fmt.Fprintf(w, "noise: %s; else the new time is faster or slower\n", c.Rule)
	for _, n := range c.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if len(c.Figures) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "instance\tfigure\told us (p20-p80)\tnew us (p20-p80)\tnew/old\tverdict")
		for _, f := range c.Figures {
			ratio, v := "", f.Verdict
			if f.Verdict != verdictNotCompared {
				ratio = fmt.Sprintf("%.3f", f.Ratio)
			} else {
				v += ": " + f.Reason
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", f.Instance, f.Figure, f.Old, f.New, ratio, v)
		}
		tw.Flush()
	}
	fmt.Fprintln(w)
	for _, o := range []struct {
		label string
		names []string
	}{{"old", c.OnlyOld}, {"new", c.OnlyNew}} {
		if len(o.names) > 0 {
			fmt.Fprintf(w, "only in %s (%d): %s\n", o.label, len(o.names), strings.Join(o.names, ", "))
		}
	}
	for _, s := range c.Speedups {
		fmt.Fprintf(w, "speedup vs %s, geometric mean over the %s both reports hold it for: old %.2fx, new %.2fx\n", s.Baseline, plural(s.Instances, "instance"), s.Old, s.New)
	}
	for _, f := range c.FastP {
		on := ""
		if f.Target != "" {
			on = " on " + f.Target
		}
		fmt.Fprintf(w, "fast_%g vs %s%s (each report's instances): old %.2f (%d/%d), new %.2f (%d/%d)\n", f.P, f.Baseline, on, f.Old.Fraction, f.Old.Count, f.Old.Total, f.New.Fraction, f.New.Count, f.New.Total)
	}
	s := c.Summary
	fmt.Fprintf(w, "summary: %s compared: %d agree within the noise, %d differ (%d faster, %d slower)", plural(s.Compared, "figure"), s.Same, s.Faster+s.Slower, s.Faster, s.Slower)
	if s.NotCompared > 0 {
		fmt.Fprintf(w, "; %d not compared", s.NotCompared)
	}
	if s.KgenCount > 0 {
		fmt.Fprintf(w, "; kgen's new/old geometric mean %.3f over %s", s.KgenRatio, plural(s.KgenCount, "instance"))
	}
	fmt.Fprintln(w)
}

// plural is "1 thing" or "n things".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
