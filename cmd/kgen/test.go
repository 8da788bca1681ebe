package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
	"kgen.dev/kgen/tensor"
)

func init() {
	register(&command{
		name: "test", args: "--target cuda:sm_90|all|T,T... [--kernel NAME,...] [--seeds N] [--dists D,...] [--max-work W] [-o DIR] [--json] [--time] [--matrix-md F] [--matrix-json F] FILE...",
		short: "build kernels and check them on the GPU against the reference interpreter",
		long: `
Test builds every kernel and instance of each FILE for the target, runs each
on the GPU and compares every output with the reference interpreter's:
kernels at several shapes (each instance's sizes when the interpreter can
afford them, then sizes capped at distinct primes, sizes with dims of 1, and
sizes just past a power of two), instances at their own sizes, each with
--seeds seeds drawn from the normal, uniform and integer distributions in
turn (--dists names others: large, magnitudes of 1e2 to 1e4, and specials,
which mixes NaN, infinities and signed zeros into normal values).
Instances too large for the interpreter are checked against kgen's
reference kernels (the generic template, one statement per launch), which
are themselves checked against the interpreter first. Outputs and workspace
are poisoned with NaN before each launch, and inputs must come back
unchanged. Tolerances depend on the output dtype and the length of the
reductions; against the reference kernels, an output also gets twice the
error that the reference kernels themselves make with their sums in the
declared accumulation types (a softmax of long f32 dot products turns the
sums' rounding into relative error). A kernel that crashes or hangs fails
alone: the runner restarts and testing goes on. Exit status 1 when any check
fails. --kernel names the instances and kernels to test (a kernel with its
instances); the others are not built.

With --target all (or a comma-separated list of targets) test is the
portability run: every file is built for every target whose toolchain is
found (the others are listed as left out), tested on every target that
runs on this machine's GPU, and each instance is run on all of those on
the same inputs, its outputs compared with the first target's (--kernel
limits it as above). --time
also times each instance on each target. It prints the portability matrix
(files x targets: compiles, correct; instances x targets: agreement, time,
fraction of the roofline); --matrix-md and --matrix-json write it, after
each file, with the files still to run: a run that is stopped keeps the
files it finished.

kgen test --merge-matrix A.json B.json ... joins the matrices of several
portability runs (each written with --matrix-json) into one, written with
--matrix-md and --matrix-json: runs of parts of the files, for machines that
lend a GPU for less time than a whole run takes. Each file on each target
comes from one run, or from the later of two single runs (a rerun after a
fix; the earlier run's part says so); every run's date, copy bandwidth and
peaks are listed. Split by files, not by targets: a run's instances are
compared with its own first target only.`,
		setup: func(fs *flag.FlagSet) func([]string) int {
			target := fs.String("target", "", "the target, e.g. cuda:sm_90 (required)")
			kernels := fs.String("kernel", "", "comma-separated instances or kernels to test (default: all)")
			out := fs.String("o", "", "keep the build in this directory (default: a temporary one)")
			var tools toolPaths
			tools.register(fs)
			seeds := fs.Int("seeds", 3, "seeds per shape")
			distList := fs.String("dists", "normal,uniform,ints", "the input distributions, taken in turn by the seeds: normal, uniform, large, ints, specials")
			maxWork := fs.Float64("max-work", 2e8, "skip shapes that would cost the interpreter more operations than this")
			asJSON := fs.Bool("json", false, "print one JSON object per check")
			verbose := fs.Bool("v", false, "print every check, not only failures")
			timeIt := fs.Bool("time", false, "with several targets: also time each instance on each")
			matrixMD := fs.String("matrix-md", "", "with several targets: write the portability matrix as markdown to this file")
			matrixJSON := fs.String("matrix-json", "", "with several targets: write the portability matrix as JSON to this file")
			mergeMatrix := fs.Bool("merge-matrix", false, "join the portability matrices (JSON) given as arguments into one")
			var config configFlag
			fs.Var(&config, "config", "template parameters replacing the defaults, e.g. BM=128,BK=64 or matmul-simt.BK=8")
			var tf tunedFlags
			tf.register(fs)
			return func(args []string) int {
				if *mergeMatrix {
					if *target != "" || *timeIt {
						return usageError("test", "--merge-matrix takes matrices, not --target or --time")
					}
					if len(args) == 0 {
						return usageError("test", "--merge-matrix: want at least one matrix (JSON)")
					}
					m, err := mergeMatrices(args)
					if err != nil {
						fmt.Fprintf(stderr, "kgen test: %v\n", err)
						return exitUser
					}
					return m.write(*matrixMD, *matrixJSON)
				}
				if len(args) == 0 || *target == "" {
					return usageError("test", "want --target and at least one FILE")
				}
				if *seeds < 1 {
					return usageError("test", "--seeds must be at least 1")
				}
				var dists []tensor.Dist
				for _, name := range strings.Split(*distList, ",") {
					d, err := tensor.ParseDist(name)
					if err != nil {
						return usageError("test", "--dists: %v", err)
					}
					dists = append(dists, d)
				}
				ctx := context.Background()
				var notes io.Writer
				if *verbose {
					notes = stderr
				}
				tuned, err := tf.open(notes)
				if err != nil {
					fmt.Fprintf(stderr, "kgen test: %v\n", err)
					return exitUser
				}
				var only []string
				if *kernels != "" {
					only = strings.Split(*kernels, ",")
				}
				if *target == "all" || strings.Contains(*target, ",") {
					targets, err := parseTargets(*target)
					if err != nil {
						return usageError("test", "%v", err)
					}
					if len(config) > 0 || *out != "" {
						return usageError("test", "--config and -o take one target")
					}
					t := &tester{seeds: *seeds, dists: dists, maxWork: *maxWork, refWork: refWork(tools, *maxWork), asJSON: *asJSON, verbose: *verbose}
					return portability(ctx, targets, tools, tuned, args, only, t, *timeIt, *matrixMD, *matrixJSON)
				}
				if *timeIt || *matrixMD != "" || *matrixJSON != "" {
					return usageError("test", "--time, --matrix-md and --matrix-json need several targets (--target all)")
				}
				g, code := openGPU(ctx, "test", *target, *out, tools, lower.Config(config), tuned, only, args)
				if g == nil {
					return code
				}
				defer g.close()
				r, units, refs := g.runner, g.units, g.refs
				t := &tester{runner: r, seeds: *seeds, dists: dists, maxWork: *maxWork, refWork: refWork(tools, *maxWork), asJSON: *asJSON, verbose: *verbose}
				for i, u := range units {
					t.unit(ctx, u, refs[i])
				}
				fmt.Fprintf(stdout, "%d plans: %d passed, %d failed, %d skipped; %d checks in %s\n",
					t.plans, t.plans-t.failed-t.skipped, t.failed, t.skipped, t.checks, time.Since(t.start()).Round(time.Millisecond))
				if t.failed > 0 {
					return exitUser
				}
				return exitOK
			}
		},
	})
}

