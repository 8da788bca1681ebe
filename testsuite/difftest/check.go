package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	kgrt "kgen.dev/kgen/runtime"
)

// Failure classes, in the order a spec meets the checks.
const (
	classCheck   = "check"     // kgen check rejects a generated spec: a generator or checker bug
	classPanic   = "panic"     // kgen exits with an internal error (3)
	classTimeout = "timeout"   // a kgen command or the emulation hangs
	classEval    = "eval"      // the interpreter fails on a spec that checks
	classEmit    = "emit"      // lowering or emission fails for a target
	classNondet  = "nondet"    // two emissions of the same spec differ
	classCompile = "compile"   // the generated code does not compile
	classEmulate = "emulate"   // the emulated CUDA disagrees with the interpreter, crashes, or does not build on the host
	classInterp  = "interpret" // the Triton module, run in Triton's interpreter, disagrees with kgen's interpreter or fails
)

// Failure is one check that failed on a spec.
type Failure struct {
	Class  string `json:"class"`
	Target string `json:"target,omitempty"` // for emit, nondet and compile
	Stage  string `json:"stage"`            // the command, as kgen ARGS...
	Detail string `json:"detail"`           // the first lines of what it printed
}

// Signature is what must stay the same while a failing spec is
// minimized: the class, the target, and the kind of message.
func (f Failure) Signature() string {
	return f.Class + "|" + f.Target + "|" + messageKind(f.Detail)
}

var (
	numbers   = regexp.MustCompile(`0x[0-9a-fA-F]+|[0-9]+`)
	quoted    = regexp.MustCompile(`'[^']*'|"[^"]*"`)
	errorLine = regexp.MustCompile(`(?m)(error|panic): (.*)$`)
)

// messageKind reduces a failure's text to what identifies the bug: the
// first error message that says more than "does not compile" (the
// compiler's own, then), with quoted names and numbers (sizes, positions,
// line numbers) blanked.
func messageKind(detail string) string {
	switch {
	case strings.Contains(detail, "out of tolerance"):
		return "wrong result"
	case strings.Contains(detail, "emulator:"):
		return "emulator crash"
	case strings.Contains(detail, "g++:"):
		return "host build"
	}
	if _, exc, ok := strings.Cut(detail, "InterpreterError: "); ok {
		// Triton's interpreter raised: its exception, numbers blanked
		// (its quoted message is what tells one bug from another).
		msg := numbers.ReplaceAllString(firstLine(exc), "N")
		return msg[:min(len(msg), 100)]
	}
	msg := firstLine(detail)
	for _, m := range errorLine.FindAllStringSubmatch(detail, -1) {
		if !strings.Contains(m[2], "does not compile") {
			msg = m[2]
			break
		}
	}
	msg = numbers.ReplaceAllString(quoted.ReplaceAllString(msg, "Q"), "N")
	if len(msg) > 100 {
		msg = msg[:100]
	}
	return msg
}

// checker runs kgen on specs.
type checker struct {
	kgen     string // the kgen binary
	work     string // scratch directory
	cudaTest string // the backends/cuda test binary, "" to skip emulation
	cudaDir  string // backends/cuda, where its test binary runs
	// triPython is the python with torch and triton that runs the Triton
	// modules in Triton's interpreter (kgen test --triton-interpret), ""
	// to skip it.
	triPython string
	goTool    string // the go command, for test2json
	targets   []kgrt.Target
	// compilers are the targets whose toolchain builds a probe spec here;
	// skipped says why each other target is not compiled.
	compilers []kgrt.Target
	skipped   map[string]string
	timeout   time.Duration
	// dist is the distribution of the emulated and interpreted checks'
	// inputs ("": uniform in emulation, normal in Triton's interpreter).
	dist string

	checks map[string]int // checks run, by stage
}

// kgenRun runs kgen with args and returns its exit code and output.
func (c *checker) kgenRun(args ...string) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.kgen, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		return -1, fmt.Sprintf("timed out after %s", c.timeout)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String()
	}
	if err != nil {
		return -2, err.Error()
	}
	return 0, out.String()
}

