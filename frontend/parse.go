package frontend

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"

	"kgen.dev/kgen/diag"
)

var (
	tokInvalid      = kgLexer.Symbols()["Invalid"]
	tokOpenComment  = kgLexer.Symbols()["OpenComment"]
	tokLineComment  = kgLexer.Symbols()["LineComment"]
	tokBlockComment = kgLexer.Symbols()["BlockComment"]
	tokWhitespace   = kgLexer.Symbols()["Whitespace"]
	tokIdent        = kgLexer.Symbols()["Ident"]
)

var declKeywords = map[string]bool{"kernel": true, "fn": true, "instance": true}

// Parse parses a source file. Syntax errors are reported to diags; the
// parser recovers at the next top-level declaration (a `kernel`, `fn` or
// `instance` at brace depth zero or at the start of a line), so that one
// run reports an error in each broken declaration and still checks the
// others.
func Parse(src *diag.Source, diags *diag.List) *File {
	f := &File{Src: src}
	toks, err := lexer.ConsumeAll(mustLex(src))
	if err != nil { // unreachable: the Invalid rule matches any character
		diags.Errorf(diag.Span{Src: src}, "lexer: %v", err)
		return f
	}
	type chunk struct {
		start, end int
		lexErr     bool
	}
	var chunks []chunk
	depth := 0
	lexErrAt := map[int]bool{}
	for _, t := range toks {
		if t.EOF() {
			break
		}
		off := t.Pos.Offset
		span := diag.Span{Src: src, Start: off, End: off + len(t.Value)}
		switch t.Type {
		case tokWhitespace:
			continue
		case tokLineComment, tokBlockComment:
			f.Comments = append(f.Comments, Comment{Span: span, Text: t.Value})
			continue
		case tokInvalid:
			r, _ := utf8.DecodeRuneInString(src.Text[off:])
			span.End = off + max(1, utf8.RuneLen(r))
			diags.Errorf(span, "unexpected character %s", quoteRune(r))
			lexErrAt[off] = true
		case tokOpenComment:
			diags.Errorf(diag.Span{Src: src, Start: off, End: off + 2}, "unterminated block comment; close it with '*/'")
			lexErrAt[off] = true
		}
		switch {
		case t.Type == tokIdent && declKeywords[t.Value] && (depth <= 0 || t.Pos.Column == 1):
			if n := len(chunks); n > 0 {
				chunks[n-1].end = off
			}
			chunks = append(chunks, chunk{start: off, end: len(src.Text)})
			depth = 0
		case len(chunks) == 0:
			if !lexErrAt[off] {
				diags.Errorf(span, "unexpected %s at top level; a file holds 'kernel', 'fn' and 'instance' declarations", describe(t))
			}
			// Report once per stretch of junk: pretend a chunk began so
			// that the next tokens are skipped until a declaration.
			chunks = append(chunks, chunk{start: off, end: len(src.Text), lexErr: true})
			continue
		case t.Value == "{":
			depth++
		case t.Value == "}":
			depth--
		}
		if lexErrAt[off] {
			chunks[len(chunks)-1].lexErr = true
		}
	}
	for _, c := range chunks {
		if !declKeywords[firstWord(src.Text[c.start:])] {
			continue // junk before the first declaration, already reported
		}
		d, err := parseChunk(src, c.start, c.end)
		if err != nil {
			if !c.lexErr {
				reportSyntax(diags, src, err)
			}
			continue
		}
		f.Decls = append(f.Decls, convertDecl(src, d))
	}
	return f
}

func mustLex(src *diag.Source) lexer.Lexer {
	l, err := kgLexer.LexString(src.Name, src.Text)
	if err != nil {
		panic(err) // LexString only fails on reader errors
	}
	return l
}

func firstWord(s string) string {
	end := strings.IndexFunc(s, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
	if end < 0 {
		return s
	}
	return s[:end]
}

// parseChunk parses the declaration in src.Text[start:end]. The text before
// it is blanked rather than cut so that positions stay those of the file.
func parseChunk(src *diag.Source, start, end int) (*gDecl, error) {
	var b strings.Builder
	b.Grow(end)
	for i := 0; i < start; i++ {
		if src.Text[i] == '\n' {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	b.WriteString(src.Text[start:end])
	return declParser.ParseString(src.Name, b.String())
}

func reportSyntax(diags *diag.List, src *diag.Source, err error) {
	var perr participle.Error
	if !errors.As(err, &perr) {
		diags.Errorf(diag.Span{Src: src}, "syntax error: %v", err)
		return
	}
	pos := perr.Position()
	span := diag.Span{Src: src, Start: pos.Offset, End: pos.Offset + 1}
	var ute *participle.UnexpectedTokenError
	if errors.As(err, &ute) {
		span.End = pos.Offset + max(1, len(ute.Unexpected.Value))
		if ute.Unexpected.EOF() {
			span.End = span.Start
		}
		msg := "unexpected " + describe(ute.Unexpected)
		if want := expectation(ute); want != "" {
			msg += "; expected " + want
		}
		diags.Errorf(span, "%s", msg)
		return
	}
	diags.Errorf(span, "%s", perr.Message())
}

// expectation turns participle's grammar fragment into words a user reads.
func expectation(ute *participle.UnexpectedTokenError) string {
	m := ute.Message()
	i := strings.Index(m, "(expected ")
	if i < 0 {
		return ""
	}
	want := strings.TrimSuffix(m[i+len("(expected "):], ")")
	for from, to := range grammarWords {
		want = strings.ReplaceAll(want, from, to)
	}
	return want
}

var grammarWords = map[string]string{
	"<ident>": "a name",
	"<int>":   "an integer",
	"<float>": "a number",
}

func describe(t lexer.Token) string {
	switch {
	case t.EOF():
		return "end of file"
	case t.Type == tokIdent:
		return fmt.Sprintf("name '%s'", t.Value)
	}
	return fmt.Sprintf("'%s'", t.Value)
}

func quoteRune(r rune) string {
	if r == utf8.RuneError || r < ' ' || r == 0x7f {
		return fmt.Sprintf("%U", r)
	}
	return fmt.Sprintf("'%c'", r)
}
