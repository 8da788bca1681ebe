package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/interp"
	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
	"kgen.dev/kgen/tensor"
)

// The portability run: one spec, every backend. kgen test --target all
// (or a comma-separated list) builds every file for every target whose
// toolchain is found, runs the tests on every target that runs on this
// machine's GPU, runs each instance on all of them on the same inputs and
// compares their outputs with each other, and with --time times each
// instance on each. The result is the portability matrix: files x targets
// (compiles, correct), and instances x targets (agreement, time, fraction
// of the copy bandwidth or TFLOP/s).

// portTarget is one target's side of the run.
type portTarget struct {
	tgt      kgrt.Target
	be       backend
	err      string // why the target was left out (no toolchain)
	units    []*unit
	refs     []*unit
	compiled []string // per file: "" when it compiled, else why not
	runnable string   // "" when it runs here, else why not
	g        *gpuSession
}

// portMatrix is what the run found, as --json writes it.
type portMatrix struct {
	Date      string         `json:"date"`
	GPU       string         `json:"gpu,omitempty"`
	Targets   []portTargetJS `json:"targets"`
	Files     []portFile     `json:"files"`
	Instances []portInstance `json:"instances,omitempty"`
	CopyGBps  float64        `json:"copy_gbps,omitempty"`
}

type portTargetJS struct {
	Target    string `json:"target"`
	Toolchain string `json:"toolchain,omitempty"`
	Skipped   string `json:"skipped,omitempty"`   // no toolchain
	CompileOn string `json:"runs_here,omitempty"` // why it does not run here, when it does not
}

type portFile struct {
	File  string              `json:"file"`
	Cells map[string]portCell `json:"cells"`
}

// portCell is one file on one target.
type portCell struct {
	Compiles bool   `json:"compiles"`
	Error    string `json:"error,omitempty"`
	Plans    int    `json:"plans,omitempty"` // tested, when the target runs here
	Passed   int    `json:"passed,omitempty"`
	Failed   int    `json:"failed,omitempty"`
	Skipped  int    `json:"skipped,omitempty"`
}

type portInstance struct {
	Name  string              `json:"name"`
	File  string              `json:"file"`
	Cells map[string]portTime `json:"cells"`
}

// portTime is one instance on one target: its agreement with the first
// runnable target's outputs, and with --time its timing.
type portTime struct {
	Agrees   string      `json:"agrees"` // "ok", "reference", or why not
	Time     kgrt.Timing `json:"time"`
	GBps     float64     `json:"gbps,omitempty"`
	CopyFrac float64     `json:"copy_fraction,omitempty"`
	TFLOPs   float64     `json:"tflops,omitempty"`
	Error    string      `json:"error,omitempty"`
}

