package frontend

import (
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/tensor"
)

// scope holds the indices visible in an expression. A fn body starts a
// scope that sees only the fn's parameters: lookups stop there.
type scope struct {
	parent  *scope
	indices map[string]*ir.Index
	fn      *FnDecl
	fnArgs  map[string]fnArg
}

// fnArg is an argument of an inlined fn call: it is checked where it is
// used, in the caller's scope and with the caller's fns being inlined
// (f(f(x)) is not recursion: the inner f is the caller's).
type fnArg struct {
	e        Expr
	sc       *scope
	inlining map[*FnDecl]bool
}

func (s *scope) lookupIndex(name string) *ir.Index {
	for ; s != nil; s = s.parent {
		if ix, ok := s.indices[name]; ok {
			return ix
		}
		if s.fn != nil {
			return nil
		}
	}
	return nil
}

// lookupIndexAnywhere finds an index also beyond a fn body, to tell the
// caller's indices from unknown names.
func (s *scope) lookupIndexAnywhere(name string) *ir.Index {
	for ; s != nil; s = s.parent {
		if ix, ok := s.indices[name]; ok {
			return ix
		}
	}
	return nil
}

// inFn returns the fn whose body s is in, if any.
func (s *scope) inFn() *FnDecl {
	for ; s != nil; s = s.parent {
		if s.fn != nil {
			return s.fn
		}
	}
	return nil
}

func (s *scope) visibleIndices() []string {
	var names []string
	for ; s != nil && s.fn == nil; s = s.parent {
		for n := range s.indices {
			names = append(names, n)
		}
	}
	return names
}

// value is a checked expression. Typed values always have a compute type
// (f32, f64, i64 or bool); untyped values are literal constants that take
// the type of what they are combined with.
type value struct {
	e       ir.Expr
	untyped bool
}

// defaulted gives an untyped constant its default type: i64 for integers,
// f32 for floats.
func (v value) defaulted() ir.Expr { return v.e }

var bad = value{}

func (kc *kernelChecker) expr(e Expr, sc *scope) value {
	switch e := e.(type) {
	case *Number:
		return kc.number(e)
	case *ParenExpr:
		return kc.expr(e.X, sc)
	case *Name:
		return kc.name(e, sc, false)
	case *Access:
		return kc.load(e, nil, sc)
	case *DefaultExpr:
		x := e.X
		for p, ok := x.(*ParenExpr); ok; p, ok = x.(*ParenExpr) {
			x = p.X
		}
		acc, ok := x.(*Access)
		if !ok {
			kc.errorf(e.X.Pos(), "the left operand of '??' must be a tensor read; write '??' right after the read, as in 'X[i - 1] ?? 0'")
			return bad
		}
		return kc.load(acc, e.Default, sc)
	case *CallExpr:
		return kc.call(e, sc)
	case *ReduceExpr:
		return kc.reduce(e, sc)
	case *UnaryExpr:
		return kc.unary(e, sc)
	case *BinaryExpr:
		return kc.binary(e, sc)
	case *CondExpr:
		return kc.cond(e, sc)
	case *badArgs:
		kc.errorf(e.Span, "a reduction takes exactly one argument, its body, not %d; write the body as one expression, as in sum[k](A[k] * B[k])", e.N)
		return bad
	}
	kc.errorf(e.Pos(), "unexpected expression")
	return bad
}

func (kc *kernelChecker) number(e *Number) value {
	if v, err := strconv.ParseInt(e.Text, 10, 64); err == nil {
		return value{e: &ir.Const{T: ir.I64, I: v, Span: e.Span}, untyped: true}
	} else if !strings.ContainsAny(e.Text, ".eE") {
		kc.errorf(e.Span, "integer %s does not fit in i64; write it as a float (%s.0)", e.Text, e.Text)
		return bad
	}
	f, ok := parseFloat(e.Text)
	if !ok {
		kc.errorf(e.Span, "malformed number %s; write numbers as 12, 2.5 or 1e-5", e.Text)
		return bad
	}
	return value{e: &ir.Const{T: ir.F32, F: f, Span: e.Span}, untyped: true}
}

