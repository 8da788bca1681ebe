package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/interp"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
	"kgen.dev/kgen/tensor"
	"kgen.dev/kgen/tune"
)

func init() {
	register(&command{
		name: "tune", args: "--target cuda:sm_90 [--kernel NAME,...] [--strategy S] [--budget N] [--time D] [--db PATH] [--json] FILE...\n       kgen tune --simulate [--db PATH] [--kernel NAME,...] [--seeds N]\n       kgen tune --export FILE | --import FILE [--db PATH]",
		short: "search template configurations on the GPU and record them in the tuning database",
		long: `
Tune searches the configurations of every instance of each FILE (a DIR
stands for the .kg files under it; --kernel names the instances or kernels
to keep) on the GPU, and records every
evaluation in the tuning database, which build, test and bench then read.

The space of a launch is its template's parameters (kgen ir --after lower
shows the template), with the values a kernel's @tune attribute gives in
place of the template's, less the configurations the template's
constraints or the target's limits rule out. A plan of several launches is
tuned launch by launch, in order, each with the launches before it at
their winners: their spaces would multiply if searched jointly, and
launches meet only through memory.

Strategies (--strategy): exhaustive (every configuration, in order), random
(without repeats), anneal (simulated annealing), genetic, model
(cost-model-guided search: a surrogate fitted to every point measured, the
default first, proposes the point it predicts fastest; see docs/tuning.md).
The default configuration is measured first,
as the baseline (when @tune leaves it in the space). --budget bounds the
evaluations, --time the wall time of each launch's search; --seed seeds the
strategies.

Candidates are compiled in parallel (-j, default: the number of CPUs), one
source each (a compile error after --compile-time, default 1m), a batch of
-j candidates compiling while the previous batch
is measured, one candidate at a time on each GPU of --gpus (default: every
GPU the driver reports), with one runner a GPU: the instances are shared
among the GPUs, each taking the next when it is done with one, and the -j
compile jobs among them. Each candidate is checked against
the reference interpreter (or, above --max-work, against kgen's reference
kernels) before it is timed, with a warm-up of 10 ms and max(10, 40 ms of)
samples. A candidate that fails to compile, exceeds a resource limit,
fails to launch, crashes, hangs or computes a wrong result is recorded
with that kind of failure and never chosen; the runner restarts after a
crash and tuning goes on.

The top --confirm configurations are then re-timed interleaved (A B C A B C
...) 5 rounds with bench's full protocol. The fastest by the median of its
rounds wins, unless others are within the noise (half the range of either
one's round medians, and at least 1% of the fastest): then, of those, the
default configuration, else the smallest (comparing values parameter by
parameter, in name order). Two runs on the same machine so pick the same
configuration unless the difference is real. A launch whose finalists an
earlier run re-timed (a restart) keeps that run's winner without re-timing
them.

The database (--db, default: $KGEN_TUNE_DB, else kgen/tune.jsonl in the
user's cache directory) is JSON lines, appended to one whole line at a time
under a file lock: a killed run resumes without measuring again what it
measured (records with the same kernel IR hash, shape, device, driver,
target, toolchain, templates and configurations answer for the measurement),
and concurrent runs do not corrupt it. A run interrupted (SIGINT, or SIGTERM
as from timeout) stops after the evaluation in flight and reports the
instances it finished. --export FILE writes its records (of --kernel's
kernels, if given) to FILE; --import FILE appends those of FILE it lacks.

--simulate replays every space of the database (of --kernel's kernels) that
was measured, with each strategy and --seeds seeds, and reports the mean
number of evaluations each needs to come within 5% of the best, without a
GPU; the default configuration counts as the first, as in a real run,
unless --scratch (which compares the strategies where the default is
already close to the best).

On a terminal a progress line shows the evaluations done, the failures, the
best time and its speedup over the default, and the time left; otherwise
a line per evaluation. --json prints JSON lines instead: one per
evaluation ("event": "eval") and one per tuned instance ("event":
"result").`,
		setup: func(fs *flag.FlagSet) func([]string) int {
			target := fs.String("target", "", "the target, e.g. cuda:sm_90 (required to tune)")
			kernels := fs.String("kernel", "", "comma-separated instances or kernels to tune (default: every instance)")
			strategy := fs.String("strategy", "exhaustive", "search strategy: "+strings.Join(tune.Strategies, ", "))
			budget := fs.Int("budget", 0, "at most this many evaluations per launch (0: no limit)")
			limit := fs.Duration("time", 0, "at most this much wall time per launch's search, e.g. 3m (0: no limit)")
			seed := fs.Uint64("seed", 1, "seed of the strategies' random choices")
			jobs := fs.Int("j", runtime.NumCPU(), "compile jobs to run at once")
			compileLimit := fs.Duration("compile-time", 60*time.Second, "give up compiling a candidate after this long (a compile error)")
			confirm := fs.Int("confirm", 3, "re-time this many finalists interleaved to pick the winner")
			dbPath := fs.String("db", "", "the tuning database (default: $KGEN_TUNE_DB, else kgen/tune.jsonl in the user's cache directory)")
			asJSON := fs.Bool("json", false, "print JSON lines instead of text")
			dryRun := fs.Bool("dry-run", false, "print each launch's space (size, valid configurations, default) and stop")
			maxWork := fs.Float64("max-work", 2e8, "check against the interpreter up to this many operations, above against the reference kernels")
			out := fs.String("o", "", "keep the candidates' build in this directory (default: a temporary one)")
			simulate := fs.Bool("simulate", false, "replay the measured spaces of the database with every strategy")
			seeds := fs.Int("seeds", 10, "seeds per strategy in --simulate")
			batch := fs.Int("batch", 1, "points a strategy proposes at once in --simulate (a real run's -j)")
			scratch := fs.Bool("scratch", false, "in --simulate, start each search without measuring the default configuration first")
			export := fs.String("export", "", "write the database's records to this file")
			importPath := fs.String("import", "", "append the records of this file that the database lacks")
			gpus := fs.String("gpus", "all", "the GPUs to measure on, a runner each: all, or CUDA device indices such as 0,1 (counted after CUDA_VISIBLE_DEVICES)")
			var tools toolPaths
			tools.register(fs)
			return func(args []string) int {
				path := *dbPath
				if path == "" {
					var err error
					if path, err = tune.DefaultPath(); err != nil {
						fmt.Fprintf(stderr, "kgen tune: %v\n", err)
						return exitUser
					}
				}
				db := &tune.DB{Path: path}
				off := func() int {
					return usageError("tune", "the tuning database is off (--db or KGEN_TUNE_DB); give one with --db")
				}
				var want []string
				if *kernels != "" {
					want = strings.Split(*kernels, ",")
				}
				modes := 0
				for _, on := range []bool{*simulate, *export != "", *importPath != ""} {
					if on {
						modes++
					}
				}
				switch {
				case modes > 1:
					return usageError("tune", "--simulate, --export and --import go one at a time")
				case modes == 1 && path == "off":
					return off()
				case *simulate:
					return simulateDB(db, want, *seeds, *batch, *budget, *scratch, *asJSON)
				case *export != "":
					return exportDB(db, want, *export)
				case *importPath != "":
					n, err := db.Import(*importPath)
					if err != nil {
						fmt.Fprintf(stderr, "kgen tune: --import: %v\n", err)
						return exitUser
					}
					fmt.Fprintf(stdout, "imported %d records into %s\n", n, db.Path)
					return exitOK
				}
				if len(args) == 0 || *target == "" {
					return usageError("tune", "want --target and at least one FILE")
				}
				if !slices.Contains(tune.Strategies, *strategy) {
					return usageError("tune", "--strategy: unknown strategy %q (have: %s)", *strategy, strings.Join(tune.Strategies, ", "))
				}
				if *budget < 0 || *confirm < 1 || *jobs < 1 || *compileLimit <= 0 {
					return usageError("tune", "--budget must be at least 0, --confirm and -j at least 1")
				}
				tgt, err := kgrt.ParseTarget(*target)
				if err != nil {
					return usageError("tune", "%v", err)
				}
				paths, err := specFiles(args)
				if err != nil {
					fmt.Fprintf(stderr, "kgen tune: %v\n", err)
					return exitUser
				}
				var diags diag.List
				files := loadFiles(paths, &diags)
				if diags.HasErrors() {
					return report(&diags, false)
				}
				report(&diags, false)
				insts, err := tuneTargets(files, want)
				if err != nil {
					fmt.Fprintf(stderr, "kgen tune: %v\n", err)
					return exitUser
				}
				if *dryRun {
					return drySpaces(insts, tgt)
				}
				if path == "off" {
					return off()
				}
				gpuList, err := parseGPUs(*gpus, visibleGPUs)
				if err != nil {
					return usageError("tune", "--gpus: %v", err)
				}
				ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
				defer stop()
				s := &tuneSession{
					tgt: tgt, tools: tools, db: db, strategy: *strategy, budget: *budget, limit: *limit, seed: *seed,
					jobs: *jobs, compileLimit: *compileLimit, confirm: *confirm, maxWork: *maxWork, asJSON: *asJSON, out: *out,
					progress: newProgressPrinter(stderr, *asJSON), gpus: gpuList,
				}
				return s.run(ctx, insts)
			}
		},
	})
}

