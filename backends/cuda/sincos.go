package cuda

import (
	"fmt"
	"strings"

	"kgen.dev/kgen/ir"
)

// A sincos pair is a sine and a cosine of one argument that an evaluation
// of an expression computes both of: kg_sincos gives the two with one
// range reduction. For misc_math_f64's sin(x) * cos(x) in f64, nvcc 13.0
// compiles the kernel to 848 SASS instructions with it, 1008 without (and
// f32's sinf and cosf of one value to 168, 200); nvcc does not merge the
// two calls itself.
type sincosPair struct {
	arg      ir.Expr
	sin, cos []*ir.Call
}

// sincosPairs lists the pairs of x: its calls of sin and cos whose
// arguments are the same (ir.Format), each evaluated whenever x is, so
// that computing both up front reads nothing that x would not (no arm of
// ?:, right operand of && or ||, load's default, nor a reduction's body,
// which is evaluated at other points), and none in a value that a row's
// loop reads from where an earlier one kept it (rowshare.go).
func (e *emitter) sincosPairs(x ir.Expr) []*sincosPair {
	var pairs []*sincosPair
	byArg := map[string]*sincosPair{}
	walkEvaluated(x, func(x ir.Expr) bool {
		if u, ok := e.shareUse[x]; ok && e.loop != nil && !u.def {
			return false
		}
		switch x := x.(type) {
		case *ir.Reduce:
			return false
		case *ir.Call:
			if x.Fn == ir.Sin || x.Fn == ir.Cos {
				key := x.T.String() + " " + ir.Format(x.Args[0])
				p := byArg[key]
				if p == nil {
					p = &sincosPair{arg: x.Args[0]}
					byArg[key] = p
					pairs = append(pairs, p)
				}
				if x.Fn == ir.Sin {
					p.sin = append(p.sin, x)
				} else {
					p.cos = append(p.cos, x)
				}
			}
		}
		return true
	})
	out := pairs[:0]
	for _, p := range pairs {
		if len(p.sin) > 0 && len(p.cos) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// sincosExpr renders x, the root of an evaluation (a statement's value, a
// reduction's body), as an immediately invoked lambda that first computes
// each of its sincos pairs into two variables, which the pair's calls
// then render as (e.sincos); ok is false where x has no pair.
func (e *emitter) sincosExpr(x ir.Expr) (string, bool) {
	if _, shared := e.shareUse[x]; shared {
		return "", false
	}
	pairs := e.sincosPairs(x)
	if len(pairs) == 0 {
		return "", false
	}
	if e.sincos == nil {
		e.sincos = map[*ir.Call]string{}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "[&]() -> %s { ", e.cType(x.Type()))
	for _, p := range pairs {
		s, c := fmt.Sprintf("kg_sn%d", e.acc), fmt.Sprintf("kg_cs%d", e.acc)
		e.acc++
		t := e.cType(p.sin[0].T)
		fmt.Fprintf(&sb, "%s %s, %s; kg_sincos(%s, &%s, &%s); ", t, s, c, e.expr(p.arg), s, c)
		for _, call := range p.sin {
			e.sincos[call] = s
		}
		for _, call := range p.cos {
			e.sincos[call] = c
		}
	}
	fmt.Fprintf(&sb, "return %s; }()", e.expr(x))
	for _, p := range pairs {
		for _, call := range append(p.sin, p.cos...) {
			delete(e.sincos, call)
		}
	}
	return sb.String(), true
}
