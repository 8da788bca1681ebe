package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"kgen.dev/kgen/backends/torch"
	"kgen.dev/kgen/interp"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
	"kgen.dev/kgen/tensor"
)

func init() {
	register(&command{
		name: "bench", args: "--target cuda:sm_90[,TARGET...] [--kernel NAME,...] [--baseline eager,compile] [--json FILE] [--md FILE] [--html FILE] DIR|FILE...\n       kgen bench --compare [--tolerance F] [--any-target] [--json FILE] OLD.json NEW.json",
		short: "time instances on the GPU, side by side with PyTorch",
		long: `
Bench builds every instance of each FILE (a DIR stands for the .kg files
under it; --kernel names the instances to keep) for the target, checks
each once against the reference interpreter (or, when too large, against
the reference kernels), and times the correct ones with the
timing protocol: a warm-up of at least 25 ms; the median of at least
max(10, 100 ms worth of) runs, each timed with CUDA events after an L2
flush of twice the L2 size outside the timed region (--flush write, the
default, writes a scratch buffer, as triton.testing.do_bench does;
--flush read reads it: docs/bench.md says what each costs or credits the
kernel); for plans under
20 us, CUDA graphs of K runs, each after its own flush, less a graph of
the K flushes, over K (marked graph xK). A plan of several launches is
timed as a whole. It reports p20 and p80 beside the median, the achieved
bandwidth (inputs read plus outputs written, once each) against the
device-to-device copy bandwidth measured in the same run (a copy of 1
GiB) and, for an instance that is no matrix product, its time against a
copy that moves as many bytes (rounded up to a multiple of 64 KiB
copied: as a CUDA graph's node, an H100 copied other sizes 24% slower),
timed right after it under the same protocol ("of same-size copy"), and
for matrix products the TFLOP/s against the peak of the unit their
products need (bf16, f16 or tf32 tensor cores, f32 multiply-adds), which
kgen's probe kernels measure on GPU 0 at the start of the run (kgen
devices --measure; it needs nvcc, whatever the target).

With --baseline eager,compile it times the PyTorch program of each
instance's kernel, eagerly and under torch.compile (default mode), with the
same protocol in the same run, and reports kgen's speedup over each and
KernelBench's fast_p (the fraction of instances that are correct and more
than p times faster than the baseline). The program is the hand-written one
in runtime/baseline/baseline.py when the kernel has one, else the program
kgen emits from the IR (kgen torch); f32 matrix products without TF32.
With a baseline, that emitted program is also the oracle of a second,
independent check at full size: it runs on the inputs kgen's kernels ran
on, and the outputs must agree. Python is python3 on PATH, or --python.

With several targets (--target cuda:sm_90a,triton:sm_90), each target's
kernels are built, checked and timed in turn, PyTorch's baselines once
after them all (every target's outputs checked against the same PyTorch
outputs), and the report has a row per instance and target, with fast_p
counted for each target.

--json, --md and --html write the results, with the date, GPU, driver,
clocks and toolchain versions, for committing under testsuite/results/; the
HTML report draws the speedups and a roofline. Exit status 1 when any
instance is wrong.` + compareHelp + mergeHelp,
		setup: func(fs *flag.FlagSet) func([]string) int {
			target := fs.String("target", "", "the target, e.g. cuda:sm_90 (required)")
			kernels := fs.String("kernel", "", "comma-separated instance names to bench (default: all)")
			baseline := fs.String("baseline", "", "time PyTorch alongside: eager, compile, max-autotune (matrix products only), comma-separated")
			jsonOut := fs.String("json", "", "write the results as JSON to this file")
			mdOut := fs.String("md", "", "write the results as a markdown table to this file")
			htmlOut := fs.String("html", "", "write the results as an HTML report with plots to this file")
			out := fs.String("o", "", "keep the build in this directory (default: a temporary one)")
			var tools toolPaths
			tools.register(fs)
			maxWork := fs.Float64("max-work", 2e8, "check against the interpreter up to this many operations, above against the reference kernels")
			flushKind := fs.String("flush", kgrt.FlushClean, "the L2 flush before each timed run: clean (read a scratch buffer of twice the L2, and charge each run for writing back its own writes), write or read the buffer")
			var config configFlag
			fs.Var(&config, "config", "template parameters replacing the defaults, e.g. BM=128,BK=64 or matmul-simt.BK=8")
			var tf tunedFlags
			tf.register(fs)
			var cmp compareFlags
			cmp.register(fs)
			var merge mergeFlags
			merge.register(fs)
			// write prints rep and writes its files; exit status 1 when an
			// instance is wrong.
			write := func(rep *benchReport) int {
				rep.print(stdout)
				if *jsonOut != "" {
					if err := writeJSON(*jsonOut, rep); err != nil {
						fmt.Fprintf(stderr, "kgen bench: %v\n", err)
						return exitUser
					}
				}
				for _, o := range []struct {
					path  string
					write func(io.Writer)
				}{{*mdOut, rep.markdown}, {*htmlOut, rep.html}} {
					if o.path == "" {
						continue
					}
					var sb strings.Builder
					o.write(&sb)
					if err := writeFileAtomic(o.path, []byte(sb.String()), 0o644); err != nil {
						fmt.Fprintf(stderr, "kgen bench: %v\n", err)
						return exitUser
					}
				}
				for _, r := range rep.Rows {
					if !r.correct() {
						return exitUser
					}
				}
				return exitOK
			}
			return func(args []string) int {
				switch {
				case cmp.on && merge.on:
					return usageError("bench", "--compare does not go with --merge")
				case cmp.on:
					return cmp.run(fs, args, *jsonOut)
				case merge.on:
					return merge.run(fs, args, write)
				}
				if len(args) == 0 || *target == "" {
					return usageError("bench", "want --target and at least one FILE")
				}
				var modes []string
				if *baseline != "" {
					for _, m := range strings.Split(*baseline, ",") {
						if !slices.Contains(kgrt.BaselineModes, m) {
							return usageError("bench", "--baseline: want a comma-separated list of %s, not %q", strings.Join(kgrt.BaselineModes, ", "), *baseline)
						}
						if !slices.Contains(modes, m) {
							modes = append(modes, m)
						}
					}
				}
				if err := kgrt.CheckFlush(*flushKind); err != nil {
					return usageError("bench", "--flush: %v", err)
				}
				var want []string
				if *kernels != "" {
					want = strings.Split(*kernels, ",")
				}
				ctx := context.Background()
				var py string
				if *baseline != "" {
					var err error
					if py, err = findTorchPython(ctx, tools.python); err != nil {
						fmt.Fprintf(stderr, "kgen bench: --baseline: %v\n", err)
						return exitUser
					}
				}
				tuned, err := tf.open(stderr)
				if err != nil {
					fmt.Fprintf(stderr, "kgen bench: %v\n", err)
					return exitUser
				}
				files, err := specFiles(args)
				if err != nil {
					fmt.Fprintf(stderr, "kgen bench: %v\n", err)
					return exitUser
				}
				targets := strings.Split(*target, ",")
				for i, t := range targets {
					if slices.Contains(targets[:i], t) {
						return usageError("bench", "--target: %s is named twice", t)
					}
				}
				// The matrix units' peaks, once for every target: a
				// property of the GPU, measured by kgen's own probes.
				peaks, peakNote := timedPeaks(ctx, "bench", tools.nvcc)
				var runs []*benchRun
				for _, t := range targets {
					// With several targets, each builds into its own
					// folder of -o.
					dir := *out
					if dir != "" && len(targets) > 1 {
						dir = filepath.Join(dir, strings.ReplaceAll(t, ":", "_"))
					}
					run, code := func() (*benchRun, int) {
						g, code := openGPU(ctx, "bench", t, dir, tools, lower.Config(config), tuned, want, files)
						if g == nil {
							return nil, code
						}
						defer g.close()
						b := &bencher{g: g, maxWork: *maxWork, modes: modes, peaks: peaks, peakNote: peakNote, flush: *flushKind, sizeCopy: true}
						run, err := b.run(ctx, want, py != "")
						if err != nil {
							fmt.Fprintf(stderr, "kgen bench: %s: %v\n", t, err)
							return nil, exitUser
						}
						run.target = t
						return run, exitOK
					}()
					if run == nil {
						return code
					}
					defer run.close()
					runs = append(runs, run)
				}
				rep, err := benchReportOf(ctx, runs, py, modes, *flushKind)
				if err != nil {
					fmt.Fprintf(stderr, "kgen bench: %v\n", err)
					return exitUser
				}
				return write(rep)
			}
		},
	})
}

