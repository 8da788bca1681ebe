package ir

import (
	"fmt"
	"slices"
)

// Verify checks the IR's invariants and returns every violation found. The
// checker's output must verify, and so must the output of every pass.
func Verify(k *Kernel) []error {
	v := &verifier{k: k, written: map[*Tensor]bool{}, inScope: map[*Index]bool{}}
	v.run()
	return v.errs
}

type verifier struct {
	k       *Kernel
	errs    []error
	written map[*Tensor]bool
	inScope map[*Index]bool
}

func (v *verifier) errorf(format string, args ...any) {
	v.errs = append(v.errs, fmt.Errorf("kernel %s: "+format, append([]any{v.k.Name}, args...)...))
}

func (v *verifier) run() {
	k := v.k
	for _, d := range k.Dims {
		if d.Def != nil {
			v.intExpr(d.Def, "derived dim "+d.Name)
		}
	}
	for _, t := range k.Tensors() {
		if t.DType == Invalid {
			v.errorf("tensor %s has no dtype", t.Name)
		}
		for _, e := range t.Shape {
			v.intExpr(e, "shape of "+t.Name)
		}
	}
	for _, s := range k.Stmts {
		t := s.Target
		if t.Kind == Input {
			v.errorf("statement writes input %s", t.Name)
		}
		if v.written[t] {
			v.errorf("%s is written twice", t.Name)
		}
		if len(s.Index) != len(t.Shape) {
			v.errorf("%s has rank %d but its statement has %d indices", t.Name, len(t.Shape), len(s.Index))
		}
		for _, ix := range s.Index {
			v.inScope[ix] = true
		}
		v.expr(s.Value)
		if s.Value.Type() != t.DType {
			v.errorf("statement for %s computes %s, not %s", t.Name, s.Value.Type(), t.DType)
		}
		for _, ix := range s.Index {
			delete(v.inScope, ix)
		}
		v.written[t] = true
	}
	for _, t := range k.Outputs {
		if !v.written[t] {
			v.errorf("output %s is never written", t.Name)
		}
	}
}

func (v *verifier) intExpr(e Expr, what string) {
	if e == nil {
		v.errorf("%s: missing expression", what)
		return
	}
	v.expr(e)
	if !e.Type().IsInt() {
		v.errorf("%s: %s is %s, not an integer", what, Format(e), e.Type())
	}
}

func (v *verifier) expr(e Expr) {
	switch e := e.(type) {
	case *Const:
	case *IndexRef:
		if !v.inScope[e.Index] {
			v.errorf("index %s used outside its statement or reduction", e.Index.Name)
		}
	case *DimRef:
		if !slices.Contains(v.k.Dims, e.Dim) {
			v.errorf("dim %s is not the kernel's", e.Dim.Name)
		}
	case *ParamRef:
		if !slices.Contains(v.k.Params, e.Param) {
			v.errorf("param %s is not the kernel's", e.Param.Name)
		}
	case *Load:
		t := e.Tensor
		if !slices.Contains(v.k.Tensors(), t) {
			v.errorf("tensor %s is not the kernel's", t.Name)
		} else if t.Kind != Input && !v.written[t] {
			v.errorf("%s is read before it is written", t.Name)
		}
		if len(e.Index) != len(t.Shape) {
			v.errorf("%s has rank %d but is read with %d indices", t.Name, len(t.Shape), len(e.Index))
		}
		for _, ix := range e.Index {
			v.intExpr(ix, "index of "+t.Name)
		}
		if e.Default != nil {
			v.expr(e.Default)
			if e.Default.Type() != t.DType {
				v.errorf("default of %s is %s, not %s", t.Name, e.Default.Type(), t.DType)
			}
		}
	case *Unary:
		v.expr(e.X)
		if e.Op == Not && e.X.Type() != Bool {
			v.errorf("! applied to %s", e.X.Type())
		}
		if e.Op == Neg && !(e.X.Type().IsFloat() || e.X.Type().IsInt()) {
			v.errorf("- applied to %s", e.X.Type())
		}
	case *Binary:
		v.expr(e.X)
		v.expr(e.Y)
		if e.X.Type() != e.Y.Type() {
			v.errorf("operands of %s differ: %s and %s in %s", e.Op, e.X.Type(), e.Y.Type(), Format(e))
		}
		switch {
		case e.Op == And || e.Op == Or:
			if e.X.Type() != Bool {
				v.errorf("%s applied to %s", e.Op, e.X.Type())
			}
		case e.Op == Eq || e.Op == Ne:
		case e.X.Type() == Bool:
			v.errorf("%s applied to bool", e.Op)
		}
	case *Select:
		v.expr(e.Cond)
		v.expr(e.X)
		v.expr(e.Y)
		if e.Cond.Type() != Bool {
			v.errorf("condition is %s", e.Cond.Type())
		}
		if e.X.Type() != e.Y.Type() {
			v.errorf("branches differ: %s and %s", e.X.Type(), e.Y.Type())
		}
	case *Call:
		if len(e.Args) != e.Fn.Info().Arity {
			v.errorf("%s takes %d arguments, has %d", e.Fn, e.Fn.Info().Arity, len(e.Args))
		}
		for _, a := range e.Args {
			v.expr(a)
			if a.Type() != e.T {
				v.errorf("argument of %s is %s, not %s", e.Fn, a.Type(), e.T)
			}
		}
	case *Cast:
		v.expr(e.X)
	case *Reduce:
		for _, ax := range e.Axes {
			v.intExpr(ax.Lo, "range of "+ax.Name)
			v.intExpr(ax.Hi, "range of "+ax.Name)
			v.inScope[ax] = true
		}
		v.expr(e.Body)
		if e.Body.Type() != e.T {
			v.errorf("%s body is %s, accumulates in %s", e.Op, e.Body.Type(), e.T)
		}
		for _, ax := range e.Axes {
			delete(v.inScope, ax)
		}
	case nil:
		v.errorf("missing expression")
	default:
		v.errorf("unknown expression %T", e)
	}
}
