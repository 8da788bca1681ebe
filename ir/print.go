package ir

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// printer renders IR as text. In canonical mode every name is replaced by
// its kind and position (dims D0.., params P0.., tensors T0.., indices
// i0..) and annotations are left out, so that the text depends only on the
// semantics: that text is what Hash digests.
type printer struct {
	sb        strings.Builder
	canonical bool
	names     map[any]string
	nIndex    int
	// where, when set, is what a let's comment says in place of the
	// kernel's analysis (inlinable or materialized): where a plan keeps
	// its values (PrintStmtWhere).
	where *string
}

func (p *printer) name(obj any, fallback string) string {
	if !p.canonical {
		return fallback
	}
	if n, ok := p.names[obj]; ok {
		return n
	}
	var n string
	switch obj.(type) {
	case *Index:
		n = fmt.Sprintf("i%d", p.nIndex)
		p.nIndex++
	default:
		n = fallback // names are assigned up front for everything else
	}
	p.names[obj] = n
	return n
}

// Format renders an expression in the language's own syntax, with the
// checker's conversions shown as casts.
func Format(e Expr) string {
	p := &printer{}
	p.expr(e, 0)
	return p.sb.String()
}

// Print renders a kernel; each statement carries its classification as a
// comment.
func Print(k *Kernel) string {
	p := &printer{}
	p.kernel(k)
	return p.sb.String()
}

// PrintStmt renders one statement of k as Print does.
func PrintStmt(k *Kernel, s *Stmt) string {
	p := &printer{}
	p.stmt(k, s)
	return strings.TrimSuffix(strings.TrimPrefix(p.sb.String(), "  "), "\n")
}

// PrintStmtWhere is PrintStmt with where, if not empty, as a let's
// comment in place of whether the kernel could inline it: where a
// plan's launch keeps its values.
func PrintStmtWhere(k *Kernel, s *Stmt, where string) string {
	p := &printer{where: &where}
	p.stmt(k, s)
	return strings.TrimSuffix(strings.TrimPrefix(p.sb.String(), "  "), "\n")
}

// PrintProgram renders every kernel and instance of a program.
func PrintProgram(prog *Program) string {
	p := &printer{}
	for i, k := range prog.Kernels {
		if i > 0 {
			p.sb.WriteString("\n")
		}
		p.kernel(k)
	}
	if len(prog.Instances) > 0 && len(prog.Kernels) > 0 {
		p.sb.WriteString("\n")
	}
	for _, in := range prog.Instances {
		fmt.Fprintf(&p.sb, "instance %s = %s<%s>\n", in.Name, in.Kernel.Name, in.Env)
	}
	return p.sb.String()
}

// Hash is the canonical content hash of a kernel: equal for kernels that
// differ only in names, comments, formatting, or in how fns and constant
// subexpressions were written.
func Hash(k *Kernel) string {
	sum := sha256.Sum256([]byte(CanonicalText(k)))
	return hex.EncodeToString(sum[:])
}

// CanonicalText is the text Hash digests: the kernel printed with every
// name replaced by its kind and position, for debugging cache keys.
func CanonicalText(k *Kernel) string {
	p := &printer{canonical: true, names: map[any]string{}}
	for i, d := range k.Dims {
		p.names[d] = fmt.Sprintf("D%d", i)
	}
	for i, prm := range k.Params {
		p.names[prm] = fmt.Sprintf("P%d", i)
	}
	for i, t := range k.Tensors() {
		p.names[t] = fmt.Sprintf("T%d", i)
	}
	p.kernel(k)
	return p.sb.String()
}

