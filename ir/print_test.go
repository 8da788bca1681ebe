package ir_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/ir"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestPrintGolden checks the IR printer on the cases in testdata/print:
// each archive holds a spec (in.kg) and the IR it must print after the
// checker (check.ir) and after all passes (passes.ir). -update rewrites
// the expected sections.
func TestPrintGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/print/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			in := section(ar, "in.kg")
			prog, diags := frontend.CheckSource("in.kg", in)
			if diags.HasErrors() {
				var sb strings.Builder
				diags.Print(&sb)
				t.Fatalf("spec does not check:\n%s", sb.String())
			}
			got := map[string]string{"check.ir": ir.PrintProgram(prog)}
			for _, k := range prog.Kernels {
				if err := ir.RunPasses(k, ""); err != nil {
					t.Fatal(err)
				}
			}
			got["passes.ir"] = ir.PrintProgram(prog)
			changed := false
			for name, text := range got {
				want := section(ar, name)
				if *update {
					setSection(ar, name, text)
					changed = changed || want != text
					continue
				}
				if diff := cmp.Diff(want, text); diff != "" {
					t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
				}
			}
			if changed {
				if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func section(ar *txtar.Archive, name string) string {
	for _, f := range ar.Files {
		if f.Name == name {
			return string(f.Data)
		}
	}
	return ""
}

func setSection(ar *txtar.Archive, name, text string) {
	for i, f := range ar.Files {
		if f.Name == name {
			ar.Files[i].Data = []byte(text)
			return
		}
	}
	ar.Files = append(ar.Files, txtar.File{Name: name, Data: []byte(text)})
}