// stage runs one kgen command for a check and turns a failure into a
// Failure of class (panic and timeout whatever the command).
func (c *checker) stage(class, target string, args ...string) *Failure {
	c.checks[args[0]]++
	code, out := c.kgenRun(args...)
	if code == 0 {
		return nil
	}
	if class == classInterp {
		out = interpretError(out) // kgen test's passing plans first
	}
	f := &Failure{Class: class, Target: target, Stage: "kgen " + strings.Join(args, " "), Detail: excerpt(out, 20)}
	switch code {
	case 3:
		f.Class = classPanic
	case -1:
		f.Class = classTimeout
	}
	return f
}

// excerpt returns the first n lines of s.
func excerpt(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("... (%d more lines)", len(lines)-n))
	}
	return strings.Join(lines, "\n")
}

var instanceDecl = regexp.MustCompile(`(?m)^instance (\w+)`)

// quick runs the checks that take no compiler: kgen check, kgen eval of
// every instance, and emission for every target, twice, comparing the
// outputs byte for byte. It stops at the first failing stage.
func (c *checker) quick(path string) []Failure {
	if f := c.stage(classCheck, "", "check", path); f != nil {
		return []Failure{*f}
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return []Failure{{Class: classCheck, Stage: "read", Detail: err.Error()}}
	}
	var fails []Failure
	for _, m := range instanceDecl.FindAllSubmatch(text, -1) {
		if f := c.stage(classEval, "", "eval", path, "--kernel", string(m[1]), "--show", "0"); f != nil {
			fails = append(fails, *f)
		}
	}
	for _, t := range c.targets {
		if f := c.emitTwice(path, t); f != nil {
			fails = append(fails, *f)
		}
	}
	return fails
}

// emitTwice emits path for t into two directories and compares them.
func (c *checker) emitTwice(path string, t kgrt.Target) *Failure {
	var dirs [2]string
	for i := range dirs {
		d, err := os.MkdirTemp(c.work, "emit")
		if err != nil {
			return &Failure{Class: classEmit, Target: t.String(), Stage: "mkdir", Detail: err.Error()}
		}
		defer os.RemoveAll(d)
		dirs[i] = d
		if f := c.stage(classEmit, t.String(), "build", "--emit-only", "--target", t.String(), "-o", d, path); f != nil {
			return f
		}
	}
	if diff := diffDirs(dirs[0], dirs[1]); diff != "" {
		return &Failure{Class: classNondet, Target: t.String(), Stage: "kgen build --emit-only --target " + t.String() + " (twice)", Detail: diff}
	}
	return nil
}

// diffDirs names the first file that differs between two directories.
func diffDirs(a, b string) string {
	ea, _ := os.ReadDir(a)
	eb, _ := os.ReadDir(b)
	if len(ea) != len(eb) {
		return fmt.Sprintf("%d files, then %d", len(ea), len(eb))
	}
	for _, e := range ea {
		x, _ := os.ReadFile(filepath.Join(a, e.Name()))
		y, err := os.ReadFile(filepath.Join(b, e.Name()))
		if err != nil || !bytes.Equal(x, y) {
			return fmt.Sprintf("%s differs between two emissions of the same spec", e.Name())
		}
	}
	return ""
}

// probe finds the targets whose toolchain compiles a known-good spec:
// the compile checks run for those only, so that a machine without a
// backend's toolchain skips that backend instead of reporting every spec.
func (c *checker) probe() {
	c.skipped = map[string]string{}
	dir, err := os.MkdirTemp(c.work, "probe")
	if err != nil {
		return
	}
	defer os.RemoveAll(dir)
	spec := filepath.Join(dir, "probe.kg")
	os.WriteFile(spec, []byte("kernel probe<N>(X: f32[N]) -> (Y: f32[N]) {\n  Y[i] = X[i] * 2\n}\n"), 0o644)
	for _, t := range c.targets {
		code, out := c.kgenRun(c.build(t, filepath.Join(dir, t.Backend+"_"+t.Arch), spec)...)
		if code == 0 {
			c.compilers = append(c.compilers, t)
		} else {
			c.skipped[t.String()] = firstLine(out)
		}
	}
}