// tuneTarget is an instance to tune and the file it is in.
type tuneTarget struct {
	file *loaded
	inst *ir.Instance
}

// tuneTargets lists the instances of files that want names (an instance,
// or a kernel for all its instances), or all when want is nil.
func tuneTargets(files []*loaded, want []string) ([]tuneTarget, error) {
	var out []tuneTarget
	found := map[string]bool{}
	var names []string
	for _, f := range files {
		for _, in := range f.prog.Instances {
			names = append(names, in.Name, in.Kernel.Name)
			if want == nil || slices.Contains(want, in.Name) || slices.Contains(want, in.Kernel.Name) {
				out = append(out, tuneTarget{f, in})
				found[in.Name], found[in.Kernel.Name] = true, true
			}
		}
	}
	for _, w := range want {
		if !found[w] {
			return nil, fmt.Errorf("--kernel: no instance or kernel with instances called %q%s", w, closest(w, names))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no instances to tune: tuning needs sizes; add an instance (instance NAME = KERNEL<N = ...>)")
	}
	return out, nil
}

// drySpaces prints each launch's space.
func drySpaces(insts []tuneTarget, tgt kgrt.Target) int {
	lim := tgt.Limits()
	for _, t := range insts {
		p, err := lower.Build(t.inst.Kernel, t.inst.Env, t.inst.Name, lim)
		if err != nil {
			fmt.Fprintf(stderr, "kgen tune: %v\n", err)
			return exitUser
		}
		for i, l := range p.Launches {
			s := tune.LaunchSpace(l, lim, lower.TuneSpace(t.inst.Kernel))
			var params []string
			for _, prm := range s.Params {
				params = append(params, fmt.Sprintf("%s %v", prm.Name, prm.Values))
			}
			valid := "too many to count"
			if s.Size() <= 1<<20 {
				valid = fmt.Sprint(s.Count())
			}
			fmt.Fprintf(stdout, "%s launch %d: %s: %d configurations, %s valid; default %s\n  %s\n",
				t.inst.Name, i, l.Template.Name(), s.Size(), valid, l.Config, strings.Join(params, "; "))
		}
	}
	return exitOK
}

// tuneSession is one kgen tune run on the GPU.
type tuneSession struct {
	tgt      kgrt.Target
	tools    toolPaths
	db       *tune.DB
	strategy string
	budget   int
	limit    time.Duration
	seed     uint64
	jobs     int
	// compileLimit bounds one candidate's compile: igemm-mma
	// configurations of 128 accumulators a thread can take nvcc over
	// 100 s (docs/tuning.md).
	compileLimit time.Duration
	confirm      int
	maxWork      float64
	asJSON       bool
	out          string
	progress     *progressPrinter

	gpus []int // CUDA device indices, a runner each

	be  backend
	dir string
	// mu guards known and what the workers print; refMu refs, held
	// while a file's reference kernels compile.
	mu    sync.Mutex
	known map[string]tune.Record
	refMu sync.Mutex
	refs  map[*loaded]*unit // the reference kernels of each file, once compiled
}

// lookup is the latest record of key.
func (s *tuneSession) lookup(key string) (tune.Record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.known[key]
	return r, ok
}

// remember makes r the latest record of its key.
func (s *tuneSession) remember(r tune.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.known[r.Key()] = r
}

// tuneWorker measures on one GPU: its runner, the device it reports, its
// share of the compile jobs and its progress lines.
type tuneWorker struct {
	gpu      int
	runner   *kgrt.Runner
	device   tune.Device
	jobs     int
	progress *progressPrinter
	dir      string // where its candidates' sources and binaries go
}

// tuneSummary is what tuning one instance found.
type tuneSummary struct {
	Event     string         `json:"event"`
	Instance  string         `json:"instance"`
	Templates []string       `json:"templates"`
	Configs   []string       `json:"configs"`
	DefaultUS float64        `json:"default_us"`
	TunedUS   float64        `json:"tuned_us"`
	Speedup   float64        `json:"speedup"`
	Evals     int            `json:"evaluations"`
	Measured  int            `json:"measured"`
	Failures  map[string]int `json:"failures"`
	Seconds   float64        `json:"seconds"`
	GPU       int            `json:"gpu"`
	Error     string         `json:"error,omitempty"`
}

func (s *tuneSession) run(ctx context.Context, insts []tuneTarget) int {
	var err error
	if s.be, err = openBackend(s.tgt, s.tools, true); err != nil {
		fmt.Fprintf(stderr, "kgen tune: %v\n", err)
		return exitUser
	}
	recs, bad, err := s.db.Load()
	if err != nil {
		fmt.Fprintf(stderr, "kgen tune: %v\n", err)
		return exitUser
	}
	if bad > 0 {
		fmt.Fprintf(stderr, "kgen tune: %s: skipped %d lines that are not whole records (a killed run's torn line)\n", s.db.Path, bad)
	}
	s.known = tune.Latest(recs)
	s.dir = s.out
	if s.dir == "" {
		if s.dir, err = os.MkdirTemp("", "kgen-tune-"); err != nil {
			fmt.Fprintf(stderr, "kgen tune: %v\n", err)
			return exitUser
		}
		defer os.RemoveAll(s.dir)
	} else if err := os.MkdirAll(s.dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "kgen tune: %v\n", err)
		return exitUser
	}
	workers, err := s.startWorkers(ctx)
	defer func() {
		for _, w := range workers {
			w.runner.Close()
		}
	}()
	if err != nil {
		fmt.Fprintf(stderr, "kgen tune: %v\n", err)
		return exitUser
	}
	s.refs = map[*loaded]*unit{}
	sums := make([]tuneSummary, len(insts))
	done := make([]bool, len(insts))
	eachOnWorkers(ctx, len(workers), len(insts), func(w, i int) {
		sum := s.instance(ctx, workers[w], insts[i])
		// An instance the interruption cut short is not reported as
		// finished.
		cut := ctx.Err() != nil && sum.Error != ""
		s.mu.Lock()
		defer s.mu.Unlock()
		sums[i], done[i] = sum, !cut
		if s.asJSON {
			line, _ := json.Marshal(sum)
			fmt.Fprintln(stdout, string(line))
		}
	})
	var finished []tuneSummary
	code := exitOK
	for i, sum := range sums {
		if done[i] {
			finished = append(finished, sum)
			if sum.Error != "" {
				code = exitUser
			}
		}
	}
	if ctx.Err() != nil {
		// The instances finished before the interruption still get
		// their report: a run cut short by a time limit shows them.
		if !s.asJSON && len(finished) > 0 {
			printSummaries(stdout, workers[0].device, s.be.toolchain(), finished, len(workers) > 1)
		}
		fmt.Fprintf(stderr, "kgen tune: interrupted; what was measured is in %s, and a new run resumes from it\n", s.db.Path)
		return exitUser
	}
	if !s.asJSON {
		printSummaries(stdout, workers[0].device, s.be.toolchain(), finished, len(workers) > 1)
	}
	return code
}

