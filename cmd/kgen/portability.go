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
// of the roofline: of the copy bandwidth, or of the peak of the matrix
// unit that a contraction's products need, whichever bounds it).

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
	// buildSeconds is the wall time of its compiles, which overlap
	// other targets'.
	buildSeconds float64
}

// portMatrix is what the run found, as --json writes it.
type portMatrix struct {
	Date      string         `json:"date"`
	GPU       string         `json:"gpu,omitempty"`
	Targets   []portTargetJS `json:"targets"`
	Files     []portFile     `json:"files"`
	Instances []portInstance `json:"instances,omitempty"`
	CopyGBps  float64        `json:"copy_gbps,omitempty"`
	Peaks     []kgrt.Peak    `json:"matrix_peaks,omitempty"`
	// Parts are the runs a merged matrix (--merge-matrix) joins.
	Parts []portPart `json:"parts,omitempty"`
	// NotRun lists the files still to run when the matrix was written:
	// none once a run finishes, the rest when it was stopped part way.
	NotRun []string `json:"not_run,omitempty"`
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
	// Seconds is the wall time of the file's tests on the target.
	Seconds float64 `json:"seconds,omitempty"`
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
	Unit     string      `json:"matrix_unit,omitempty"`
	PeakFrac float64     `json:"peak_fraction,omitempty"`
	// RoofFrac is the roofline's time over the measured one: the larger
	// of CopyFrac and PeakFrac.
	RoofFrac float64 `json:"roofline_fraction,omitempty"`
	Error    string  `json:"error,omitempty"`
	// Seconds is the wall time of the run, comparison and timing on the
	// target: where a long portability run spends its time.
	Seconds float64 `json:"seconds,omitempty"`
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
func portability(ctx context.Context, targets []kgrt.Target, tools toolPaths, tuned *tunedConfigs, files, only []string, t *tester, timeIt bool, mdOut, jsonOut string) int {
	var diags diag.List
	all := loadFiles(files, &diags)
	if code := report(&diags, false); code != exitOK {
		return code
	}
	if err := checkOnly(only, all); err != nil {
		return usageError("test", "%v", err)
	}
	// Files with none of the names are not built (wantsFile), so they
	// leave the matrix: its rows and every target's units are the same
	// files, in order.
	loaded := slices.DeleteFunc(all, func(l *loaded) bool { return !wantsFile(only, l) })
	dir, err := os.MkdirTemp("", "kgen-portability-")
	if err != nil {
		fmt.Fprintf(stderr, "kgen test: %v\n", err)
		return exitUser
	}
	defer os.RemoveAll(dir)
	m := &portMatrix{Date: time.Now().UTC().Format(time.RFC3339)}
	gpus, gpuErr := kgrt.Devices()
	// Every target's kernels are emitted in turn, then compiled at once:
	// the compiles of all targets share the cores.
	var pts []*portTarget
	compiles := &compileQueue{sem: make(chan struct{}, runtime.NumCPU())}
	start := time.Now()
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
		pt.build(ctx, loaded, tuned, only, filepath.Join(dir, strings.ReplaceAll(tgt.String(), ":", "-")), compiles)
		switch {
		case gpuErr != nil:
			pt.runnable = "compile only: " + gpuErr.Error()
		case len(gpus) == 0:
			pt.runnable = "compile only: no GPU"
		default:
			pt.runnable = runsOn(tgt, gpus[0])
		}
	}
	compiles.wg.Wait()
	for _, pt := range pts {
		if pt.be != nil {
			fmt.Fprintf(stderr, "%s: built in %.1f s (%s)\n", pt.tgt, pt.buildSeconds, orText(pt.runnable, "runs here"))
		}
	}
	fmt.Fprintf(stderr, "all targets built in %.1f s\n", time.Since(start).Seconds())
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
		runner, err := pt.be.startRunner(ctx, 0)
		if err != nil {
			pt.runnable = "runner: " + err.Error()
			continue
		}
		pt.g = &gpuSession{be: pt.be, units: pt.units, refs: pt.refs, runner: runner}
		defer runner.Close()
		run = append(run, pt)
	}
	if len(run) > 0 {
		info, err := run[0].g.runner.Info(ctx)
		if err == nil {
			m.GPU = info.Name
		}
		if timeIt {
			start := time.Now()
			if m.CopyGBps, err = run[0].g.runner.CopyBandwidth(ctx, 0); err != nil {
				fmt.Fprintf(stderr, "kgen test: %v\n", err)
				return exitUser
			}
			m.Peaks, _ = timedPeaks(ctx, "test", tools.nvcc)
			fmt.Fprintf(stderr, "copy bandwidth and matrix peaks measured in %.1f s\n", time.Since(start).Seconds())
		}
	}
	// File by file: its tests on every target, then its instances on all
	// of them. After each file the matrix so far is written, so that a run
	// stopped part way (a lent GPU's time limit) keeps the files it
	// finished; --merge-matrix joins such runs.
	for _, l := range loaded {
		m.NotRun = append(m.NotRun, l.path)
	}
	for i, l := range loaded {
		m.NotRun = m.NotRun[1:]
		cells := map[string]portCell{}
		for _, pt := range pts {
			if pt.be != nil {
				cells[pt.tgt.String()] = portCell{Compiles: pt.compiled[i] == "", Error: pt.compiled[i]}
			}
		}
		for _, pt := range run {
			if pt.compiled[i] != "" {
				continue
			}
			t.runner = pt.g.runner
			u := pt.units[i]
			before, start := *t, time.Now()
			fmt.Fprintf(stdout, "== %s %s\n", pt.tgt, l.path)
			t.unit(ctx, u, pt.refs[i])
			c := cells[pt.tgt.String()]
			c.Plans, c.Failed, c.Skipped = t.plans-before.plans, t.failed-before.failed, t.skipped-before.skipped
			c.Passed = c.Plans - c.Failed - c.Skipped
			c.Seconds = time.Since(start).Seconds()
			fmt.Fprintf(stdout, "== %s %s: %d plans in %.1f s\n", pt.tgt, l.path, c.Plans, c.Seconds)
			cells[pt.tgt.String()] = c
		}
		m.Files = append(m.Files, portFile{File: l.path, Cells: cells})
		if len(run) > 0 {
			m.Instances = append(m.Instances, crossCheck(ctx, run, i, l, t.maxWork, timeIt, m.CopyGBps, m.Peaks, t.passed)...)
		}
		if i < len(loaded)-1 && m.save(mdOut, jsonOut) != nil {
			return exitUser
		}
	}
	return m.write(mdOut, jsonOut)
}

