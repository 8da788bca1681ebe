package tune

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	kgrt "kgen.dev/kgen/runtime"
)

func evalRecord(hash, shape string, dims map[string]int64, device, config string, us float64) Record {
	r := Record{Kind: KindEval, Kernel: "k", Hash: hash, Shape: shape, Dims: dims, Device: Device{Name: device, CC: "9.0", Driver: 12040},
		Target: "cuda:sm_90a", Toolchain: "nvcc 12.4", Templates: []string{"matmul-wgmma@1"}, Configs: []string{config}, At: "2026-11-23T00:00:00Z"}
	if us > 0 {
		r.Time = &kgrt.Timing{MedianUS: us}
	} else {
		r.Failure = "crash"
	}
	return r
}

func TestDBTornLines(t *testing.T) {
	db := &DB{Path: filepath.Join(t.TempDir(), "tune.jsonl")}
	if err := db.Append(evalRecord("h", "N=1", nil, "gpu", "BM=64", 5)); err != nil {
		t.Fatal(err)
	}
	// A writer killed mid-line...
	f, _ := os.OpenFile(db.Path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"kind":"eval","ir_hash":"h","shape":"N=1","configs":["BM=1`)
	f.Close()
	recs, bad, err := db.Load()
	if err != nil || len(recs) != 1 || bad != 1 {
		t.Fatalf("after a torn line: %d records, %d bad, %v; want 1, 1", len(recs), bad, err)
	}
	// ...and the next append starts a line of its own.
	if err := db.Append(evalRecord("h", "N=1", nil, "gpu", "BM=128", 4)); err != nil {
		t.Fatal(err)
	}
	recs, bad, _ = db.Load()
	if len(recs) != 2 || bad != 1 || recs[1].Configs[0] != "BM=128" {
		t.Fatalf("after appending: %d records, %d bad; want 2 and 1", len(recs), bad)
	}
	// A missing file is an empty database.
	if recs, _, err := (&DB{Path: filepath.Join(t.TempDir(), "none")}).Load(); err != nil || len(recs) != 0 {
		t.Errorf("missing file: %v, %v", recs, err)
	}
}

func TestDBConcurrentGoroutines(t *testing.T) {
	db := &DB{Path: filepath.Join(t.TempDir(), "tune.jsonl")}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				// Long configs make a line larger than a pipe buffer's
				// atomic write, so that interleaving would show.
				cfg := fmt.Sprintf("G=%d, I=%d, PAD=%s", g, i, strings.Repeat("9", 5000))
				if err := db.Append(evalRecord("h", "N=1", nil, "gpu", cfg, 1)); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	checkAll(t, db, 16*25)
}

// checkAll checks that db holds n whole, distinct records.
func checkAll(t *testing.T, db *DB, n int) {
	t.Helper()
	recs, bad, err := db.Load()
	if err != nil || bad != 0 || len(recs) != n {
		t.Fatalf("%d records, %d bad, %v; want %d whole ones", len(recs), bad, err, n)
	}
	seen := map[string]bool{}
	for _, r := range recs {
		seen[r.Configs[0]] = true
	}
	if len(seen) != n {
		t.Errorf("%d distinct records, want %d", len(seen), n)
	}
}

// TestDBConcurrentProcesses appends from four processes at once (this
// test binary, re-run as TestDBHelperProcess).
func TestDBConcurrentProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tune.jsonl")
	var cmds []*exec.Cmd
	for p := range 4 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDBHelperProcess$")
		cmd.Env = append(os.Environ(), "KGEN_TUNE_HELPER="+path, "KGEN_TUNE_HELPER_ID="+strconv.Itoa(p))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	checkAll(t, &DB{Path: path}, 4*50)
}

func TestDBHelperProcess(t *testing.T) {
	path := os.Getenv("KGEN_TUNE_HELPER")
	if path == "" {
		t.Skip("run by TestDBConcurrentProcesses")
	}
	db := &DB{Path: path}
	for i := range 50 {
		cfg := fmt.Sprintf("P=%s, I=%d, PAD=%s", os.Getenv("KGEN_TUNE_HELPER_ID"), i, strings.Repeat("7", 9000))
		if err := db.Append(evalRecord("h", "N=1", nil, "gpu", cfg, 1)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDBImport(t *testing.T) {
	dir := t.TempDir()
	a, b := &DB{Path: filepath.Join(dir, "a.jsonl")}, &DB{Path: filepath.Join(dir, "b.jsonl")}
	a.Append(evalRecord("h", "N=1", nil, "gpu", "X=1", 1), evalRecord("h", "N=1", nil, "gpu", "X=2", 2))
	b.Append(evalRecord("h", "N=1", nil, "gpu", "X=2", 2), evalRecord("h", "N=1", nil, "gpu", "X=3", 3))
	n, err := a.Import(b.Path)
	if err != nil || n != 1 {
		t.Fatalf("imported %d, %v; want 1 (X=2 is there already)", n, err)
	}
	checkAll(t, a, 3)
	if n, _ := a.Import(b.Path); n != 0 {
		t.Errorf("importing again added %d", n)
	}
}

func TestLookup(t *testing.T) {
	d := func(m, n, k int64) map[string]int64 { return map[string]int64{"M": m, "N": n, "K": k} }
	recs := []Record{
		evalRecord("h", "M=4096, N=4096, K=4096", d(4096, 4096, 4096), "H100", "BM=128", 500),
		evalRecord("h", "M=4096, N=4096, K=4096", d(4096, 4096, 4096), "H100", "BM=256", 450),
		evalRecord("h", "M=4096, N=4096, K=4096", d(4096, 4096, 4096), "H100", "BM=64", -1), // failed: never chosen
		evalRecord("h", "M=1024, N=1024, K=1024", d(1024, 1024, 1024), "H100", "BM=64", 20),
		evalRecord("h", "M=4096, N=4096, K=4096", d(4096, 4096, 4096), "H200", "BM=64", 300),
		evalRecord("other", "M=4096, N=4096, K=4096", d(4096, 4096, 4096), "H100", "BM=64", 1),
	}
	q := Query{Hash: "h", Dims: d(4096, 4096, 4096), Target: "cuda:sm_90a", Templates: []string{"matmul-wgmma@1"}, Device: "H100"}
	check := func(name string, q Query, recs []Record, cfg, source string) {
		t.Helper()
		c, ok := Lookup(recs, q)
		if cfg == "" {
			if ok {
				t.Errorf("%s: chose %v, want nothing", name, c)
			}
			return
		}
		if !ok || c.Configs[0] != cfg || c.Source != source {
			t.Errorf("%s: got %+v, %v; want %s (%s)", name, c, ok, cfg, source)
		}
	}
	check("exact", q, recs, "BM=256", "exact")
	q2 := q
	q2.Dims = d(2048, 2048, 1024) // nearer 1024^3 (ln 2 + ln 2) than 4096^3 (ln 2 + ln 2 + ln 4)
	check("nearest", q2, recs, "BM=64", "nearest")
	// A shape farther than maxNearestDistance from every recorded one
	// keeps its default: 16^3 is ln 4 from 64^3 in each size, and 1024^3
	// farther still.
	qfar := q
	qfar.Dims = d(16, 16, 16)
	check("too far", qfar, append(recs, evalRecord("h", "M=64, N=64, K=64", d(64, 64, 64), "H100", "BM=32", 2)), "", "")
	if c, _ := Lookup(recs, qfar); !strings.Contains(c.Declined, "too far") {
		t.Errorf("too far: declined %q", c.Declined)
	}
	// A winner record at the exact shape overrides a faster evaluation.
	w := evalRecord("h", "M=4096, N=4096, K=4096", d(4096, 4096, 4096), "H100", "BM=128", 480)
	w.Kind = KindWinner
	check("winner", q, append(recs, w), "BM=128", "exact")
	// Without a device: the device with most records (H100, 4 usable).
	q3 := q
	q3.Device = ""
	check("no device", q3, recs, "BM=256", "exact")
	q4 := q
	q4.Device = "A100"
	check("unknown device", q4, recs, "", "")
	q5 := q
	q5.Templates = []string{"matmul-wgmma@2"}
	check("new template version", q5, recs, "", "")

	// With the query's defaults: the nearest shape advises only where its
	// measured default is the query's.
	def := evalRecord("h", "M=1024, N=1024, K=1024", d(1024, 1024, 1024), "H100", "BM=128", 900)
	def.Default = true
	q6 := q2
	q6.Defaults = []string{"BM=128"}
	check("nearest, same default", q6, append(recs, def), "BM=64", "nearest")
	q6.Defaults = []string{"BM=256"}
	check("nearest, another default", q6, append(recs, def), "", "")
	if c, _ := Lookup(append(recs, def), q6); !strings.Contains(c.Declined, "the heuristic chose otherwise (BM=128)") {
		t.Errorf("another default: declined %q", c.Declined)
	}
	check("nearest, its default unmeasured", q6, recs, "", "")
	q6.Dims = q.Dims
	check("exact, another default", q6, append(recs, def), "BM=256", "exact")

	// At the exact shape, a search that started from another default
	// stands where it measured today's, and not where it did not.
	exactDef := evalRecord("h", "M=4096, N=4096, K=4096", d(4096, 4096, 4096), "H100", "BM=128", 500)
	exactDef.Default = true
	withDef := append(slices.Clone(recs), exactDef)
	q7 := q
	q7.Defaults = []string{"BM=128"}
	check("exact, same default", q7, withDef, "BM=256", "exact")
	q7.Defaults = []string{"BM=256"}
	check("exact, today's default measured", q7, withDef, "BM=256", "exact")
	q7.Defaults = []string{"BM=512"}
	check("exact, today's default unmeasured", q7, withDef, "", "")
	if c, _ := Lookup(withDef, q7); !strings.Contains(c.Declined, "tuned at this shape against another default (BM=128)") {
		t.Errorf("exact, today's default unmeasured: declined %q", c.Declined)
	}
	q7.Defaults = []string{"BM=64"} // measured, but it failed there
	check("exact, today's default failed there", q7, withDef, "BM=256", "exact")

	// A parameter added to the template since, at its implicit value
	// (row-reduce's BLOCKS_PER_SM=1), names the configuration the records
	// measured: their default is today's, and at the nearest shape too.
	q7.Defaults = []string{"BLOCKS_PER_SM=1, BM=128"}
	check("exact, a parameter added at its implicit value", q7, withDef, "BM=256", "exact")
	q8 := q6
	q8.Dims = q2.Dims
	q8.Defaults = []string{"BLOCKS_PER_SM=1, BM=128"}
	check("nearest, a parameter added at its implicit value", q8, append(recs, def), "BM=64", "nearest")
	q8.Defaults = []string{"BLOCKS_PER_SM=2, BM=128"}
	check("nearest, a parameter added at another value", q8, append(recs, def), "", "")
	// Resuming: the key of a record names its configuration canonically.
	a, b := exactDef, exactDef
	b.Configs = []string{"BLOCKS_PER_SM=1, BM=128, HOIST=0"}
	if a.Key() != b.Key() {
		t.Errorf("keys differ for the same configuration:\n%s\n%s", a.Key(), b.Key())
	}
	b.Configs = []string{"BLOCKS_PER_SM=2, BM=128"}
	if a.Key() == b.Key() {
		t.Errorf("BLOCKS_PER_SM=2 keyed as BLOCKS_PER_SM=1")
	}
}

// TestLatestWinnerPerLaunch: the same configurations winning two launches'
// searches are two winners, each with its own finalists (a resumed run
// compares a launch's finalists with its own winner's), while an
// evaluation of the same plan is one whichever launch's search asked.
func TestLatestWinnerPerLaunch(t *testing.T) {
	plan := []string{"BM=64", "THREADS=256"}
	ev := func(launch int) Record {
		r := evalRecord("h", "N=1", nil, "gpu", "", 5)
		r.Configs, r.Launch = plan, launch
		return r
	}
	win := func(launch int, fin ...string) Record {
		r := ev(launch)
		r.Kind, r.Finalists = KindWinner, fin
		return r
	}
	m := Latest([]Record{ev(0), win(0, "BM=64", "BM=128"), ev(1), win(1, "THREADS=256", "THREADS=512")})
	if len(m) != 3 {
		t.Fatalf("Latest kept %d records, want 3 (one evaluation, two winners): %v", len(m), m)
	}
	for launch, want := range [][]string{{"BM=64", "BM=128"}, {"THREADS=256", "THREADS=512"}} {
		w, ok := m[win(launch).Key()]
		if !ok || !slices.Equal(w.Finalists, want) {
			t.Errorf("launch %d's winner: %v (found %v), want finalists %v", launch, w.Finalists, ok, want)
		}
	}
}