// startWorkers starts a runner on each of the session's GPUs, one after
// another (the first builds the runner program that the others reuse),
// and shares the compile jobs among them. On an error it returns the
// workers started so far, for the caller to close.
func (s *tuneSession) startWorkers(ctx context.Context) ([]*tuneWorker, error) {
	var workers []*tuneWorker
	for i, gpu := range s.gpus {
		r, err := s.be.startRunner(ctx, gpu)
		if err != nil {
			return workers, fmt.Errorf("GPU %d: %w", gpu, err)
		}
		w := &tuneWorker{gpu: gpu, runner: r, jobs: shareJobs(s.jobs, len(s.gpus), i), progress: s.progress, dir: s.dir}
		workers = append(workers, w)
		if len(s.gpus) > 1 {
			// Instances of the same name in two files compile apart.
			w.dir = filepath.Join(s.dir, fmt.Sprintf("gpu%d", gpu))
			if err := os.MkdirAll(w.dir, 0o755); err != nil {
				return workers, err
			}
			w.progress = s.progress.forGPU(gpu, &s.mu)
		}
		info, err := r.Info(ctx)
		if err != nil {
			return workers, fmt.Errorf("GPU %d: %w", gpu, err)
		}
		w.device = tune.Device{Name: info.Name, CC: fmt.Sprintf("%d.%d", info.CCMajor, info.CCMinor), Driver: info.DriverVersion}
	}
	return workers, nil
}