func findTorchPython(ctx context.Context, path string) (string, error) {
	if path == "" {
		p, err := kgrt.FindPython(ctx, "torch")
		if err != nil {
			return "", err
		}
		if len(p.Modules) == 0 || p.Modules[0].Version == "" {
			return "", fmt.Errorf("%s cannot import torch", p.Path)
		}
		return p.Path, nil
	}
	if _, err := exec.LookPath(path); err != nil {
		return "", err
	}
	return path, nil
}

// benchReport is what bench measured in one run.
type benchReport struct {
	runFacts
	Target string  `json:"target"`
	GPU    string  `json:"gpu"`
	FastP  []fastP `json:"fast_p,omitempty"`
	// Protocol is the timing protocol's parameters.
	Protocol string     `json:"protocol"`
	Rows     []benchRow `json:"rows"`
	// Parts are the runs a merged report (kgen bench --merge) joins.
	Parts []reportPart `json:"parts,omitempty"`
}

// runFacts are what a run of kgen bench records of itself, which a
// merged report lists for each run it joins.
type runFacts struct {
	Date      string   `json:"date"`
	Driver    int      `json:"driver_cuda_version"`
	Toolchain string   `json:"toolchain"`
	Torch     string   `json:"torch,omitempty"`
	Baselines []string `json:"baselines,omitempty"`
	CopyGBps  float64  `json:"copy_gbps"`
	// Peaks are the matrix units' dense rates measured in the same run
	// (kgrt.MeasurePeaks), the compute roofs; PeakNote says why there are
	// none when they could not be measured, or what they lack.
	Peaks      []kgrt.Peak `json:"matrix_peaks,omitempty"`
	PeakNote   string      `json:"matrix_peaks_note,omitempty"`
	ElapsedSec float64     `json:"elapsed_s"`
}

