// Command difftest is kgen's differential tester. It generates random
// valid specs (seeded, as source text), and runs each through kgen:
//
//  1. kgen check, then the reference interpreter (kgen eval) at every
//     instance's small sizes;
//  2. kgen build --emit-only for every target of runtime.Targets(), twice,
//     comparing the two outputs byte for byte;
//  3. kgen build for every target whose toolchain compiles a probe spec on
//     this machine (generated code that does not compile is kgen's bug);
//  4. the CPU emulation of the emitted CUDA against the interpreter, with
//     the tolerances of runtime/compare.go (backends/cuda's
//     TestEmulatedCorpus on each batch);
//  5. the emitted Triton module in Triton's interpreter against kgen's
//     (kgen test --triton-interpret, with the python of KGEN_TORCH_PYTHON:
//     torch and triton; skipped without it).
//
// Every failure is minimized to a small reproducer, written to
// testsuite/corpus with a header that says what failed and how it was
// found. Targets come from runtime.Targets() and compilation goes through
// kgen build, so a new backend is covered once it is registered.
//
//	go run ./testsuite/difftest -seed 1 -time 30m
//	go run ./testsuite/difftest -seed 1 -n 40 -gen testsuite/difftest/gpu-batch
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	kgrt "kgen.dev/kgen/runtime"
	"kgen.dev/kgen/tensor"
)

func main() {
	os.Exit(run())
}

// summary is what a run found.
type summary struct {
	Command     string            `json:"command"`
	Commit      string            `json:"commit"`
	Seed        uint64            `json:"seed"`
	Duration    string            `json:"duration"`
	Specs       int               `json:"specs"`
	Statements  int               `json:"statements"`
	Kinds       map[string]int    `json:"kinds"`
	Checks      map[string]int    `json:"checks"`
	Targets     []string          `json:"targets"`
	Compiled    []string          `json:"compiled_targets"`
	NotCompiled map[string]string `json:"not_compiled,omitempty"`
	Emulated    bool              `json:"emulated"`
	Interpreted bool              `json:"triton_interpreted"`
	Failing     int               `json:"failing_specs"`
	Failures    map[string]int    `json:"failures_by_class"`
	Distinct    int               `json:"distinct_failures"`
	Reproducers []repro           `json:"reproducers"`
}

type repro struct {
	File      string `json:"file"`
	Class     string `json:"class"`
	Target    string `json:"target,omitempty"`
	Seed      uint64 `json:"seed"`
	Kind      string `json:"kind"`
	Lines     int    `json:"lines"`
	FromLines int    `json:"from_lines"`
	Tries     int    `json:"tries"`
}

