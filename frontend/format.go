package frontend

// The canonical formatter (`kgen fmt`).
//
// Layout rules:
//
//   - Declarations are printed in source order. Between two items (a
//     declaration, a statement or a comment on its own line) at most one
//     blank line is kept: one where the source had one or more, none where it
//     had none. There is never a blank line at the start of the file, right
//     after a kernel's `{` or in the middle of a kernel header. The output
//     ends with exactly one newline (an empty file stays empty) and no line
//     ends with blanks.
//   - `fn f(a, b) = expr` and `instance n = k<D = 1, p = 2>` are one line.
//   - A kernel header is one line: `kernel k<D1, D2; p: i32 = 1>(A: f32[M],
//     s: f32) -> (C: f32[M])`. `<...>` is left out when the kernel has no dims
//     and no params (`<>` and `<;>` are dropped, as is a `;` with no params
//     after it); `<; p: i32>` is printed for params only. Tensors keep their
//     brackets as written: `s: f32` and `s: f32[]` both stay.
//   - A where clause goes on the next line, indented 4 spaces:
//     `    where OH = H - KH + 1, OW = W - KW + 1`.
//   - Attributes follow on the last header line (` @acc(f32) @tune(BM = [64,
//     128])`), then ` {`. Statements follow one per line, indented 2 spaces,
//     without `;`. The closing `}` is on its own line (also for an empty
//     body).
//   - Expressions: one space around every binary operator, `? :` and `??`
//     (no compact `2*pad`); none after a unary operator, except between two
//     signs (`- -x`, not `--x`); `, ` between items; no space inside
//     brackets and parentheses; ranges `k in 0..K`. The user's parentheses
//     are kept and none are added; numbers and literals are printed exactly
//     as written. The output has the same tokens as the input, in the same
//     order, apart from the dropped `;`, `<>` and `<;>`, so it parses to the
//     same tree. (A reduction written with other than one argument, which
//     the tree does not keep, is re-read from the source.)
//
// Comments. Every comment is kept, in source order. Line comments lose
// trailing blanks, and so does each line of a block comment; otherwise
// block comments are printed verbatim. A comment is placed by where it lies
// between the tokens of the source:
//
//   - A comment with code before it on its line (a trailing comment) that
//     falls at the end of an output line stays there, after two spaces.
//   - A comment on its own line(s) before a line of output is printed on its
//     own line before it, indented like that line; inside a kernel body that
//     is 2 spaces, also for comments before the closing `}`, which stay
//     inside the braces. Comments before a where line are indented 4.
//   - A comment that falls inside an output line (a header or an expression
//     written over several source lines, or between two tokens): if all such
//     comments of the line are single-line block comments written between
//     two tokens of one source line, they stay in place (`f(x /* rows */,
//     y)`); otherwise, if they were all trailing comments and at most one
//     line comment, which comes last, ends the line, they move to the end of
//     the line; otherwise they move, each on its own line, before the line
//     (a blank line above the line then goes above them).
//   - Several comments on one line that is not code are printed one per
//     line. A comment after a dropped `;` is placed as if the `;` were not
//     there.
//
// Format(Parse(Format(x))) == Format(x) for every x that parses without
// errors, and the tree of the output equals that of the input.

import (
	"sort"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"

	"kgen.dev/kgen/diag"
)

// Format renders a parsed file in kgen's one canonical layout, keeping every
// comment. The file must have parsed without errors. A File built by hand
// without a Src is printed without comments.
func Format(f *File) []byte {
	out, _ := format(f)
	return out
}

// format is Format that also reports whether the printed tokens failed to
// line up with the source's (a formatter bug; tests check it).
func format(f *File) ([]byte, bool) {
	p := &printer{}
	if f.Src != nil {
		p.src = f.Src.Text
		p.lexSource()
	}
	for _, d := range f.Decls {
		p.decl(d)
	}
	p.placeComments(f.Comments)
	return p.render(), p.mismatch
}

type lineKind int

const (
	lineDecl  lineKind = iota // the first line of a declaration
	lineWhere                 // a kernel's where clause
	lineStmt                  // a statement
	lineClose                 // a kernel's closing brace
	lineEOF                   // pseudo-line holding the comments after the last token
)

type outTok struct {
	text  string
	off   int  // offset of the source token it prints; -1 if unknown
	space bool // separated from the previous token of its line by a space
}

type outLine struct {
	kind   lineKind
	indent int
	toks   []outTok
	lead   []*fcomment // own-line comments before the line
	mid    []*fcomment // comments between two of its tokens
	midAt  []int       // for each mid comment, the index of the token after it
	end    []*fcomment // trailing comments after its last token
}