func (p *printer) kernel(k *Kernel) {
	w := &p.sb
	name := k.Name
	if p.canonical {
		name = "_"
	}
	fmt.Fprintf(w, "kernel %s<", name)
	var dims []string
	for _, d := range k.DeclaredDims() {
		dims = append(dims, p.name(d, d.Name))
	}
	w.WriteString(strings.Join(dims, ", "))
	if len(k.Params) > 0 {
		w.WriteString("; ")
		for i, prm := range k.Params {
			if i > 0 {
				w.WriteString(", ")
			}
			fmt.Fprintf(w, "%s: %s", p.name(prm, prm.Name), prm.Type)
			if prm.Default != nil {
				fmt.Fprintf(w, " = %s", FormatValue(prm.Default))
			}
		}
	}
	w.WriteString(">(")
	p.tensors(k.Inputs)
	w.WriteString(") -> (")
	p.tensors(k.Outputs)
	w.WriteString(")")
	first := true
	for _, d := range k.Dims {
		if d.Def == nil {
			continue
		}
		if first {
			w.WriteString("\n    where ")
			first = false
		} else {
			w.WriteString(", ")
		}
		fmt.Fprintf(w, "%s = ", p.name(d, d.Name))
		p.expr(d.Def, 0)
	}
	for _, a := range k.Attrs {
		if p.canonical && a.Name == "tune" {
			// @tune says where to search, not what to compute: the
			// tuning database's records of a kernel hold with or without it.
			continue
		}
		w.WriteString(" ")
		w.WriteString(FormatAttr(a))
	}
	w.WriteString(" {\n")
	for _, s := range k.Stmts {
		p.stmt(k, s)
	}
	w.WriteString("}\n")
}

func (p *printer) tensors(ts []*Tensor) {
	for i, t := range ts {
		if i > 0 {
			p.sb.WriteString(", ")
		}
		fmt.Fprintf(&p.sb, "%s: %s", p.name(t, t.Name), t.DType)
		p.shape(t.Shape)
	}
}

func (p *printer) shape(shape []Expr) {
	p.sb.WriteString("[")
	for i, e := range shape {
		if i > 0 {
			p.sb.WriteString(", ")
		}
		p.expr(e, 0)
	}
	p.sb.WriteString("]")
}

func (p *printer) stmt(k *Kernel, s *Stmt) {
	w := &p.sb
	w.WriteString("  ")
	if s.Target.Kind == Let {
		w.WriteString("let ")
	}
	w.WriteString(p.name(s.Target, s.Target.Name))
	if len(s.Index) > 0 {
		p.indices(s.Index)
	}
	if s.Target.Kind == Let {
		fmt.Fprintf(w, ": %s", s.Target.DType)
	}
	w.WriteString(" = ")
	p.expr(s.Value, 0)
	if !p.canonical {
		fmt.Fprintf(w, "  // %s", Classify(s))
		if s.Target.Kind == Let && p.where != nil {
			if *p.where != "" {
				fmt.Fprintf(w, ", %s", *p.where)
			}
		} else if s.Target.Kind == Let {
			if ok, _ := Inlinable(k, s.Target); ok {
				w.WriteString(", inlinable")
			} else {
				w.WriteString(", materialized")
			}
		}
	}
	w.WriteString("\n")
}

func (p *printer) indices(ix []*Index) {
	p.sb.WriteString("[")
	for i, x := range ix {
		if i > 0 {
			p.sb.WriteString(", ")
		}
		fmt.Fprintf(&p.sb, "%s in ", p.name(x, x.Name))
		p.expr(x.Lo, 0)
		p.sb.WriteString("..")
		p.expr(x.Hi, 0)
	}
	p.sb.WriteString("]")
}

// Operator precedences, loosest first, shared with the frontend's parser.
const (
	precTernary = 1 + iota
	precOr
	precAnd
	precCompare
	precAdd
	precMul
	precUnary
)

// Precedence returns the binding strength of a binary operator.
func Precedence(op Op) int {
	switch op {
	case Or:
		return precOr
	case And:
		return precAnd
	case Add, Sub:
		return precAdd
	case Mul, Div, Mod:
		return precMul
	}
	return precCompare
}