func run() int {
	seed := flag.Uint64("seed", 1, "seed of the first spec; spec i has seed+i")
	n := flag.Int("n", 0, "stop after this many specs (0: no limit)")
	limit := flag.Duration("time", 0, "stop starting batches after this long (0: no limit)")
	work := flag.String("o", "", "scratch directory (default: a new temporary one)")
	batch := flag.Int("batch", 6, "specs checked together (one compile and one emulation run each)")
	corpus := flag.String("corpus", "testsuite/corpus", "write reproducers here (empty: do not write them)")
	kgenBin := flag.String("kgen", "", "the kgen binary (default: build ./cmd/kgen)")
	emulate := flag.Bool("emulate", true, "emulate the CUDA of every spec on the CPU and compare with the interpreter")
	interpret := flag.Bool("interpret", true, "run the Triton module of every spec in Triton's interpreter (KGEN_TORCH_PYTHON) and compare with the interpreter")
	minTime := flag.Duration("minimize", 4*time.Minute, "time to spend minimizing each distinct failure")
	asJSON := flag.Bool("json", false, "print the summary as JSON")
	genDir := flag.String("gen", "", "only write -n generated specs to this directory")
	kinds := flag.String("kinds", "", "only generate these statement kinds (comma-separated), one block each")
	specsDir := flag.String("specs", "", "check the .kg files of this directory instead of generating specs (no minimizing)")
	dist := flag.String("dist", "", "the inputs' distribution in emulation and Triton's interpreter: normal, uniform, large, ints or specials (default: uniform and normal)")
	flag.Parse()
	if *kinds != "" {
		for _, k := range strings.Split(*kinds, ",") {
			if !slices.ContainsFunc(blockKinds, func(b blockKind) bool { return b.name == k }) {
				var names []string
				for _, b := range blockKinds {
					names = append(names, b.name)
				}
				fmt.Fprintf(os.Stderr, "difftest: -kinds: no statement kind %q (have: %s)\n", k, strings.Join(names, ", "))
				return 2
			}
		}
	}

	gen := func(s uint64) *Spec {
		if *kinds != "" {
			return GenerateKinds(s, strings.Split(*kinds, ","))
		}
		return Generate(s)
	}
	if *genDir != "" {
		if *n <= 0 {
			fmt.Fprintln(os.Stderr, "difftest: -gen needs -n")
			return 2
		}
		os.MkdirAll(*genDir, 0o755)
		for i := range *n {
			s := *seed + uint64(i)
			if err := os.WriteFile(filepath.Join(*genDir, fmt.Sprintf("g%d.kg", s)), []byte(gen(s).Text()), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "difftest:", err)
				return 1
			}
		}
		return 0
	}
	if *dist != "" {
		if _, err := tensor.ParseDist(*dist); err != nil {
			fmt.Fprintf(os.Stderr, "difftest: -dist: %v\n", err)
			return 2
		}
	}
	if *n <= 0 && *limit <= 0 && *specsDir == "" {
		fmt.Fprintln(os.Stderr, "difftest: give -n or -time")
		return 2
	}
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "difftest:", err)
		return 1
	}
	if *work == "" {
		*work, err = os.MkdirTemp("", "difftest")
		if err != nil {
			fmt.Fprintln(os.Stderr, "difftest:", err)
			return 1
		}
	}
	os.MkdirAll(*work, 0o755)
	c, err := newChecker(root, *work, *kgenBin, *emulate)
	if err != nil {
		fmt.Fprintln(os.Stderr, "difftest:", err)
		return 1
	}
	c.dist = *dist
	if *interpret {
		if c.triPython = os.Getenv("KGEN_TORCH_PYTHON"); c.triPython == "" {
			fmt.Fprintln(os.Stderr, "difftest: KGEN_TORCH_PYTHON is not set: not running Triton's interpreter")
		}
	}
	sum := &summary{Command: "go run ./testsuite/difftest " + strings.Join(os.Args[1:], " "), Commit: commit(root), Seed: *seed,
		Kinds: map[string]int{}, Failures: map[string]int{}, Checks: c.checks, Emulated: c.cudaTest != "", Interpreted: c.triPython != "", NotCompiled: c.skipped}
	for _, t := range c.targets {
		sum.Targets = append(sum.Targets, t.String())
	}
	for _, t := range c.compilers {
		sum.Compiled = append(sum.Compiled, t.String())
	}
	fmt.Fprintf(os.Stderr, "difftest: targets %s; compiling for %s; scratch %s\n", strings.Join(sum.Targets, " "), strings.Join(sum.Compiled, " "), *work)
	for t, why := range c.skipped {
		fmt.Fprintf(os.Stderr, "difftest: not compiling for %s: %s\n", t, why)
	}
	start := time.Now()
	if *specsDir != "" {
		paths, _ := filepath.Glob(filepath.Join(*specsDir, "*.kg"))
		fails := c.checkAll(paths)
		sum.Specs = len(paths)
		for _, p := range paths {
			if len(fails[p]) > 0 {
				sum.Failing++
			}
			for _, f := range fails[p] {
				sum.Failures[f.Class]++
				fmt.Fprintf(os.Stderr, "FAIL %s: %s%s: %s\n%s\n", p, f.Class, onTarget(f.Target), f.Stage, f.Detail)
			}
		}
		*n = sum.Specs // no generation below
	}
	seen := map[string]bool{}
	next := *seed
	for (*n <= 0 || sum.Specs < *n) && (*limit <= 0 || time.Since(start) < *limit) {
		dir := filepath.Join(*work, fmt.Sprintf("batch%d", next))
		os.MkdirAll(dir, 0o755)
		specs := map[string]*Spec{}
		seeds := map[string]uint64{}
		var paths []string
		for i := 0; i < *batch && (*n <= 0 || sum.Specs < *n); i++ {
			s := gen(next)
			p := filepath.Join(dir, fmt.Sprintf("g%d.kg", next))
			os.WriteFile(p, []byte(s.Text()), 0o644)
			specs[p], seeds[p] = s, next
			paths = append(paths, p)
			next++
			sum.Specs++
			sum.Statements += len(s.K.Stmts)
			for _, k := range strings.Split(strings.TrimPrefix(s.Header[0], fmt.Sprintf("difftest seed %d: ", seeds[p])), ", ") {
				sum.Kinds[k]++
			}
		}
		fails := c.checkAll(paths)
		for _, p := range paths {
			fs := fails[p]
			if len(fs) == 0 {
				os.Remove(p)
				continue
			}
			sum.Failing++
			for _, f := range fs {
				sum.Failures[f.Class]++
				fmt.Fprintf(os.Stderr, "FAIL %s: %s%s: %s\n", filepath.Base(p), f.Class, onTarget(f.Target), firstLine(f.Detail))
				if seen[f.Signature()] {
					continue
				}
				seen[f.Signature()] = true
				sum.Distinct++
				if r := c.reproduce(specs[p], f, seeds[p], *minTime, *corpus); r != nil {
					sum.Reproducers = append(sum.Reproducers, *r)
				}
			}
		}
		fmt.Fprintf(os.Stderr, "difftest: %d specs, %d failing, %s\n", sum.Specs, sum.Failing, time.Since(start).Round(time.Second))
	}
	sum.Duration = time.Since(start).Round(time.Second).String()
	if *asJSON {
		data, _ := json.MarshalIndent(sum, "", "  ")
		fmt.Println(string(data))
	} else {
		sum.print()
	}
	if sum.Failing > 0 {
		return 1
	}
	return 0
}

