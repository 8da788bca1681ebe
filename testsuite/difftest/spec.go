package main

import (
	"fmt"
	"slices"
	"strings"
)

// Spec is a generated spec file: fns, one kernel and its instances. It is
// kept as a structure, not only as text, so that the minimizer can remove
// statements, inputs and instances and replace subexpressions, and render
// every candidate back to source for the real frontend to read.
type Spec struct {
	Header    []string // comment lines, without "// "
	Fns       []Fn
	K         Kernel
	Instances []Instance
}

// Fn is a scalar function declaration.
type Fn struct {
	Name   string
	Params []string
	Body   string
}

// Kernel is the one kernel of a spec.
type Kernel struct {
	Name    string
	Dims    []string
	Params  []Param
	Inputs  []Decl
	Outputs []Decl
	Where   []Derived
	Attrs   []string
	Stmts   []*Stmt
}

// Param is a compile-time scalar with its default ("" for none).
type Param struct {
	Name, DType, Default string
}

// Decl declares a tensor; an empty shape is rank 0.
type Decl struct {
	Name, DType string
	Shape       []string
}

// Derived is a where-clause dim.
type Derived struct {
	Name string
	Expr string
}

// Stmt is an output statement or a let.
type Stmt struct {
	Let  bool
	Name string
	LHS  []string // index items, "i" or "g in 0..G"
	Dims []string // the dim each LHS index runs over
	RHS  *Expr
}

// Instance binds every dim (and some params) to literals.
type Instance struct {
	Name     string
	Bindings []Binding
}

// Binding is one NAME = VALUE of an instance.
type Binding struct {
	Name  string
	Value int64
	Lit   string // a param's literal when it is not an integer size
}

// Kinds of values an expression computes: they decide which operators
// and builtins a generated or simplified expression may use.
const (
	kFloat = 'f'
	kInt   = 'i'
	kBool  = 'b'
)

// Expr is an expression tree in the spec language's surface syntax. Op
// says how it prints:
//
//	"lit", "name": Text itself
//	"read": Text[Args...]; with Pad set, "T[...] ?? Pad"
//	"call": Text(Args...)
//	"red": Text[Axes...](Args[0])
//	"un": Text Args[0] (unary minus, !)
//	"bin": Args[0] Text Args[1]
//	"cond": Args[0] ? Args[1] : Args[2]
//	"paren": (Args[0]), for index expressions kept as written
type Expr struct {
	Op   string
	Text string
	Args []*Expr
	Axes []string
	// AxisDims are the dims a reduction's axes run over, so that an axis
	// whose range can no longer be inferred (the minimizer removed the
	// read that fixed it) can be given explicitly.
	AxisDims []string
	Pad      *Expr
	Kind     byte // kFloat, kInt, kBool
}

func lit(s string, kind byte) *Expr  { return &Expr{Op: "lit", Text: s, Kind: kind} }
func name(s string, kind byte) *Expr { return &Expr{Op: "name", Text: s, Kind: kind} }
func call(f string, kind byte, args ...*Expr) *Expr {
	return &Expr{Op: "call", Text: f, Args: args, Kind: kind}
}
func bin(op string, kind byte, a, b *Expr) *Expr {
	return &Expr{Op: "bin", Text: op, Args: []*Expr{a, b}, Kind: kind}
}
func cond(c, a, b *Expr) *Expr {
	return &Expr{Op: "cond", Args: []*Expr{c, a, b}, Kind: a.Kind}
}
func red(op string, axes []string, body *Expr) *Expr {
	return &Expr{Op: "red", Text: op, Axes: axes, Args: []*Expr{body}, Kind: body.Kind}
}
func read(t string, kind byte, idx ...*Expr) *Expr {
	return &Expr{Op: "read", Text: t, Args: idx, Kind: kind}
}
func padded(r *Expr, pad *Expr) *Expr { r.Pad = pad; return r }

// precedence of binary operators (higher binds tighter).
var precedence = map[string]int{
	"||": 2, "&&": 3,
	"==": 4, "!=": 4, "<": 4, "<=": 4, ">": 4, ">=": 4,
	"+": 5, "-": 5, "*": 6, "/": 6, "%": 6,
}

// String renders e with the parentheses its structure needs.
func (e *Expr) String() string {
	var sb strings.Builder
	e.write(&sb)
	return sb.String()
}

