package cuda

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// TestEmulatedCorpus emulates every spec of testsuite/corpus, the
// differential tester's reproducers and seed specs (see
// testsuite/difftest), and of the directory KGEN_EMULATE_DIR names: the
// tester points it at each batch of generated specs, so that the batch is
// checked by exactly the code that checks the corpus (emulateFile).
//
// A reproducer whose header says "// inputs: DIST" failed on inputs from
// that distribution (the tester's -dist) and is emulated on them, in a
// child process (KGEN_EMULATE_DIST).
//
// A reproducer whose header says "// known-failure: emulate" records a
// wrong result that is not fixed yet: it runs in a child process, where it
// must still fail; once it passes, this test fails so that the mark is
// removed. Reproducers of failures that come before emulation (the
// checker, lowering) are skipped here; the difftest package's corpus test
// reports them.
func TestEmulatedCorpus(t *testing.T) {
	gxx := emulatorGxx(t)
	if child := os.Getenv("KGEN_EMULATE_CHILD"); child != "" {
		emulateFile(t, gxx, child)
		return
	}
	paths, _ := filepath.Glob("../../testsuite/corpus/*.kg")
	if dir := os.Getenv("KGEN_EMULATE_DIR"); dir != "" {
		batch, _ := filepath.Glob(filepath.Join(dir, "*.kg"))
		if len(batch) == 0 {
			t.Fatalf("KGEN_EMULATE_DIR=%s holds no .kg files", dir)
		}
		paths = append(paths, batch...)
	}
	if len(paths) == 0 {
		t.Fatal("no specs in testsuite/corpus")
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			text, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			m := knownFailure.FindSubmatch(text)
			dist := ""
			if d := inputsDist.FindSubmatch(text); d != nil {
				dist = string(d[1])
			}
			switch {
			case m != nil && string(m[1]) != "emulate":
				t.Skipf("known failure of class %s, before emulation (see its header)", m[1])
			case m != nil:
				expectEmulationFailure(t, path, dist)
			case dist != "":
				if out, err := emulateChild(path, dist); err != nil {
					t.Errorf("emulation on %s inputs failed:\n%s", dist, lastLines(out, 12))
				}
			default:
				emulateFile(t, gxx, path)
			}
		})
	}
}

// knownFailure finds the mark of an unfixed failure in a reproducer's
// header: "// known-failure: CLASS ...".
var knownFailure = regexp.MustCompile(`(?m)^// known-failure: (\S+)`)

// inputsDist finds the distribution a reproducer failed on in its header,
// "// inputs: DIST" (the differential tester's -dist).
var inputsDist = regexp.MustCompile(`(?m)^// inputs: (\S+)`)

// expectEmulationFailure emulates path in a child process on inputs from
// dist ("" for the default) and fails if it passes there.
func expectEmulationFailure(t *testing.T, path, dist string) {
	out, err := emulateChild(path, dist)
	if err == nil {
		t.Errorf("%s is marked known-failure: emulate but now passes; remove the mark from its header", path)
		return
	}
	t.Logf("expected failure (known-failure: emulate):\n%s", lastLines(out, 12))
}

// emulateChild emulates path in a child process (this test binary, with
// KGEN_EMULATE_CHILD) on inputs from dist (KGEN_EMULATE_DIST; "" for the
// default), and returns its output and whether it failed.
func emulateChild(path, dist string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestEmulatedCorpus$", "-test.count=1")
	cmd.Env = append(os.Environ(), "KGEN_EMULATE_CHILD="+abs, "KGEN_EMULATE_DIST="+dist)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// lastLines returns at most n trailing lines of s.
func lastLines(s string, n int) string {
	end := len(s)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' && i < end-1 {
			n--
			if n == 0 {
				return s[i+1:]
			}
		}
	}
	return s
}