type tester struct {
	runner  *kgrt.Runner
	seeds   int
	dists   []tensor.Dist // taken in turn by the seeds
	maxWork float64
	refWork float64 // the most work checked against the reference kernels
	asJSON  bool
	verbose bool

	began                          time.Time
	plans, failed, skipped, checks int
	// passed holds the plans every check of which passed.
	passed map[*lower.Plan]bool
}

func (t *tester) start() time.Time {
	if t.began.IsZero() {
		t.began = time.Now()
	}
	return t.began
}

func (t *tester) unit(ctx context.Context, u, ref *unit) {
	t.start()
	x := &kgrt.Executor{Runner: t.runner, Binary: u.binary}
	rx := &kgrt.Executor{Runner: t.runner, Binary: ref.binary}
	// The reference kernels first: they must agree with the interpreter
	// before they can stand in for it. (The rounding plans are no
	// oracle: they only measure their sums' rounding.)
	for _, rp := range ref.plans {
		if strings.HasSuffix(rp.Name, lower.RoundingSuffix) {
			continue
		}
		t.plans++
		shapes := kgrt.TestShapes(rp.Source, u.file.prog.Instances, t.maxWork)
		t.checkPlan(u, rp, shapes, 1, func(sh kgrt.Shape, d tensor.Dist, seed uint64) kgrt.CheckResult {
			return rx.Check(ctx, rp, sh.Env, d, seed)
		})
	}
	for _, p := range u.plans {
		t.plans++
		var shapes []kgrt.Shape
		if p.Env != nil {
			if ir.Work(p.Source, p.Env) <= t.maxWork {
				shapes = []kgrt.Shape{{Name: "instance", Env: p.Env}}
			}
		} else {
			shapes = kgrt.TestShapes(p.Source, u.file.prog.Instances, t.maxWork)
		}
		if len(shapes) > 0 {
			t.checkPlan(u, p, shapes, t.seeds, func(sh kgrt.Shape, d tensor.Dist, seed uint64) kgrt.CheckResult {
				return x.Check(ctx, p, sh.Env, d, seed)
			})
			continue
		}
		rp, rounding := references(ref.plans, p.Source)
		if rp == nil || ir.Work(p.Source, p.Env) > t.refWork {
			t.skipped++
			fmt.Fprintf(stdout, "SKIP %s (%s): its sizes are too large to check\n", p.Name, u.file.path)
			continue
		}
		shapes = []kgrt.Shape{{Name: "instance, against the reference kernels", Env: p.Env}}
		t.checkPlan(u, p, shapes, 1, func(sh kgrt.Shape, d tensor.Dist, seed uint64) kgrt.CheckResult {
			return x.CheckAgainst(ctx, p, rx, rp, rounding, sh.Env, d, seed)
		})
	}
}