// build is the kgen command line that compiles paths for t into dir,
// with the toolchains CI names in the environment: KGEN_PYTHON (the
// python with triton) and, for cuda:sm_90a, KGEN_NVCC_SM90A (an nvcc of
// CUDA 12 or later, where PATH's may be older).
func (c *checker) build(t kgrt.Target, dir string, paths ...string) []string {
	args := []string{"build", "--target", t.String(), "-j", "1", "-o", dir}
	if py := os.Getenv("KGEN_PYTHON"); py != "" && t.Backend == "triton" {
		args = append(args, "--python", py)
	}
	if nvcc := os.Getenv("KGEN_NVCC_SM90A"); nvcc != "" && t.String() == "cuda:sm_90a" {
		args = append(args, "--nvcc", nvcc)
	}
	return append(args, paths...)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// compile builds paths for every target with a toolchain, all at once, and
// one at a time when that fails, to find the specs at fault.
func (c *checker) compile(paths []string) map[string][]Failure {
	return c.compileFor(paths, c.compilers)
}

// compileFor is compile for some of the targets.
func (c *checker) compileFor(paths []string, targets []kgrt.Target) map[string][]Failure {
	fails := map[string][]Failure{}
	if len(paths) == 0 {
		return fails
	}
	for _, t := range targets {
		dir, err := os.MkdirTemp(c.work, "build")
		if err != nil {
			continue
		}
		code, _ := c.kgenRun(c.build(t, dir, paths...)...)
		if code == 0 {
			c.checks["build"] += len(paths)
			os.RemoveAll(dir)
			continue
		}
		os.RemoveAll(dir)
		for _, p := range paths {
			d, _ := os.MkdirTemp(c.work, "build")
			if f := c.stage(classCompile, t.String(), c.build(t, d, p)...); f != nil {
				fails[p] = append(fails[p], *f)
			}
			os.RemoveAll(d)
		}
	}
	return fails
}

// emulate runs the CUDA of paths on the CPU through backends/cuda's
// TestEmulatedCorpus (KGEN_EMULATE_DIR names a directory holding exactly
// paths), and reports the specs whose subtest failed or never finished.
func (c *checker) emulate(paths []string) map[string][]Failure {
	fails := map[string][]Failure{}
	if c.cudaTest == "" || len(paths) == 0 {
		return fails
	}
	dir, err := os.MkdirTemp(c.work, "emu")
	if err != nil {
		return fails
	}
	defer os.RemoveAll(dir)
	var names []string
	byName := map[string]string{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		base := filepath.Base(p)
		os.WriteFile(filepath.Join(dir, base), data, 0o644)
		names = append(names, regexp.QuoteMeta(base))
		byName[base] = p
	}
	c.checks["emulate"] += len(names)
	timeout := c.timeout * time.Duration(2+len(names))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	run := fmt.Sprintf("^TestEmulatedCorpus$/^(%s)$", strings.Join(names, "|"))
	cmd := exec.CommandContext(ctx, c.goTool, "tool", "test2json", "-t", c.cudaTest, "-test.v", "-test.run", run, "-test.parallel", "1", "-test.count", "1")
	cmd.Dir = c.cudaDir
	cmd.Env = append(os.Environ(), "KGEN_EMULATE_DIR="+dir, "KGEN_EMULATE_DIST="+c.dist)
	cmd.WaitDelay = 5 * time.Second
	out, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		for _, p := range paths {
			fails[p] = append(fails[p], Failure{Class: classEmulate, Stage: "emulate", Detail: err.Error()})
		}
		return fails
	}
	logs := map[string]*strings.Builder{}
	var parent strings.Builder // the log of the test itself, and of the binary
	done := map[string]bool{}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev struct{ Action, Test, Output string }
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		base, ok := strings.CutPrefix(ev.Test, "TestEmulatedCorpus/")
		if !ok || byName[base] == "" {
			if ev.Action == "output" {
				parent.WriteString(ev.Output)
			}
			continue
		}
		if logs[base] == nil {
			logs[base] = &strings.Builder{}
		}
		switch ev.Action {
		case "output":
			logs[base].WriteString(ev.Output)
		case "pass", "skip":
			done[base] = true
		case "fail":
			done[base] = true
			fails[byName[base]] = append(fails[byName[base]], Failure{Class: classEmulate, Target: "cuda (emulated)", Stage: "emulate", Detail: emulationError(logs[base].String())})
		}
	}
	cmd.Wait()
	for base, p := range byName {
		if !done[base] {
			detail := "did not finish"
			if ctx.Err() != nil {
				detail = fmt.Sprintf("the emulation of the batch timed out after %s", timeout)
			} else {
				var own string
				if l := logs[base]; l != nil {
					own = l.String()
				}
				detail += ":\n" + emulationError(own+parent.String()+stderr.String())
			}
			fails[p] = append(fails[p], Failure{Class: classEmulate, Target: "cuda (emulated)", Stage: "emulate", Detail: detail})
		}
	}
	return fails
}

