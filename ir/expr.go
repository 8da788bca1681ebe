package ir

import "kgen.dev/kgen/diag"

// Expr is a typed expression. The checker makes every conversion explicit:
// the operands of a Binary share one type, a Call's arguments have the type
// the builtin computes in, and a Reduce's body has the accumulation type.
type Expr interface {
	Type() DType
	Pos() diag.Span
}

// Const is a literal. Float types keep the value in F; integer and bool
// types keep it in I (bool as 0 or 1).
type Const struct {
	T    DType
	F    float64
	I    int64
	Span diag.Span
}

// IndexRef reads the current value of a loop index (an i64).
type IndexRef struct {
	Index *Index
	Span  diag.Span
}

// DimRef reads the value of a dim (an i64).
type DimRef struct {
	Dim  *Dim
	Span diag.Span
}

// ParamRef reads the value of a param.
type ParamRef struct {
	Param *Param
	Span  diag.Span
}

// Load reads Tensor at Index (i64 expressions, one per dimension). When
// Default is set, a point outside the tensor yields Default instead of an
// error (the `??` operator); Default has the tensor's dtype.
type Load struct {
	Tensor  *Tensor
	Index   []Expr
	Default Expr
	Span    diag.Span
}

// Op is a unary or binary operator.
type Op uint8

const (
	Neg Op = iota
	Not
	Add
	Sub
	Mul
	Div
	Mod
	Eq
	Ne
	Lt
	Le
	Gt
	Ge
	And
	Or
)

var opNames = [...]string{Neg: "-", Not: "!", Add: "+", Sub: "-", Mul: "*", Div: "/", Mod: "%",
	Eq: "==", Ne: "!=", Lt: "<", Le: "<=", Gt: ">", Ge: ">=", And: "&&", Or: "||"}

func (o Op) String() string { return opNames[o] }

// IsCompare reports whether o yields a bool from two ordered operands.
func (o Op) IsCompare() bool { return o >= Eq && o <= Ge }

// Unary is -X or !X.
type Unary struct {
	Op   Op
	X    Expr
	Span diag.Span
}

// Binary is X op Y. For integer types / and % are floor division and floor
// modulo.
type Binary struct {
	Op   Op
	X, Y Expr
	Span diag.Span
}

// Select is Cond ? X : Y.
type Select struct {
	Cond, X, Y Expr
	Span       diag.Span
}

// Call applies a builtin function.
type Call struct {
	Fn   Builtin
	Args []Expr
	T    DType
	Span diag.Span
}

// Cast converts X to T: rounding to nearest even for float targets,
// truncation toward zero with saturation for integer targets from floats,
// two's-complement wrapping between integers, != 0 for bool.
type Cast struct {
	X    Expr
	T    DType
	Span diag.Span
}

// ReduceOp is a reduction's combining operator.
type ReduceOp uint8

const (
	Sum ReduceOp = iota
	Prod
	Max
	Min
)

var reduceNames = [...]string{Sum: "sum", Prod: "prod", Max: "max", Min: "min"}

func (r ReduceOp) String() string { return reduceNames[r] }

// ParseReduceOp returns the reduction called s.
func ParseReduceOp(s string) (ReduceOp, bool) {
	for i, n := range reduceNames {
		if n == s {
			return ReduceOp(i), true
		}
	}
	return 0, false
}

// Reduce combines Body over every point of Axes, in type T (the
// accumulation type, which Body has). An empty range yields the identity:
// 0 for sum, 1 for prod, -inf for max and +inf for min (the type's extreme
// value for integers).
type Reduce struct {
	Op   ReduceOp
	Axes []*Index
	Body Expr
	T    DType
	Span diag.Span
}

func (e *Const) Type() DType    { return e.T }
func (e *IndexRef) Type() DType { return I64 }
func (e *DimRef) Type() DType   { return I64 }
func (e *ParamRef) Type() DType { return e.Param.Type }
func (e *Load) Type() DType     { return e.Tensor.DType }
func (e *Unary) Type() DType {
	if e.Op == Not {
		return Bool
	}
	return e.X.Type()
}
func (e *Binary) Type() DType {
	if e.Op.IsCompare() || e.Op == And || e.Op == Or {
		return Bool
	}
	return e.X.Type()
}
func (e *Select) Type() DType { return e.X.Type() }
func (e *Call) Type() DType   { return e.T }
func (e *Cast) Type() DType   { return e.T }
func (e *Reduce) Type() DType { return e.T }

func (e *Const) Pos() diag.Span    { return e.Span }
func (e *IndexRef) Pos() diag.Span { return e.Span }
func (e *DimRef) Pos() diag.Span   { return e.Span }
func (e *ParamRef) Pos() diag.Span { return e.Span }
func (e *Load) Pos() diag.Span     { return e.Span }
func (e *Unary) Pos() diag.Span    { return e.Span }
func (e *Binary) Pos() diag.Span   { return e.Span }
func (e *Select) Pos() diag.Span   { return e.Span }
func (e *Call) Pos() diag.Span     { return e.Span }
func (e *Cast) Pos() diag.Span     { return e.Span }
func (e *Reduce) Pos() diag.Span   { return e.Span }

// IntConst returns an i64 constant.
func IntConst(v int64) *Const { return &Const{T: I64, I: v} }

// FloatConst returns a float constant of type t.
func FloatConst(t DType, v float64) *Const { return &Const{T: t, F: v} }

// Children returns the direct subexpressions of e, in evaluation order.
func Children(e Expr) []Expr {
	switch e := e.(type) {
	case *Load:
		cs := append([]Expr(nil), e.Index...)
		if e.Default != nil {
			cs = append(cs, e.Default)
		}
		return cs
	case *Unary:
		return []Expr{e.X}
	case *Binary:
		return []Expr{e.X, e.Y}
	case *Select:
		return []Expr{e.Cond, e.X, e.Y}
	case *Call:
		return e.Args
	case *Cast:
		return []Expr{e.X}
	case *Reduce:
		var cs []Expr
		for _, ax := range e.Axes {
			cs = append(cs, ax.Lo, ax.Hi)
		}
		return append(cs, e.Body)
	}
	return nil
}

// Walk calls f on e and its subexpressions in pre-order; f returning false
// skips the subexpressions of that node.
func Walk(e Expr, f func(Expr) bool) {
	if e == nil || !f(e) {
		return
	}
	for _, c := range Children(e) {
		Walk(c, f)
	}
}

// Any reports whether f holds for e or any of its subexpressions.
func Any(e Expr, f func(Expr) bool) bool {
	found := false
	Walk(e, func(x Expr) bool {
		found = found || f(x)
		return !found
	})
	return found
}