// write prints m and writes it as markdown and JSON to the paths that are
// set; the exit status is 1 when m failed or a file cannot be written.
func (m *portMatrix) write(mdOut, jsonOut string) int {
	m.print(stdout)
	if m.save(mdOut, jsonOut) != nil {
		return exitUser
	}
	if m.failed() {
		return exitUser
	}
	return exitOK
}

// save writes m as markdown and JSON to the paths that are set, each
// whole or not at all, and reports the first error on stderr.
func (m *portMatrix) save(mdOut, jsonOut string) error {
	if mdOut != "" {
		var sb strings.Builder
		m.markdown(&sb)
		if err := writeFileAtomic(mdOut, []byte(sb.String()), 0o644); err != nil {
			fmt.Fprintf(stderr, "kgen test: %v\n", err)
			return err
		}
	}
	if jsonOut != "" {
		if err := writeJSON(jsonOut, m); err != nil {
			fmt.Fprintf(stderr, "kgen test: %v\n", err)
			return err
		}
	}
	return nil
}

// failed reports whether a file failed to compile or a test on some
// target, or an instance's outputs differ between targets.
func (m *portMatrix) failed() bool {
	for _, f := range m.Files {
		for _, c := range f.Cells {
			if !c.Compiles || c.Failed > 0 {
				return true
			}
		}
	}
	for _, in := range m.Instances {
		for _, c := range in.Cells {
			if c.Agrees != "ok" && c.Agrees != "reference" {
				return true
			}
		}
	}
	return false
}