// benchRow is one instance's figures.
type benchRow struct {
	Name      string `json:"name"`
	File      string `json:"file"`
	Kernel    string `json:"kernel"`
	Sizes     string `json:"sizes"`
	Templates string `json:"templates"`
	// Contraction marks a matrix product or implicit GEMM.
	Contraction bool `json:"contraction,omitempty"`
	// Target is the row's target in a report of several targets.
	Target   string      `json:"target,omitempty"`
	Error    string      `json:"error,omitempty"`
	MaxError float64     `json:"max_error"`
	Time     kgrt.Timing `json:"time"`
	Bytes    int64       `json:"bytes"`
	Flops    float64     `json:"flops,omitempty"`
	Ops      float64     `json:"ops"` // Flops when counted, else the interpreter's operation count
	GBps     float64     `json:"gbps"`
	CopyFrac float64     `json:"copy_fraction"`
	// SizeCopy is a device-to-device copy of Bytes / 2 (moving Bytes;
	// rounded up, see sizeCopyBytes) timed under the same protocol in
	// the same run, for an instance that is no matrix product;
	// SizeCopyFrac is its time over the instance's ("of same-size
	// copy"); SizeCopyError says why the copy has no time.
	SizeCopy      *kgrt.Timing `json:"size_copy,omitempty"`
	SizeCopyFrac  float64      `json:"size_copy_fraction,omitempty"`
	SizeCopyError string       `json:"size_copy_error,omitempty"`
	TFLOPs        float64      `json:"tflops,omitempty"`
	// Unit is the matrix unit that bounds a contraction's products
	// (lower.MatrixUnit), PeakFrac its TFLOP/s over that unit's peak.
	Unit     string  `json:"matrix_unit,omitempty"`
	PeakFrac float64 `json:"peak_fraction,omitempty"`
	// Torch is PyTorch's side: the program timed, its timings, and the
	// check of kgen's outputs against the emitted program (TorchCheck:
	// "ok", or why not).
	Torch         *kgrt.BaselineResult `json:"torch,omitempty"`
	TorchCheck    string               `json:"torch_check,omitempty"`
	TorchMaxError float64              `json:"torch_max_error,omitempty"`
	// Speedups is kgen's speedup over each baseline mode that was timed.
	Speedups map[string]float64 `json:"speedups,omitempty"`

	// check holds what the PyTorch check compares, until it has.
	check *torchCheck
}

type bencher struct {
	g        *gpuSession
	maxWork  float64
	modes    []string // PyTorch baselines to time
	peaks    []kgrt.Peak
	peakNote string // why peaks is empty, or what it lacks
	checks   string // where the PyTorch check's files go
	flush    string // the L2 flush's kind (kgrt.FlushWrite when empty)
	// sizeCopy times a copy of each instance's bytes beside it
	// (benchRow.SizeCopy).
	sizeCopy bool
}

