package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"kgen.dev/kgen/frontend"
	kgrt "kgen.dev/kgen/runtime"
)

// TestCorpus runs every spec of testsuite/corpus (the tester's
// reproducers and a seed spec per statement kind) through the tester's
// own checks: kgen check, kgen eval of every instance, emission for every
// target of runtime.Targets() twice (byte-identical), and, unless -short,
// kgen build for every target whose toolchain is here. So fixed bugs stay
// fixed. The numeric check of the same corpus is backends/cuda's
// TestEmulatedCorpus.
//
// A reproducer marked "// known-failure: CLASS [TARGET]" must still fail
// that way: it is reported as an expected failure, and this test fails
// once it passes, so that the mark is removed.
func TestCorpus(t *testing.T) {
	paths, _ := filepath.Glob("../corpus/*.kg")
	if len(paths) == 0 {
		t.Fatal("no specs in testsuite/corpus")
	}
	work := t.TempDir()
	kgen := filepath.Join(work, "kgen")
	if out, err := exec.Command("go", "build", "-o", kgen, "kgen.dev/kgen/cmd/kgen").CombinedOutput(); err != nil {
		t.Fatalf("building kgen: %v\n%s", err, out)
	}
	c := &checker{kgen: kgen, work: work, targets: kgrt.Targets(), timeout: 5 * time.Minute, checks: map[string]int{}}
	if !testing.Short() {
		c.probe()
		for _, tgt := range c.targets {
			if why, skipped := c.skipped[tgt.String()]; skipped {
				if os.Getenv("KGEN_REQUIRE_TOOLCHAINS") == "1" {
					t.Errorf("KGEN_REQUIRE_TOOLCHAINS=1 but %s cannot compile: %s", tgt, why)
				} else {
					t.Logf("not compiling for %s: %s", tgt, why)
				}
			}
		}
	}
	fails, _ := c.quickAndCompile(paths)
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			text, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			class, target, known := knownFailure(string(text))
			expected := func(f Failure) bool {
				return known && f.Class == class && (target == "" || f.Target == target)
			}
			for _, f := range fails[p] {
				if expected(f) {
					t.Logf("expected failure (known-failure: %s %s): %s", class, target, firstLine(f.Detail))
				} else {
					t.Errorf("%s%s: %s\n%s", f.Class, onTarget(f.Target), f.Stage, f.Detail)
				}
			}
			if known && class != classEmulate && !slices.ContainsFunc(fails[p], expected) {
				if class == classCompile && len(c.compilers) == 0 {
					t.Skipf("known-failure: %s, and no toolchain here to show it", class)
				}
				t.Errorf("marked known-failure: %s %s but now passes; remove the mark from its header", class, target)
			}
		})
	}
}

var knownMark = regexp.MustCompile(`(?m)^// known-failure: (\S+) ?(.*)$`)

// knownFailure reads a reproducer's mark of an unfixed failure.
func knownFailure(text string) (class, target string, ok bool) {
	m := knownMark.FindStringSubmatch(text)
	if m == nil {
		return "", "", false
	}
	return m[1], strings.TrimSpace(m[2]), true
}

// TestGeneratedSpecsCheck: every generated spec passes the checker,
// including the bounds check of its instances, without even a warning
// (a let never read would be dead code), and every statement kind
// appears; a spec that does not check is a generator bug (or a checker
// bug), which the tester would report as class "check".
func TestGeneratedSpecsCheck(t *testing.T) {
	seen := map[string]bool{}
	for seed := uint64(1); seed <= 300; seed++ {
		s := Generate(seed)
		prog, diags := frontend.CheckSource(fmt.Sprintf("g%d.kg", seed), s.Text())
		if len(diags.Diags) > 0 {
			var sb strings.Builder
			diags.Print(&sb)
			t.Errorf("seed %d does not check:\n%s\n%s", seed, sb.String(), s.Text())
			continue
		}
		if len(prog.Instances) == 0 {
			t.Errorf("seed %d has no instance", seed)
		}
		for _, k := range strings.Split(strings.TrimPrefix(s.Header[0], fmt.Sprintf("difftest seed %d: ", seed)), ", ") {
			seen[k] = true
		}
	}
	for _, k := range blockKinds {
		if !seen[k.name] {
			t.Errorf("no spec of 300 has a %s block", k.name)
		}
	}
}

