package ir

import (
	"errors"
	"fmt"
	"math"
)

// Pass is one named transformation of a kernel, in the style of the Go
// compiler's SSA pass table: passes run in order, the verifier runs after
// each, and `kgen ir --after NAME` shows the IR at any point.
type Pass struct {
	Name string
	Fn   func(*Kernel)
}

// passes is the ordered pass table. "check" is not a pass but names the
// checker's output, before any pass.
var passes = [...]Pass{
	{Name: "fold", Fn: Fold},
}

// PassNames lists "check" and then every pass, in order.
func PassNames() []string {
	names := []string{"check"}
	for _, p := range passes {
		names = append(names, p.Name)
	}
	return names
}

// IsPass reports whether name is "check" or a pass.
func IsPass(name string) bool {
	for _, n := range PassNames() {
		if n == name {
			return true
		}
	}
	return false
}

// RunPasses runs the passes in order on k, stopping after stopAfter (all of
// them when it is empty; none when it is "check"), verifying after each.
// An error means a pass broke the IR: a bug in kgen.
func RunPasses(k *Kernel, stopAfter string) error {
	if stopAfter == "check" {
		return nil
	}
	for _, p := range passes {
		p.Fn(k)
		if errs := Verify(k); len(errs) > 0 {
			return fmt.Errorf("after pass %s: %w", p.Name, errors.Join(errs...))
		}
		if p.Name == stopAfter {
			break
		}
	}
	return nil
}

// Fold replaces operators on constants by their values, so that `2*pad`
// at a constant param or `0.5 * 2.0` costs nothing and hashes like its
// value. Conversions to f16 and bf16 are left alone: their rounding
// belongs to the backends and the interpreter.
func Fold(k *Kernel) {
	for _, d := range k.Dims {
		if d.Def != nil {
			d.Def = fold(d.Def)
		}
	}
	for _, s := range k.Stmts {
		s.Value = fold(s.Value)
		for _, ix := range s.Index {
			ix.Lo, ix.Hi = fold(ix.Lo), fold(ix.Hi)
		}
	}
}

func fold(e Expr) Expr {
	switch e := e.(type) {
	case *Load:
		for i, ix := range e.Index {
			e.Index[i] = fold(ix)
		}
		if e.Default != nil {
			e.Default = fold(e.Default)
		}
	case *Unary:
		e.X = fold(e.X)
		if c, ok := e.X.(*Const); ok {
			switch {
			case e.Op == Not:
				return &Const{T: Bool, I: 1 - c.I, Span: e.Span}
			case c.T.IsFloat():
				return &Const{T: c.T, F: -c.F, Span: e.Span}
			case c.T == I64:
				return &Const{T: c.T, I: -c.I, Span: e.Span}
			}
		}
	case *Binary:
		e.X, e.Y = fold(e.X), fold(e.Y)
		x, okx := e.X.(*Const)
		y, oky := e.Y.(*Const)
		if okx && oky {
			if c, ok := foldBinary(e.Op, x, y); ok {
				c.Span = e.Span
				return c
			}
		}
		// Adding or subtracting an integer zero gives x back (Q - zp at zp
		// = 0). (A float's x + 0.0 is not x at x = -0.)
		if oky && y.T.IsInt() && y.I == 0 && e.X.Type() == y.T && (e.Op == Add || e.Op == Sub) {
			return e.X
		}
		if okx && x.T.IsInt() && x.I == 0 && e.Y.Type() == x.T && e.Op == Add {
			return e.Y
		}
		// x / c for c a power of two whose reciprocal the type holds is x
		// * (1 / c), exactly: the two are the same real number, rounded
		// once (a mean's / 4096, dropout's / (1 - 0.5), a 2 x 2 average's
		// / 4), at every x, NaN, infinities and signed zeros included.
		if oky && e.Op == Div && e.X.Type() == y.T {
			if r, ok := exactReciprocal(y); ok {
				return &Binary{Op: Mul, X: e.X, Y: r, Span: e.Span}
			}
		}
	case *Select:
		e.Cond, e.X, e.Y = fold(e.Cond), fold(e.X), fold(e.Y)
		if c, ok := e.Cond.(*Const); ok {
			if c.I != 0 {
				return e.X
			}
			return e.Y
		}
	case *Call:
		for i, a := range e.Args {
			e.Args[i] = fold(a)
		}
		// pow(x, 2) is x * x, correctly rounded where pow is within an
		// ulp or two of it, and equal to it at every special value (NaN,
		// infinities, signed zeros): misc_math's pow(abs(x), p) at p = 2.
		if e.Fn == Pow {
			if c, ok := e.Args[1].(*Const); ok && c.T.IsFloat() && c.F == 2 && e.Args[0].Type() == e.T {
				return &Binary{Op: Mul, X: e.Args[0], Y: Substitute(e.Args[0], nil), Span: e.Span}
			}
		}
	case *Cast:
		e.X = fold(e.X)
		// Narrowing what was just widened exactly gives back the value:
		// i8(i64(x)) for an i8 x, f16(f32(x)) for an f16 x.
		if inner, ok := e.X.(*Cast); ok && inner.X.Type() == e.T && inner.T == e.T.Compute() {
			return inner.X
		}
		// A float of an integer widened exactly is the float of the
		// integer itself: f32(i64(q)) for an i8 q converts q.
		if inner, ok := e.X.(*Cast); ok && e.T.IsFloat() && widensExactly(inner.X.Type(), inner.T) {
			e.X = inner.X
		}
		if c, ok := e.X.(*Const); ok {
			switch {
			case e.T == F64 && c.T.IsFloat():
				return &Const{T: F64, F: c.F, Span: e.Span}
			case e.T == F32 && c.T.IsFloat():
				return &Const{T: F32, F: float64(float32(c.F)), Span: e.Span}
			case (e.T == F32 || e.T == F64) && c.T.IsInt():
				v := float64(c.I)
				if e.T == F32 {
					v = float64(float32(v))
				}
				return &Const{T: e.T, F: v, Span: e.Span}
			case e.T == I64 && c.T.IsInt():
				return &Const{T: I64, I: c.I, Span: e.Span}
			}
		}
	case *Reduce:
		for _, ax := range e.Axes {
			ax.Lo, ax.Hi = fold(ax.Lo), fold(ax.Hi)
		}
		e.Body = fold(e.Body)
	}
	return e
}

