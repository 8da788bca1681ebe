package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	kgrt "kgen.dev/kgen/runtime"
)

// mergeHelp is the part of bench's help about --merge.
const mergeHelp = `

kgen bench --merge PART.json... [--json FILE] [--md FILE] [--html FILE]
joins reports that bench --json wrote into one, for a suite measured in
several runs (a GPU lent in calls of a few minutes; torch.compile's
max-autotune, which takes minutes a task). Each row stays as its run
measured it: kgen's time, the baselines timed beside it in that run, its
fraction of that run's copy bandwidth. The parts must be of the same target
and GPU, and an instance may be in one part only. fast_p is counted again
over all rows, for every baseline any part timed (a row whose run did not
time a baseline counts as not faster than it; max-autotune counts only the
rows timed with it, as in a single run). The merged report lists its runs,
each with its date, driver, toolchain, PyTorch, copy bandwidth and
instances; merging merged reports lists the original runs.`

// reportPart is one run of kgen bench that a merged report joins.
type reportPart struct {
	runFacts
	Instances []string `json:"instances"`
}

// parts lists the runs rep was measured in: its Parts when merged, else
// itself.
func (rep *benchReport) parts() []reportPart {
	if len(rep.Parts) > 0 {
		return rep.Parts
	}
	p := reportPart{runFacts: rep.runFacts}
	for _, r := range rep.Rows {
		p.Instances = append(p.Instances, r.label())
	}
	return []reportPart{p}
}

// mergeReports joins reps (read from paths) in order. The merged report's
// date is its first run's, its copy bandwidth the lowest of its runs' (the
// roofline's roof), each instruction's peak the lowest of its runs' too,
// its time the sum of theirs.
func mergeReports(paths []string, reps []*benchReport) (*benchReport, error) {
	first := reps[0]
	m := &benchReport{runFacts: runFacts{Date: first.Date, Driver: first.Driver, Toolchain: first.Toolchain, Torch: first.Torch, CopyGBps: first.CopyGBps},
		Target: first.Target, GPU: first.GPU, Protocol: first.Protocol}
	from := map[string]string{} // instance -> the file it came from
	for i, rep := range reps {
		switch {
		case rep.Target != first.Target:
			return nil, fmt.Errorf("%s: error: target %s, but %s's is %s: merge reports of one target", paths[i], rep.Target, paths[0], first.Target)
		case rep.GPU != first.GPU:
			return nil, fmt.Errorf("%s: error: measured on %s, but %s on %s: merge reports of one GPU", paths[i], rep.GPU, paths[0], first.GPU)
		}
		for _, r := range rep.Rows {
			if f, ok := from[r.label()]; ok {
				return nil, fmt.Errorf("%s: error: instance %s is also in %s: each instance may come from one run only", paths[i], r.label(), f)
			}
			from[r.label()] = paths[i]
			m.Rows = append(m.Rows, r)
		}
		for _, p := range rep.parts() {
			m.Parts = append(m.Parts, p)
			if p.Date < m.Date {
				m.Date = p.Date
			}
			if p.CopyGBps > 0 && (m.CopyGBps <= 0 || p.CopyGBps < m.CopyGBps) {
				m.CopyGBps = p.CopyGBps
			}
			m.Peaks = lowestPeaks(m.Peaks, p.Peaks)
			m.ElapsedSec += p.ElapsedSec
		}
		if rep.Protocol != m.Protocol && !strings.Contains(m.Protocol, rep.Protocol) {
			m.Protocol += "; " + rep.Protocol
		}
	}
	for _, mode := range kgrt.BaselineModes {
		for _, p := range m.Parts {
			if slices.Contains(p.Baselines, mode) && !slices.Contains(m.Baselines, mode) {
				m.Baselines = append(m.Baselines, mode)
			}
		}
	}
	m.Toolchain, m.Torch = commonValue(m.Parts, func(p reportPart) string { return p.Toolchain }),
		commonValue(m.Parts, func(p reportPart) string { return p.Torch })
	if len(m.Baselines) > 0 {
		m.FastP = fastPs(m.Rows, m.Baselines)
	}
	return m, nil
}

// commonValue is the value of every part, or "" when they differ (each
// part's own is listed).
func commonValue(parts []reportPart, f func(reportPart) string) string {
	v := f(parts[0])
	for _, p := range parts[1:] {
		if f(p) != v {
			return ""
		}
	}
	return v
}

// partLines describe each run of a merged report, one line each; none
// for a single run, which header describes.
func (rep *benchReport) partLines() []string {
	if len(rep.Parts) == 0 {
		return nil
	}
	var lines []string
	for i, p := range rep.Parts {
		s := fmt.Sprintf("run %d: %s, CUDA driver %d.%d, %s", i+1, p.Date, p.Driver/1000, p.Driver%1000/10, p.Toolchain)
		if p.Torch != "" {
			s += ", PyTorch " + p.Torch
		}
		base := "no baseline"
		if len(p.Baselines) > 0 {
			base = strings.Join(p.Baselines, ", ")
		}
		s += fmt.Sprintf("; copy %.0f GB/s%s; %s; %.0f s; %s", p.CopyGBps, peaksText(p.Peaks, p.PeakNote), base, p.ElapsedSec, strings.Join(p.Instances, ", "))
		lines = append(lines, s)
	}
	return lines
}

// mergeFlags are bench's flags for merging reports.
type mergeFlags struct{ on bool }

func (c *mergeFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&c.on, "merge", false, "merge --json reports of several runs, PART.json..., into one report")
}

// mergeOnly are the flags that go with --merge.
var mergeOnly = []string{"merge", "json", "md", "html"}

// run is kgen bench --merge: args are the parts; out writes the merged
// report's files.
func (c *mergeFlags) run(fs *flag.FlagSet, args []string, out func(*benchReport) int) int {
	var other []string
	fs.Visit(func(f *flag.Flag) {
		if !slices.Contains(mergeOnly, f.Name) {
			other = append(other, "--"+f.Name)
		}
	})
	switch {
	case len(other) > 0:
		return usageError("bench", "%s does not go with --merge", strings.Join(other, ", "))
	case len(args) == 0:
		return usageError("bench", "--merge wants the reports to merge, PART.json...")
	}
	var reps []*benchReport
	failed := false
	for _, a := range args {
		rep, err := readReport(a)
		if err != nil {
			fmt.Fprintln(stderr, err)
			failed = true
		}
		reps = append(reps, rep)
	}
	if failed {
		return exitUser
	}
	m, err := mergeReports(args, reps)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUser
	}
	return out(m)
}