func (p *printer) expr(e Expr, outer int) {
	w := &p.sb
	paren := func(prec int, body func()) {
		if prec < outer {
			w.WriteString("(")
			body()
			w.WriteString(")")
		} else {
			body()
		}
	}
	switch e := e.(type) {
	case *Const:
		w.WriteString(FormatConst(e))
	case *IndexRef:
		w.WriteString(p.name(e.Index, e.Index.Name))
	case *DimRef:
		w.WriteString(p.name(e.Dim, e.Dim.Name))
	case *ParamRef:
		w.WriteString(p.name(e.Param, e.Param.Name))
	case *Load:
		body := func() {
			w.WriteString(p.name(e.Tensor, e.Tensor.Name))
			if len(e.Index) > 0 {
				p.args("[", e.Index, "]")
			}
			if e.Default != nil {
				w.WriteString(" ?? ")
				p.expr(e.Default, precUnary)
			}
		}
		if e.Default != nil && outer > 0 {
			w.WriteString("(")
			body()
			w.WriteString(")")
		} else {
			body()
		}
	case *Unary:
		paren(precUnary, func() {
			w.WriteString(e.Op.String())
			p.expr(e.X, precUnary)
		})
	case *Binary:
		prec := Precedence(e.Op)
		paren(prec, func() {
			left := prec
			if e.Op.IsCompare() {
				left = prec + 1 // comparisons do not chain
			}
			p.expr(e.X, left)
			fmt.Fprintf(w, " %s ", e.Op)
			p.expr(e.Y, prec+1)
		})
	case *Select:
		paren(precTernary, func() {
			p.expr(e.Cond, precTernary+1)
			w.WriteString(" ? ")
			p.expr(e.X, precTernary+1)
			w.WriteString(" : ")
			p.expr(e.Y, precTernary)
		})
	case *Call:
		w.WriteString(e.Fn.String())
		p.args("(", e.Args, ")")
	case *Cast:
		w.WriteString(e.T.String())
		p.args("(", []Expr{e.X}, ")")
	case *Reduce:
		fmt.Fprintf(w, "%s<%s>", e.Op, e.T)
		p.indices(e.Axes)
		p.args("(", []Expr{e.Body}, ")")
	default:
		fmt.Fprintf(w, "<%T>", e)
	}
}

func (p *printer) args(open string, args []Expr, close string) {
	p.sb.WriteString(open)
	for i, a := range args {
		if i > 0 {
			p.sb.WriteString(", ")
		}
		p.expr(a, 0)
	}
	p.sb.WriteString(close)
}

// FormatConst renders a constant. Floats always show a '.' or an exponent
// so that they read back as floats; types other than the defaults (f32 for
// floats, i64 for integers) are shown as casts.
func FormatConst(c *Const) string {
	s := FormatValue(c)
	if c.T == F32 || c.T == I64 || c.T == Bool {
		return s
	}
	return fmt.Sprintf("%s(%s)", c.T, s)
}

// FormatValue renders a constant's value without its type, where the type
// is known from context (a param's default, an instance's binding).
func FormatValue(c *Const) string {
	var s string
	switch {
	case c.T == Bool:
		s = strconv.FormatBool(c.I != 0)
	case c.T == F32 && float64(float32(c.F)) == c.F:
		s = formatFloat(c.F, 32) // the shortest text that reads back as this f32
	case c.T.IsFloat():
		s = FormatFloat(c.F)
	default:
		s = strconv.FormatInt(c.I, 10)
	}
	return s
}

// FormatFloat renders a float literal that reads back as the same float64.
func FormatFloat(v float64) string { return formatFloat(v, 64) }

func formatFloat(v float64, bits int) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	case math.IsNaN(v):
		return "nan"
	}
	s := strconv.FormatFloat(v, 'g', -1, bits)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// FormatAttr renders an attribute as written.
func FormatAttr(a *Attr) string {
	if len(a.Args) == 0 {
		return "@" + a.Name
	}
	var args []string
	for _, arg := range a.Args {
		v := strings.Join(arg.Values, ", ")
		if arg.List {
			v = "[" + v + "]"
		}
		if arg.Key != "" {
			v = arg.Key + " = " + v
		}
		args = append(args, v)
	}
	return fmt.Sprintf("@%s(%s)", a.Name, strings.Join(args, ", "))
}
