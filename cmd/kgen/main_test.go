package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kgen.dev/kgen/ir"
	kgrt "kgen.dev/kgen/runtime"
	"kgen.dev/kgen/tensor"
)

// kgen runs the command line in-process and returns its exit code and
// outputs.
func kgen(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errw bytes.Buffer
	code := runMain(args, &out, &errw)
	return code, out.String(), errw.String()
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const matmulSpec = `// C = A B
kernel matmul<M, N, K>(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  C[m, n] = sum[k](A[m, k] * B[k, n])
}
`

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.kg", matmulSpec)
	bad := writeFile(t, dir, "bad.kg", "kernel k<N>(A: f32[N]) -> (B: f32[N]) {\n  B[i] = Ax[i]\n}\n")
	cases := []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"check", good}, exitOK, ""},
		{[]string{"check", bad}, exitUser, "bad.kg:2:10: error: unknown tensor 'Ax'; did you mean 'A'?"},
		{[]string{"check", filepath.Join(dir, "missing.kg")}, exitUser, "no such file"},
		{[]string{"check", "--nope", good}, exitUsage, "flag provided but not defined"},
		{[]string{"check"}, exitUsage, "no files given"},
		{[]string{"chek", good}, exitUsage, `did you mean "check"?`},
		{[]string{}, exitUsage, "Usage"},
		{[]string{"eval", good}, exitUsage, "--kernel is required"},
		{[]string{"eval", good, "--kernel", "matmul", "--shape", "M=2,N=2"}, exitUsage, "needs a value for K"},
		{[]string{"eval", good, "--kernel", "matmul", "--shape", "M=2,N=2,K=x"}, exitUsage, "must be an integer"},
		{[]string{"eval", good, "--kernel", "matmul", "--shape", "M=2,N=2,K=2,Q=1"}, exitUsage, `no dim or param "Q"`},
		{[]string{"check", "--shape", "M=2,N=x,K=2", good}, exitUsage, "must be an integer"},
		{[]string{"eval", good, "--kernel", "matmull", "--shape", "M=2,N=2,K=2"}, exitUser, `did you mean "matmul"?`},
		{[]string{"ir", good, "--after", "nope"}, exitUsage, "unknown pass"},
		{[]string{"version"}, exitOK, ""},
		{[]string{"help", "eval"}, exitOK, ""},
	}
	for _, c := range cases {
		code, _, errText := kgen(t, c.args...)
		if code != c.code || !strings.Contains(errText, c.err) {
			t.Errorf("kgen %s: exit %d, want %d; stderr:\n%s\nwant it to contain %q", strings.Join(c.args, " "), code, c.code, errText, c.err)
		}
	}
}

func TestInternalErrorIsReported(t *testing.T) {
	register(&command{name: "test-panic", short: "panics", setup: func(*flag.FlagSet) func([]string) int {
		return func([]string) int { panic("boom") }
	}})
	code, _, errText := kgen(t, "test-panic")
	if code != exitInternal || !strings.Contains(errText, "internal error: boom") || strings.Contains(errText, "goroutine") {
		t.Errorf("exit %d, stderr %q; want exit 3 with an internal-error message and no stack trace", code, errText)
	}
}

func TestCheckDiagnosticFormat(t *testing.T) {
	dir := t.TempDir()
	src := "kernel k<M, N, K>(A: f32[M, K], B: f32[N, N]) -> (C: f32[M, N]) {\n  C[m, n] = sum[k](A[m, k] * B[k, n])\n}\n"
	p := writeFile(t, dir, "two.kg", src)
	code, _, errText := kgen(t, "check", p)
	if code != exitUser {
		t.Fatalf("exit %d", code)
	}
	want := p + ":2:17: error: reduction index 'k' is used with two extents: K (A, dim 2) and N (B, dim 1); give its range with 'sum[k in 0..K]'\n" +
		"    C[m, n] = sum[k](A[m, k] * B[k, n])\n" +
		"                  ^\n"
	if !strings.HasPrefix(errText, want) {
		t.Errorf("stderr:\n%s\nwant it to start with:\n%s", errText, want)
	}
	code, _, errText = kgen(t, "check", "--json", p)
	if code != exitUser {
		t.Fatalf("--json exit %d", code)
	}
	var d struct {
		File     string `json:"file"`
		Line     int    `json:"line"`
		Col      int    `json:"col"`
		Severity string `json:"severity"`
		Message  string `json:"message"`
	}
	first := strings.SplitN(errText, "\n", 2)[0]
	if err := json.Unmarshal([]byte(first), &d); err != nil {
		t.Fatalf("--json line %q: %v", first, err)
	}
	if d.File != p || d.Line != 2 || d.Col != 17 || d.Severity != "error" || !strings.Contains(d.Message, "two extents") {
		t.Errorf("--json gave %+v", d)
	}
}