func onTarget(t string) string {
	if t == "" {
		return ""
	}
	return " on " + t
}

// reproduce minimizes a failure and writes its reproducer to corpus.
func (c *checker) reproduce(s *Spec, f Failure, seed uint64, budget time.Duration, corpus string) *repro {
	from := strings.Count(s.Text(), "\n")
	m, tries := c.minimize(s, f, budget)
	r := &repro{Class: f.Class, Target: f.Target, Seed: seed, Kind: messageKind(f.Detail), Lines: strings.Count(m.Text(), "\n"), FromLines: from, Tries: tries}
	fmt.Fprintf(os.Stderr, "difftest: minimized seed %d (%s) from %d to %d lines in %d tries\n", seed, f.Class, from, r.Lines, tries)
	if corpus == "" {
		return r
	}
	os.MkdirAll(corpus, 0o755)
	name := fmt.Sprintf("%s-s%d.kg", f.Class, seed)
	if f.Target != "" && f.Class != classEmulate {
		name = fmt.Sprintf("%s-%s-s%d.kg", f.Class, strings.NewReplacer(":", "_", " ", "_").Replace(f.Target), seed)
	}
	r.File = filepath.Join(corpus, name)
	// Scratch paths mean nothing in the corpus.
	f.Stage, f.Detail = c.scrub(f.Stage), c.scrub(f.Detail)
	flags := fmt.Sprintf("-seed %d", seed)
	if c.dist != "" {
		flags += " -dist " + c.dist
	}
	text := reproducer(m, f, fmt.Sprintf("go run ./testsuite/difftest %s (spec %d)", flags, seed), c.dist, from, true)
	if err := os.WriteFile(r.File, []byte(text), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "difftest:", err)
	}
	return r
}