// fcomment is a comment with its placement in the source.
type fcomment struct {
	text       string
	start, end int
	isLine     bool // a `//` comment
	multiline  bool // a block comment over several lines
	trailing   bool // code (or a trailing comment) precedes it on its line
	inline     bool // a one-line block comment with code right after it on its line
	blankAbove bool // a blank line separates it from what precedes it
}

type srcTok struct {
	text string
	off  int
	used bool // printed; the dropped `;`, `<` and `>` are not
}

type printer struct {
	src      string
	toks     []srcTok // the source's tokens, without whitespace and comments
	cur      int      // next unmatched source token
	lastOff  int
	mismatch bool
	lines    []*outLine
	eof      *outLine
}

func (p *printer) lexSource() { p.toks = p.lexed() }

// lexed returns the tokens of p.src, without whitespace and comments.
func (p *printer) lexed() []srcTok {
	toks, err := lexer.ConsumeAll(mustLex(diag.NewSource("", p.src)))
	if err != nil {
		return nil
	}
	var out []srcTok
	for _, t := range toks {
		switch {
		case t.EOF(), t.Type == tokWhitespace, t.Type == tokLineComment, t.Type == tokBlockComment:
			continue
		}
		out = append(out, srcTok{text: t.Value, off: t.Pos.Offset})
	}
	return out
}

// match consumes the source token that text prints and returns its offset.
// Statement separators and the `;` of `<M;>` are skipped.
func (p *printer) match(text string) int {
	if p.src == "" && len(p.toks) == 0 {
		return -1
	}
	for p.cur < len(p.toks) && p.toks[p.cur].text == ";" && text != ";" {
		p.cur++
	}
	for j := p.cur; j < len(p.toks) && j < p.cur+4; j++ {
		if p.toks[j].text == text {
			if j != p.cur {
				p.mismatch = true
			}
			p.toks[j].used = true
			p.cur = j + 1
			p.lastOff = max(p.lastOff, p.toks[j].off)
			return p.lastOff
		}
	}
	p.mismatch = true
	return p.lastOff
}

// skip consumes the next source token if it is text (a token that the
// canonical layout leaves out).
func (p *printer) skip(text string) bool {
	if p.cur < len(p.toks) && p.toks[p.cur].text == text {
		p.cur++
		return true
	}
	return false
}

func (p *printer) peek() string {
	if p.cur < len(p.toks) {
		return p.toks[p.cur].text
	}
	return ""
}

func (p *printer) newLine(kind lineKind, indent int) {
	p.lines = append(p.lines, &outLine{kind: kind, indent: indent})
}

// tok prints a token, after a space if sp.
func (p *printer) tok(text string, sp bool) {
	l := p.lines[len(p.lines)-1]
	l.toks = append(l.toks, outTok{text: text, off: p.match(text), space: sp && len(l.toks) > 0})
}

// literal prints a literal whose text may start with a minus sign (a
// separate token in the source).
func (p *printer) literal(text string, sp bool) {
	if len(text) > 1 && text[0] == '-' {
		p.tok("-", sp)
		p.tok(text[1:], false)
		return
	}
	p.tok(text, sp)
}

func (p *printer) decl(d Decl) {
	switch d := d.(type) {
	case *FnDecl:
		p.newLine(lineDecl, 0)
		p.tok("fn", false)
		p.tok(d.Name.Name, true)
		p.tok("(", false)
		for i, id := range d.Params {
			p.comma(i)
			p.tok(id.Name, i > 0)
		}
		p.tok(")", false)
		p.tok("=", true)
		p.expr(d.Body, true)
	case *InstanceDecl:
		p.newLine(lineDecl, 0)
		p.tok("instance", false)
		p.tok(d.Name.Name, true)
		p.tok("=", true)
		p.tok(d.Kernel.Name, true)
		p.tok("<", false)
		for i, b := range d.Bindings {
			p.comma(i)
			p.tok(b.Name.Name, i > 0)
			p.tok("=", true)
			p.literal(b.Value.Text, true)
		}
		p.tok(">", false)
	case *KernelDecl:
		p.kernel(d)
	}
}

func (p *printer) comma(i int) {
	if i > 0 {
		p.tok(",", false)
	}
}

