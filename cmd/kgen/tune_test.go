package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
	"kgen.dev/kgen/tune"
)

func TestTuneAttrUnknownParameter(t *testing.T) {
	dir := t.TempDir()
	f := writeFile(t, dir, "t.kg", `kernel k<N>(X: f32[N]) -> (Y: f32[N]) @tune(THREAD = [128], UNROLL = [2]) {
  Y[i] = X[i]
}
`)
	code, _, errText := kgen(t, "check", f)
	if code != exitUser || !strings.Contains(errText, "t.kg:1:45: error: @tune: no template has a parameter THREAD; did you mean THREADS?") {
		t.Errorf("exit %d, stderr:\n%s", code, errText)
	}
	if strings.Contains(errText, "UNROLL") && !strings.Contains(errText, "parameters: ") {
		t.Errorf("UNROLL is declared and must not be reported:\n%s", errText)
	}
}

func TestTuneDryRunSpace(t *testing.T) {
	dir := t.TempDir()
	// elementwise: THREADS narrowed to 2 values, UNROLL to 3 (one outside
	// the template's own values), VEC's 4, REUSE's 2, HOIST's 2,
	// BLOCKS_PER_SM's 5: 480 points, 162 valid: REUSE=0 (one index: none
	// to reuse inputs across), HOIST=1 only with UNROLL and VEC above 1
	// (12 + 6 of each THREADS and BLOCKS_PER_SM), and BLOCKS_PER_SM blocks
	// within 2048 threads (5 with 128 threads, 4 with 256): 9 x 18.
	f := writeFile(t, dir, "t.kg", `kernel k<N>(X: f32[N]) -> (Y: f32[N]) @tune(THREADS = [128, 256], UNROLL = [1, 2, 16]) {
  Y[i] = X[i] + 1.0
}
instance k_1m = k<N = 1048576>
`)
	code, out, errText := kgen(t, "tune", "--dry-run", "--target", "cuda:sm_90", f)
	if code != exitOK || !strings.Contains(out, "k_1m launch 0: elementwise: 480 configurations, 162 valid") {
		t.Errorf("exit %d\n%s%s", code, out, errText)
	}
	// A directory stands for its .kg files, as for bench.
	code, out, errText = kgen(t, "tune", "--dry-run", "--target", "cuda:sm_90", dir)
	if code != exitOK || !strings.Contains(out, "k_1m launch 0: elementwise: 480 configurations, 162 valid") {
		t.Errorf("directory: exit %d\n%s%s", code, out, errText)
	}
	code, _, errText = kgen(t, "tune", "--target", "cuda:sm_90", "--strategy", "grid", f)
	if code != exitUsage || !strings.Contains(errText, `unknown strategy "grid"`) {
		t.Errorf("bad strategy: exit %d\n%s", code, errText)
	}
	code, _, errText = kgen(t, "tune", "--dry-run", "--target", "cuda:sm_90", "--kernel", "k_2m", f)
	if code != exitUser || !strings.Contains(errText, `did you mean "k_1m"?`) {
		t.Errorf("unknown instance: exit %d\n%s", code, errText)
	}
}

const tunedSpec = `kernel mm<M, N, K>(A: bf16[M, K], B: bf16[K, N]) -> (C: bf16[M, N]) @acc(f32) {
  C[m, n] = sum[k](A[m, k] * B[k, n])
}
kernel scale<N>(X: f32[N]) -> (Y: f32[N]) {
  Y[i] = X[i] * 2.0
}
instance mm_4k = mm<M = 4096, N = 4096, K = 4096>
instance mm_2k = mm<M = 2048, N = 2048, K = 1024>
instance mm_4k2 = mm<M = 4096, N = 4096, K = 2048>
instance scale_1m = scale<N = 1048576>
`

