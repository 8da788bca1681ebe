package frontend

import (
	"github.com/alecthomas/participle/v2/lexer"

	"kgen.dev/kgen/diag"
)

// convert turns participle's concrete tree into the AST, grouping flat
// operator lists by precedence.
type converter struct{ src *diag.Source }

func (c converter) span(start, end lexer.Position) diag.Span {
	return diag.Span{Src: c.src, Start: start.Offset, End: trimEnd(c.src.Text, start.Offset, end.Offset)}
}

// trimEnd moves a node's end back over the whitespace and comments that
// participle counts up to the next token.
func trimEnd(text string, start, end int) int {
	end = min(end, len(text))
	for end > start {
		switch text[end-1] {
		case ' ', '\t', '\r', '\n':
			end--
			continue
		}
		break
	}
	return end
}

func (c converter) ident(g *gIdent) Ident {
	if g == nil {
		return Ident{}
	}
	return Ident{Name: g.Name, Span: c.span(g.Pos, g.EndPos)}
}

func convertDecl(src *diag.Source, g *gDecl) Decl {
	c := converter{src}
	switch {
	case g.Fn != nil:
		d := &FnDecl{Span: c.span(g.Fn.Pos, g.Fn.EndPos), Name: c.ident(g.Fn.Name), Body: c.expr(g.Fn.Body)}
		for _, p := range g.Fn.Params {
			d.Params = append(d.Params, c.ident(p))
		}
		return d
	case g.Kernel != nil:
		return c.kernel(g.Kernel)
	default:
		gi := g.Instance
		d := &InstanceDecl{Span: c.span(gi.Pos, gi.EndPos), Name: c.ident(gi.Name), Kernel: c.ident(gi.Kernel)}
		for _, b := range gi.Bindings {
			d.Bindings = append(d.Bindings, &Binding{Name: c.ident(b.Name), Value: c.literal(b.Value)})
		}
		return d
	}
}

func (c converter) kernel(g *gKernel) *KernelDecl {
	k := &KernelDecl{
		Span:  c.span(g.Pos, g.EndPos),
		Name:  c.ident(g.Name),
		Close: diag.Span{Src: c.src, Start: g.RBracePos.Offset, End: g.RBracePos.Offset + 1},
	}
	if g.Sizes != nil {
		for _, d := range g.Sizes.Dims {
			k.Dims = append(k.Dims, c.ident(d))
		}
		for _, p := range g.Sizes.Params {
			pd := &ParamDecl{Name: c.ident(p.Name), Type: c.ident(p.Type)}
			if p.Default != nil {
				pd.Default = c.literal(p.Default)
			}
			k.Params = append(k.Params, pd)
		}
	}
	k.Inputs = c.tensors(g.Inputs)
	k.Outputs = c.tensors(g.Outputs)
	for _, w := range g.Where {
		k.Where = append(k.Where, &Derived{Name: c.ident(w.Name), Value: c.expr(w.Value)})
	}
	for _, a := range g.Attrs {
		attr := &Attr{Span: c.span(a.Pos, a.EndPos), Name: c.ident(a.Name), HasArgs: a.HasArgs}
		for _, arg := range a.Args {
			attr.Args = append(attr.Args, c.attrArg(arg))
		}
		k.Attrs = append(k.Attrs, attr)
	}
	for _, s := range g.Stmts {
		st := &Stmt{Span: c.span(s.Pos, s.EndPos), Let: s.Let, Name: c.ident(s.Name), Indexed: s.Indexed, Value: c.expr(s.Value)}
		st.Index = c.items(s.Index)
		k.Stmts = append(k.Stmts, st)
	}
	return k
}

func (c converter) tensors(gs []*gTensorDecl) []*TensorDecl {
	var ts []*TensorDecl
	for _, g := range gs {
		t := &TensorDecl{Span: c.span(g.Pos, g.EndPos), Name: c.ident(g.Name), Type: c.ident(g.Type), Ranked: g.Ranked}
		for _, e := range g.Shape {
			t.Shape = append(t.Shape, c.expr(e))
		}
		ts = append(ts, t)
	}
	return ts
}

func (c converter) literal(g *gLiteral) *Literal {
	text := g.Value
	if g.Neg {
		text = "-" + text
	}
	return &Literal{Span: c.span(g.Pos, g.EndPos), Text: text}
}

func (c converter) attrValue(g *gAttrValue) Literal {
	text := g.Value
	if g.Neg {
		text = "-" + text
	}
	return Literal{Span: c.span(g.Pos, g.EndPos), Text: text}
}

