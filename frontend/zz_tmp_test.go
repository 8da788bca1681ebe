package frontend

import (
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"
	"kgen.dev/kgen/diag"
)

func TestZZTiming(t *testing.T) {
	ar, _ := txtar.ParseFile("testdata/fmt/issue_example.txtar")
	src := string(ar.Files[0].Data)
	ex, _ := os.ReadFile("../examples/conv2d.kg")
	for _, s := range []string{src, string(ex), src + src, strings.Repeat(src, 4), strings.ReplaceAll(src, " ", " /*c*/ ")} {
		t0 := time.Now()
		var dl diag.List
		f := Parse(diag.NewSource("x", s), &dl)
		t1 := time.Now()
		Format(f)
		t.Logf("len %d parse %v format %v errs %v", len(s), t1.Sub(t0), time.Since(t1), dl.HasErrors())
	}
}