func (kc *kernelChecker) name(e *Name, sc *scope, asIndex bool) value {
	if ix := sc.lookupIndex(e.Name); ix != nil {
		return value{e: &ir.IndexRef{Index: ix, Span: e.Span}}
	}
	for s := sc; s != nil; s = s.parent {
		if arg, ok := s.fnArgs[e.Name]; ok {
			inlining := kc.inlining
			kc.inlining = arg.inlining
			defer func() { kc.inlining = inlining }()
			return kc.expr(arg.e, arg.sc)
		}
		if s.fn != nil {
			break
		}
	}
	switch e.Name {
	case "inf":
		return value{e: &ir.Const{T: ir.F32, F: math.Inf(1), Span: e.Span}, untyped: true}
	case "true", "false":
		k := &ir.Const{T: ir.Bool, Span: e.Span}
		if e.Name == "true" {
			k.I = 1
		}
		return value{e: k}
	}
	if fn := sc.inFn(); fn != nil {
		if _, ok := kc.syms[e.Name]; ok || sc.lookupIndexAnywhere(e.Name) != nil {
			kc.errorf(e.Span, "fn '%s' sees only its parameters, not '%s'; pass it as an argument", fn.Name.Name, e.Name)
			return bad
		}
		var params []string
		for _, p := range fn.Params {
			params = append(params, p.Name)
		}
		hint := didYouMean(e.Name, params)
		if hint == "" {
			hint = fmt.Sprintf("; add it to the parameters of '%s' and pass it as an argument", fn.Name.Name)
		}
		kc.errorf(e.Span, "unknown name '%s' in fn '%s'%s", e.Name, fn.Name.Name, hint)
		return bad
	}
	s, ok := kc.syms[e.Name]
	switch {
	case !ok && kc.broken[e.Name]:
		kc.poisoned = true // its declaration is already reported
		return bad
	case !ok && kc.pending[e.Name].IsValid():
		kc.readBeforeLet(e.Name, e.Span)
		return bad
	case !ok && asIndex:
		hint := didYouMean(e.Name, sc.visibleIndices())
		if hint == "" {
			hint = fmt.Sprintf("; add it to the left-hand side, or reduce over it with 'sum[%s](...)'", e.Name)
		}
		kc.errorf(e.Span, "index '%s' on the right-hand side is neither an output index nor a reduction index%s", e.Name, hint)
		return bad
	case !ok:
		names := sc.visibleIndices()
		for n := range kc.syms {
			names = append(names, n)
		}
		hint := didYouMean(e.Name, names)
		if hint == "" {
			hint = "; declare it as a dim, param or input of the kernel, or use an index of this statement"
		}
		kc.errorf(e.Span, "unknown name '%s'%s", e.Name, hint)
		return bad
	case s.dim != nil:
		return value{e: &ir.DimRef{Dim: s.dim, Span: e.Span}}
	case s.param != nil && s.param.Type == ir.Invalid:
		kc.poisoned = true // its dtype is already reported
		return bad
	case s.param != nil:
		return value{e: widen(&ir.ParamRef{Param: s.param, Span: e.Span})}
	case len(s.tensor.Shape) > 0:
		kc.errorf(e.Span, "'%s' is a tensor of rank %d; read an element with %s%s", e.Name, len(s.tensor.Shape), e.Name, indexHint(len(s.tensor.Shape)))
		return bad
	case s.tensor.Kind != ir.Input && !kc.written[s.tensor]:
		kc.readBeforeWrite(s.tensor, e.Span)
		return bad
	case kc.badDecl[s.tensor]:
		kc.poisoned = true
		return bad
	}
	return kc.finishLoad(&ir.Load{Tensor: s.tensor, Span: e.Span}, e.Span)
}

// widen converts a value of a storage type to its compute type.
func widen(e ir.Expr) ir.Expr {
	if t := e.Type(); t.Compute() != t {
		return &ir.Cast{X: e, T: t.Compute(), Span: e.Pos()}
	}
	return e
}