// shareJobs is worker i's share of jobs compile jobs among n workers
// (at least one each).
func shareJobs(jobs, n, i int) int {
	share := jobs / n
	if i < jobs%n {
		share++
	}
	return max(share, 1)
}

// eachOnWorkers calls do(w, i) for every i in [0, n), on workers
// goroutines (w is the worker's index): each worker takes the lowest i not
// yet taken when it is done with its last, so that a worker does one at a
// time and work is taken in order. No i is taken once ctx ends; it returns
// when every call taken has returned.
func eachOnWorkers(ctx context.Context, workers, n int, do func(w, i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				do(w, i)
			}
		}()
	}
	wg.Wait()
}

// visibleGPUs counts the GPUs a runner can use: the entries of
// CUDA_VISIBLE_DEVICES where it is set, else those the driver reports.
func visibleGPUs() (int, error) {
	if v, ok := os.LookupEnv("CUDA_VISIBLE_DEVICES"); ok {
		n := 0
		for _, f := range strings.Split(v, ",") {
			if strings.TrimSpace(f) != "" {
				n++
			}
		}
		return n, nil
	}
	devs, err := kgrt.Devices()
	return len(devs), err
}

// parseGPUs reads --gpus: "all" (every GPU count reports, at least GPU 0:
// with none found, its runner says why) or distinct CUDA device indices,
// comma-separated.
func parseGPUs(spec string, count func() (int, error)) ([]int, error) {
	if spec == "all" {
		n, err := count()
		if err != nil || n < 1 {
			n = 1
		}
		gpus := make([]int, n)
		for i := range gpus {
			gpus[i] = i
		}
		return gpus, nil
	}
	var gpus []int
	for _, f := range strings.Split(spec, ",") {
		g, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || g < 0 {
			return nil, fmt.Errorf("%q is not a GPU index (want all, or indices such as 0,1)", f)
		}
		if slices.Contains(gpus, g) {
			return nil, fmt.Errorf("GPU %d named twice", g)
		}
		gpus = append(gpus, g)
	}
	return gpus, nil
}