func orText(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// compileQueue runs compiles on all cores, for every target at once.
type compileQueue struct {
	sem chan struct{}
	wg  sync.WaitGroup
}

// build emits every file (and its reference kernels) for the target into
// dir, with the tuning database's configs where it has them, and queues
// one compile per file on q, recording each file's outcome in
// pt.compiled and the wall time from the first compile's start to the
// last one's end in pt.buildSeconds, once q's wait group is done.
func (pt *portTarget) build(ctx context.Context, loaded []*loaded, tuned *tunedConfigs, only []string, dir string, q *compileQueue) {
	pt.compiled = make([]string, len(loaded))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		for i := range pt.compiled {
			pt.compiled[i] = err.Error()
		}
		return
	}
	b := &builder{target: pt.tgt, be: pt.be, out: dir, tuned: tuned, only: only, scratch: true}
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
	var mu sync.Mutex
	var first, last time.Time
	for i := range loaded {
		q.wg.Go(func() {
			q.sem <- struct{}{}
			defer func() { <-q.sem }()
			began := time.Now()
			var d diag.List
			pt.be.compile(ctx, []*unit{pt.units[i], pt.refs[i]}, 1, false, &d)
			for _, dg := range d.Diags {
				if dg.Severity == diag.Error {
					pt.compiled[i] = firstLine(dg.Msg)
					break
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if first.IsZero() || began.Before(first) {
				first = began
			}
			if now := time.Now(); now.After(last) {
				last = now
			}
			pt.buildSeconds = last.Sub(first).Seconds()
		})
	}
}

func firstLine(s string) string {
	if i := strings.IndexAny(s, "\n"); i >= 0 {
		s = s[:i]
	}
	return s
}

// crossCheck runs every instance of the i'th file, l, on every runnable target on the same
// inputs and compares each target's outputs with the first target's
// (within twice the dtype tolerance: each side rounds on its own), and
// with timeIt times it on each: on these inputs where the plan passed
// its tests on that target (passed) or its outputs agree with a checked
// target's, else after checking it as kgen bench does.
func crossCheck(ctx context.Context, run []*portTarget, i int, l *loaded, maxWork float64, timeIt bool, copyBW float64, peaks []kgrt.Peak, passed map[*lower.Plan]bool) []portInstance {
	var out []portInstance
	first := run[0]
	if first.compiled[i] != "" {
		return nil
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
		checked := false // the first target's outputs are known right: its tests or plan's check passed
		for k, pt := range run {
			if pt.compiled[i] != "" {
				continue
			}
			q := planNamed(pt.units[i], p.Name)
			x := &kgrt.Executor{Runner: pt.g.runner, Binary: pt.units[i].binary}
			c, start := portTime{}, time.Now()
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
				b := &bencher{g: pt.g, maxWork: maxWork, peaks: peaks, flush: kgrt.FlushClean} // as kgen bench times by default
				rx := &kgrt.Executor{Runner: pt.g.runner, Binary: pt.refs[i].binary}
				var agreed []*tensor.Tensor
				if (passed[q] || checked) && (c.Agrees == "ok" || c.Agrees == "reference") {
					agreed = inputs
				}
				row := b.plan(ctx, pt.units[i], q, x, rx, pt.refs[i].plans, copyBW, agreed)
				checked = checked || (k == 0 && (passed[q] || row.Error == ""))
				c.Time, c.GBps, c.CopyFrac, c.TFLOPs, c.Unit, c.PeakFrac, c.Error = row.Time, row.GBps, row.CopyFrac, row.TFLOPs, row.Unit, row.PeakFrac, row.Error
				c.RoofFrac = max(c.CopyFrac, c.PeakFrac)
			}
			c.Seconds = time.Since(start).Seconds()
			in.Cells[pt.tgt.String()] = c
		}
		var took []string
		for _, pt := range run {
			if c, ok := in.Cells[pt.tgt.String()]; ok {
				took = append(took, fmt.Sprintf("%s %.1f s", pt.tgt, c.Seconds))
			}
		}
		fmt.Fprintf(stderr, "cross-check: %s (%s)\n", p.Name, strings.Join(took, ", "))
		out = append(out, in)
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

// cell is the file's cell of target n as text: "-" where no run built
// the file for n (a merged matrix of runs of other targets).
func (f portFile) cell(n string) string {
	c, ok := f.Cells[n]
	if !ok {
		return "-"
	}
	return c.String()
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
		bound := "copy"
		if c.PeakFrac > c.CopyFrac {
			bound = c.Unit + " peak"
		}
		s = fmt.Sprintf("%s %.1f us%s, %.0f%% of roofline (%s)", s, c.Time.MedianUS, graphNote(c.Time.Batch, " "), 100*c.RoofFrac, bound)
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
			row = append(row, f.cell(n))
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
	fmt.Fprint(w, ".\n")
	if len(m.Parts) > 0 {
		fmt.Fprintf(w, "\nJoined from %d runs (kgen test --merge-matrix), each cell as its run found it:\n", len(m.Parts))
		for _, p := range m.Parts {
			timed := "not timed"
			if p.CopyGBps > 0 {
				timed = fmt.Sprintf("copy %.0f GB/s%s", p.CopyGBps, peaksText(p.Peaks, ""))
			}
			fmt.Fprintf(w, "\n- %s, %s: %s; %s", p.Date, orText(p.GPU, "no GPU"), timed, strings.Join(p.Files, ", "))
			if len(p.NotRun) > 0 {
				fmt.Fprintf(w, "; stopped before %s", strings.Join(p.NotRun, ", "))
			}
			if len(p.Replaced) > 0 {
				fmt.Fprintf(w, "; rerun later: %s", strings.Join(p.Replaced, ", "))
			}
		}
		fmt.Fprintln(w)
	}
	if len(m.NotRun) > 0 {
		fmt.Fprintf(w, "\nNot run: the run was stopped before %s.\n", strings.Join(m.NotRun, ", "))
	}
	fmt.Fprint(w, "\n| target | toolchain | runs here |\n| --- | --- | --- |\n")
	for _, t := range m.Targets {
		fmt.Fprintf(w, "| %s | %s | %s |\n", t.Target, orText(t.Toolchain, "-"), orText(orText(t.Skipped, t.CompileOn), "yes"))
	}
	names := m.targetNames()
	fmt.Fprintf(w, "\n## Files\n\n| file | %s |\n|%s\n", strings.Join(names, " | "), strings.Repeat(" --- |", len(names)+1))
	for _, f := range m.Files {
		row := []string{f.File}
		for _, n := range names {
			row = append(row, f.cell(n))
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
	fmt.Fprintf(w, "\n## Instances\n\n\"=\" means the outputs agree with the first target's on the same inputs. The roofline's time is the longer of the instance's bytes (inputs read and outputs written once) at the copy bandwidth and a contraction's products at the peak of the matrix unit they need; \"of roofline\" is that time over the measured one, and names the bound. Copy bandwidth %.0f GB/s%s.\n", m.CopyGBps, peaksText(m.Peaks, ""))
	fmt.Fprintf(w, "\n| instance | %s |\n|%s\n", strings.Join(ran, " | "), strings.Repeat(" --- |", len(ran)+1))
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
