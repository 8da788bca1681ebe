package frontend

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/tools/txtar"

	"kgen.dev/kgen/diag"
)

// Each testdata/fmt/NAME.txtar holds `in.kg` and its canonical form
// `out.kg`; -update rewrites out.kg.
func TestFormatGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "fmt", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			in, outIdx := "", -1
			for i, f := range ar.Files {
				switch f.Name {
				case "in.kg":
					in = string(f.Data)
				case "out.kg":
					outIdx = i
				}
			}
			got := checkFormat(t, in)
			if *update {
				if outIdx < 0 {
					ar.Files = append(ar.Files, txtar.File{Name: "out.kg"})
					outIdx = len(ar.Files) - 1
				}
				ar.Files[outIdx].Data = []byte(got)
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if outIdx < 0 {
				t.Fatal("no out.kg section; run with -update")
			}
			want := string(ar.Files[outIdx].Data)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Format mismatch (-want +got):\n%s", diff)
			}
			if again := checkFormat(t, want); again != want {
				t.Errorf("formatting out.kg changes it (-out +formatted):\n%s", cmp.Diff(want, again))
			}
		})
	}
}

// mustParse parses src, failing the test on diagnostics.
func mustParse(t testing.TB, name, src string) *File {
	t.Helper()
	var dl diag.List
	f := Parse(diag.NewSource(name, src), &dl)
	if dl.HasErrors() {
		var msgs []string
		for _, d := range dl.Diags {
			p := d.Span.Src.Pos(d.Span.Start)
			msgs = append(msgs, fmt.Sprintf("%d:%d: %s", p.Line, p.Col, d.Msg))
		}
		t.Fatalf("%s does not parse:\n%s\n--- source:\n%s", name, strings.Join(msgs, "\n"), src)
	}
	return f
}

// astOpts compares trees ignoring source positions.
var astOpts = cmp.Options{cmpopts.IgnoreTypes(diag.Span{}), cmpopts.EquateEmpty()}

func commentTexts(f *File) []string {
	var s []string
	for _, c := range f.Comments {
		s = append(s, trimComment(c.Text))
	}
	return s
}

// checkFormat formats src and checks the formatter's invariants: the output
// parses to the same tree with the same comments, has no trailing blanks,
// ends with one newline and is its own canonical form. It returns the
// output.
func checkFormat(t testing.TB, src string) string {
	t.Helper()
	f := mustParse(t, "in.kg", src)
	b, mismatch := format(f)
	out := string(b)
	if mismatch {
		t.Errorf("printed tokens do not line up with the source:\n%s", src)
	}
	g := mustParse(t, "out.kg", out)
	if diff := cmp.Diff(f.Decls, g.Decls, astOpts); diff != "" {
		t.Errorf("formatting changed the tree (-in +out):\n%s\n--- in:\n%s\n--- out:\n%s", diff, src, out)
	}
	if diff := cmp.Diff(commentTexts(f), commentTexts(g), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("formatting changed the comments (-in +out):\n%s\n--- in:\n%s\n--- out:\n%s", diff, src, out)
	}
	if out != "" && (!strings.HasSuffix(out, "\n") || strings.HasSuffix(out, "\n\n")) {
		t.Errorf("output does not end with exactly one newline: %q", out)
	}
	if strings.HasPrefix(out, "\n") {
		t.Errorf("output starts with a blank line: %q", out)
	}
	for i, l := range strings.Split(out, "\n") {
		if strings.TrimRight(l, " \t\r") != l {
			t.Errorf("line %d has trailing blanks: %q", i+1, l)
		}
	}
	code := []byte(out) // the output with its comments blanked out
	for _, c := range g.Comments {
		for i := c.Span.Start; i < c.Span.End; i++ {
			code[i] = 'x'
		}
	}
	if strings.Contains(string(code), "\n\n\n") {
		t.Errorf("output has two blank lines in a row:\n%s", out)
	}
	if again := string(Format(g)); again != out {
		t.Errorf("Format is not idempotent (-first +second):\n%s\n--- in:\n%s", cmp.Diff(out, again), src)
	}
	return out
}