// instance tunes every launch of one instance on w's GPU.
func (s *tuneSession) instance(ctx context.Context, w *tuneWorker, t tuneTarget) tuneSummary {
	start := time.Now()
	in := t.inst
	sum := tuneSummary{Event: "result", Instance: in.Name, Failures: map[string]int{}, GPU: w.gpu}
	fail := func(err error) tuneSummary {
		sum.Error = err.Error()
		s.mu.Lock()
		defer s.mu.Unlock()
		fmt.Fprintf(stderr, "kgen tune: %s: %v\n", in.Name, err)
		return sum
	}
	lim := s.tgt.Limits()
	base, err := lower.Build(in.Kernel, in.Env, in.Name, lim)
	if err != nil {
		return fail(err)
	}
	inputs, want, tols, err := s.reference(ctx, w, t)
	if err != nil {
		return fail(err)
	}
	e := &candidateEval{be: s.be, runner: w.runner, file: t.file, inst: in, lim: lim, dir: w.dir, jobs: w.jobs, compileLimit: s.compileLimit,
		inputs: inputs, want: want, tols: tols, compiled: map[string]*candidate{}, resident: kgrt.NewResident(w.runner, inputs)}
	defer e.resident.Free(ctx)
	defaults := make([]lower.Config, len(base.Launches))
	for i, l := range base.Launches {
		defaults[i] = l.Config
		sum.Templates = append(sum.Templates, fmt.Sprintf("%s@%d", l.Template.Name(), lower.TemplateVersion(l.Template)))
	}
	e.configs = slices.Clone(defaults)
	narrow := lower.TuneSpace(in.Kernel)
	for i, l := range base.Launches {
		e.launch = i
		e.compiled = map[string]*candidate{}
		space := tune.LaunchSpace(l, lim, narrow)
		def, ok := space.IndexOf(defaults[i])
		if !ok {
			def = -1
		}
		st, err := tune.New(s.strategy, space, s.seed)
		if err != nil {
			return fail(err)
		}
		rec := func(c lower.Config) tune.Record {
			cfgs := make([]string, len(e.configs))
			for j := range e.configs {
				cfgs[j] = tune.Key(e.configs[j])
			}
			cfgs[i] = tune.Key(c)
			return tune.Record{Kind: tune.KindEval, Kernel: in.Name, Hash: ir.Hash(in.Kernel), Shape: in.Env.String(), Dims: envDims(in.Env),
				Device: w.device, Target: s.tgt.String(), Toolchain: s.be.toolchain(), Templates: sum.Templates, Configs: cfgs, Launch: i,
				Default: tune.Key(c) == tune.Key(defaults[i])}
		}
		expect := 0
		if s.strategy == "exhaustive" && space.Size() <= 1<<20 {
			expect = int(space.Count())
		}
		what := fmt.Sprintf("%s launch %d (%s): %s of %d points", in.Name, i, l.Template.Name(), s.strategy, space.Size())
		if expect > 0 {
			what += fmt.Sprintf(", %d valid", expect)
		}
		w.progress.begin(what)
		tu := &tune.Tuner{Space: space, Strategy: st, Eval: e, Default: def, Budget: s.budget, Time: s.limit, Batch: w.jobs, Expect: expect,
			Known: func(c lower.Config) (tune.Result, bool) {
				r, ok := s.lookup(rec(c).Key())
				if !ok {
					return tune.Result{}, false
				}
				return resultOf(r), true
			},
			Record: func(r tune.Result) error {
				x := rec(r.Config)
				x.At = time.Now().UTC().Format(time.RFC3339)
				if r.Failure != nil {
					x.Failure, x.Error = r.Failure.Kind.String(), r.Failure.Error()
				} else {
					tm := r.Time
					x.Time = &tm
				}
				s.remember(x)
				return s.db.Append(x)
			},
			Progress: w.progress.update,
		}
		if s.asJSON {
			tu.Progress = func(p tune.Progress) {
				s.mu.Lock()
				defer s.mu.Unlock()
				printEvalJSON(in.Name, i, p)
			}
		}
		results, err := tu.Run(ctx)
		w.progress.end()
		sum.Evals += len(results)
		for _, r := range results {
			if !r.Cached {
				sum.Measured++
			}
			if r.Failure != nil {
				sum.Failures[r.Failure.Kind.String()]++
			}
		}
		if err != nil {
			return fail(err)
		}
		fin, err := finalists(results, defaults[i], s.confirm)
		if err != nil {
			e.removeSources()
			return fail(err)
		}
		var win lower.Config
		var winUS, defUS float64
		s.mu.Lock()
		prior, ok := priorWinner(s.known, rec, fin, defaults[i])
		s.mu.Unlock()
		if ok {
			// The search's best are the finalists an earlier run
			// re-timed: its winner stands (re-timing would measure the
			// noise), and nothing is compiled or timed again.
			win = fin[slices.IndexFunc(fin, func(c lower.Config) bool { return tune.Key(c) == prior.Configs[i] })]
			winUS, defUS = prior.Time.MedianUS, prior.DefaultUS
			if !s.asJSON {
				w.progress.line("%s: the finalists re-timed at %s again: keeping their winner %s (%.2f us)", what, prior.At, prior.Configs[i], winUS)
			}
		} else {
			win, winUS, defUS, err = s.confirmWinner(ctx, e, fin, defaults[i])
			if err != nil {
				e.removeSources()
				return fail(err)
			}
			x := rec(win)
			x.Kind, x.At = tune.KindWinner, time.Now().UTC().Format(time.RFC3339)
			x.Time = &kgrt.Timing{MedianUS: winUS}
			x.DefaultUS = defUS
			for _, c := range fin {
				x.Finalists = append(x.Finalists, tune.Key(c))
			}
			s.remember(x)
			if err := s.db.Append(x); err != nil {
				e.removeSources()
				return fail(err)
			}
		}
		e.removeSources()
		e.configs[i] = win
		if i == len(base.Launches)-1 {
			sum.TunedUS = winUS
		}
		if i == 0 {
			sum.DefaultUS = defUS
		}
	}
	for _, c := range e.configs {
		sum.Configs = append(sum.Configs, tune.Key(c))
	}
	if sum.DefaultUS > 0 && sum.TunedUS > 0 {
		sum.Speedup = sum.DefaultUS / sum.TunedUS
	}
	sum.Seconds = time.Since(start).Seconds()
	return sum
}