func (p *printer) kernel(k *KernelDecl) {
	p.newLine(lineDecl, 0)
	p.tok("kernel", false)
	p.tok(k.Name.Name, true)
	if len(k.Dims) == 0 && len(k.Params) == 0 {
		if p.skip("<") {
			p.skip(";")
			p.skip(">")
		}
	} else {
		p.tok("<", false)
		for i, d := range k.Dims {
			p.comma(i)
			p.tok(d.Name, i > 0)
		}
		if len(k.Params) > 0 {
			p.tok(";", false)
		}
		for i, pd := range k.Params {
			p.comma(i)
			p.tok(pd.Name.Name, true)
			p.tok(":", false)
			p.tok(pd.Type.Name, true)
			if pd.Default != nil {
				p.tok("=", true)
				p.literal(pd.Default.Text, true)
			}
		}
		p.tok(">", false)
	}
	p.tensors(k.Inputs, false)
	p.tok("->", true)
	p.tensors(k.Outputs, true)
	if len(k.Where) > 0 {
		p.newLine(lineWhere, 4)
		p.tok("where", false)
		for i, w := range k.Where {
			p.comma(i)
			p.tok(w.Name.Name, true)
			p.tok("=", true)
			p.expr(w.Value, true)
		}
	}
	for _, a := range k.Attrs {
		p.attr(a)
	}
	p.tok("{", true)
	for _, s := range k.Stmts {
		p.newLine(lineStmt, 2)
		if s.Let {
			p.tok("let", false)
		}
		p.tok(s.Name.Name, s.Let)
		if s.Indexed {
			p.items(s.Index)
		}
		p.tok("=", true)
		p.expr(s.Value, true)
	}
	p.newLine(lineClose, 0)
	p.tok("}", false)
}

func (p *printer) tensors(ts []*TensorDecl, sp bool) {
	p.tok("(", sp)
	for i, t := range ts {
		p.comma(i)
		p.tok(t.Name.Name, i > 0)
		p.tok(":", false)
		p.tok(t.Type.Name, true)
		if t.Ranked {
			p.tok("[", false)
			for j, e := range t.Shape {
				p.comma(j)
				p.expr(e, j > 0)
			}
			p.tok("]", false)
		}
	}
	p.tok(")", false)
}

func (p *printer) attr(a *Attr) {
	p.tok("@", true)
	p.tok(a.Name.Name, false)
	if !a.HasArgs {
		return
	}
	p.tok("(", false)
	for i, arg := range a.Args {
		p.comma(i)
		sp := i > 0
		if arg.Key != nil {
			// The grammar accepts a signed number as a key and drops the
			// sign from the tree; keep it as written.
			if p.peek() == "-" && arg.Key.Name != "-" {
				p.tok("-", sp)
				sp = false
			}
			p.tok(arg.Key.Name, sp)
			p.tok("=", true)
			sp = true
		}
		if arg.List {
			p.tok("[", sp)
			for j, v := range arg.Values {
				p.comma(j)
				p.literal(v.Text, j > 0)
			}
			p.tok("]", false)
		} else {
			for _, v := range arg.Values {
				p.literal(v.Text, sp)
			}
		}
	}
	p.tok(")", false)
}

// items prints `[i, k in 0..K]`.
func (p *printer) items(items []*IndexItem) {
	p.tok("[", false)
	for i, it := range items {
		p.comma(i)
		p.expr(it.X, i > 0)
		if it.Lo != nil {
			p.tok("in", true)
			p.expr(it.Lo, true)
			p.tok("..", false)
			p.expr(it.Hi, false)
		}
	}
	p.tok("]", false)
}

// expr prints e, its first token after a space if sp.
func (p *printer) expr(e Expr, sp bool) {
	switch e := e.(type) {
	case *Number:
		p.tok(e.Text, sp)
	case *Name:
		p.tok(e.Name, sp)
	case *Access:
		p.tok(e.Name.Name, sp)
		p.items(e.Index)
	case *CallExpr:
		p.tok(e.Fn.Name, sp)
		p.args(e.Args)
	case *ReduceExpr:
		p.tok(e.Op.Name, sp)
		p.items(e.Axes)
		if b, ok := e.Body.(*badArgs); ok {
			p.args(p.reduceArgs(b))
		} else {
			p.args([]Expr{e.Body})
		}
	case *UnaryExpr:
		p.tok(e.Op, sp)
		// `- -x`, not `--x`.
		p.expr(e.X, e.Op != "!" && startsWithSign(e.X))
	case *BinaryExpr:
		p.expr(e.X, sp)
		p.tok(e.Op, true)
		p.expr(e.Y, true)
	case *CondExpr:
		p.expr(e.Cond, sp)
		p.tok("?", true)
		p.expr(e.Then, true)
		p.tok(":", true)
		p.expr(e.Else, true)
	case *DefaultExpr:
		p.expr(e.X, sp)
		p.tok("??", true)
		p.expr(e.Default, true)
	case *ParenExpr:
		p.tok("(", sp)
		p.expr(e.X, false)
		p.tok(")", false)
	}
}