// benchRun is what bench measured on one target: the report's figures
// for that target, and the PyTorch tasks of its instances.
type benchRun struct {
	target string
	rep    *benchReport
	tasks  []kgrt.BaselineTask
	l2     int64  // the GPU's L2 cache, in bytes
	checks string // the PyTorch check's files
}

func (r *benchRun) close() {
	if r.checks != "" {
		os.RemoveAll(r.checks)
	}
}

// run checks and times the instances of b's files (those in want, when
// set), and with withTorch writes each one's PyTorch task and check
// inputs.
func (b *bencher) run(ctx context.Context, want []string, withTorch bool) (*benchRun, error) {
	start := time.Now()
	r := b.g.runner
	info, err := r.Info(ctx)
	if err != nil {
		return nil, err
	}
	copyBW, err := r.CopyBandwidth(ctx, 0)
	if err != nil {
		return nil, err
	}
	rep := &benchReport{
		runFacts: runFacts{Date: start.UTC().Format(time.RFC3339), Driver: info.DriverVersion, Toolchain: b.g.be.toolchain(),
			CopyGBps: copyBW, Peaks: b.peaks, PeakNote: b.peakNote},
		GPU: info.Name,
		Protocol: fmt.Sprintf("warm-up %d ms; median of max(%d, %d ms) samples by CUDA events; L2 flush before each, %s of %d MiB; %s",
			kgrt.DefaultWarmupMS, kgrt.DefaultMinReps, kgrt.DefaultMinMS, b.flushKind(), 2*info.L2Bytes>>20, b.graphs()),
	}
	run := &benchRun{rep: rep, l2: info.L2Bytes}
	if withTorch {
		if b.checks, err = os.MkdirTemp("", "kgen-bench-torch-"); err != nil {
			return nil, err
		}
		run.checks = b.checks
	}
	for i, u := range b.g.units {
		x := &kgrt.Executor{Runner: r, Binary: u.binary}
		rx := &kgrt.Executor{Runner: r, Binary: b.g.refs[i].binary}
		module := ""
		if withTorch {
			module = filepath.Join(b.checks, u.stem+".torch.py")
			if err := os.WriteFile(module, []byte(torch.Emit(u.file.prog.Kernels)), 0o644); err != nil {
				run.close()
				return nil, err
			}
		}
		for _, p := range u.plans {
			if p.Env == nil || (want != nil && !slices.Contains(want, p.Name)) {
				continue
			}
			row := b.plan(ctx, u, p, x, rx, b.g.refs[i].plans, copyBW, nil)
			fmt.Fprintf(stderr, "bench: %s %s\n", row.Name, row.summary())
			if row.Error == "" && withTorch {
				run.tasks = append(run.tasks, b.baselineTask(ctx, p, u.file.path, module, x, &row))
			}
			rep.Rows = append(rep.Rows, row)
		}
	}
	if want != nil {
		for _, w := range want {
			if !slices.ContainsFunc(rep.Rows, func(r benchRow) bool { return r.Name == w }) {
				run.close()
				return nil, fmt.Errorf("no instance %q in the files given", w)
			}
		}
	}
	rep.ElapsedSec = time.Since(start).Seconds()
	return run, nil
}

// benchReportOf joins the runs of each target into one report, with
// PyTorch's baselines (modes, timed by python when set) timed once for
// all of them in the same run, after kgen's kernels: each instance's task
// comes from the first target that has it, whose check outputs every
// target's outputs are compared with (the check inputs are the same on
// every target: the same seed, the same shapes).
func benchReportOf(ctx context.Context, runs []*benchRun, python string, modes []string, flush string) (*benchReport, error) {
	start := time.Now()
	rep := *runs[0].rep
	rep.Rows, rep.ElapsedSec = nil, 0
	var targets, toolchains []string
	for _, run := range runs {
		rep.ElapsedSec += run.rep.ElapsedSec
		targets = append(targets, run.target)
		if !slices.Contains(toolchains, run.rep.Toolchain) {
			toolchains = append(toolchains, run.rep.Toolchain)
		}
		for _, r := range run.rep.Rows {
			if len(runs) > 1 {
				r.Target = run.target
			}
			rep.Rows = append(rep.Rows, r)
		}
		rep.CopyGBps = min(rep.CopyGBps, run.rep.CopyGBps)
	}
	rep.Target, rep.Toolchain = strings.Join(targets, ","), strings.Join(toolchains, "; ")
	var tasks []kgrt.BaselineTask
	for _, run := range runs {
		for _, t := range run.tasks {
			if !slices.ContainsFunc(tasks, func(o kgrt.BaselineTask) bool { return o.Name == t.Name }) {
				tasks = append(tasks, t)
			}
		}
	}
	if python != "" && len(tasks) > 0 {
		rep.Baselines = modes
		res, err := kgrt.RunBaselines(ctx, python, tasks, modes, kgrt.TimeSpec{Flush: flush}, 2*runs[0].l2)
		if err != nil {
			return nil, err
		}
		for _, br := range res {
			rep.Torch = br.Torch
			i := slices.IndexFunc(tasks, func(t kgrt.BaselineTask) bool { return t.Name == br.Name })
			if i < 0 {
				continue
			}
			for j := range rep.Rows {
				if row := &rep.Rows[j]; row.Name == br.Name {
					row.addBaseline(br, tasks[i].CheckOutputs)
				}
			}
		}
		rep.FastP = fastPs(rep.Rows, modes)
	}
	rep.ElapsedSec += time.Since(start).Seconds()
	return &rep, nil
}

