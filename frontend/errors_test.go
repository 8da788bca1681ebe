package frontend

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"kgen.dev/kgen/diag"
)

// The malformed corpus: testdata/errors/*.kg, one theme per file. Every
// diagnostic the checker must report is written in the input itself, as a
// comment at the end of the offending line or on the lines just above it:
//
//	// ERROR: LINE:COL: message substring
//	// WARNING: LINE:COL: message substring
//
// LINE:COL is the exact 1-based position of the diagnostic. Reported
// errors and warnings and annotations must match one to one. The
// annotations are written by hand, independently of the checker, so the
// test fails when a diagnostic goes missing, moves, changes its wording or
// appears where none is expected.

var annotationRE = regexp.MustCompile(`//\s*(ERROR|WARNING):\s*(\d+):(\d+):\s*(.*?)\s*$`)

type annotation struct {
	sev       diag.Severity
	line, col int
	substr    string
	at        int // the line the annotation is written on
	matched   bool
}

func (a *annotation) String() string {
	return fmt.Sprintf("%s %d:%d: %q (annotation on line %d)", a.sev, a.line, a.col, a.substr, a.at)
}

func readAnnotations(t *testing.T, text string) []*annotation {
	t.Helper()
	var anns []*annotation
	for i, line := range strings.Split(text, "\n") {
		if !strings.Contains(line, "ERROR:") && !strings.Contains(line, "WARNING:") {
			continue
		}
		m := annotationRE.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("line %d: malformed annotation %q; write // ERROR: LINE:COL: substring", i+1, line)
			continue
		}
		a := &annotation{sev: diag.Error, substr: m[4], at: i + 1}
		if m[1] == "WARNING" {
			a.sev = diag.Warning
		}
		a.line, _ = strconv.Atoi(m[2])
		a.col, _ = strconv.Atoi(m[3])
		if a.substr == "" {
			t.Errorf("line %d: annotation without a message substring", i+1)
		}
		anns = append(anns, a)
	}
	return anns
}

// checkPlacement requires an annotation to sit on the line it describes or
// in the run of comment-only lines just above it, so that a reader of the
// corpus sees each expectation next to its cause.
func checkPlacement(t *testing.T, lines []string, a *annotation) {
	t.Helper()
	if a.at == a.line {
		return
	}
	if a.at > a.line {
		t.Errorf("%v: the annotation is below the line it describes", a)
		return
	}
	for l := a.at; l < a.line; l++ {
		if !strings.HasPrefix(strings.TrimSpace(lines[l-1]), "//") {
			t.Errorf("%v: line %d between the annotation and line %d is not a comment", a, l, a.line)
			return
		}
	}
}

// fixWords are the words by which a message names its fix. Every error
// of the corpus must contain one of them.
var fixWords = regexp.MustCompile(`(?i)\b(did you mean|give|use|write|add|declare|pass|rename|choose|remove|convert|compare|move|read|pad|close|expected|narrow)\b`)

func corpus(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob("testdata/errors/*.kg")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 40 {
		t.Fatalf("the malformed corpus has %d files; want at least 40", len(paths))
	}
	return paths
}

func TestErrorCorpus(t *testing.T) {
	for _, path := range corpus(t) {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".kg"), func(t *testing.T) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			text := string(b)
			lines := strings.Split(text, "\n")
			anns := readAnnotations(t, text)
			if len(anns) == 0 {
				t.Fatalf("no annotations: every corpus file expects at least one diagnostic")
			}
			for _, a := range anns {
				checkPlacement(t, lines, a)
			}
			_, diags := CheckSource(path, text)
			for _, d := range diags.Diags {
				if d.Severity == diag.Note {
					continue
				}
				if !d.Span.IsValid() {
					t.Errorf("%s without a position: %s", d.Severity, d.Msg)
					continue
				}
				p := d.Span.Src.Pos(d.Span.Start)
				if d.Span.Start < 0 || d.Span.Start > d.Span.End || d.Span.End > len(text) {
					t.Errorf("%d:%d: span %d..%d outside the %d-byte file: %s", p.Line, p.Col, d.Span.Start, d.Span.End, len(text), d.Msg)
				}
				if d.Severity == diag.Error && !fixWords.MatchString(d.Msg) {
					t.Errorf("%d:%d: the error does not name a fix: %s", p.Line, p.Col, d.Msg)
				}
				for _, n := range d.Notes {
					if !n.Span.IsValid() {
						t.Errorf("%d:%d: note without a position: %s", p.Line, p.Col, n.Msg)
					}
				}
				var match *annotation
				for _, a := range anns {
					if !a.matched && a.sev == d.Severity && a.line == p.Line && a.col == p.Col && strings.Contains(d.Msg, a.substr) {
						match = a
						break
					}
				}
				if match == nil {
					t.Errorf("unexpected %s at %d:%d: %s", d.Severity, p.Line, p.Col, d.Msg)
					continue
				}
				match.matched = true
			}
			for _, a := range anns {
				if !a.matched {
					t.Errorf("missing diagnostic: %v", a)
				}
			}
		})
	}
}

// TestErrorCorpusPrinted checks the printed form: every diagnostic of the
// corpus, notes included, starts with file:line:col: and a severity.
func TestErrorCorpusPrinted(t *testing.T) {
	header := regexp.MustCompile(`^(.+):(\d+):(\d+): (error|warning|note): \S`)
	for _, path := range corpus(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		_, diags := CheckSource(path, string(b))
		var buf bytes.Buffer
		diags.Print(&buf)
		want := len(diags.Diags)
		for _, d := range diags.Diags {
			want += len(d.Notes)
		}
		got := 0
		for _, line := range strings.Split(buf.String(), "\n") {
			if line == "" || strings.HasPrefix(line, "  ") {
				continue // the source line, its marker, or a fix
			}
			m := header.FindStringSubmatch(line)
			if m == nil || m[1] != path {
				t.Errorf("%s: printed without a position: %q", path, line)
				continue
			}
			got++
		}
		if got != want || want == 0 {
			t.Errorf("%s: %d positioned headers printed for %d diagnostics and notes", path, got, want)
		}
	}
}
