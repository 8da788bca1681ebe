package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
)

// fakeBackend "compiles" a source by copying it, after a pause, failing
// sources whose plan holds UNROLL=8; it counts how many compiles run at
// once.
type fakeBackend struct {
	running, peak atomic.Int32
	// hang: sources with UNROLL=4 compile until the context ends.
	hang bool
}

func (b *fakeBackend) ext() string { return ".fake" }
func (b *fakeBackend) emit(plans []*lower.Plan) []byte {
	var sb strings.Builder
	for _, p := range plans {
		sb.WriteString(lower.Print(p))
	}
	return []byte(sb.String())
}
func (b *fakeBackend) toolchain() string { return "fake 1.0" }
func (b *fakeBackend) startRunner(context.Context, int) (*kgrt.Runner, error) {
	return nil, fmt.Errorf("no GPU")
}
func (b *fakeBackend) compile(ctx context.Context, units []*unit, jobs int, verbose bool, diags *diag.List) {
	n := b.running.Add(1)
	defer b.running.Add(-1)
	for {
		p := b.peak.Load()
		if n <= p || b.peak.CompareAndSwap(p, n) {
			break
		}
	}
	time.Sleep(30 * time.Millisecond)
	for _, u := range units {
		src, _ := os.ReadFile(u.source)
		if b.hang && strings.Contains(string(src), "UNROLL=4") {
			<-ctx.Done()
			diags.Errorf(diag.Span{}, "nvcc: %v", ctx.Err())
			continue
		}
		if strings.Contains(string(src), "UNROLL=8") {
			diags.Errorf(diag.Span{}, "internal error: %s does not compile: UNROLL=8", u.stem)
			continue
		}
		u.binary = strings.TrimSuffix(u.source, ".fake") + ".bin"
		os.WriteFile(u.binary, src, 0o644)
	}
}

// scaleFile writes and loads a spec of one elementwise kernel with an
// instance of a million points, whose candidates the tests compile.
func scaleFile(t *testing.T, dir string) (*loaded, *ir.Instance) {
	t.Helper()
	f := writeFile(t, dir, "s.kg", `kernel scale<N>(X: f32[N]) -> (Y: f32[N]) {
  Y[i] = X[i] * 2.0
}
instance scale_1m = scale<N = 1048576>
`)
	var diags diag.List
	files := loadFiles([]string{f}, &diags)
	if diags.HasErrors() {
		t.Fatal(diags.Diags)
	}
	return files[0], files[0].prog.Instance("scale_1m")
}

// TestCandidateCompile: candidates compile in parallel, at most -j at a
// time, each its own source and binary, and a failure is its own.
func TestCandidateCompile(t *testing.T) {
	dir := t.TempDir()
	file, in := scaleFile(t, dir)
	tgt := kgrt.Target{Backend: "cuda", Arch: "sm_90"}
	be := &fakeBackend{}
	e := &candidateEval{be: be, file: file, inst: in, lim: tgt.Limits(), dir: dir, jobs: 3,
		configs: []lower.Config{{"THREADS": 256, "UNROLL": 2, "VEC": 4}}, compiled: map[string]*candidate{}}
	var cands []lower.Config
	for _, u := range []int64{1, 2, 4, 8} {
		for _, th := range []int64{128, 256} {
			cands = append(cands, lower.Config{"THREADS": th, "UNROLL": u, "VEC": 4})
		}
	}
	errs := e.Compile(context.Background(), cands)
	binaries := map[string]bool{}
	var mu sync.Mutex
	for i, c := range cands {
		fails := c["UNROLL"] == 8
		if (errs[i] != nil) != fails {
			t.Errorf("%s: error %v", c, errs[i])
		}
		if fails {
			if !strings.Contains(fmt.Sprint(errs[i]), "UNROLL=8") {
				t.Errorf("%s: error %q does not say why", c, errs[i])
			}
			continue
		}
		cand := e.compiled[c.String()]
		if cand == nil {
			t.Fatalf("%s not compiled", c)
		}
		if got := cand.plan.Launches[0].Config.String(); got != c.String() {
			t.Errorf("candidate %s planned with %s", c, got)
		}
		mu.Lock()
		binaries[cand.x.Binary] = true
		mu.Unlock()
		src, _ := os.ReadFile(cand.x.Binary)
		if !strings.Contains(string(src), fmt.Sprintf("THREADS=%d, UNROLL=%d", c["THREADS"], c["UNROLL"])) {
			t.Errorf("%s: binary holds another plan:\n%s", c, src)
		}
	}
	if len(binaries) != 6 {
		t.Errorf("%d distinct binaries, want 6", len(binaries))
	}
	if p := be.peak.Load(); p < 2 || p > 3 {
		t.Errorf("%d compiles at once, want 2 or 3 (-j 3)", p)
	}
	e.removeSources()
	if left, _ := filepath.Glob(filepath.Join(dir, "scale_1m_l0_c*")); len(left) != 0 {
		t.Errorf("sources left: %v", left)
	}
}

// TestCandidateCompileLimit: a candidate whose compile outlasts
// --compile-time fails with that said, and the others compile.
func TestCandidateCompileLimit(t *testing.T) {
	dir := t.TempDir()
	file, in := scaleFile(t, dir)
	tgt := kgrt.Target{Backend: "cuda", Arch: "sm_90"}
	e := &candidateEval{be: &fakeBackend{hang: true}, file: file, inst: in, lim: tgt.Limits(), dir: dir, jobs: 2,
		compileLimit: 200 * time.Millisecond, configs: []lower.Config{{"THREADS": 256, "UNROLL": 2, "VEC": 4}}, compiled: map[string]*candidate{}}
	cands := []lower.Config{{"THREADS": 256, "UNROLL": 2, "VEC": 4}, {"THREADS": 256, "UNROLL": 4, "VEC": 4}}
	start := time.Now()
	errs := e.Compile(context.Background(), cands)
	if errs[0] != nil || e.lookup(cands[0]) == nil {
		t.Errorf("UNROLL=2: %v, want compiled", errs[0])
	}
	if errs[1] == nil || !strings.Contains(errs[1].Error(), "longer than 200ms") || e.lookup(cands[1]) != nil {
		t.Errorf("UNROLL=4: %v, want a compile that took too long", errs[1])
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Compile took %s with a 200 ms limit", d)
	}
}