// plan checks then times one instance. The portability run, which has
// checked it already (its outputs agree with a checked target's on these
// very inputs), passes those inputs in agreed: plan times it on them.
func (b *bencher) plan(ctx context.Context, u *unit, p *lower.Plan, x, rx *kgrt.Executor, refs []*lower.Plan, copyBW float64, agreed []*tensor.Tensor) benchRow {
	row := benchRow{Name: p.Name, File: u.file.path, Kernel: p.Source.Name, Sizes: p.Env.String(), Bytes: ioBytes(p), Contraction: isContraction(p)}
	var tmpl []string
	for _, l := range p.Launches {
		tmpl = append(tmpl, l.Template.Name())
		var dims [][]*ir.Index // batch, rows, columns and K of a matrix product
		var sum *ir.Reduce
		if m := lower.MatchMatmul(l.Stmt); m != nil && strings.HasPrefix(l.Template.Name(), "matmul") {
			dims, sum = [][]*ir.Index{m.Batch, m.M, m.N, {m.K}}, m.Reduce
		} else if g := lower.MatchIGemm(l.Stmt); g != nil && strings.HasPrefix(l.Template.Name(), "igemm") {
			dims, sum = [][]*ir.Index{g.Batch, g.M, g.N, g.K}, g.Reduce
		}
		if dims != nil {
			if row.Unit == "" {
				row.Unit = lower.MatrixUnit(sum)
			}
			penv := p.Bind(p.Env)
			n := 2.0
			for _, ix := range dims {
				v, _ := penv.Int(lower.Extent(ix))
				n *= float64(v)
			}
			row.Flops += n
		}
	}
	row.Templates = strings.Join(tmpl, "+")
	row.Ops = row.Flops
	if row.Ops == 0 {
		row.Ops = ir.Work(p.Source, p.Env)
	}
	if agreed != nil {
		return b.time(ctx, row, p, x, agreed, copyBW)
	}
	var res kgrt.CheckResult
	if ir.Work(p.Source, p.Env) <= b.maxWork {
		res = x.Check(ctx, p, p.Env, tensor.Normal, 1)
	} else {
		rp, rounding := references(refs, p.Source)
		if rp == nil {
			row.Error = "no reference kernels to check it against"
			return row
		}
		res = x.CheckAgainst(ctx, p, rx, rp, rounding, p.Env, tensor.Normal, 1)
	}
	row.MaxError = res.MaxError
	if res.Err != nil {
		row.Error = "wrong: " + res.Err.Error()
		b.g.runner.RestartAfter(res.Err)
		return row
	}
	inputs, err := interp.RandomInputs(p.Source, p.Env, tensor.Normal, 1)
	if err != nil {
		row.Error = err.Error()
		return row
	}
	return b.time(ctx, row, p, x, inputs, copyBW)
}

// flushKind names the L2 flush b times with.
func (b *bencher) flushKind() string {
	switch b.flush {
	case kgrt.FlushRead:
		return "a read"
	case kgrt.FlushClean:
		return "a read (clean)"
	}
	return "a write"
}