// TestFormatExamples checks that every example spec formats idempotently
// and without changing its tree.
func TestFormatExamples(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "examples", "*.kg"))
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(file), func(t *testing.T) { checkFormat(t, string(src)) })
	}
}

func TestFormatWithoutSource(t *testing.T) {
	f := mustParse(t, "in.kg", "// gone\nfn f(x) = x*2 // gone too\n")
	f.Src, f.Comments = nil, nil
	if got, want := string(Format(f)), "fn f(x) = x * 2\n"; got != want {
		t.Errorf("Format = %q, want %q", got, want)
	}
}

func TestFormatEmpty(t *testing.T) {
	for _, src := range []string{"", "\n\n", "  \t\n"} {
		if got := string(Format(mustParse(t, "in.kg", src))); got != "" {
			t.Errorf("Format(%q) = %q, want empty", src, got)
		}
	}
}

// FuzzFormat checks, for every input that parses without errors, that the
// output parses to the same tree and comments and is its own canonical form.
func FuzzFormat(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "fmt", "*.txtar"))
	examples, _ := filepath.Glob(filepath.Join("..", "examples", "*.kg"))
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, af := range ar.Files {
			f.Add(string(af.Data))
		}
	}
	f.Add("/*\n\n\n*/") // blank lines inside a comment are kept
	for _, file := range examples {
		if src, err := os.ReadFile(file); err == nil {
			f.Add(string(src))
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		var dl diag.List
		Parse(diag.NewSource("in.kg", src), &dl)
		if dl.HasErrors() {
			return
		}
		checkFormat(t, src)
	})
}

// commentForms are inserted between tokens by TestFormatCommentPlacement.
var commentForms = []string{
	" /* c */ ",
	"/*c*/",
	" // c\n",
	"\n// c\n",
	"\n\n// c\n\n",
	"\n/* a\n   b */ ",
	" /* a\n b */\n",
	" /* x */ // y\n",
	"\n/* x */ /* y */\n",
	";",
}

var thorough = flag.Bool("fmt.thorough", false, "TestFormatCommentPlacement: try every comment form in every gap, on the examples too")

// TestFormatCommentPlacement inserts comments (and blank lines and `;`)
// into every gap between two tokens of the golden inputs and checks the
// formatter's invariants on the result; then it inserts several at once.
func TestFormatCommentPlacement(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "fmt", "*.txtar"))
	var srcs []string
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ar.Files {
			if f.Name == "in.kg" {
				srcs = append(srcs, string(f.Data))
			}
		}
	}
	if *thorough {
		examples, _ := filepath.Glob(filepath.Join("..", "examples", "*.kg"))
		for _, file := range examples {
			if src, err := os.ReadFile(file); err == nil {
				srcs = append(srcs, string(src))
			}
		}
	}
	for n, src := range srcs {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			if *thorough {
				t.Parallel()
			}
			rng := rand.New(rand.NewPCG(1, uint64(n)))
			var gaps []int
			for _, tk := range (&printer{src: src}).lexed() {
				gaps = append(gaps, tk.off)
			}
			try := func(s string) {
				var dl diag.List
				Parse(diag.NewSource("in.kg", s), &dl)
				if !dl.HasErrors() {
					checkFormat(t, s)
				}
			}
			// Every gap gets one of the forms, in rotation (all of them
			// with -fmt.thorough); -short tries fewer gaps.
			per, step, multi := 1, 1, 40
			switch {
			case *thorough:
				per, multi = len(commentForms), 500
			case testing.Short():
				step, multi = 4, 10
			}
			for i := 0; i < len(gaps) && !t.Failed(); i += step {
				for k := range per {
					c := commentForms[(i*per+k)%len(commentForms)]
					try(src[:gaps[i]] + c + src[gaps[i]:])
				}
			}
			for range multi {
				if t.Failed() {
					return
				}
				s := src
				for range 1 + rng.IntN(6) {
					// Insert at a token boundary of the current text.
					toks := (&printer{src: s}).lexed()
					at := toks[rng.IntN(len(toks))].off
					s = s[:at] + commentForms[rng.IntN(len(commentForms))] + s[at:]
				}
				try(s)
			}
		})
	}
}