var scratchDir = regexp.MustCompile(`\b(build|emit|min|emu|probe)[0-9]+\b`)

// scrub removes the scratch directory from a failure's text.
func (c *checker) scrub(s string) string {
	s = regexp.MustCompile(regexp.QuoteMeta(c.work)+`/(batch[0-9]+/)?`).ReplaceAllString(s, "")
	return scratchDir.ReplaceAllString(s, "OUT")
}

func (s *summary) print() {
	fmt.Printf("difftest: seed %d, %d specs (%d statements) in %s, commit %s\n", s.Seed, s.Specs, s.Statements, s.Duration, s.Commit)
	fmt.Printf("targets: %s; compiled for: %s\n", strings.Join(s.Targets, " "), strings.Join(s.Compiled, " "))
	fmt.Printf("statement kinds:")
	for _, k := range slices.Sorted(maps.Keys(s.Kinds)) {
		fmt.Printf(" %s %d", k, s.Kinds[k])
	}
	fmt.Printf("\nchecks:")
	for _, k := range slices.Sorted(maps.Keys(s.Checks)) {
		fmt.Printf(" %s %d", k, s.Checks[k])
	}
	fmt.Printf("\nfailing specs: %d; failures by class:", s.Failing)
	classes := slices.Sorted(maps.Keys(s.Failures))
	sort.Strings(classes)
	for _, k := range classes {
		fmt.Printf(" %s %d", k, s.Failures[k])
	}
	fmt.Printf("; distinct: %d\n", s.Distinct)
	for _, r := range s.Reproducers {
		fmt.Printf("  %s: %s%s (%s), %d lines from %d\n", r.File, r.Class, onTarget(r.Target), r.Kind, r.Lines, r.FromLines)
	}
}

// newChecker builds kgen (unless given) and the emulation test binary,
// and probes the toolchains.
func newChecker(root, work, kgenBin string, emulate bool) (*checker, error) {
	goTool, err := exec.LookPath("go")
	if err != nil && (kgenBin == "" || emulate) {
		return nil, fmt.Errorf("go not found: %v", err)
	}
	c := &checker{kgen: kgenBin, work: work, goTool: goTool, targets: kgrt.Targets(), timeout: 5 * time.Minute, checks: map[string]int{}}
	if c.kgen == "" {
		c.kgen = filepath.Join(work, "kgen")
		if out, err := goCmd(root, "build", "-o", c.kgen, "./cmd/kgen"); err != nil {
			return nil, fmt.Errorf("building kgen: %v\n%s", err, out)
		}
	}
	if emulate {
		if _, err := exec.LookPath("g++"); err != nil {
			fmt.Fprintln(os.Stderr, "difftest: no g++: not emulating")
		} else {
			c.cudaTest = filepath.Join(work, "cuda.test")
			c.cudaDir = filepath.Join(root, "backends", "cuda")
			if out, err := goCmd(root, "test", "-c", "-o", c.cudaTest, "./backends/cuda"); err != nil {
				return nil, fmt.Errorf("building the emulation test: %v\n%s", err, out)
			}
		}
	}
	c.timeout = 2 * time.Minute
	c.probe()
	c.timeout = 5 * time.Minute
	return c, nil
}

func goCmd(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

// moduleRoot finds the directory of kgen's go.mod above the working
// directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(data), "module kgen.dev/kgen") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("run difftest inside the kgen module")
		}
		dir = parent
	}
}

func commit(root string) string {
	cmd := exec.Command("git", "rev-parse", "--short", "HEAD")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
