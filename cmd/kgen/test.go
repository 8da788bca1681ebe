package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
	"kgen.dev/kgen/tensor"
)

func init() {
	register(&command{
		name: "test", args: "--target cuda:sm_90 [--seeds N] [--max-work W] [-o DIR] [--json] FILE...",
		short: "build kernels and check them on the GPU against the reference interpreter",
		long: `
Test builds every kernel and instance of each FILE for the target, runs each
on the GPU and compares every output with the reference interpreter's:
kernels at several shapes (each instance's sizes when the interpreter can
afford them, then sizes capped at distinct primes, sizes with dims of 1, and
sizes just past a power of two), instances at their own sizes, each with
--seeds seeds drawn from the normal, uniform and integer distributions in
turn. Outputs and workspace are poisoned with NaN before each launch, and
inputs must come back unchanged. Tolerances depend on the output dtype and
the length of the reductions. A kernel that crashes or hangs fails alone:
the runner restarts and testing goes on. Exit status 1 when any check
fails.`,
		setup: func(fs *flag.FlagSet) func([]string) int {
			target := fs.String("target", "", "the target, e.g. cuda:sm_90 (required)")
			out := fs.String("o", "", "keep the build in this directory (default: a temporary one)")
			nvccPath := fs.String("nvcc", "", "the nvcc to use")
			seeds := fs.Int("seeds", 3, "seeds per shape")
			maxWork := fs.Float64("max-work", 2e8, "skip shapes that would cost the interpreter more operations than this")
			asJSON := fs.Bool("json", false, "print one JSON object per check")
			verbose := fs.Bool("v", false, "print every check, not only failures")
			return func(args []string) int {
				if len(args) == 0 || *target == "" {
					return usageError("test", "want --target and at least one FILE")
				}
				if *seeds < 1 {
					return usageError("test", "--seeds must be at least 1")
				}
				tgt, err := kgrt.ParseTarget(*target)
				if err != nil {
					return usageError("test", "%v", err)
				}
				nvcc, err := kgrt.FindNVCC(*nvccPath)
				if err != nil {
					fmt.Fprintf(stderr, "kgen test: %v\n", err)
					return exitUser
				}
				dir := *out
				if dir == "" {
					if dir, err = os.MkdirTemp("", "kgen-test-"); err != nil {
						fmt.Fprintf(stderr, "kgen test: %v\n", err)
						return exitUser
					}
					defer os.RemoveAll(dir)
				} else if err := os.MkdirAll(dir, 0o755); err != nil {
					fmt.Fprintf(stderr, "kgen test: %v\n", err)
					return exitUser
				}
				var diags diag.List
				files := loadFiles(args, &diags)
				if diags.HasErrors() {
					return report(&diags, false)
				}
				b := &builder{target: tgt, out: dir}
				units, err := b.emit(files)
				if err != nil {
					fmt.Fprintf(stderr, "kgen test: %v\n", err)
					return exitUser
				}
				b.compile(nvcc, units, runtime.NumCPU(), &diags)
				if code := report(&diags, false); code != exitOK {
					return code
				}
				ctx := context.Background()
				cache, err := kgrt.DefaultRunnerCacheDir()
				if err != nil {
					fmt.Fprintf(stderr, "kgen test: %v\n", err)
					return exitUser
				}
				r, err := kgrt.StartRunner(ctx, nvcc.Path, cache, 0)
				if err != nil {
					fmt.Fprintf(stderr, "kgen test: %v\n", err)
					return exitUser
				}
				defer r.Close()
				t := &tester{runner: r, seeds: *seeds, maxWork: *maxWork, asJSON: *asJSON, verbose: *verbose}
				for _, u := range units {
					t.unit(ctx, u)
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
	maxWork float64
	asJSON  bool
	verbose bool

	began                          time.Time
	plans, failed, skipped, checks int
}

func (t *tester) start() time.Time {
	if t.began.IsZero() {
		t.began = time.Now()
	}
	return t.began
}

var testDists = []tensor.Dist{tensor.Normal, tensor.Uniform, tensor.Ints}

func (t *tester) unit(ctx context.Context, u *unit) {
	t.start()
	c := &kgrt.Executor{Runner: t.runner, Cubin: u.cubin}
	for _, p := range u.plans {
		t.plans++
		var envs []kgrt.Shape
		if p.Env != nil {
			if ir.Work(p.Source, p.Env) <= t.maxWork {
				envs = []kgrt.Shape{{Name: "instance", Env: p.Env}}
			}
		} else {
			envs = kgrt.TestShapes(p.Source, u.file.prog.Instances, t.maxWork)
		}
		if len(envs) == 0 {
			t.skipped++
			fmt.Fprintf(stdout, "SKIP %s (%s): its sizes are too large for the reference interpreter (--max-work)\n", p.Name, u.file.path)
			continue
		}
		worst, failures := 0.0, 0
		for _, sh := range envs {
			for s := 1; s <= t.seeds; s++ {
				res := c.Check(ctx, p, sh.Env, testDists[(s-1)%len(testDists)], uint64(s))
				t.checks++
				worst = max(worst, res.MaxError)
				t.print(p, sh, res)
				if res.Err != nil {
					failures++
				}
			}
		}
		if failures > 0 {
			t.failed++
			fmt.Fprintf(stdout, "FAIL %s (%s): %d of %d checks failed\n", p.Name, u.file.path, failures, len(envs)*t.seeds)
		} else {
			fmt.Fprintf(stdout, "ok   %s (%s): %d shapes x %d seeds, max error %.2g\n", p.Name, u.file.path, len(envs), t.seeds, worst)
		}
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