// TestGeneratorDeterministic: a seed names one spec, whatever else ran
// before it in the process.
func TestGeneratorDeterministic(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		a, b := Generate(seed).Text(), Generate(seed).Text()
		if a != b {
			t.Fatalf("seed %d generated two different specs:\n%s\n---\n%s", seed, a, b)
		}
	}
}

// TestCleanupDropsUnused: the minimizer's cleanup removes what no
// statement uses: dropping Y0's statement of a two-output spec leaves no
// input, dim or binding that only Y0 needed.
func TestCleanupDropsUnused(t *testing.T) {
	s := &Spec{K: Kernel{Name: "k", Dims: []string{"N", "M"},
		Inputs:  []Decl{{Name: "X0", DType: "f32", Shape: []string{"N"}}, {Name: "X1", DType: "f32", Shape: []string{"M"}}},
		Outputs: []Decl{{Name: "Y0", DType: "f32", Shape: []string{"N"}}, {Name: "Y1", DType: "f32", Shape: []string{"M"}}},
		Stmts: []*Stmt{
			{Name: "Y0", LHS: []string{"i"}, Dims: []string{"N"}, RHS: read("X0", kFloat, name("i", kInt))},
			{Name: "Y1", LHS: []string{"i"}, Dims: []string{"M"}, RHS: read("X1", kFloat, name("i", kInt))},
		}},
		Instances: []Instance{{Name: "a", Bindings: []Binding{{Name: "N", Value: 3}, {Name: "M", Value: 5}}}},
	}
	c := candidates(s, classEmulate)[0] // drop the first statement
	c.cleanup()
	want := "kernel k<M>(X1: f32[M]) -> (Y1: f32[M]) {\n  Y1[i] = X1[i]\n}\n\ninstance a = k<M = 5>\n"
	if got := c.Text(); got != want {
		t.Errorf("after dropping Y0's statement:\n%s\nwant:\n%s", got, want)
	}
}

// TestMessageKind: failures of one bug share a signature whatever the
// sizes and names, and different compiler errors do not.
func TestMessageKind(t *testing.T) {
	smem := "kgen: error: internal error: the CUDA generated for g1.kg does not compile; please report it:\nptxas: error: Entry function 'k1_Y1' uses too much shared data (0x10800 bytes, 0xc000 max)"
	smem2 := "kgen: error: internal error: the CUDA generated for g9.kg does not compile; please report it:\nptxas: error: Entry function 'k9_a_2_Y0' uses too much shared data (0x10800 bytes, 0xc000 max)"
	zero := "kgen: error: internal error: the CUDA generated for g174.kg does not compile; please report it:\nOUT/g174.cu:1157: error: zero-sized variable \"kg_c_X2\" is not allowed in device code"
	if messageKind(smem) != messageKind(smem2) {
		t.Errorf("one bug, two kinds: %q and %q", messageKind(smem), messageKind(smem2))
	}
	if messageKind(smem) == messageKind(zero) {
		t.Errorf("two bugs, one kind: %q", messageKind(zero))
	}
	// Triton's interpreter: its exception, whatever the plan and sizes.
	intA := `  k170019__ref at nominal k170019_a (M=4, N=8, R=1, D=1), seed 1 normal: launch failure in launch: CUDA_ERROR_INVALID_VALUE: launch: triton.runtime.errors.InterpreterError: AttributeError("'int' object has no attribute 'to'")`
	intB := `  k5__ref at ones (M=1, N=1), seed 2 normal: launch failure in launch: CUDA_ERROR_INVALID_VALUE: launch: triton.runtime.errors.InterpreterError: AttributeError("'int' object has no attribute 'to'")`
	float := `  k170025__ref at primes (M=7, N=9, R=7, p0=1e-05), seed 1 normal: launch failure in launch: CUDA_ERROR_INVALID_VALUE: launch: triton.runtime.errors.InterpreterError: AttributeError("'float' object has no attribute 'to'")`
	if messageKind(intA) != messageKind(intB) {
		t.Errorf("one interpreter bug, two kinds: %q and %q", messageKind(intA), messageKind(intB))
	}
	if messageKind(intA) == messageKind(float) {
		t.Errorf("two interpreter bugs, one kind: %q", messageKind(float))
	}
}