// TestBuildUsesTuningDB: build takes the database's configuration at the
// exact shape, the nearest shape's for another instance whose default is
// the one tuned there, its own default for an instance whose default
// differs from the nearest shape's, and the default where nothing is
// recorded, and says so in the manifest.
func TestBuildUsesTuningDB(t *testing.T) {
	dir := t.TempDir()
	f := writeFile(t, dir, "mm.kg", tunedSpec)
	prog, diags := frontend.CheckSource(f, tunedSpec)
	if diags.HasErrors() {
		t.Fatal(diags.Diags)
	}
	mm := prog.Instance("mm_4k")
	db := &tune.DB{Path: filepath.Join(dir, "tune.jsonl")}
	rec := func(device, config string, us float64, kind string) tune.Record {
		return tune.Record{Kind: kind, Kernel: "mm_4k", Hash: ir.Hash(mm.Kernel), Shape: mm.Env.String(), Dims: envDims(mm.Env),
			Device: tune.Device{Name: device, CC: "9.0"}, Target: "cuda:sm_90a", Templates: []string{"matmul-wgmma@2"},
			Configs: []string{config}, Time: &kgrt.Timing{MedianUS: us}}
	}
	// The heuristic's default at 4096^3, measured as tuning does first:
	// 128 x 256 tiles, as for mm_4k2 (K = 2048), not for mm_2k (128 x
	// 128).
	def := rec("NVIDIA H100 80GB HBM3", "BM=128, BN=256, STAGES=4, TMA=1, WGS=2", 360, tune.KindEval)
	def.Default = true
	if err := db.Append(
		rec("NVIDIA H100 80GB HBM3", "BM=64, BN=128, STAGES=3, WGS=1", 400, tune.KindEval),
		rec("NVIDIA H100 80GB HBM3", "BM=128, BN=128, STAGES=5, WGS=2", 350, tune.KindEval),
		def,
		rec("NVIDIA H200", "BM=256, BN=128, STAGES=3, WGS=2", 300, tune.KindEval),
	); err != nil {
		t.Fatal(err)
	}
	manifest := func(extra ...string) map[string]lower.ManifestKernel {
		t.Helper()
		out := filepath.Join(dir, "out")
		args := append([]string{"build", "--emit-only", "--target", "cuda:sm_90a", "-o", out, "--db", db.Path}, extra...)
		code, _, errText := kgen(t, append(args, f)...)
		if code != exitOK {
			t.Fatalf("build: exit %d\n%s", code, errText)
		}
		data, err := os.ReadFile(filepath.Join(out, "mm.manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m lower.Manifest
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		ks := map[string]lower.ManifestKernel{}
		for _, k := range m.Kernels {
			ks[k.Name] = k
		}
		return ks
	}
	check := func(ks map[string]lower.ManifestKernel, name, config, tuning string) {
		t.Helper()
		k := ks[name]
		if got := k.Launches[0].Config.String(); got != config {
			t.Errorf("%s: config %s, want %s", name, got, config)
		}
		if !strings.HasPrefix(k.Tuning, tuning) {
			t.Errorf("%s: tuning %q, want it to start %q", name, k.Tuning, tuning)
		}
	}
	// On the H100: its fastest record at 4096^3; the same for mm_4k2,
	// whose nearest shape recorded that is, with the same default; but
	// mm_2k keeps its own default, 4096^3 too far from it to advise it.
	ks := manifest("--device", "NVIDIA H100 80GB HBM3")
	check(ks, "mm_4k", "BM=128, BN=128, STAGES=5, WGS=2", "tuned at this shape on NVIDIA H100 80GB HBM3 (350.00 us there)")
	check(ks, "mm_4k2", "BM=128, BN=128, STAGES=5, WGS=2", "nearest: tuned at M=4096, N=4096, K=4096")
	check(ks, "mm_2k", "BM=128, BN=128, STAGES=4, TMA=1, WGS=2", "default: the heuristic configuration (the nearest shape tuned, M=4096, N=4096, K=4096, is too far")
	check(ks, "scale_1m", "BLOCKS_PER_SM=1, HOIST=0, REUSE=0, THREADS=256, UNROLL=2, VEC=4", "default: the heuristic configuration (no tuning record")
	// The kernel with symbolic sizes has no shape: its default, no note.
	if ks["mm"].Tuning != "" {
		t.Errorf("mm (symbolic sizes): tuning %q", ks["mm"].Tuning)
	}
	// On the H200 its own record.
	check(manifest("--device", "NVIDIA H200"), "mm_4k", "BM=256, BN=128, STAGES=3, WGS=2", "tuned at this shape on NVIDIA H200")
	// Another GPU: nothing recorded, the default (128 x 256 for 4096^3,
	// TMA). The records, made before TMA was a parameter, keep TMA = 0.
	check(manifest("--device", "NVIDIA A100"), "mm_4k", "BM=128, BN=256, STAGES=4, TMA=1, WGS=2", "default")
	// --config overrides the database.
	check(manifest("--device", "NVIDIA H200", "--config", "STAGES=4"), "mm_4k", "BM=256, BN=128, STAGES=4, WGS=2", "tuned")
	// --db off: the defaults.
	out := filepath.Join(dir, "off")
	if code, _, errText := kgen(t, "build", "--emit-only", "--target", "cuda:sm_90a", "-o", out, "--db", "off", f); code != exitOK {
		t.Fatalf("--db off: %s", errText)
	}
}

// TestTuneSimulateExportImport: a measured space of one parameter X in
// 1..8 with cost 10 + |X - 5| and the default at X = 1: exhaustive
// measures X = 1, 2, 3, 4, 5, reaching the best (10; within 5% means at
// most 10.5, so X = 5 alone) at its fifth evaluation with every seed.
func TestTuneSimulateExportImport(t *testing.T) {
	dir := t.TempDir()
	db := &tune.DB{Path: filepath.Join(dir, "tune.jsonl")}
	var recs []tune.Record
	for x := 1; x <= 8; x++ {
		cost := 10 + float64(max(x-5, 5-x))
		recs = append(recs, tune.Record{Kind: tune.KindEval, Kernel: "k_1m", Hash: "h", Shape: "N=1048576", Device: tune.Device{Name: "gpu"},
			Target: "cuda:sm_90", Templates: []string{"t@1"}, Configs: []string{fmt.Sprintf("X=%d", x)}, Default: x == 1,
			Time: &kgrt.Timing{MedianUS: cost}})
	}
	other := recs[0]
	other.Kernel, other.Hash = "other", "h2"
	if err := db.Append(append(recs, other)...); err != nil {
		t.Fatal(err)
	}
	code, out, errText := kgen(t, "tune", "--simulate", "--db", db.Path, "--kernel", "k_1m", "--seeds", "10")
	if code != exitOK {
		t.Fatalf("simulate: exit %d\n%s", code, errText)
	}
	var row string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "k_1m") {
			row = l
		}
	}
	// Columns: space (several words), configs, best, then the strategies
	// in tune.Strategies order; exhaustive first.
	if !regexp.MustCompile(`\)\s+8\s+10\.00\s+5\.0 \(10\)`).MatchString(row) {
		t.Errorf("simulate row %q, want 8 configs, best 10.00, exhaustive 5.0 (10)\n%s", row, out)
	}
	exported := filepath.Join(dir, "k.jsonl")
	if code, out, errText := kgen(t, "tune", "--db", db.Path, "--export", exported, "--kernel", "k_1m"); code != exitOK || !strings.Contains(out, "exported 8 records") {
		t.Fatalf("export: exit %d\n%s%s", code, out, errText)
	}
	fresh := filepath.Join(dir, "fresh.jsonl")
	if code, out, _ := kgen(t, "tune", "--db", fresh, "--import", exported); code != exitOK || !strings.Contains(out, "imported 8 records") {
		t.Fatalf("import: %s", out)
	}
	if code, out, _ := kgen(t, "tune", "--db", fresh, "--import", exported); code != exitOK || !strings.Contains(out, "imported 0 records") {
		t.Errorf("importing twice: %s", out)
	}
	if code, _, errText := kgen(t, "tune", "--simulate", "--db", filepath.Join(dir, "none.jsonl")); code != exitUser || !strings.Contains(errText, "holds no measured spaces") {
		t.Errorf("empty db: exit %d %s", code, errText)
	}
}