func (e *Expr) write(sb *strings.Builder) {
	switch e.Op {
	case "lit", "name":
		sb.WriteString(e.Text)
	case "read":
		sb.WriteString(e.Text)
		if len(e.Args) > 0 {
			sb.WriteString("[")
			for i, a := range e.Args {
				if i > 0 {
					sb.WriteString(", ")
				}
				a.write(sb)
			}
			sb.WriteString("]")
		}
		if e.Pad != nil {
			sb.WriteString(" ?? ")
			// The fallback is a unary expression: parenthesize anything
			// larger than a primary or a signed primary.
			if e.Pad.Op == "bin" || e.Pad.Op == "cond" || e.Pad.Op == "read" && e.Pad.Pad != nil {
				sb.WriteString("(")
				e.Pad.write(sb)
				sb.WriteString(")")
			} else {
				e.Pad.write(sb)
			}
		}
	case "call":
		sb.WriteString(e.Text)
		sb.WriteString("(")
		for i, a := range e.Args {
			if i > 0 {
				sb.WriteString(", ")
			}
			a.write(sb)
		}
		sb.WriteString(")")
	case "red":
		fmt.Fprintf(sb, "%s[%s](", e.Text, strings.Join(e.Axes, ", "))
		e.Args[0].write(sb)
		sb.WriteString(")")
	case "un":
		sb.WriteString(e.Text)
		e.Args[0].operand(sb, 7, false)
	case "bin":
		p := precedence[e.Text]
		e.Args[0].operand(sb, p, false)
		fmt.Fprintf(sb, " %s ", e.Text)
		e.Args[1].operand(sb, p, true)
	case "cond":
		e.Args[0].operand(sb, 2, false)
		sb.WriteString(" ? ")
		e.Args[1].operand(sb, 2, false)
		sb.WriteString(" : ")
		e.Args[2].operand(sb, 1, true)
	case "paren":
		sb.WriteString("(")
		e.Args[0].write(sb)
		sb.WriteString(")")
	default:
		panic("difftest: unknown expression op " + e.Op)
	}
}

// operand writes e as an operand of an operator of precedence p,
// parenthesized when it binds less tightly (or equally, on the right,
// since every binary operator is left-associative; comparisons do not
// chain at all). A padded read is parenthesized everywhere but alone, so
// that "(X[i] ?? 0) * w" reads as meant.
func (e *Expr) operand(sb *strings.Builder, p int, right bool) {
	need := false
	switch e.Op {
	case "bin":
		q := precedence[e.Text]
		need = q < p || q == p && (right || q == 4)
	case "cond":
		need = true
	case "un":
		need = p >= 7
	case "read":
		need = e.Pad != nil
	}
	if need {
		sb.WriteString("(")
		e.write(sb)
		sb.WriteString(")")
		return
	}
	e.write(sb)
}

// Clone copies the spec deeply, so that a minimizer's candidate can be
// changed without touching the spec it came from.
func (s *Spec) Clone() *Spec {
	c := *s
	c.Header = slices.Clone(s.Header)
	c.Fns = slices.Clone(s.Fns)
	c.K.Dims = slices.Clone(s.K.Dims)
	c.K.Params = slices.Clone(s.K.Params)
	c.K.Inputs = cloneDecls(s.K.Inputs)
	c.K.Outputs = cloneDecls(s.K.Outputs)
	c.K.Where = slices.Clone(s.K.Where)
	c.K.Attrs = slices.Clone(s.K.Attrs)
	c.K.Stmts = nil
	for _, st := range s.K.Stmts {
		n := *st
		n.LHS = slices.Clone(st.LHS)
		n.Dims = slices.Clone(st.Dims)
		n.RHS = st.RHS.Clone()
		c.K.Stmts = append(c.K.Stmts, &n)
	}
	c.Instances = nil
	for _, in := range s.Instances {
		c.Instances = append(c.Instances, Instance{Name: in.Name, Bindings: slices.Clone(in.Bindings)})
	}
	return &c
}

func cloneDecls(ds []Decl) []Decl {
	out := slices.Clone(ds)
	for i := range out {
		out[i].Shape = slices.Clone(ds[i].Shape)
	}
	return out
}

// Clone copies the expression tree.
func (e *Expr) Clone() *Expr {
	if e == nil {
		return nil
	}
	c := *e
	c.Axes = slices.Clone(e.Axes)
	c.AxisDims = slices.Clone(e.AxisDims)
	c.Args = make([]*Expr, len(e.Args))
	for i, a := range e.Args {
		c.Args[i] = a.Clone()
	}
	c.Pad = e.Pad.Clone()
	return &c
}