// finalists are the best n results' configurations, with the default
// among them when it ran: the configurations a search re-times.
func finalists(results []tune.Result, def lower.Config, n int) ([]lower.Config, error) {
	ok := slices.DeleteFunc(slices.Clone(results), func(r tune.Result) bool { return r.Failure != nil })
	slices.SortStableFunc(ok, func(a, b tune.Result) int {
		switch {
		case a.Cost() < b.Cost():
			return -1
		case a.Cost() > b.Cost():
			return 1
		}
		return 0
	})
	if len(ok) == 0 {
		return nil, fmt.Errorf("every configuration failed (%d tried)", len(results))
	}
	var fin []lower.Config
	for _, r := range ok[:min(len(ok), n)] {
		fin = append(fin, r.Config)
	}
	defIn := slices.ContainsFunc(ok, func(r tune.Result) bool { return tune.Key(r.Config) == tune.Key(def) })
	if defIn && !slices.ContainsFunc(fin, func(c lower.Config) bool { return tune.Key(c) == tune.Key(def) }) {
		fin = append(fin, def) // timed beside the winner: the speedup is of one protocol, one run
	}
	return fin, nil
}

// priorWinner is the latest winner that an earlier run confirmed among
// the same finalists (fin; rec gives a configuration's record, the
// launch's context), with the default's time when the default is one of
// them: a restarted run, or one given a larger budget whose new
// evaluations did not reach the finalists.
func priorWinner(known map[string]tune.Record, rec func(lower.Config) tune.Record, fin []lower.Config, def lower.Config) (tune.Record, bool) {
	var want []string
	for _, c := range fin {
		want = append(want, tune.Key(c))
	}
	slices.Sort(want)
	defIn := slices.Contains(want, tune.Key(def))
	var best tune.Record
	found := false
	for _, c := range fin {
		r := rec(c)
		r.Kind = tune.KindWinner
		w, ok := known[r.Key()]
		if !ok || w.Time == nil || (defIn && w.DefaultUS <= 0) || !slices.Equal(slices.Sorted(slices.Values(w.Finalists)), want) {
			continue
		}
		if !found || w.At > best.At {
			best, found = w, true
		}
	}
	return best, found
}