// parseTargets parses --target for the portability run: "all", or a comma-
// separated list of targets.
func parseTargets(s string) ([]kgrt.Target, error) {
	if s == "all" {
		return kgrt.Targets(), nil
	}
	var ts []kgrt.Target
	for _, part := range strings.Split(s, ",") {
		t, err := kgrt.ParseTarget(strings.TrimSpace(part))
		if err != nil {
			return nil, err
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// runsOn says why t's kernels cannot run on d, or "" when they can: the
// same major compute capability and at least the target's minor one
// (sm_90a code runs only on 9.0). Targets without a compute capability
// (AMD's) run on no NVIDIA GPU.
func runsOn(t kgrt.Target, d kgrt.Device) string {
	f := t.Facts()
	switch {
	case f.CCMajor == 0:
		return "compile only: no GPU of this target here"
	case d.CCMajor != f.CCMajor || d.CCMinor < f.CCMinor || (strings.HasSuffix(f.Arch, "a") && d.CCMinor != f.CCMinor):
		return fmt.Sprintf("compile only: GPU 0 is %s", d.Arch())
	}
	return ""
}

// portability runs the whole matrix. It returns the exit status.
func portability(ctx context.Context, targets []kgrt.Target, tools toolPaths, tuned *tunedConfigs, files []string, t *tester, timeIt bool, mdOut, jsonOut string) int {
	var diags diag.List
	loaded := loadFiles(files, &diags)
	if code := report(&diags, false); code != exitOK {
		return code
	}
	dir, err := os.MkdirTemp("", "kgen-portability-")
	if err != nil {
		fmt.Fprintf(stderr, "kgen test: %v\n", err)
		return exitUser
	}
	defer os.RemoveAll(dir)
	m := &portMatrix{Date: time.Now().UTC().Format(time.RFC3339)}
	gpus, gpuErr := kgrt.Devices()
	var pts []*portTarget
	for _, tgt := range targets {
		pt := &portTarget{tgt: tgt}
		pts = append(pts, pt)
		be, err := openBackend(tgt, tools, true)
		if err != nil {
			pt.err = err.Error()
			fmt.Fprintf(stderr, "%s: left out: %v\n", tgt, err)
			continue
		}
		pt.be = be
		pt.build(ctx, loaded, tuned, filepath.Join(dir, strings.ReplaceAll(tgt.String(), ":", "-")))
		switch {
		case gpuErr != nil:
			pt.runnable = "compile only: " + gpuErr.Error()
		case len(gpus) == 0:
			pt.runnable = "compile only: no GPU"
		default:
			pt.runnable = runsOn(tgt, gpus[0])
		}
		fmt.Fprintf(stderr, "%s: built (%s)\n", tgt, orText(pt.runnable, "runs here"))
	}
	for _, pt := range pts {
		js := portTargetJS{Target: pt.tgt.String(), Skipped: pt.err, CompileOn: pt.runnable}
		if pt.be != nil {
			js.Toolchain = pt.be.toolchain()
		}
		m.Targets = append(m.Targets, js)
	}
	// Correctness on every target that runs here.
	var run []*portTarget
	for _, pt := range pts {
		if pt.be == nil || pt.runnable != "" {
			continue
		}
		runner, err := pt.be.startRunner(ctx)
		if err != nil {
			pt.runnable = "runner: " + err.Error()
			continue
		}
		pt.g = &gpuSession{be: pt.be, units: pt.units, refs: pt.refs, runner: runner}
		defer runner.Close()
		run = append(run, pt)
	}
	cells := make([]map[string]portCell, len(loaded))
	for i := range loaded {
		cells[i] = map[string]portCell{}
		for _, pt := range pts {
			if pt.be == nil {
				continue
			}
			cells[i][pt.tgt.String()] = portCell{Compiles: pt.compiled[i] == "", Error: pt.compiled[i]}
		}
	}
	failed := false
	for _, pt := range run {
		t.runner = pt.g.runner
		for i, u := range pt.units {
			if pt.compiled[i] != "" {
				continue
			}
			before := *t
			fmt.Fprintf(stdout, "== %s %s\n", pt.tgt, u.file.path)
			t.unit(ctx, u, pt.refs[i])
			c := cells[i][pt.tgt.String()]
			c.Plans, c.Failed, c.Skipped = t.plans-before.plans, t.failed-before.failed, t.skipped-before.skipped
			c.Passed = c.Plans - c.Failed - c.Skipped
			failed = failed || c.Failed > 0
			cells[i][pt.tgt.String()] = c
		}
	}
	for i, l := range loaded {
		m.Files = append(m.Files, portFile{File: l.path, Cells: cells[i]})
	}
	for _, pt := range pts {
		if pt.be != nil && slices.ContainsFunc(pt.compiled, func(s string) bool { return s != "" }) {
			failed = true
		}
	}
	if len(run) > 0 {
		info, err := run[0].g.runner.Info(ctx)
		if err == nil {
			m.GPU = info.Name
		}
		if timeIt {
			if m.CopyGBps, err = run[0].g.runner.CopyBandwidth(ctx, 0); err != nil {
				fmt.Fprintf(stderr, "kgen test: %v\n", err)
				return exitUser
			}
		}
		m.Instances = crossCheck(ctx, run, loaded, t.maxWork, timeIt, m.CopyGBps)
		for _, in := range m.Instances {
			for _, c := range in.Cells {
				failed = failed || (c.Agrees != "ok" && c.Agrees != "reference")
			}
		}
	}
	m.print(stdout)
	if mdOut != "" {
		var sb strings.Builder
		m.markdown(&sb)
		if err := writeFileAtomic(mdOut, []byte(sb.String()), 0o644); err != nil {
			fmt.Fprintf(stderr, "kgen test: %v\n", err)
			return exitUser
		}
	}
	if jsonOut != "" {
		if err := writeJSON(jsonOut, m); err != nil {
			fmt.Fprintf(stderr, "kgen test: %v\n", err)
			return exitUser
		}
	}
	if failed {
		return exitUser
	}
	return exitOK
}

func orText(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// build emits and compiles every file (and its reference kernels) for the
// target into dir, with the tuning database's configs where it has them, one compile per file, files in parallel, recording
// each file's outcome.
func (pt *portTarget) build(ctx context.Context, loaded []*loaded, tuned *tunedConfigs, dir string) {
	pt.compiled = make([]string, len(loaded))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		for i := range pt.compiled {
			pt.compiled[i] = err.Error()
		}
		return
	}
	b := &builder{target: pt.tgt, be: pt.be, out: dir, tuned: tuned}
	var err error
	if pt.units, err = b.emit(loaded); err == nil {
		pt.refs, err = b.emitReference(loaded)
	}
	if err != nil {
		for i := range pt.compiled {
			pt.compiled[i] = err.Error()
		}
		return
	}
	sem := make(chan struct{}, runtime.NumCPU())
	var wg sync.WaitGroup
	for i := range loaded {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			var d diag.List
			pt.be.compile(ctx, []*unit{pt.units[i], pt.refs[i]}, 1, false, &d)
			for _, dg := range d.Diags {
				if dg.Severity == diag.Error {
					pt.compiled[i] = firstLine(dg.Msg)
					break
				}
			}
		}()
	}
	wg.Wait()
}

func firstLine(s string) string {
	if i := strings.IndexAny(s, "\n"); i >= 0 {
		s = s[:i]
	}
	return s
}

// crossCheck runs every instance on every runnable target on the same
// inputs and compares each target's outputs with the first target's
// (within twice the dtype tolerance: each side rounds on its own), and
// with timeIt times it on each (checked first, as kgen bench does).
func crossCheck(ctx context.Context, run []*portTarget, loaded []*loaded, maxWork float64, timeIt bool, copyBW float64) []portInstance {
	var out []portInstance
	for i, l := range loaded {
		first := run[0]
		if first.compiled[i] != "" {
			continue
		}
		for _, p := range first.units[i].plans {
			if p.Env == nil {
				continue
			}
			in := portInstance{Name: p.Name, File: l.path, Cells: map[string]portTime{}}
			inputs, err := interp.RandomInputs(p.Source, p.Env, tensor.Normal, 1)
			if err != nil {
				continue
			}
			var want []*tensor.Tensor
			for k, pt := range run {
				if pt.compiled[i] != "" {
					continue
				}
				q := planNamed(pt.units[i], p.Name)
				x := &kgrt.Executor{Runner: pt.g.runner, Binary: pt.units[i].binary}
				c := portTime{}
				got, err := x.Execute(ctx, q, q.Env, inputs)
				switch {
				case err != nil:
					c.Agrees = "failed: " + err.Error()
					pt.g.runner.RestartAfter(err)
				case k == 0:
					c.Agrees, want = "reference", got
				case want == nil:
					c.Agrees = "no reference outputs"
				default:
					c.Agrees = agreement(got, want, kgrt.Tolerances(q.Source, q.Env))
				}
				if timeIt && err == nil {
					b := &bencher{g: pt.g, maxWork: maxWork}
					rx := &kgrt.Executor{Runner: pt.g.runner, Binary: pt.refs[i].binary}
					row := b.plan(ctx, pt.units[i], q, x, rx, pt.refs[i].plans, copyBW)
					c.Time, c.GBps, c.CopyFrac, c.TFLOPs, c.Error = row.Time, row.GBps, row.CopyFrac, row.TFLOPs, row.Error
				}
				in.Cells[pt.tgt.String()] = c
			}
			fmt.Fprintf(stderr, "cross-check: %s\n", p.Name)
			out = append(out, in)
		}
	}
	return out
}

func planNamed(u *unit, name string) *lower.Plan {
	for _, p := range u.plans {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// agreement compares two targets' outputs.
func agreement(got, want []*tensor.Tensor, tols []kgrt.Tolerance) string {
	for j := range want {
		tol := tols[j]
		tol.Rtol *= 2
		_, bad, err := kgrt.Compare(got[j], want[j], tol)
		if err != nil {
			return err.Error()
		}
		if bad != nil {
			return fmt.Sprintf("output %d: %v", j, bad)
		}
	}
	return "ok"
}

// cell renders a file's outcome on a target.
func (c portCell) String() string {
	switch {
	case !c.Compiles:
		return "does not compile"
	case c.Plans == 0:
		return "compiles"
	case c.Failed > 0:
		return fmt.Sprintf("compiles; %d of %d plans FAIL", c.Failed, c.Plans)
	case c.Skipped > 0:
		return fmt.Sprintf("compiles; %d/%d correct, %d skipped", c.Passed, c.Plans, c.Skipped)
	}
	return fmt.Sprintf("compiles; %d/%d correct", c.Passed, c.Plans)
}

func (c portTime) String() string {
	s := c.Agrees
	if s == "reference" || s == "ok" {
		s = "="
	} else {
		return "DIFFERS: " + s
	}
	if c.Error != "" {
		return s + " " + c.Error
	}
	if c.Time.MedianUS > 0 {
		s = fmt.Sprintf("%s %.1f us, %.0f%% of copy", s, c.Time.MedianUS, 100*c.CopyFrac)
		if c.TFLOPs > 0 {
			s += fmt.Sprintf(", %.0f TFLOP/s", c.TFLOPs)
		}
	}
	return s
}

func (m *portMatrix) targetNames() []string {
	var names []string
	for _, t := range m.Targets {
		if t.Skipped == "" {
			names = append(names, t.Target)
		}
	}
	return names
}

func (m *portMatrix) print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	names := m.targetNames()
	fmt.Fprintln(tw, "file\t"+strings.Join(names, "\t"))
	for _, f := range m.Files {
		row := []string{f.File}
		for _, n := range names {
			row = append(row, f.Cells[n].String())
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	for _, t := range m.Targets {
		if t.Skipped != "" {
			fmt.Fprintf(w, "%s: left out: %s\n", t.Target, t.Skipped)
		}
	}
}

func (m *portMatrix) markdown(w io.Writer) {
	fmt.Fprintf(w, "# Portability matrix\n\n%s", m.Date)
	if m.GPU != "" {
		fmt.Fprintf(w, ", %s", m.GPU)
	}
	fmt.Fprint(w, ".\n\n| target | toolchain | runs here |\n| --- | --- | --- |\n")
	for _, t := range m.Targets {
		fmt.Fprintf(w, "| %s | %s | %s |\n", t.Target, orText(t.Toolchain, "-"), orText(orText(t.Skipped, t.CompileOn), "yes"))
	}
	names := m.targetNames()
	fmt.Fprintf(w, "\n## Files\n\n| file | %s |\n|%s\n", strings.Join(names, " | "), strings.Repeat(" --- |", len(names)+1))
	for _, f := range m.Files {
		row := []string{f.File}
		for _, n := range names {
			row = append(row, f.Cells[n].String())
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	if len(m.Instances) == 0 {
		return
	}
	var ran []string
	for _, n := range names {
		for _, in := range m.Instances {
			if _, ok := in.Cells[n]; ok {
				ran = append(ran, n)
				break
			}
		}
	}
	fmt.Fprintf(w, "\n## Instances\n\n\"=\" means the outputs agree with the first target's on the same inputs. Copy bandwidth %.0f GB/s.\n\n| instance | %s |\n|%s\n", m.CopyGBps, strings.Join(ran, " | "), strings.Repeat(" --- |", len(ran)+1))
	for _, in := range m.Instances {
		row := []string{in.Name}
		for _, n := range ran {
			c, ok := in.Cells[n]
			if !ok {
				row = append(row, "-")
				continue
			}
			row = append(row, c.String())
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
}