// Text renders the spec as a source file.
func (s *Spec) Text() string {
	var sb strings.Builder
	for _, h := range s.Header {
		if h == "" {
			sb.WriteString("//\n")
		} else {
			fmt.Fprintf(&sb, "// %s\n", h)
		}
	}
	if len(s.Header) > 0 {
		sb.WriteString("\n")
	}
	for _, f := range s.Fns {
		fmt.Fprintf(&sb, "fn %s(%s) = %s\n", f.Name, strings.Join(f.Params, ", "), f.Body)
	}
	if len(s.Fns) > 0 {
		sb.WriteString("\n")
	}
	k := &s.K
	fmt.Fprintf(&sb, "kernel %s", k.Name)
	if len(k.Dims) > 0 || len(k.Params) > 0 {
		sb.WriteString("<" + strings.Join(k.Dims, ", "))
		if len(k.Params) > 0 {
			var ps []string
			for _, p := range k.Params {
				t := p.Name + ": " + p.DType
				if p.Default != "" {
					t += " = " + p.Default
				}
				ps = append(ps, t)
			}
			if len(k.Dims) > 0 {
				sb.WriteString("; ")
			} else {
				sb.WriteString("; ")
			}
			sb.WriteString(strings.Join(ps, ", "))
		}
		sb.WriteString(">")
	}
	fmt.Fprintf(&sb, "(%s) -> (%s)", decls(k.Inputs), decls(k.Outputs))
	if len(k.Where) > 0 {
		var ws []string
		for _, w := range k.Where {
			ws = append(ws, w.Name+" = "+w.Expr)
		}
		sb.WriteString("\n    where " + strings.Join(ws, ", "))
	}
	for _, a := range k.Attrs {
		sb.WriteString(" " + a)
	}
	sb.WriteString(" {\n")
	for _, st := range k.Stmts {
		sb.WriteString("  ")
		if st.Let {
			sb.WriteString("let ")
		}
		sb.WriteString(st.Name)
		if len(st.LHS) > 0 {
			sb.WriteString("[" + strings.Join(st.LHS, ", ") + "]")
		}
		sb.WriteString(" = " + st.RHS.String() + "\n")
	}
	sb.WriteString("}\n")
	if len(s.Instances) > 0 {
		sb.WriteString("\n")
	}
	for _, in := range s.Instances {
		var bs []string
		for _, b := range in.Bindings {
			if b.Lit != "" {
				bs = append(bs, b.Name+" = "+b.Lit)
			} else {
				bs = append(bs, fmt.Sprintf("%s = %d", b.Name, b.Value))
			}
		}
		fmt.Fprintf(&sb, "instance %s = %s<%s>\n", in.Name, k.Name, strings.Join(bs, ", "))
	}
	return sb.String()
}

func decls(ds []Decl) string {
	var out []string
	for _, d := range ds {
		t := d.Name + ": " + d.DType
		if len(d.Shape) > 0 {
			t += "[" + strings.Join(d.Shape, ", ") + "]"
		}
		out = append(out, t)
	}
	return strings.Join(out, ", ")
}

// fixRanges gives an explicit range to every let index and reduction axis
// that appears alone in no read of its statement, where the checker could
// not infer it.
func (s *Spec) fixRanges() {
	for _, st := range s.K.Stmts {
		if st.Let {
			for i, item := range st.LHS {
				if !strings.Contains(item, " in ") && i < len(st.Dims) && !appearsAlone(st.RHS, item) {
					st.LHS[i] = item + " in 0.." + st.Dims[i]
				}
			}
		}
		st.RHS.walk(func(e *Expr) {
			if e.Op != "red" {
				return
			}
			for i, item := range e.Axes {
				if !strings.Contains(item, " in ") && i < len(e.AxisDims) && !appearsAlone(e.Args[0], item) {
					e.Axes[i] = item + " in 0.." + e.AxisDims[i]
				}
			}
		})
	}
}

// walk calls fn on e and every subexpression.
func (e *Expr) walk(fn func(*Expr)) {
	if e == nil {
		return
	}
	fn(e)
	for _, a := range e.Args {
		a.walk(fn)
	}
	e.Pad.walk(fn)
}

// appearsAlone reports whether index ix is the whole index of some read in e.
func appearsAlone(e *Expr, ix string) bool {
	found := false
	e.walk(func(x *Expr) {
		if x.Op == "read" {
			for _, a := range x.Args {
				if a.Op == "name" && a.Text == ix {
					found = true
				}
			}
		}
	})
	return found
}