func TestProgressLine(t *testing.T) {
	best := tune.Result{Config: lower.Config{"BM": 128, "BN": 64}, Time: kgrt.Timing{MedianUS: 80}}
	p := tune.Progress{Done: 30, Failed: 2, Total: 120, Best: &best, DefaultUS: 100, ETA: 90 * time.Second, Last: &best}
	want := "30/120 evaluated, 2 failed; best 80.00 us (1.25x the default) BM=128, BN=64; 1m30s left"
	if got := progressLine(p); got != want {
		t.Errorf("progress line\n got %q\nwant %q", got, want)
	}
	// Not a terminal: a plain line per evaluation, no carriage returns.
	var buf strings.Builder
	pp := newProgressPrinter(&buf, false)
	pp.begin("k launch 0")
	pp.update(p)
	pp.end()
	if out := buf.String(); strings.Contains(out, "\r") || !strings.Contains(out, "tune: k launch 0: "+want+" [BM=128, BN=64: 80.00 us]\n") {
		t.Errorf("log lines %q", out)
	}
}

// TestEachOnWorkers: every index is done once, each worker does one at a
// time, the indices are taken in order, every worker takes some when they
// take long enough, and none is taken once the context ends.
func TestEachOnWorkers(t *testing.T) {
	const n, workers = 40, 4
	var mu sync.Mutex
	count := make([]int, n)
	busy := make([]bool, workers)
	var taken []int
	byWorker := map[int]int{}
	eachOnWorkers(context.Background(), workers, n, func(w, i int) {
		mu.Lock()
		if busy[w] {
			t.Errorf("worker %d took %d while busy", w, i)
		}
		busy[w] = true
		count[i]++
		taken = append(taken, i)
		byWorker[w]++
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		mu.Lock()
		busy[w] = false
		mu.Unlock()
	})
	for i, c := range count {
		if c != 1 {
			t.Errorf("index %d done %d times", i, c)
		}
	}
	// Taken in order up to the workers' races for the next one: no index
	// starts before one more than workers places earlier in the list.
	for k, i := range taken {
		if i > k+workers {
			t.Errorf("index %d taken %dth", i, k)
		}
	}
	if len(byWorker) != workers {
		t.Errorf("%d of %d workers took work: %v", len(byWorker), workers, byWorker)
	}

	// Once the context ends, a worker takes no more indices: each other
	// worker at most starts the one it had taken when the cancel came.
	// (Counting all calls raced: between the third call's count and its
	// cancel, the other worker could do every other index.)
	ctx, cancel := context.WithCancel(context.Background())
	var done, late atomic.Int32
	eachOnWorkers(ctx, 2, n, func(w, i int) {
		if ctx.Err() != nil {
			late.Add(1)
		}
		if done.Add(1) == 3 {
			cancel()
		}
	})
	if got := done.Load(); got < 3 {
		t.Errorf("with a cancel at the third call: %d calls, want at least 3", got)
	}
	if got := late.Load(); got > 1 {
		t.Errorf("%d calls started after the cancel, want at most 1 (the other worker's in flight)", got)
	}
}