// TestEvalMatmulFromFiles feeds hand-made inputs through --in and checks
// the written output against products computed by hand.
func TestEvalMatmulFromFiles(t *testing.T) { matmulFromFiles(t, "eval") }

// TestRunMatmulFromFiles does the same on the GPU, where there is one.
func TestRunMatmulFromFiles(t *testing.T) {
	if _, err := kgrt.Devices(); err != nil {
		if os.Getenv("KGEN_REQUIRE_GPU") == "1" {
			t.Fatalf("KGEN_REQUIRE_GPU=1 but: %v", err)
		}
		t.Skipf("no GPU: %v", err)
	}
	needNVCC(t)
	matmulFromFiles(t, "run", "--target", "cuda:sm_80")
}

func matmulFromFiles(t *testing.T, cmd string, extra ...string) {
	dir := t.TempDir()
	spec := writeFile(t, dir, "mm.kg", matmulSpec)
	a := tensor.New(ir.F32, []int64{2, 3})
	b := tensor.New(ir.F32, []int64{3, 2})
	for i, v := range []float64{1, 2, 3, 4, 5, 6} {
		a.SetFloat(int64(i), v)
	}
	for i, v := range []float64{7, 8, 9, 10, 11, 12} {
		b.SetFloat(int64(i), v)
	}
	if err := tensor.Save(filepath.Join(dir, "a.npy"), a); err != nil {
		t.Fatal(err)
	}
	if err := tensor.Save(filepath.Join(dir, "b.npy"), b); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	// B by name, A positionally: dims come from the files.
	args := append([]string{cmd, spec, "--kernel", "matmul", "--in", "B=" + filepath.Join(dir, "b.npy"), "--in", filepath.Join(dir, "a.npy"), "--out", out}, extra...)
	code, stdoutText, errText := kgen(t, args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errText)
	}
	if !strings.Contains(stdoutText, "M=2, N=2, K=3") {
		t.Errorf("sizes not inferred from the inputs: %s", stdoutText)
	}
	c, err := tensor.Load(filepath.Join(out, "C.npy"))
	if err != nil {
		t.Fatal(err)
	}
	// [1 2 3; 4 5 6] x [7 8; 9 10; 11 12] = [58 64; 139 154]
	want := []float64{58, 64, 139, 154}
	if len(c.Shape) != 2 || c.Shape[0] != 2 || c.Shape[1] != 2 {
		t.Fatalf("C has shape %v", c.Shape)
	}
	for i, w := range want {
		if got := c.Float(int64(i)); got != w {
			t.Errorf("C[%d] = %v, want %v", i, got, w)
		}
	}
	// A mismatched file is refused with the shapes named.
	code, _, errText = kgen(t, append([]string{cmd, spec, "--kernel", "matmul", "--in", "A=" + filepath.Join(dir, "a.npy"), "--in", "B=" + filepath.Join(dir, "a.npy")}, extra...)...)
	if code != exitUser || !strings.Contains(errText, "dim K") {
		t.Errorf("mismatched inputs: exit %d, stderr %q", code, errText)
	}
}

// TestEvalRunErrorIsPositioned: an out-of-range read found at run time is
// reported at the read, like any diagnostic.
func TestEvalRunErrorIsPositioned(t *testing.T) {
	dir := t.TempDir()
	spec := writeFile(t, dir, "g.kg", "kernel gather<N, V>(idx: i32[N], table: f32[V]) -> (Y: f32[N]) {\n  Y[i] = table[idx[i]]\n}\n")
	idx := tensor.New(ir.I32, []int64{2})
	idx.SetInt(0, 1)
	idx.SetInt(1, 7)
	p := filepath.Join(dir, "idx.npy")
	if err := tensor.Save(p, idx); err != nil {
		t.Fatal(err)
	}
	code, _, errText := kgen(t, "eval", spec, "--kernel", "gather", "--in", "idx="+p, "--shape", "V=4")
	if code != exitUser || !strings.Contains(errText, spec+":2:10: error:") {
		t.Errorf("exit %d, stderr:\n%s", code, errText)
	}
}