// emulationError keeps the lines of a subtest's log that say what
// failed, without the RUN/PAUSE/CONT chatter or the job listings.
func emulationError(log string) string {
	var keep []string
	for _, l := range strings.Split(log, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		if strings.HasPrefix(t, "job:") {
			break
		}
		keep = append(keep, t)
	}
	return excerpt(strings.Join(keep, "\n"), 12)
}

// interpret runs the Triton modules of paths in Triton's interpreter on
// the CPU through kgen test --triton-interpret, which compares every
// output with kgen's interpreter at small shapes: all at once, and one at
// a time when that fails, to find the specs at fault.
func (c *checker) interpret(paths []string) map[string][]Failure {
	fails := map[string][]Failure{}
	if c.triPython == "" || len(paths) == 0 {
		return fails
	}
	args := func(paths ...string) []string {
		a := []string{"test", "--target", "triton:sm_90", "--triton-interpret", "--python", c.triPython, "--seeds", "1", "--max-work", "3e4"}
		if c.dist != "" {
			a = append(a, "--dists", c.dist)
		}
		return append(a, paths...)
	}
	if code, _ := c.kgenRun(args(paths...)...); code == 0 {
		c.checks["interpret"] += len(paths)
		return fails
	}
	for _, p := range paths {
		if f := c.stage(classInterp, "triton:sm_90", args(p)...); f != nil {
			fails[p] = append(fails[p], *f)
		}
	}
	return fails
}

// interpretError keeps the lines of kgen test's output that say what
// failed (a FAIL line, an error), or all of it.
func interpretError(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "FAIL") || strings.Contains(l, "out of tolerance") || strings.Contains(l, "rror") {
			keep = append(keep, l)
		}
	}
	if len(keep) == 0 {
		return out
	}
	return strings.Join(keep, "\n")
}

// quickAndCompile runs the quick checks on each of paths, then compiles
// the specs that passed them, batched: the failures of each spec, and the
// specs that passed the quick checks.
func (c *checker) quickAndCompile(paths []string) (fails map[string][]Failure, ok []string) {
	fails = map[string][]Failure{}
	for _, p := range paths {
		if f := c.quick(p); len(f) > 0 {
			fails[p] = f
		} else {
			ok = append(ok, p)
		}
	}
	for p, f := range c.compile(ok) {
		fails[p] = append(fails[p], f...)
	}
	return fails, ok
}

// checkAll runs every check on paths: quick ones per spec, then compile
// and emulation for the specs that passed them, batched.
func (c *checker) checkAll(paths []string) map[string][]Failure {
	fails, ok := c.quickAndCompile(paths)
	var emu []string
	for _, p := range ok {
		if !slices.ContainsFunc(fails[p], func(f Failure) bool { return f.Class == classPanic }) {
			emu = append(emu, p)
		}
	}
	for p, f := range c.emulate(emu) {
		fails[p] = append(fails[p], f...)
	}
	for p, f := range c.interpret(emu) {
		fails[p] = append(fails[p], f...)
	}
	return fails
}
