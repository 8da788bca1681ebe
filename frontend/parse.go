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
			r, size := utf8.DecodeRuneInString(src.Text[off:])
			span.End = off + max(1, size) // an invalid byte is one byte, not U+FFFD's three
			diags.Errorf(span, "unexpected character %s%s", quoteRune(r), charHint(r))
			lexErrAt[off] = true
		case tokOpenComment:
			// The comment runs to the end of the file: nothing after it
			// is parsed. The declaration it interrupts is parsed up to it.
			diags.Errorf(diag.Span{Src: src, Start: off, End: off + 2}, "unterminated block comment; close it with '*/'")
			if n := len(chunks); n > 0 {
				chunks[n-1].end = off
				chunks[n-1].lexErr = depth > 0
			}
		}
		if t.Type == tokOpenComment {
			break
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
				diags.Errorf(span, "unexpected %s at top level; a file holds only 'kernel', 'fn' and 'instance' declarations: move it into a kernel body or remove it", describe(t))
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
		d, err := parseChunk(declParser, src, c.start, c.end)
		if err != nil {
			// Its name is known, so that uses of it elsewhere are not
			// reported again as unknown.
			if name := firstWord(strings.TrimLeft(src.Text[c.start+len(firstWord(src.Text[c.start:])):], " \t\r\n")); name != "" {
				f.Broken = append(f.Broken, name)
			}
			if c.lexErr {
				continue // the bad character is already reported
			}
			if _, err0 := parseChunk(errParser, src, c.start, c.end); err0 != nil {
				err = err0
			}
			var ute *participle.UnexpectedTokenError
			if errors.As(err, &ute) && !ute.Unexpected.EOF() && expectation(ute) == "" {
				// A complete declaration followed by tokens that start none.
				at := ute.Unexpected.Pos.Offset
				diags.Errorf(diag.Span{Src: src, Start: at, End: at + len(ute.Unexpected.Value)},
					"unexpected %s after the end of this declaration; remove it, or move it into a kernel body", describe(ute.Unexpected))
				if d, err := parseChunk(declParser, src, c.start, at); err == nil {
					f.Decls = append(f.Decls, convertDecl(src, d))
				}
				continue
			}
			if op, next, ok := missingOperand(toks, c.start, c.end); ok && expectsOperand(err) {
				span := diag.Span{Src: src, Start: next.Pos.Offset, End: next.Pos.Offset + len(next.Value)}
				if next.EOF() || next.Pos.Offset >= c.end {
					span = diag.Span{Src: src, Start: op.Pos.Offset, End: op.Pos.Offset + len(op.Value)}
				}
				diags.Errorf(span, "expected an operand after '%s', found %s", op.Value, describeAt(next, c.end))
				continue
			}
			reportSyntax(diags, src, toks, err)
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

// errParser is declParser without lookahead. It is used only to report a
// syntax error: committing to a branch as soon as the branch has consumed a
// token, it reports the token where the input left the grammar ('N: 4'
// in an instance: the ':') rather than where the branch began (the 'N').
var errParser = participle.MustBuild[gDecl](
	participle.Lexer(kgLexer),
	participle.Elide("Whitespace", "LineComment", "BlockComment"),
	participle.UseLookahead(0),
)

// parseChunk parses the declaration in src.Text[start:end]. The text before
// it is blanked rather than cut so that positions stay those of the file.
func parseChunk(p *participle.Parser[gDecl], src *diag.Source, start, end int) (*gDecl, error) {
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
	return p.ParseString(src.Name, b.String())
}

func reportSyntax(diags *diag.List, src *diag.Source, toks []lexer.Token, err error) {
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
		want := expectation(ute)
		if ute.Unexpected.EOF() && want != "" {
			// The declaration ends early: at the end of the file or where
			// the next one begins. Point just after its last token.
			where := "the end of the file"
			if pos.Offset < len(src.Text) {
				where = "the next declaration"
			}
			end := lastTokenEnd(toks, pos.Offset)
			diags.Errorf(diag.Span{Src: src, Start: end, End: end}, "expected %s before %s", want, where)
			return
		}
		if ute.Unexpected.EOF() {
			span.End = span.Start
		}
		msg := "unexpected " + describe(ute.Unexpected)
		if want != "" {
			msg += "; expected " + want
		}
		diags.Errorf(span, "%s", msg)
		return
	}
	diags.Errorf(span, "%s", perr.Message())
}

// expectation turns participle's grammar fragment into words a user reads:
// the first thing the grammar wanted, with grammar names replaced.
func expectation(ute *participle.UnexpectedTokenError) string {
	m := ute.Message()
	i := strings.Index(m, "(expected ")
	if i < 0 {
		return ""
	}
	want := strings.TrimSuffix(m[i+len("(expected "):], ")")
	first := strings.Fields(want)
	if len(first) == 0 {
		return ""
	}
	w := strings.Trim(first[0], "()*?")
	if words, ok := grammarWords[w]; ok {
		return words
	}
	if strings.HasPrefix(w, `"`) {
		return "'" + strings.Trim(w, `"`) + "'"
	}
	return w
}

var grammarWords = map[string]string{
	"<ident>":     "a name",
	"<int>":       "an integer",
	"<float>":     "a number",
	"GExpr":       "an expression",
	"GUnary":      "an operand",
	"GPrimary":    "an operand",
	"GPostfix":    "an operand",
	"GBinary":     "an expression",
	"GIdent":      "a name",
	"GIndexItem":  "an index",
	"GTensorDecl": "a tensor declaration such as 'A: f32[M, K]'",
	"GDerived":    "a derived dim such as 'OH = H - KH + 1'",
	"GAttr":       "an attribute",
	"GAttrArg":    "an attribute argument",
	"GStmt":       "a statement",
	"GParam":      "a param such as 'stride: i32 = 1'",
	"GLiteral":    "a literal value",
	"GBinding":    "a binding such as 'M = 64'",
	"GDecl":       "'kernel', 'fn' or 'instance'",
}

// missingOperand finds the commonest syntax slip, an operator or comma with
// nothing after it, which participle reports where it backtracked to
// rather than where the operand is missing.
func missingOperand(toks []lexer.Token, start, end int) (lexer.Token, lexer.Token, bool) {
	var prev *lexer.Token
	for i := range toks {
		t := toks[i]
		if t.EOF() || t.Pos.Offset >= end {
			if prev != nil && needsOperandAfter[prev.Value] && prev.Type != tokIdent {
				return *prev, t, true
			}
			break
		}
		if t.Pos.Offset < start || t.Type == tokWhitespace || t.Type == tokLineComment || t.Type == tokBlockComment {
			continue
		}
		if prev != nil && prev.Type != tokIdent && needsOperandAfter[prev.Value] && !startsOperand(t) {
			return *prev, t, true
		}
		prev = &toks[i]
	}
	return lexer.Token{}, lexer.Token{}, false
}

// lastTokenEnd returns the end offset of the last token before off that is
// not whitespace or a comment.
func lastTokenEnd(toks []lexer.Token, off int) int {
	end := 0
	for _, t := range toks {
		if t.EOF() || t.Pos.Offset >= off {
			break
		}
		if t.Type != tokWhitespace && t.Type != tokLineComment && t.Type != tokBlockComment {
			end = t.Pos.Offset + len(t.Value)
		}
	}
	return end
}

// expectsOperand reports whether a syntax error is one where an expression
// operand was wanted (or the parser could not say), so that a dangling
// operator explains it.
func expectsOperand(err error) bool {
	var ute *participle.UnexpectedTokenError
	if !errors.As(err, &ute) {
		return true
	}
	switch expectation(ute) {
	case "", "an expression", "an operand", "an index":
		return true
	}
	return false
}

var needsOperandAfter = map[string]bool{
	"||": true, "&&": true, "==": true, "!=": true, "<=": true, ">=": true,
	"+": true, "-": true, "*": true, "/": true, "%": true, "??": true, "?": true, ":": true, ",": true,
}

func startsOperand(t lexer.Token) bool {
	switch t.Value {
	case "(", "-", "+", "!":
		return true
	}
	return t.Type == tokIdent || t.Type == kgLexer.Symbols()["Int"] || t.Type == kgLexer.Symbols()["Float"] || t.Type == kgLexer.Symbols()["String"]
}

func describeAt(t lexer.Token, end int) string {
	if !t.EOF() && t.Pos.Offset >= end {
		return fmt.Sprintf("%s (the next declaration)", describe(t))
	}
	return describe(t)
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

// charHint names the fix for a character outside the language.
func charHint(r rune) string {
	switch r {
	case '#':
		return "; write comments with '//'"
	case '&':
		return "; use '&&' for a logical and"
	case '|':
		return "; use '||' for a logical or"
	case '^':
		return "; use pow(x, y) for a power"
	case '.':
		return "; a number has digits on both sides of its point: write 0.5, not .5, and 5.0, not 5."
	}
	return "; remove it"
}

func quoteRune(r rune) string {
	if r == utf8.RuneError || r < ' ' || r == 0x7f {
		return fmt.Sprintf("%U", r)
	}
	return fmt.Sprintf("'%c'", r)
}