func (kc *kernelChecker) load(e *Access, dflt Expr, sc *scope) value {
	if fn := sc.inFn(); fn != nil {
		kc.errorf(e.Name.Span, "fn '%s' sees only its parameters, not tensor '%s'; pass the element as an argument", fn.Name.Name, e.Name.Name)
		return bad
	}
	s, ok := kc.syms[e.Name.Name]
	switch {
	case !ok && kc.broken[e.Name.Name]:
		kc.poisoned = true // its declaration is already reported
		return bad
	case !ok && kc.pending[e.Name.Name].IsValid():
		kc.readBeforeLet(e.Name.Name, e.Name.Span)
		return bad
	case !ok:
		var tensors []string
		for n, s := range kc.syms {
			if s.tensor != nil {
				tensors = append(tensors, n)
			}
		}
		hint := didYouMean(e.Name.Name, tensors)
		if hint == "" {
			hint = "; declare it as an input of the kernel, or write it with 'let' before this statement"
		}
		kc.errorf(e.Name.Span, "unknown tensor '%s'%s", e.Name.Name, hint)
		return bad
	case s.tensor == nil && kc.broken[e.Name.Name]:
		kc.poisoned = true // a clash already reported
		return bad
	case s.tensor == nil:
		kc.errorf(e.Name.Span, "'%s' is %s, not a tensor; only tensors are indexed: write plain '%s'", e.Name.Name, s.aKind(), e.Name.Name)
		return bad
	}
	t := s.tensor
	if t.Kind != ir.Input && !kc.written[t] {
		kc.readBeforeWrite(t, e.Name.Span)
		return bad
	}
	if kc.badDecl[t] {
		kc.read[t] = true
		kc.poisoned = true // its declaration is already reported
		return bad
	}
	if len(e.Index) != len(t.Shape) {
		how := fmt.Sprintf("read it as %s%s", t.Name, indexHint(len(t.Shape)))
		if len(t.Shape) == 0 {
			how = fmt.Sprintf("read it as plain '%s'", t.Name)
		}
		kc.errorf(e.Span, "'%s' has rank %d but is read with %s; %s", t.Name, len(t.Shape), plural(len(e.Index), "index", "indices"), how)
		return bad
	}
	l := &ir.Load{Tensor: t, Span: e.Span}
	ok = true
	for d, it := range e.Index {
		if it.Lo != nil {
			kc.errorf(it.Span, "a tensor index cannot have a range; move the range to a reduction, as in 'sum[k in 0..K](...)'")
			ok = false
			continue
		}
		var v value
		if n, isName := it.X.(*Name); isName {
			v = kc.name(n, sc, true)
			if r, isIdx := v.e.(*ir.IndexRef); isIdx {
				kc.uses[r.Index] = append(kc.uses[r.Index], indexUse{extent: t.Shape[d], tensor: t, dim: d, span: n.Span})
			}
		} else {
			v = kc.expr(it.X, sc)
			if v.e != nil {
				// A hint for the range of an index that never appears alone.
				ir.Walk(v.e, func(x ir.Expr) bool {
					if r, isIdx := x.(*ir.IndexRef); isIdx && kc.extentHint[r.Index] == nil {
						kc.extentHint[r.Index] = t.Shape[d]
					}
					return true
				})
			}
		}
		if v.e == nil {
			ok = false
			continue
		}
		if tt := v.e.Type(); !tt.IsInt() {
			kc.errorf(it.X.Pos(), "index %d of '%s' is %s; indices are integers (convert with i64(...))", d+1, t.Name, tt)
			ok = false
			continue
		}
		l.Index = append(l.Index, kc.convert(v, ir.I64, it.X.Pos()))
	}
	if dflt != nil {
		dv := kc.expr(dflt, sc)
		if dv.e == nil {
			return bad
		}
		if dv.e.Type() == ir.Bool && t.DType != ir.Bool {
			kc.errorf(dflt.Pos(), "the default of a %s read cannot be a bool; use a number such as 0", t.DType)
			return bad
		}
		l.Default = kc.convert(dv, t.DType, dflt.Pos())
	}
	if !ok {
		return bad
	}
	return kc.finishLoad(l, e.Span)
}

func (kc *kernelChecker) finishLoad(l *ir.Load, span diag.Span) value {
	kc.read[l.Tensor] = true
	return value{e: widen(l)}
}