func (c converter) attrArg(g *gAttrArg) AttrArg {
	arg := AttrArg{Span: c.span(g.Pos, g.EndPos)}
	list := g.List
	if g.First != nil {
		if g.Second == nil {
			arg.Values = []Literal{c.attrValue(g.First)}
			return arg
		}
		key := Ident{Name: g.First.Value, Span: c.span(g.First.Pos, g.First.EndPos)}
		arg.BadKey = g.First.Neg || !isName(g.First.Value)
		arg.Key = &key
		list = g.Second
	}
	if list.Single != nil {
		arg.Values = []Literal{c.attrValue(list.Single)}
		return arg
	}
	arg.List = true
	for _, v := range list.Values {
		arg.Values = append(arg.Values, c.attrValue(v))
	}
	return arg
}

func (c converter) items(gs []*gIndexItem) []*IndexItem {
	var items []*IndexItem
	for _, g := range gs {
		it := &IndexItem{Span: c.span(g.Pos, g.EndPos), X: c.expr(g.X)}
		if g.Lo != nil {
			it.Lo, it.Hi = c.expr(g.Lo), c.expr(g.Hi)
		}
		items = append(items, it)
	}
	return items
}

func (c converter) expr(g *gExpr) Expr {
	cond := c.binary(g.Cond)
	if g.Then == nil {
		return cond
	}
	return &CondExpr{Span: c.span(g.Pos, g.EndPos), Cond: cond, Then: c.expr(g.Then), Else: c.expr(g.Else)}
}

var binaryPrec = map[string]int{
	"||": 1, "&&": 2,
	"==": 3, "!=": 3, "<": 3, "<=": 3, ">": 3, ">=": 3,
	"+": 4, "-": 4,
	"*": 5, "/": 5, "%": 5,
}

// binary groups a flat operand list by precedence climbing; all binary
// operators associate to the left.
func (c converter) binary(g *gBinary) Expr {
	operands := []Expr{c.unary(g.Head)}
	for _, t := range g.Tail {
		operands = append(operands, c.unary(t.X))
	}
	i := 0 // the next operator, g.Tail[i]
	var parse func(minPrec int) Expr
	parse = func(minPrec int) Expr {
		lhs := operands[i]
		for i < len(g.Tail) && binaryPrec[g.Tail[i].Op] >= minPrec {
			t := g.Tail[i]
			i++
			rhs := parse(binaryPrec[t.Op] + 1)
			opSpan := diag.Span{Src: c.src, Start: t.Pos.Offset, End: t.Pos.Offset + len(t.Op)}
			lhs = &BinaryExpr{Span: lhs.Pos().To(rhs.Pos()), Op: t.Op, OpSpan: opSpan, X: lhs, Y: rhs}
		}
		return lhs
	}
	return parse(0)
}

func (c converter) unary(g *gUnary) Expr {
	if g.Postfix != nil {
		return c.postfix(g.Postfix)
	}
	return &UnaryExpr{Span: c.span(g.Pos, g.EndPos), Op: g.Op, X: c.unary(g.X)}
}

func (c converter) postfix(g *gPostfix) Expr {
	x := c.primary(g.X)
	if g.Default == nil {
		return x
	}
	return &DefaultExpr{Span: c.span(g.Pos, g.EndPos), X: x, Default: c.unary(g.Default)}
}

func (c converter) primary(g *gPrimary) Expr {
	sp := c.span(g.Pos, g.EndPos)
	switch {
	case g.Paren != nil:
		return &ParenExpr{Span: sp, X: c.expr(g.Paren)}
	case g.Name != nil:
		return c.name(g.Name)
	}
	return &Number{Span: sp, Text: g.Number}
}

func (c converter) name(g *gName) Expr {
	sp := c.span(g.Pos, g.EndPos)
	id := Ident{Name: g.Name, Span: diag.Span{Src: c.src, Start: g.Pos.Offset, End: g.Pos.Offset + len(g.Name)}}
	var args []Expr
	for _, a := range g.Args {
		args = append(args, c.expr(a))
	}
	switch {
	case g.Indexed && g.Called:
		body := Expr(nil)
		if len(args) == 1 {
			body = args[0]
		} else {
			body = &badArgs{Span: sp, N: len(args)}
		}
		return &ReduceExpr{Span: sp, Op: id, Axes: c.items(g.Index), Body: body}
	case g.Indexed:
		return &Access{Span: sp, Name: id, Index: c.items(g.Index)}
	case g.Called:
		return &CallExpr{Span: sp, Fn: id, Args: args}
	}
	return &Name{Span: sp, Name: g.Name}
}

// badArgs stands for a reduction body written with other than one
// argument; the checker reports it.
type badArgs struct {
	Span diag.Span
	N    int
}

func (e *badArgs) Pos() diag.Span { return e.Span }

// isName reports whether s is an identifier.
func isName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}