// widensExactly reports whether every value of the integer type from is
// a value of the integer type to.
func widensExactly(from, to DType) bool {
	if !from.IsInt() || !to.IsInt() {
		return false
	}
	flo, fhi := from.IntRange()
	tlo, thi := to.IntRange()
	return tlo <= flo && fhi <= thi
}

// exactReciprocal is 1 / c for c an f32 or f64 constant ±2^k whose
// reciprocal is a normal number of its type (|k| at most 126 for f32, 1022
// for f64).
func exactReciprocal(c *Const) (*Const, bool) {
	limit := 126
	switch c.T {
	case F32:
	case F64:
		limit = 1022
	default:
		return nil, false
	}
	frac, exp := math.Frexp(c.F) // c = frac * 2^exp
	if math.Abs(frac) != 0.5 || exp-1 < -limit || exp-1 > limit {
		return nil, false
	}
	return &Const{T: c.T, F: 1 / c.F, Span: c.Span}, true
}

func foldBinary(op Op, x, y *Const) (*Const, bool) {
	switch {
	case x.T == I64:
		v, err := IntOp(op, x.I, y.I)
		if err != nil {
			return nil, false
		}
		if op.IsCompare() {
			return &Const{T: Bool, I: v}, true
		}
		return &Const{T: I64, I: v}, true
	case x.T == F32 || x.T == F64:
		var v float64
		switch op {
		case Add:
			v = x.F + y.F
		case Sub:
			v = x.F - y.F
		case Mul:
			v = x.F * y.F
		case Div:
			v = x.F / y.F
		case Mod:
			v = x.F - math.Floor(x.F/y.F)*y.F
		default:
			var b bool
			switch op {
			case Eq:
				b = x.F == y.F
			case Ne:
				b = x.F != y.F
			case Lt:
				b = x.F < y.F
			case Le:
				b = x.F <= y.F
			case Gt:
				b = x.F > y.F
			case Ge:
				b = x.F >= y.F
			default:
				return nil, false
			}
			c := &Const{T: Bool}
			if b {
				c.I = 1
			}
			return c, true
		}
		return &Const{T: x.T, F: v}, true
	case x.T == Bool:
		v, _ := IntOp(op, x.I, y.I)
		return &Const{T: Bool, I: v}, true
	}
	return nil, false
}
