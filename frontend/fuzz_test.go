package frontend

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"kgen.dev/kgen/ir"
)

// FuzzCheck feeds arbitrary text to the parser and checker: any input must
// give either a program or diagnostics, never a panic or a hang; every
// diagnostic must have a position; and every kernel the checker accepts
// must verify, print, hash, and survive the passes.
func FuzzCheck(f *testing.F) {
	for _, pattern := range []string{"../examples/*.kg", "testdata/errors/*.kg"} {
		paths, _ := filepath.Glob(pattern)
		for _, p := range paths {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(string(b))
			}
		}
	}
	f.Add("kernel k<N>(A: f32[N]) -> (B: f32[N]) { B[i] = A[i] ?? 0 }\ninstance k4 = k<N = 4>\n")
	f.Fuzz(func(t *testing.T, text string) {
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				panic(fmt.Sprintf("checking took over 5s: %q", text))
			}
		}()
		prog, diags := CheckSource("fuzz.kg", text)
		var buf bytes.Buffer
		diags.Print(&buf)
		for _, d := range diags.Diags {
			if !d.Span.IsValid() {
				t.Fatalf("diagnostic without a position: %s", d.Msg)
			}
			if d.Span.Start < 0 || d.Span.End > len(text) || d.Span.Start > d.Span.End {
				t.Fatalf("diagnostic span %d..%d outside the %d-byte input: %s", d.Span.Start, d.Span.End, len(text), d.Msg)
			}
		}
		for _, k := range prog.Kernels {
			if errs := ir.Verify(k); len(errs) > 0 {
				t.Fatalf("checked kernel %s does not verify: %v", k.Name, errs)
			}
			_ = ir.Print(k)
			h := ir.Hash(k)
			if err := ir.RunPasses(k, ""); err != nil {
				t.Fatal(err)
			}
			_ = h
		}
		for _, in := range prog.Instances {
			_ = ir.OutOfRange(in.Kernel, in.Env)
		}
	})
}