// TestParseGPUs: --gpus all counts the visible GPUs (at least one); a list
// names CUDA device indices, each once.
func TestParseGPUs(t *testing.T) {
	count := func(n int, err error) func() (int, error) { return func() (int, error) { return n, err } }
	for _, c := range []struct {
		spec  string
		count func() (int, error)
		want  string
	}{
		{"all", count(4, nil), "[0 1 2 3]"},
		{"all", count(0, fmt.Errorf("no NVIDIA driver found")), "[0]"},
		{"0", count(4, nil), "[0]"},
		{"2, 0", count(4, nil), "[2 0]"},
		{"1,1", count(4, nil), `error: GPU 1 named twice`},
		{"x", count(4, nil), `error: "x" is not a GPU index (want all, or indices such as 0,1)`},
		{"-1", count(4, nil), `error: "-1" is not a GPU index (want all, or indices such as 0,1)`},
	} {
		got, err := parseGPUs(c.spec, c.count)
		s := fmt.Sprint(got)
		if err != nil {
			s = "error: " + err.Error()
		}
		if s != c.want {
			t.Errorf("--gpus %q: %s, want %s", c.spec, s, c.want)
		}
	}
}

// TestShareJobs: the compile jobs are shared out whole, at least one a
// worker.
func TestShareJobs(t *testing.T) {
	for _, c := range []struct {
		jobs, n int
		want    string
	}{
		{16, 1, "[16]"}, {16, 4, "[4 4 4 4]"}, {10, 4, "[3 3 2 2]"}, {2, 4, "[1 1 1 1]"},
	} {
		var got []int
		for i := range c.n {
			got = append(got, shareJobs(c.jobs, c.n, i))
		}
		if fmt.Sprint(got) != c.want {
			t.Errorf("%d jobs over %d workers: %v, want %s", c.jobs, c.n, got, c.want)
		}
	}
}

// TestSummariesByGPU: with several GPUs the report names each instance's
// GPU, in its last column or its error.
func TestSummariesByGPU(t *testing.T) {
	sums := []tuneSummary{{Instance: "a", DefaultUS: 2, TunedUS: 1, Speedup: 2, GPU: 1}, {Instance: "b", Error: "boom", GPU: 0}}
	var one, many strings.Builder
	dev := tune.Device{Name: "GPU", CC: "9.0", Driver: 13000}
	printSummaries(&one, dev, "nvcc 13.0", sums, false)
	printSummaries(&many, dev, "nvcc 13.0", sums, true)
	if strings.Contains(one.String(), "gpu") {
		t.Errorf("one GPU's report has a gpu column:\n%s", one.String())
	}
	lines := strings.Split(strings.TrimSpace(many.String()), "\n")
	if len(lines) != 4 || !strings.HasSuffix(lines[1], "gpu") || !strings.HasSuffix(lines[2], " 1") || !strings.HasSuffix(lines[3], "error on GPU 0: boom") {
		t.Errorf("several GPUs' report:\n%s", many.String())
	}
}