// confirmWinner re-times the finalists interleaved and returns the
// winner, its confirmed time and the default's (0 when it failed or was
// not among them).
func (s *tuneSession) confirmWinner(ctx context.Context, e *candidateEval, fin []lower.Config, def lower.Config) (lower.Config, float64, float64, error) {
	conf := tune.Confirm(ctx, fin, 5, e.confirmTime)
	w := tune.Winner(conf, def)
	if w < 0 {
		return nil, 0, 0, confirmError(conf, ctx.Err())
	}
	defUS := 0.0
	for _, c := range conf {
		if tune.Key(c.Config) == tune.Key(def) && c.Err == nil {
			defUS = c.Median
		}
	}
	return conf[w].Config, conf[w].Median, defUS, ctx.Err()
}

// confirmError is why no finalist won the re-timing: the interruption,
// where the run was interrupted (a time limit's SIGTERM stops the runner
// too, and every finalist then fails), else the first finalist's failure.
func confirmError(conf []tune.Confirmed, interrupted error) error {
	if interrupted != nil {
		return fmt.Errorf("interrupted while its finalists were re-timed (%v)", interrupted)
	}
	return fmt.Errorf("every finalist failed when re-timed: %v", conf[0].Err)
}

// reference draws the instance's inputs (normal, seed 1) and computes the
// outputs every candidate must match, and within which tolerances: with
// the interpreter up to --max-work, else with the file's reference
// kernels on the GPU (Executor.Reference).
func (s *tuneSession) reference(ctx context.Context, w *tuneWorker, t tuneTarget) (inputs, want []*tensor.Tensor, tols []kgrt.Tolerance, err error) {
	k, env := t.inst.Kernel, t.inst.Env
	if ir.Work(k, env) <= s.maxWork {
		if inputs, err = interp.RandomInputs(k, env, tensor.Normal, 1); err != nil {
			return nil, nil, nil, err
		}
		want, err = interp.Run(k, env, inputs, interp.Options{})
		return inputs, want, kgrt.Tolerances(k, env), err
	}
	ref, err := s.referenceKernels(ctx, t.file)
	if err != nil {
		return nil, nil, nil, err
	}
	rp, rounding := references(ref.plans, k)
	if rp == nil {
		return nil, nil, nil, fmt.Errorf("no reference kernel for %s", k.Name)
	}
	x := &kgrt.Executor{Runner: w.runner, Binary: ref.binary}
	return x.Reference(ctx, rp, rounding, env, tensor.Normal, 1)
}