// maxReferenceWork bounds the instances checked against the reference
// kernels on the GPU (a 4096^3 matmul is 7e10); on Triton's interpreter,
// which runs on the CPU, the reference kernels get --max-work as the
// interpreter does.
const maxReferenceWork = 1e12

func refWork(tools toolPaths, maxWork float64) float64 {
	if tools.tritonInterpret {
		return maxWork
	}
	return maxReferenceWork
}

// checkPlan runs check at every shape and seed and reports the plan.
func (t *tester) checkPlan(u *unit, p *lower.Plan, shapes []kgrt.Shape, seeds int, check func(kgrt.Shape, tensor.Dist, uint64) kgrt.CheckResult) {
	worst, failures := 0.0, 0
	for _, sh := range shapes {
		for s := 1; s <= seeds; s++ {
			res := check(sh, t.dists[(s-1)%len(t.dists)], uint64(s))
			t.checks++
			worst = max(worst, res.MaxError)
			t.print(p, sh, res)
			if res.Err != nil {
				failures++
				// A kernel that crashed or hung took the runner with
				// it: the next check gets a fresh one.
				t.runner.RestartAfter(res.Err)
			}
		}
	}
	if failures > 0 {
		t.failed++
		fmt.Fprintf(stdout, "FAIL %s (%s): %d of %d checks failed\n", p.Name, u.file.path, failures, len(shapes)*seeds)
	} else {
		fmt.Fprintf(stdout, "ok   %s (%s): %d shapes x %d seeds, max error %.2g\n", p.Name, u.file.path, len(shapes), seeds, worst)
		if t.passed == nil {
			t.passed = map[*lower.Plan]bool{}
		}
		t.passed[p] = true
	}
}

func (t *tester) print(p *lower.Plan, sh kgrt.Shape, res kgrt.CheckResult) {
	if t.asJSON {
		rec := map[string]any{"plan": res.Plan, "shape": sh.Name, "sizes": res.Shape, "seed": res.Seed, "dist": res.Dist.String(), "max_error": res.MaxError, "ok": res.Err == nil}
		if res.Err != nil {
			rec["error"] = res.Err.Error()
		}
		line, _ := json.Marshal(rec)
		fmt.Fprintln(stdout, string(line))
		return
	}
	if res.Err != nil {
		fmt.Fprintf(stdout, "  %s at %s (%s), seed %d %s: %v\n", p.Name, sh.Name, res.Shape, res.Seed, res.Dist, res.Err)
	} else if t.verbose {
		fmt.Fprintf(stdout, "  %s at %s (%s), seed %d %s: max error %.2g\n", p.Name, sh.Name, res.Shape, res.Seed, res.Dist, res.MaxError)
	}
}