// TestConfirmError: a tuning run interrupted while it re-times the
// finalists says so, rather than that every finalist failed (the runner
// it stopped fails them all); otherwise the first finalist's failure.
func TestConfirmError(t *testing.T) {
	conf := []tune.Confirmed{{Err: errors.New("runner is not running")}}
	if got := confirmError(conf, context.Canceled).Error(); !strings.HasPrefix(got, "interrupted while its finalists were re-timed") {
		t.Errorf("interrupted: %q", got)
	}
	if got := confirmError(conf, nil).Error(); got != "every finalist failed when re-timed: runner is not running" {
		t.Errorf("not interrupted: %q", got)
	}
}

// TestPriorWinner: a search whose finalists are those an earlier run
// re-timed keeps that run's winner (the latest such), with the default's
// time from it; finalists that differ (a new configuration among the
// best), a winner recorded without its finalists (before they were), or
// without the default's time where the default is a finalist, are
// re-timed. The finalists are the best three by time, failures left out,
// and the default when it ran.
func TestPriorWinner(t *testing.T) {
	cfg := func(bm int64) lower.Config { return lower.Config{"BM": bm, "BN": 64} }
	def := cfg(64)
	res := func(bm int64, us float64) tune.Result {
		return tune.Result{Config: cfg(bm), Time: kgrt.Timing{MedianUS: us}}
	}
	results := []tune.Result{res(64, 10), res(128, 8), {Config: cfg(512), Failure: &kgrt.Failure{Kind: kgrt.CompileError}}, res(256, 9), res(32, 9.5), res(16, 12)}
	fin, err := finalists(results, def, 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range fin {
		got = append(got, tune.Key(c))
	}
	if want := []string{"BM=128, BN=64", "BM=256, BN=64", "BM=32, BN=64", "BM=64, BN=64"}; strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Fatalf("finalists %q, want %q", got, want)
	}
	rec := func(c lower.Config) tune.Record {
		return tune.Record{Kind: tune.KindEval, Hash: "h", Shape: "M=1", Target: "cuda:sm_90", Toolchain: "nvcc", Templates: []string{"matmul@1"}, Configs: []string{tune.Key(c)}}
	}
	winner := func(c lower.Config, at string, us, defUS float64, fin ...lower.Config) tune.Record {
		w := rec(c)
		w.Kind, w.At, w.Time, w.DefaultUS = tune.KindWinner, at, &kgrt.Timing{MedianUS: us}, defUS
		for _, f := range fin {
			w.Finalists = append(w.Finalists, tune.Key(f))
		}
		return w
	}
	known := func(ws ...tune.Record) map[string]tune.Record {
		m := map[string]tune.Record{}
		for _, w := range ws {
			m[w.Key()] = w
		}
		return m
	}
	same := []lower.Config{cfg(64), cfg(32), cfg(128), cfg(256)} // in another order
	for _, c := range []struct {
		name  string
		known map[string]tune.Record
		want  string // the kept winner's config, "" for none
	}{
		{"same finalists", known(winner(cfg(128), "2026-11-27T10:00:00Z", 7.9, 10.1, same...)), "BM=128, BN=64"},
		{"the latest of two", known(winner(cfg(128), "2026-11-27T10:00:00Z", 7.9, 10.1, same...), winner(cfg(256), "2026-11-28T10:00:00Z", 7.8, 10.2, same...)), "BM=256, BN=64"},
		{"other finalists", known(winner(cfg(128), "2026-11-27T10:00:00Z", 7.9, 10.1, cfg(64), cfg(128), cfg(256), cfg(16))), ""},
		{"no finalists recorded", known(winner(cfg(128), "2026-11-27T10:00:00Z", 7.9, 10.1)), ""},
		{"no default time", known(winner(cfg(128), "2026-11-27T10:00:00Z", 7.9, 0, same...)), ""},
		{"another kernel", known(func() tune.Record {
			w := winner(cfg(128), "2026-11-27T10:00:00Z", 7.9, 10.1, same...)
			w.Hash = "g"
			return w
		}()), ""},
	} {
		w, ok := priorWinner(c.known, rec, fin, def)
		switch {
		case c.want == "" && ok:
			t.Errorf("%s: kept %s, want a re-timing", c.name, w.Configs[0])
		case c.want != "" && (!ok || w.Configs[0] != c.want):
			t.Errorf("%s: kept %v (%v), want %s", c.name, w.Configs, ok, c.want)
		case ok && (w.Time.MedianUS <= 0 || w.DefaultUS <= 0):
			t.Errorf("%s: kept a winner without its times", c.name)
		}
	}
}