// referenceKernels compiles the reference kernels of a file, once for
// every worker.
func (s *tuneSession) referenceKernels(ctx context.Context, f *loaded) (*unit, error) {
	s.refMu.Lock()
	defer s.refMu.Unlock()
	if ref := s.refs[f]; ref != nil {
		return ref, nil
	}
	b := &builder{target: s.tgt, be: s.be, out: s.dir, scratch: true}
	units, err := b.emitReference([]*loaded{f})
	if err != nil {
		return nil, err
	}
	var diags diag.List
	s.be.compile(ctx, units, s.jobs, false, &diags)
	if diags.HasErrors() {
		s.mu.Lock()
		diags.Print(stderr)
		s.mu.Unlock()
		return nil, fmt.Errorf("the reference kernels do not compile")
	}
	s.refs[f] = units[0]
	return units[0], nil
}

// resultOf turns a database record back into the result it recorded.
func resultOf(r tune.Record) tune.Result {
	if r.Time != nil {
		return tune.Result{Time: *r.Time}
	}
	kind := kgrt.LaunchFailure
	for k := kgrt.CompileError; k <= kgrt.WrongResult; k++ {
		if k.String() == r.Failure {
			kind = k
		}
	}
	return tune.Result{Failure: &kgrt.Failure{Kind: kind, Msg: r.Error}}
}

// envDims is an instance's declared dims by name.
func envDims(env *ir.Env) map[string]int64 {
	m := map[string]int64{}
	for _, d := range env.Kernel.DeclaredDims() {
		m[d.Name] = env.Dims[d]
	}
	return m
}