func TestFmtWriteAndCheck(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "m.kg", "kernel  k<N>(A:f32[N])->(B:f32[N]){ B[i]=A[i]*2 // double\n}\n")
	code, _, _ := kgen(t, "fmt", "-l", p)
	if code != exitUser {
		t.Errorf("fmt -l on an unformatted file: exit %d, want 1", code)
	}
	if code, _, errText := kgen(t, "fmt", "-w", p); code != exitOK {
		t.Fatalf("fmt -w: exit %d: %s", code, errText)
	}
	got, _ := os.ReadFile(p)
	want := "kernel k<N>(A: f32[N]) -> (B: f32[N]) {\n  B[i] = A[i] * 2  // double\n}\n"
	if string(got) != want {
		t.Errorf("fmt -w wrote:\n%s\nwant:\n%s", got, want)
	}
	if code, out, _ := kgen(t, "fmt", "-d", p); code != exitOK || out != "" {
		t.Errorf("fmt -d on a formatted file: exit %d, diff %q", code, out)
	}
	broken := writeFile(t, dir, "broken.kg", "kernel k<N>(A: f32[N]) -> (B: f32[N]) {\n  B[i] = A[i] +\n}\n")
	before, _ := os.ReadFile(broken)
	if code, _, _ := kgen(t, "fmt", "-w", broken); code != exitUser {
		t.Errorf("fmt -w on a broken file: exit %d, want 1", code)
	}
	after, _ := os.ReadFile(broken)
	if !bytes.Equal(before, after) {
		t.Errorf("fmt -w changed a file with syntax errors")
	}
}

func TestIRHashIgnoresNamesAndLayout(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.kg", matmulSpec)
	b := writeFile(t, dir, "b.kg", "kernel mm<P, Q, R>(X: f32[P, R], Y: f32[R, Q]) -> (Z: f32[P, Q]) { Z[i, j] = sum[r](X[i, r] * Y[r, j]) }\n")
	c := writeFile(t, dir, "c.kg", "kernel mm<P, Q, R>(X: f32[P, R], Y: f32[R, Q]) -> (Z: f32[P, Q]) { Z[i, j] = sum[r](X[i, r] + Y[r, j]) }\n")
	hash := func(p string) string {
		code, out, errText := kgen(t, "ir", "--hash", p)
		if code != exitOK {
			t.Fatalf("ir --hash %s: %s", p, errText)
		}
		return strings.Fields(out)[0]
	}
	if hash(a) != hash(b) {
		t.Errorf("renamed matmul hashes differently")
	}
	if hash(a) == hash(c) {
		t.Errorf("a sum of sums hashes like a matmul")
	}
}

// TestIRConfig: kgen ir --after lower --config shows the plan with the
// parameters replaced, as kgen build would run it, and refuses what
// build refuses, with the reason; without --target there are no limits
// to check the parameters against, and it says so.
func TestIRConfig(t *testing.T) {
	dir := t.TempDir()
	spec := writeFile(t, dir, "rows.kg", `kernel center<R, D>(X: f32[R, D]) -> (Y: f32[R, D]) {
  let mu[r] = sum[d](X[r, d]) / D
  Y[r, d] = X[r, d] - mu[r]
}
instance center_big = center<R = 64, D = 100000>
`)
	code, out, errText := kgen(t, "ir", "--after", "lower", "--target", "cuda:sm_90", "--kernel", "center_big",
		"--config", "row-reduce.STAGE=1,row-reduce.CLUSTER=4,row-reduce.PREFETCH=0,row-reduce.THREADS=128", spec)
	// 64 rows, a cluster of 4 blocks of 128 threads each.
	if code != exitOK || !strings.Contains(out, "CLUSTER=4") || !strings.Contains(out, "STAGE=1") || !strings.Contains(out, "grid (256) x block 128") {
		t.Errorf("exit %d, stderr %q; the plan:\n%s\nwant CLUSTER=4, STAGE=1 and grid (256) x block 128", code, errText, out)
	}
	code, out, _ = kgen(t, "ir", "--after", "lower", "--target", "cuda:sm_90", "--kernel", "center_big", spec)
	if code != exitOK || strings.Contains(out, "THREADS=128") {
		t.Errorf("without --config: exit %d, the plan:\n%s\nwant the defaults (not THREADS=128)", code, out)
	}
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"--after", "lower", "--target", "cuda:sm_90", "--config", "nosuch.X=1"}, exitUser, `no template "nosuch"`},
		{[]string{"--after", "lower", "--config", "row-reduce.THREADS=128"}, exitUsage, "--config needs --target"},
		{[]string{"--after", "lower", "--target", "cuda:sm_90", "--config", "row-reduce.STAGE=1,row-reduce.BLOCK_ROWS=4"}, exitUser, "takes one block or one cluster"},
		{[]string{"--config", "THREADS=64"}, exitUsage, "use it with --after lower"},
	} {
		args := append(append([]string{"ir", "--kernel", "center_big"}, c.args...), spec)
		code, _, errText := kgen(t, args...)
		if code != c.code || !strings.Contains(errText, c.err) {
			t.Errorf("kgen %s: exit %d, want %d; stderr %q, want it to contain %q", strings.Join(args, " "), code, c.code, errText, c.err)
		}
	}
}