// startsWithSign reports whether e is printed starting with `-` or `+`.
func startsWithSign(e Expr) bool {
	for {
		switch x := e.(type) {
		case *UnaryExpr:
			return x.Op == "-" || x.Op == "+"
		case *BinaryExpr:
			e = x.X
		case *CondExpr:
			e = x.Cond
		case *DefaultExpr:
			e = x.X
		default:
			return false
		}
	}
}

func (p *printer) args(args []Expr) {
	p.tok("(", false)
	for i, a := range args {
		p.comma(i)
		p.expr(a, i > 0)
	}
	p.tok(")", false)
}

// gReduceCall re-reads a reduction written with other than one argument,
// whose arguments the tree does not keep.
type gReduceCall struct {
	Name  string        `parser:"@Ident"`
	Index []*gIndexItem `parser:"'[' (@@ (',' @@)*)? ']'"`
	Args  []*gExpr      `parser:"'(' (@@ (',' @@)*)? ')'"`
}

var reduceCallParser = participle.MustBuild[gReduceCall](
	participle.Lexer(kgLexer),
	participle.Elide("Whitespace", "LineComment", "BlockComment"),
)

func (p *printer) reduceArgs(b *badArgs) []Expr {
	if b.N == 0 || p.src == "" || b.Span.Start < 0 || b.Span.End > len(p.src) || b.Span.Start > b.Span.End {
		return nil
	}
	text := p.src[b.Span.Start:b.Span.End]
	g, err := reduceCallParser.ParseString("", text)
	if err != nil {
		p.mismatch = true
		return nil
	}
	c := converter{diag.NewSource("", text)}
	var args []Expr
	for _, a := range g.Args {
		args = append(args, c.expr(a))
	}
	return args
}

// placeComments attaches each comment to the output line it belongs to.
func (p *printer) placeComments(comments []Comment) {
	p.eof = &outLine{kind: lineEOF}
	if len(comments) == 0 || p.src == "" {
		return
	}
	type pos struct{ line, tok, off int }
	var flat []pos
	for li, l := range p.lines {
		for ti, t := range l.toks {
			flat = append(flat, pos{li, ti, t.off})
		}
	}
	cs := p.classify(comments)
	for _, c := range cs {
		g := sort.Search(len(flat), func(i int) bool { return flat[i].off > c.start })
		switch {
		case g > 0 && g < len(flat) && flat[g-1].line == flat[g].line:
			l := p.lines[flat[g].line]
			l.mid = append(l.mid, c)
			l.midAt = append(l.midAt, flat[g].tok)
		case g > 0 && c.trailing:
			l := p.lines[flat[g-1].line]
			l.end = append(l.end, c)
		case g < len(flat):
			l := p.lines[flat[g].line]
			l.lead = append(l.lead, c)
		default:
			p.eof.lead = append(p.eof.lead, c)
		}
	}
}

// classify works out, from the source text, how each comment sits among
// the tokens and comments around it.
func (p *printer) classify(comments []Comment) []*fcomment {
	// Dropped tokens do not count: a comment after a dropped `;` belongs
	// where it would without the `;`.
	var toks []srcTok
	for _, t := range p.toks {
		if t.used {
			toks = append(toks, t)
		}
	}
	cs := make([]*fcomment, 0, len(comments))
	ti := 0 // first source token after the current comment
	prevEnd, prevTrailing, havePrev := 0, false, false
	for ci, cm := range comments {
		start, end := cm.Span.Start, cm.Span.End
		// The nearest element before the comment: a token or the previous comment.
		for ti < len(toks) && toks[ti].off < start {
			ti++
		}
		c := &fcomment{text: trimComment(cm.Text), start: start, end: end}
		c.isLine = strings.HasPrefix(cm.Text, "//")
		c.multiline = strings.Contains(c.text, "\n")
		tokBefore := ti > 0
		var before int
		beforeIsTok := false
		if tokBefore {
			before = toks[ti-1].off + len(toks[ti-1].text)
			beforeIsTok = true
		}
		if havePrev && (!tokBefore || prevEnd >= before) {
			before, beforeIsTok = prevEnd, false
		}
		if tokBefore || havePrev {
			sameLine := !strings.Contains(p.src[before:start], "\n")
			c.trailing = sameLine && (beforeIsTok || prevTrailing)
			c.blankAbove = strings.Count(p.src[before:start], "\n") >= 2
		}
		if !c.isLine && !c.multiline && c.trailing {
			// What follows on the line: a token, or another block comment.
			next := len(p.src)
			nextIsLine := false
			if ti < len(toks) {
				next = toks[ti].off
			}
			if ci+1 < len(comments) && comments[ci+1].Span.Start < next {
				next = comments[ci+1].Span.Start
				nextIsLine = strings.HasPrefix(comments[ci+1].Text, "//")
			}
			c.inline = next < len(p.src) && ti < len(toks) && !nextIsLine &&
				!strings.Contains(p.src[end:next], "\n")
		}
		prevEnd, prevTrailing, havePrev = end, c.trailing, true
		cs = append(cs, c)
	}
	return cs
}

