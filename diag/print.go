package diag

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Print writes the diagnostics in clang's format: a header line, then the
// source line with a caret and tildes under the span, then the notes.
func (l *List) Print(w io.Writer) {
	for _, d := range l.Diags {
		printOne(w, d.Span, d.Severity.String(), d.Msg)
		if d.Fix != nil && d.Span.IsValid() {
			fmt.Fprintf(w, "  fix: replace with '%s'\n", *d.Fix)
		}
		for _, n := range d.Notes {
			printOne(w, n.Span, "note", n.Msg)
		}
	}
}

func printOne(w io.Writer, span Span, sev, msg string) {
	if !span.IsValid() {
		fmt.Fprintf(w, "kgen: %s: %s\n", sev, msg)
		return
	}
	p := span.Src.Pos(span.Start)
	fmt.Fprintf(w, "%s:%d:%d: %s: %s\n", span.Src.Name, p.Line, p.Col, sev, msg)
	line := span.Src.Line(p.Line)
	fmt.Fprintf(w, "  %s\n", expandTabs(line))
	// The marker stops at the end of the first line of a multi-line span.
	width := span.End - span.Start
	if rest := len(line) - (p.Col - 1); width > rest {
		width = rest
	}
	prefix := expandTabs(line[:min(p.Col-1, len(line))])
	marker := "^"
	if width > 1 {
		marker += strings.Repeat("~", width-1)
	}
	fmt.Fprintf(w, "  %s%s\n", strings.Repeat(" ", len(prefix)), marker)
}

func expandTabs(s string) string { return strings.ReplaceAll(s, "\t", "    ") }

// jsonDiag is the --json form of a diagnostic; positions are 1-based, end
// is exclusive.
type jsonDiag struct {
	File     string     `json:"file,omitempty"`
	Line     int        `json:"line,omitempty"`
	Col      int        `json:"col,omitempty"`
	EndLine  int        `json:"end_line,omitempty"`
	EndCol   int        `json:"end_col,omitempty"`
	Severity string     `json:"severity"`
	Message  string     `json:"message"`
	Fix      *string    `json:"fix,omitempty"`
	Notes    []jsonDiag `json:"notes,omitempty"`
}

func toJSON(span Span, sev, msg string) jsonDiag {
	j := jsonDiag{Severity: sev, Message: msg}
	if span.IsValid() {
		s, e := span.Src.Pos(span.Start), span.Src.Pos(span.End)
		j.File, j.Line, j.Col, j.EndLine, j.EndCol = span.Src.Name, s.Line, s.Col, e.Line, e.Col
	}
	return j
}

// PrintJSON writes one JSON object per line for each diagnostic.
func (l *List) PrintJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, d := range l.Diags {
		j := toJSON(d.Span, d.Severity.String(), d.Msg)
		j.Fix = d.Fix
		for _, n := range d.Notes {
			j.Notes = append(j.Notes, toJSON(n.Span, "note", n.Msg))
		}
		if err := enc.Encode(j); err != nil {
			return err
		}
	}
	return nil
}