// graphs says which runs b times as CUDA graphs, and how.
func (b *bencher) graphs() string {
	if b.flush == kgrt.FlushClean {
		return "every run timed as CUDA graphs of K launches (K x one run at least 20 us), each after its own flush, with one more flush at the end, less a graph of the K + 1 flushes (marked graph xK): a run pays for writing back its own writes"
	}
	return "runs under 20 us as CUDA graphs of K launches, each after its own flush, less a graph of the K flushes (marked graph xK)"
}

// time times a checked instance on inputs and fills in row's figures.
func (b *bencher) time(ctx context.Context, row benchRow, p *lower.Plan, x *kgrt.Executor, inputs []*tensor.Tensor, copyBW float64) benchRow {
	spec := kgrt.TimeSpec{Flush: b.flush}
	tm, err := kgrt.TimeShortAsGraphs(spec, func(s kgrt.TimeSpec) (kgrt.Timing, error) {
		spec = s
		return x.Time(ctx, p, p.Env, inputs, s)
	})
	if err != nil {
		row.Error = err.Error()
		b.g.runner.RestartAfter(err)
		return row
	}
	row.Time = tm
	row.GBps = tm.GBps(float64(row.Bytes))
	row.CopyFrac = row.GBps / copyBW
	if b.sizeCopy && !row.Contraction && row.Bytes >= 2 {
		// A copy that moves as many bytes, under the same protocol: the
		// ceiling at this size, which a small launch reaches less of
		// than the large copy's bandwidth.
		// The instance's figures stand without it.
		if ct, err := b.g.runner.TimeCopy(ctx, sizeCopyBytes(row.Bytes), spec); err != nil {
			row.SizeCopyError = err.Error()
			b.g.runner.RestartAfter(err)
		} else {
			row.SizeCopy = &ct
			row.SizeCopyFrac = ct.MedianUS / tm.MedianUS
		}
	}
	if row.Flops > 0 {
		row.TFLOPs = tm.TFLOPs(row.Flops)
		if peak := kgrt.PeakOf(b.peaks, row.Unit); peak > 0 {
			row.PeakFrac = row.TFLOPs / peak
		}
	}
	return row
}

// sizeCopyBytes is the copy that a bench times beside an instance that
// moves bytes (read and written): half of them, rounded up to a multiple
// of 64 KiB. On the H100, a copy as a CUDA graph's node (the clean
// flush's protocol) of 256 MiB took 181.09 us, and of 256 MiB and 256,
// 512 or 4096 bytes, or less 256, 225.28-225.31; of 256 MiB and 64 KiB,
// 181.09 (testsuite/results/2026-11-28-h100-s24-copy-graph/). The
// rounding moves at most 128 KiB more than the instance.
func sizeCopyBytes(bytes int64) int64 {
	const unit = 64 << 10
	return (bytes/2 + unit - 1) / unit * unit
}

// ioBytes is what a plan must move at least: every input read and every
// output written once.
func ioBytes(p *lower.Plan) int64 {
	var n int64
	for _, t := range append(slices.Clone(p.Source.Inputs), p.Source.Outputs...) {
		shape, err := p.Env.Shape(t)
		if err != nil {
			continue
		}
		elems := int64(1)
		for _, d := range shape {
			elems *= d
		}
		n += elems * int64(t.DType.Size())
	}
	return n
}

// isContraction reports whether p has a matrix product or an implicit
// GEMM: the instances torch.compile's max-autotune is timed for.
func isContraction(p *lower.Plan) bool {
	for _, l := range p.Launches {
		if lower.MatchMatmul(l.Stmt) != nil || lower.MatchIGemm(l.Stmt) != nil {
			return true
		}
	}
	return false
}

func baselineTask(p *lower.Plan) kgrt.BaselineTask {
	t := kgrt.BaselineTask{Name: p.Name, Kernel: p.Source.Name, Params: map[string]any{}, Fn: p.Source.Name, Sizes: map[string]int64{}, Contraction: isContraction(p)}
	kw := torch.Keywords(p.Source)
	for d, v := range p.Env.Dims {
		if d.Def == nil {
			t.Sizes[kw[d.Name]] = v
		}
	}
	for _, in := range p.Source.Inputs {
		shape, _ := p.Env.Shape(in)
		t.Inputs = append(t.Inputs, kgrt.BaselineInput{Name: in.Name, DType: in.DType.String(), Shape: shape})
	}
	t.Keywords = map[string]string{}
	for prm, c := range p.Env.Params {
		t.Keywords[prm.Name] = kw[prm.Name]
		t.Params[prm.Name] = kgrt.ParamValue(c)
	}
	return t
}
