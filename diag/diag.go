// Package diag holds kgen's diagnostics: a message tied to a span of a
// source file, with optional notes and a suggested fix, printed like clang
// (file:line:col: error: message, the source line, a marker under the span)
// or as JSON for tools.
package diag

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Source is one input file. Line and column numbers are computed from it
// only when a diagnostic is reported.
type Source struct {
	Name string
	Text string

	lineOnce   sync.Once
	lineStarts []int // built on first use; diagnostics may be formatted concurrently
}

// NewSource returns a Source for the named text.
func NewSource(name, text string) *Source { return &Source{Name: name, Text: text} }

// Span is a half-open byte range [Start, End) of a Source. The zero Span has
// no source and prints without a position.
type Span struct {
	Src        *Source
	Start, End int
}

// IsValid reports whether s points into a source.
func (s Span) IsValid() bool { return s.Src != nil }

// To returns the span from the start of s to the end of t.
func (s Span) To(t Span) Span {
	if !s.IsValid() {
		return t
	}
	if !t.IsValid() || t.Src != s.Src {
		return s
	}
	return Span{s.Src, min(s.Start, t.Start), max(s.End, t.End)}
}

// Position is a 1-based line and column (in bytes) of a source.
type Position struct {
	Line, Col int
}

// Pos returns the line and column of byte offset off.
func (src *Source) Pos(off int) Position {
	src.lineOnce.Do(func() {
		src.lineStarts = []int{0}
		for i := 0; i < len(src.Text); i++ {
			if src.Text[i] == '\n' {
				src.lineStarts = append(src.lineStarts, i+1)
			}
		}
	})
	off = max(0, min(off, len(src.Text)))
	line, _ := slices.BinarySearch(src.lineStarts, off+1)
	return Position{Line: line, Col: off - src.lineStarts[line-1] + 1}
}

// Line returns the text of 1-based line n, without its newline.
func (src *Source) Line(n int) string {
	src.Pos(0)
	if n < 1 || n > len(src.lineStarts) {
		return ""
	}
	start := src.lineStarts[n-1]
	end := len(src.Text)
	if n < len(src.lineStarts) {
		end = src.lineStarts[n] - 1
	}
	return strings.TrimSuffix(src.Text[start:end], "\r")
}

// Severity orders diagnostics by how much they matter.
type Severity int

const (
	Note Severity = iota
	Warning
	Error
)

func (s Severity) String() string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return "note"
}

// Diagnostic is one reported problem.
type Diagnostic struct {
	Severity Severity
	Span     Span
	Msg      string
	Notes    []NoteMsg
	// Fix, when set, is a replacement for the text under Span that resolves
	// the problem.
	Fix *string
}

// NoteMsg is additional context attached to a diagnostic, possibly at
// another place.
type NoteMsg struct {
	Span Span
	Msg  string
}

// List collects diagnostics. The zero List is ready to use.
type List struct {
	Diags []*Diagnostic
}

// Errorf reports an error at span.
func (l *List) Errorf(span Span, format string, args ...any) *Diagnostic {
	return l.Add(Error, span, fmt.Sprintf(format, args...))
}

// Warnf reports a warning at span.
func (l *List) Warnf(span Span, format string, args ...any) *Diagnostic {
	return l.Add(Warning, span, fmt.Sprintf(format, args...))
}

// Add appends a diagnostic and returns it, so that notes can be attached.
func (l *List) Add(sev Severity, span Span, msg string) *Diagnostic {
	d := &Diagnostic{Severity: sev, Span: span, Msg: msg}
	l.Diags = append(l.Diags, d)
	return d
}

// Notef attaches a note to d.
func (d *Diagnostic) Notef(span Span, format string, args ...any) *Diagnostic {
	d.Notes = append(d.Notes, NoteMsg{span, fmt.Sprintf(format, args...)})
	return d
}

// WithFix sets the suggested replacement for d's span.
func (d *Diagnostic) WithFix(text string) *Diagnostic {
	d.Fix = &text
	return d
}

// Append adds all of other's diagnostics to l.
func (l *List) Append(other *List) { l.Diags = append(l.Diags, other.Diags...) }

// HasErrors reports whether any diagnostic is an error.
func (l *List) HasErrors() bool {
	for _, d := range l.Diags {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Sort orders the diagnostics by file, then position, then severity, and
// drops exact duplicates (the same message at the same span), which passes
// that revisit an expression may produce.
func (l *List) Sort() {
	key := func(d *Diagnostic) string {
		if d.Span.Src == nil {
			return ""
		}
		return d.Span.Src.Name
	}
	slices.SortStableFunc(l.Diags, func(a, b *Diagnostic) int {
		return cmp.Or(
			cmp.Compare(key(a), key(b)),
			cmp.Compare(a.Span.Start, b.Span.Start),
			cmp.Compare(b.Severity, a.Severity),
			cmp.Compare(a.Msg, b.Msg),
		)
	})
	l.Diags = slices.CompactFunc(l.Diags, func(a, b *Diagnostic) bool {
		return a.Span == b.Span && a.Msg == b.Msg && a.Severity == b.Severity
	})
}