// trimComment removes the blanks that end a comment's lines.
func trimComment(s string) string {
	if !strings.Contains(s, "\n") {
		return strings.TrimRight(s, " \t\r")
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	return strings.Join(lines, "\n")
}

// blankBefore reports whether a blank line precedes source offset off,
// the start of a line's first token (a `;` before it was dropped).
func (p *printer) blankBefore(off int) bool {
	if off <= 0 || off > len(p.src) {
		return false
	}
	n := 0
	for i := off - 1; i >= 0; i-- {
		switch p.src[i] {
		case '\n':
			n++
		case ' ', '\t', '\r', ';':
		default:
			return n >= 2
		}
	}
	return false
}

func (p *printer) render() []byte {
	var b strings.Builder
	atStart := true // no blank line allowed: start of file or of a body
	writeLine := func(indent int, text string, blank bool) {
		if blank && !atStart {
			b.WriteByte('\n')
		}
		b.WriteString(strings.Repeat(" ", indent))
		b.WriteString(text)
		b.WriteByte('\n')
		atStart = false
	}
	for _, l := range append(p.lines, p.eof) {
		cindent, blanks := l.indent, l.kind != lineWhere
		if l.kind == lineClose {
			cindent = 2
		}
		inline := len(l.mid) > 0
		for _, c := range l.mid {
			inline = inline && c.inline
		}
		before, end := l.lead, l.end
		if len(l.mid) > 0 && !inline {
			if movable(l.mid, l.end) {
				end = append(append([]*fcomment(nil), l.mid...), l.end...)
			} else {
				before = append(append([]*fcomment(nil), l.lead...), l.mid...)
			}
		}
		// A blank line above the code line goes above the comments moved
		// out of it.
		blank := l.kind != lineWhere && l.kind != lineClose && len(l.toks) > 0 && p.blankBefore(l.toks[0].off)
		for i, c := range before {
			if i == len(l.lead) {
				c.blankAbove, blank = blank, false
			}
			writeLine(cindent, c.text, blanks && c.blankAbove)
		}
		if l.kind == lineEOF {
			break
		}
		var t strings.Builder
		mi := 0
		for i, tk := range l.toks {
			var cs []string
			for inline && mi < len(l.mid) && l.midAt[mi] == i {
				cs = append(cs, l.mid[mi].text)
				mi++
			}
			sep := ""
			if tk.space {
				sep = " "
			}
			if len(cs) == 0 {
				t.WriteString(sep + tk.text)
				continue
			}
			cm := strings.Join(cs, " ")
			prev := l.toks[i-1].text
			opener := prev == "(" || prev == "[" || prev == "<"
			closer := false
			switch tk.text {
			case ")", "]", ">", ",", ":", "..", "[", "(":
				closer = true
			}
			switch {
			case sep != "":
				t.WriteString(" " + cm + " " + tk.text)
			case opener && closer:
				t.WriteString(cm + tk.text)
			case closer:
				t.WriteString(" " + cm + tk.text)
			default:
				t.WriteString(cm + " " + tk.text)
			}
		}
		if len(end) > 0 {
			var cs []string
			for _, c := range end {
				cs = append(cs, c.text)
			}
			t.WriteString("  " + strings.Join(cs, " "))
		}
		writeLine(l.indent, t.String(), blank)
		atStart = len(l.toks) > 0 && l.toks[len(l.toks)-1].text == "{"
	}
	return []byte(b.String())
}

// movable reports whether the comments inside a line can all go to its end:
// they are trailing comments, and the only line comment, if any, comes last.
func movable(mid, end []*fcomment) bool {
	all := append(append([]*fcomment(nil), mid...), end...)
	for i, c := range all {
		if i < len(mid) && !c.trailing {
			return false
		}
		if c.isLine && i != len(all)-1 {
			return false
		}
	}
	return true
}