// convert gives v type t: untyped constants become constants of t, typed
// values are cast.
func (kc *kernelChecker) convert(v value, t ir.DType, span diag.Span) ir.Expr {
	if v.untyped {
		c := v.e.(*ir.Const)
		out := &ir.Const{T: t, Span: c.Span}
		switch {
		// A literal's value is rounded to the type it takes, as a backend
		// writing it in that type would round it.
		case t.IsFloat() && c.T.IsFloat():
			out.F = tensor.RoundFloat(t, c.F)
		case t.IsFloat():
			out.F = tensor.RoundFloat(t, float64(c.I))
		case c.T.IsFloat():
			// Through a cast, so that the conversion's rules apply.
			return &ir.Cast{X: c, T: t, Span: span}
		case t == ir.Bool:
			out.I = b2i(c.I != 0)
		default:
			out.I = c.I
			if lo, hi := t.IntRange(); c.I < lo || c.I > hi {
				return &ir.Cast{X: c, T: t, Span: span}
			}
		}
		return out
	}
	if v.e.Type() == t {
		return v.e
	}
	return &ir.Cast{X: v.e, T: t, Span: span}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// unify picks the type two operands compute in: f64 if either is f64, else
// f32 if either is a float, else i64; bools only with bools.
func (kc *kernelChecker) unify(span diag.Span, what string, vs ...value) (ir.DType, bool) {
	t := ir.Invalid
	anyBool, anyNum, untypedFloat := false, false, false
	for _, v := range vs {
		vt := v.e.Type()
		if v.untyped {
			untypedFloat = untypedFloat || vt.IsFloat()
			anyNum = true
			continue
		}
		switch {
		case vt == ir.Bool:
			anyBool = true
		case vt == ir.F64 || t == ir.F64:
			t, anyNum = ir.F64, true
		case vt.IsFloat() || t == ir.F32:
			t, anyNum = ir.F32, true
		default:
			t, anyNum = ir.I64, true
		}
	}
	if anyBool && anyNum {
		kc.errorf(span, "%s mixes bool and numbers; convert the bool with f32(...) or compare the number, e.g. 'x != 0'", what)
		return ir.Invalid, false
	}
	if anyBool {
		return ir.Bool, true
	}
	if t == ir.Invalid || (t == ir.I64 && untypedFloat) {
		if untypedFloat {
			return ir.F32, true
		}
		return ir.I64, true
	}
	return t, true
}

func (kc *kernelChecker) unary(e *UnaryExpr, sc *scope) value {
	x := kc.expr(e.X, sc)
	if x.e == nil {
		return bad
	}
	t := x.e.Type()
	switch e.Op {
	case "!":
		if t != ir.Bool {
			kc.errorf(e.Span, "'!' needs a bool, not %s; compare first, e.g. 'x == 0'", t)
			return bad
		}
		return value{e: &ir.Unary{Op: ir.Not, X: x.e, Span: e.Span}}
	case "+", "-":
		if t == ir.Bool {
			kc.errorf(e.Span, "'%s' needs a number, not bool; use '!' to negate a bool, or convert it with f32(...)", e.Op)
			return bad
		}
		if e.Op == "+" {
			return x
		}
		if x.untyped {
			c := *x.e.(*ir.Const)
			c.I, c.F, c.Span = -c.I, -c.F, e.Span
			return value{e: &c, untyped: true}
		}
		return value{e: &ir.Unary{Op: ir.Neg, X: x.e, Span: e.Span}}
	}
	return bad
}

var binaryOps = map[string]ir.Op{
	"+": ir.Add, "-": ir.Sub, "*": ir.Mul, "/": ir.Div, "%": ir.Mod,
	"==": ir.Eq, "!=": ir.Ne, "<": ir.Lt, "<=": ir.Le, ">": ir.Gt, ">=": ir.Ge,
	"&&": ir.And, "||": ir.Or,
}

func (kc *kernelChecker) binary(e *BinaryExpr, sc *scope) value {
	x, y := kc.expr(e.X, sc), kc.expr(e.Y, sc)
	if x.e == nil || y.e == nil {
		return bad
	}
	op := binaryOps[e.Op]
	if inner, ok := e.X.(*BinaryExpr); ok && op.IsCompare() && binaryOps[inner.Op].IsCompare() {
		kc.errorf(e.OpSpan, "comparisons do not chain; write '%s && %s %s %s'", exprText(inner), exprText(inner.Y), e.Op, exprText(e.Y))
		return bad
	}
	if op == ir.And || op == ir.Or {
		for _, v := range []value{x, y} {
			if t := v.e.Type(); t != ir.Bool {
				kc.errorf(e.OpSpan, "'%s' needs bools on both sides, not %s; compare the number first, e.g. 'x > 0'", e.Op, t)
				return bad
			}
		}
	}
	what := fmt.Sprintf("'%s'", e.Op)
	t, ok := kc.unify(e.OpSpan, what, x, y)
	if !ok {
		return bad
	}
	switch {
	case op == ir.And || op == ir.Or:
		if t != ir.Bool {
			kc.errorf(e.OpSpan, "'%s' needs bools on both sides; compare the numbers first, e.g. 'x > 0'", e.Op)
			return bad
		}
	case t == ir.Bool && op != ir.Eq && op != ir.Ne:
		kc.errorf(e.OpSpan, "'%s' needs numbers, not bools; convert them with f32(...), or use '==' or '!='", e.Op)
		return bad
	}
	if x.untyped && y.untyped {
		if c, ok := foldUntyped(op, x.e.(*ir.Const), y.e.(*ir.Const), t, e.Span); ok {
			return value{e: c, untyped: c.T != ir.Bool}
		}
	}
	return value{e: &ir.Binary{Op: op, X: kc.convert(x, t, e.X.Pos()), Y: kc.convert(y, t, e.Y.Pos()), Span: e.Span}}
}

// foldUntyped evaluates an operator on two literals, so that `-1` or `2*3`
// stays a literal that adapts to its context.
func foldUntyped(op ir.Op, x, y *ir.Const, t ir.DType, span diag.Span) (*ir.Const, bool) {
	if t == ir.I64 {
		v, err := ir.IntOp(op, x.I, y.I)
		if err != nil {
			return nil, false // division by zero: left for run time to report
		}
		rt := ir.I64
		if op.IsCompare() {
			rt = ir.Bool
		}
		return &ir.Const{T: rt, I: v, Span: span}, true
	}
	fx, fy := x.F, y.F
	if !x.T.IsFloat() {
		fx = float64(x.I)
	}
	if !y.T.IsFloat() {
		fy = float64(y.I)
	}
	var v float64
	switch op {
	case ir.Add:
		v = fx + fy
	case ir.Sub:
		v = fx - fy
	case ir.Mul:
		v = fx * fy
	case ir.Div:
		v = fx / fy
	default:
		return nil, false
	}
	return &ir.Const{T: ir.F32, F: v, Span: span}, true
}

func (kc *kernelChecker) cond(e *CondExpr, sc *scope) value {
	c := kc.expr(e.Cond, sc)
	x, y := kc.expr(e.Then, sc), kc.expr(e.Else, sc)
	if c.e == nil || x.e == nil || y.e == nil {
		return bad
	}
	if c.e.Type() != ir.Bool {
		kc.errorf(e.Cond.Pos(), "the condition of '?:' must be a bool, not %s; compare, e.g. 'x > 0'", c.e.Type())
		return bad
	}
	t, ok := kc.unify(e.Span, "'?:'", x, y)
	if !ok {
		return bad
	}
	return value{e: &ir.Select{Cond: c.e, X: kc.convert(x, t, e.Then.Pos()), Y: kc.convert(y, t, e.Else.Pos()), Span: e.Span}}
}

func (kc *kernelChecker) call(e *CallExpr, sc *scope) value {
	name := e.Fn.Name
	if fn := kc.fns[name]; fn != nil {
		if len(e.Args) != len(fn.Params) {
			var params []string
			for _, p := range fn.Params {
				params = append(params, p.Name)
			}
			kc.errorf(e.Span, "fn '%s' takes %s, not %d; pass one for each of (%s)", name, plural(len(fn.Params), "argument", "arguments"), len(e.Args), strings.Join(params, ", ")).Notef(fn.Name.Span, "'%s' is declared here", name)
			return bad
		}
		if kc.inlining[fn] {
			kc.poisoned = true
			return bad // recursion, reported by checkFnCycles
		}
		caller := maps.Clone(kc.inlining)
		kc.inlining[fn] = true
		defer delete(kc.inlining, fn)
		body := &scope{parent: sc, fn: fn, fnArgs: map[string]fnArg{}}
		for i, p := range fn.Params {
			body.fnArgs[p.Name] = fnArg{e: e.Args[i], sc: sc, inlining: caller}
		}
		return kc.expr(fn.Body, body)
	}
	if t := ir.ParseDType(name); t != ir.Invalid {
		if len(e.Args) != 1 {
			kc.errorf(e.Span, "the cast %s(...) takes one argument, not %d; write %s(x)", name, len(e.Args), name)
			return bad
		}
		x := kc.expr(e.Args[0], sc)
		if x.e == nil {
			return bad
		}
		src := x.e
		if x.untyped && t != ir.Bool {
			src = kc.convert(x, t.Compute(), e.Args[0].Pos())
		}
		if src.Type() == t {
			return value{e: src}
		}
		return value{e: widen(&ir.Cast{X: src, T: t, Span: e.Span})}
	}
	b, ok := ir.LookupBuiltin(name)
	if !ok {
		if s, isSym := kc.syms[name]; isSym && s.tensor != nil {
			kc.errorf(e.Fn.Span, "'%s' is a tensor; read it with %s[...], not %s(...)", name, name, name)
			return bad
		}
		if _, isRed := ir.ParseReduceOp(name); isRed {
			kc.errorf(e.Fn.Span, "the reduction '%s' names its axes in brackets; write %s[k](...)", name, name)
			return bad
		}
		names := append(ir.BuiltinNames(), ir.DTypeNames()...)
		for n := range kc.fns {
			names = append(names, n)
		}
		hint := didYouMean(name, names)
		if hint == "" {
			hint = fmt.Sprintf("; use a builtin (%s) or declare it with 'fn %s(x) = ...'", strings.Join(ir.BuiltinNames(), " "), name)
		}
		kc.errorf(e.Fn.Span, "unknown function '%s'%s", name, hint)
		return bad
	}
	info := b.Info()
	if len(e.Args) != info.Arity {
		kc.errorf(e.Span, "%s takes %s, not %d; write %s(%s)", name, plural(info.Arity, "argument", "arguments"), len(e.Args), name, []string{"", "x", "x, y", "x, y, z"}[info.Arity])
		return bad
	}
	var args []value
	for _, a := range e.Args {
		v := kc.expr(a, sc)
		if v.e == nil {
			return bad
		}
		args = append(args, v)
	}
	t, ok := kc.unify(e.Span, name, args...)
	if !ok {
		return bad
	}
	if t == ir.Bool {
		kc.errorf(e.Span, "%s needs numbers, not bools; convert them with f32(...)", name)
		return bad
	}
	if !info.IntOK && t == ir.I64 || b == ir.TF32 {
		t = ir.F32 // tf32 rounds an f32, whatever it is given
	}
	call := &ir.Call{Fn: b, T: t, Span: e.Span}
	for i, a := range args {
		call.Args = append(call.Args, kc.convert(a, t, e.Args[i].Pos()))
	}
	return value{e: call}
}

func (kc *kernelChecker) reduce(e *ReduceExpr, sc *scope) value {
	op, ok := ir.ParseReduceOp(e.Op.Name)
	if !ok {
		if s, isSym := kc.syms[e.Op.Name]; isSym && s.tensor != nil {
			kc.errorf(e.Span, "'%s' is a tensor; a read takes no (...) after its indices: remove them", e.Op.Name)
		} else {
			kc.errorf(e.Op.Span, "unknown reduction '%s'%s; use sum, prod, max or min", e.Op.Name, didYouMean(e.Op.Name, []string{"sum", "prod", "max", "min"}))
		}
		return bad
	}
	if fn := sc.inFn(); fn != nil {
		kc.errorf(e.Span, "fn '%s' cannot reduce: fns are scalar; write the reduction in the kernel", fn.Name.Name)
		return bad
	}
	inner := &scope{parent: sc, indices: map[string]*ir.Index{}}
	r := &ir.Reduce{Op: op, Span: e.Span}
	ok = true
	for _, it := range e.Axes {
		n, isName := it.X.(*Name)
		if !isName {
			kc.errorf(it.X.Pos(), "a reduction axis is a plain index name; write %s[k](...) or %s[k in 0..K](...)", e.Op.Name, e.Op.Name)
			ok = false
			kc.adoptNames(it.X, inner)
			continue
		}
		ix := &ir.Index{Name: n.Name, Span: n.Span}
		if !kc.checkIndexName(n, inner) {
			ok = false
			if !reserved[n.Name] {
				inner.indices[n.Name] = ix // for the body
			}
			continue
		}
		if it.Lo != nil {
			ix.Lo = kc.sizeExpr(it.Lo, "the range of "+n.Name)
			ix.Hi = kc.sizeExpr(it.Hi, "the range of "+n.Name)
			ok = ok && ix.Lo != nil && ix.Hi != nil
		}
		inner.indices[n.Name] = ix
		r.Axes = append(r.Axes, ix)
	}
	if len(e.Axes) == 0 {
		kc.errorf(e.Span, "a reduction needs at least one axis; write %s[k](...)", e.Op.Name)
		return bad
	}
	body := kc.expr(e.Body, inner)
	if !ok || body.e == nil {
		return bad
	}
	for _, ix := range r.Axes {
		if ix.Hi == nil {
			ix.Lo = ir.IntConst(0)
			ix.Hi = kc.inferRange(ix, "reduction index", fmt.Sprintf("%s[%s in 0..N]", e.Op.Name, ix.Name))
			if ix.Hi == nil {
				return bad
			}
		}
	}
	bt := body.e.Type()
	if bt == ir.Bool {
		kc.errorf(e.Body.Pos(), "cannot reduce bools with %s; convert with f32(...) first", e.Op.Name)
		return bad
	}
	acc := kc.k.Acc
	if acc.IsInt() && bt.IsFloat() {
		kc.errorf(e.Span, "this %s reduces %s values, which @acc(%s) would truncate to integers; use a float type in @acc, e.g. @acc(f32)", e.Op.Name, bt, acc)
		return bad
	}
	if acc == ir.Invalid {
		switch {
		case bt == ir.F64:
			acc = ir.F64
		case bt.IsFloat():
			acc = ir.F32
		default:
			acc = ir.I64
		}
	}
	r.T = acc
	r.Body = kc.convert(body, acc, e.Body.Pos())
	return value{e: widen(r)}
}

// sizeExpr checks an integer expression over dims, params and constants:
// derived dims, reduction ranges and let ranges.
func (kc *kernelChecker) sizeExpr(e Expr, what string) ir.Expr {
	switch e := e.(type) {
	case *Number:
		if v, ok := parseIntLiteral(e.Text); ok {
			return &ir.Const{T: ir.I64, I: v, Span: e.Span}
		}
	case *ParenExpr:
		return kc.sizeExpr(e.X, what)
	case *Name:
		s, ok := kc.syms[e.Name]
		switch {
		case !ok:
			var names []string
			for n, s := range kc.syms {
				if s.dim != nil || s.param != nil {
					names = append(names, n)
				}
			}
			hint := didYouMean(e.Name, names)
			if hint == "" {
				hint = "; declare it in the kernel's <...> list"
			}
			kc.errorf(e.Span, "unknown dim or param '%s' in %s%s", e.Name, what, hint)
			return nil
		case s.dim != nil:
			return &ir.DimRef{Dim: s.dim, Span: e.Span}
		case s.param != nil && s.param.Type.IsInt():
			return widen(&ir.ParamRef{Param: s.param, Span: e.Span})
		case s.param != nil && s.param.Type == ir.Invalid:
			return nil // its dtype is already reported
		case s.param != nil:
			kc.errorf(e.Span, "param '%s' is %s, but %s needs integers; declare it as '%s: i32'", e.Name, s.param.Type, what, e.Name)
			return nil
		}
		kc.errorf(e.Span, "'%s' is %s; %s may use only dims, integer params and constants: read tensors in statements instead", e.Name, s.aKind(), what)
		return nil
	case *UnaryExpr:
		if e.Op == "-" {
			if x := kc.sizeExpr(e.X, what); x != nil {
				return &ir.Unary{Op: ir.Neg, X: x, Span: e.Span}
			}
			return nil
		}
	case *BinaryExpr:
		op := binaryOps[e.Op]
		if op >= ir.Add && op <= ir.Mod {
			x, y := kc.sizeExpr(e.X, what), kc.sizeExpr(e.Y, what)
			if x == nil || y == nil {
				return nil
			}
			return &ir.Binary{Op: op, X: x, Y: y, Span: e.Span}
		}
	case *CallExpr:
		if (e.Fn.Name == "min" || e.Fn.Name == "max") && len(e.Args) == 2 {
			x, y := kc.sizeExpr(e.Args[0], what), kc.sizeExpr(e.Args[1], what)
			if x == nil || y == nil {
				return nil
			}
			b, _ := ir.LookupBuiltin(e.Fn.Name)
			return &ir.Call{Fn: b, Args: []ir.Expr{x, y}, T: ir.I64, Span: e.Span}
		}
	}
	switch e := e.(type) {
	case *Number:
		kc.errorf(e.Span, "%s is not an integer; %s takes integer constants only: write a fraction as a division, as in N * 3 / 2", e.Text, what)
	case *BinaryExpr:
		kc.errorf(e.OpSpan, "'%s' does not give an integer; %s may use only + - * / %% min max on dims, integer params and constants", e.Op, what)
	default:
		kc.errorf(e.Pos(), "%s must be an integer expression; use only + - * / %% min max on dims, integer params and constants", what)
	}
	return nil
}
