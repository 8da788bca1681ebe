package interp

import (
	"fmt"
	"math"
	"strings"

	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/tensor"
)

// Expressions are compiled once per Run into closures over a frame, one Go
// type per class of dtype, so that evaluating a point makes no type
// switches and no allocations. Subexpressions that depend on no index and
// no tensor are folded to constants.
type (
	ffn = func(*frame) float64
	ifn = func(*frame) int64
	bfn = func(*frame) bool
)

type compiler struct {
	k      *ir.Kernel
	env    *ir.Env
	slots  map[*ir.Index]int
	nslots int
	bufs   map[*ir.Tensor]*buffer
	scope  []*ir.Index // indices bound at the expression being compiled
	konst  map[ir.Expr]bool
	round  bool // Options.RoundOps
}

// bind gives ix a slot in every frame.
func (c *compiler) bind(ix *ir.Index) int {
	if s, ok := c.slots[ix]; ok {
		return s
	}
	s := c.nslots
	c.nslots++
	c.slots[ix] = s
	return s
}

func (c *compiler) inScope(ix *ir.Index) bool {
	for _, s := range c.scope {
		if s == ix {
			return true
		}
	}
	return false
}

// isConst reports whether e depends on no index and no tensor.
func (c *compiler) isConst(e ir.Expr) bool {
	if c.konst == nil {
		c.konst = map[ir.Expr]bool{}
	}
	if v, ok := c.konst[e]; ok {
		return v
	}
	var v bool
	switch e.(type) {
	case *ir.Const, *ir.DimRef, *ir.ParamRef:
		v = true
	case *ir.IndexRef, *ir.Load, *ir.Reduce, nil:
		v = false
	default:
		v = true
		for _, ch := range ir.Children(e) {
			if !c.isConst(ch) {
				v = false
				break
			}
		}
	}
	c.konst[e] = v
	return v
}

// try evaluates a constant closure; ok is false if it fails (an integer
// division by zero, which must be reported only if it is reached).
func try[T any](fn func(*frame) T) (v T, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return fn(&frame{}), true
}

func fold[T any](c *compiler, e ir.Expr, fn func(*frame) T) func(*frame) T {
	switch e.(type) {
	case *ir.Const, *ir.DimRef, *ir.ParamRef:
		return fn // already constant closures
	}
	if !c.isConst(e) {
		return fn
	}
	if v, ok := try(fn); ok {
		return func(*frame) T { return v }
	}
	return fn
}

func (c *compiler) typeErr(e ir.Expr, want string) error {
	if e == nil {
		return fmt.Errorf("interp: missing expression")
	}
	return fmt.Errorf("interp: %s has type %s where %s is needed", ir.Format(e), e.Type(), want)
}

// float compiles an expression of a float dtype.
func (c *compiler) float(e ir.Expr) (ffn, error) {
	if e == nil || classOf(e.Type()) != clsFloat {
		return nil, c.typeErr(e, "a float")
	}
	fn, err := c.float1(e)
	if err != nil {
		return nil, err
	}
	if t := e.Type(); c.round && t != ir.F64 {
		switch e.(type) {
		case *ir.Unary, *ir.Binary, *ir.Call, *ir.Reduce:
			exact := fn
			if t == ir.F32 {
				fn = func(f *frame) float64 { return roundF32(exact(f)) }
			} else {
				fn = func(f *frame) float64 { return tensor.RoundFloat(t, exact(f)) }
			}
		}
	}
	return fold(c, e, fn), nil
}

// int compiles an expression of an integer dtype.
func (c *compiler) int(e ir.Expr) (ifn, error) {
	if e == nil || classOf(e.Type()) != clsInt {
		return nil, c.typeErr(e, "an integer")
	}
	fn, err := c.int1(e)
	if err != nil {
		return nil, err
	}
	return fold(c, e, fn), nil
}

// bool compiles an expression of type bool.
func (c *compiler) bool(e ir.Expr) (bfn, error) {
	if e == nil || classOf(e.Type()) != clsBool {
		return nil, c.typeErr(e, "a bool")
	}
	fn, err := c.bool1(e)
	if err != nil {
		return nil, err
	}
	return fold(c, e, fn), nil
}

func (c *compiler) param(p *ir.Param) (*ir.Const, error) {
	v := c.env.Params[p]
	if v == nil {
		return nil, fmt.Errorf("param %s has no value", p.Name)
	}
	return v, nil
}

func (c *compiler) dim(d *ir.Dim) (int64, error) {
	v, ok := c.env.Dims[d]
	if !ok {
		return 0, fmt.Errorf("dim %s has no value", d.Name)
	}
	return v, nil
}

func constFloat(k *ir.Const) float64 {
	if k.T.IsFloat() {
		return k.F
	}
	return float64(k.I)
}

func constInt(k *ir.Const) int64 {
	if k.T.IsFloat() {
		return truncSat(k.F, math.MinInt64, math.MaxInt64)
	}
	return k.I
}

func (c *compiler) float1(e ir.Expr) (ffn, error) {
	switch e := e.(type) {
	case *ir.Const:
		v := constFloat(e)
		return func(*frame) float64 { return v }, nil
	case *ir.ParamRef:
		k, err := c.param(e.Param)
		if err != nil {
			return nil, err
		}
		v := constFloat(k)
		return func(*frame) float64 { return v }, nil
	case *ir.Load:
		b, err := c.buffer(e)
		if err != nil {
			return nil, err
		}
		var def ffn
		if e.Default != nil {
			if def, err = c.float(e.Default); err != nil {
				return nil, err
			}
		}
		return loadFn(c, e, b, b.f, def)
	case *ir.Unary:
		if e.Op != ir.Neg {
			break
		}
		x, err := c.float(e.X)
		if err != nil {
			return nil, err
		}
		return func(f *frame) float64 { return -x(f) }, nil
	case *ir.Binary:
		return c.floatBinary(e)
	case *ir.Select:
		return selectFn(c, e, c.float)
	case *ir.Call:
		return c.floatCall(e)
	case *ir.Cast:
		return c.castFloat(e)
	case *ir.Reduce:
		body, err := withAxes(c, e, c.float)
		if err != nil {
			return nil, err
		}
		return reduceNum(c, e, body, math.Inf(-1), math.Inf(1), c.fastReduce)
	}
	return nil, fmt.Errorf("interp: cannot evaluate %s (%T) as %s", ir.Format(e), e, e.Type())
}

func (c *compiler) int1(e ir.Expr) (ifn, error) {
	switch e := e.(type) {
	case *ir.Const:
		v := constInt(e)
		return func(*frame) int64 { return v }, nil
	case *ir.ParamRef:
		k, err := c.param(e.Param)
		if err != nil {
			return nil, err
		}
		v := constInt(k)
		return func(*frame) int64 { return v }, nil
	case *ir.DimRef:
		v, err := c.dim(e.Dim)
		if err != nil {
			return nil, err
		}
		return func(*frame) int64 { return v }, nil
	case *ir.IndexRef:
		s, err := c.slot(e)
		if err != nil {
			return nil, err
		}
		return func(f *frame) int64 { return f.idx[s] }, nil
	case *ir.Load:
		b, err := c.buffer(e)
		if err != nil {
			return nil, err
		}
		var def ifn
		if e.Default != nil {
			if def, err = c.int(e.Default); err != nil {
				return nil, err
			}
		}
		return loadFn(c, e, b, b.i, def)
	case *ir.Unary:
		if e.Op != ir.Neg {
			break
		}
		x, err := c.int(e.X)
		if err != nil {
			return nil, err
		}
		return func(f *frame) int64 { return -x(f) }, nil
	case *ir.Binary:
		return c.intBinary(e)
	case *ir.Select:
		return selectFn(c, e, c.int)
	case *ir.Call:
		return c.intCall(e)
	case *ir.Cast:
		return c.castInt(e)
	case *ir.Reduce:
		body, err := withAxes(c, e, c.int)
		if err != nil {
			return nil, err
		}
		return reduceNum(c, e, body, math.MinInt64, math.MaxInt64, nil)
	}
	return nil, fmt.Errorf("interp: cannot evaluate %s (%T) as %s", ir.Format(e), e, e.Type())
}

func (c *compiler) bool1(e ir.Expr) (bfn, error) {
	switch e := e.(type) {
	case *ir.Const:
		v := constInt(e) != 0
		return func(*frame) bool { return v }, nil
	case *ir.ParamRef:
		k, err := c.param(e.Param)
		if err != nil {
			return nil, err
		}
		v := constInt(k) != 0
		return func(*frame) bool { return v }, nil
	case *ir.Load:
		b, err := c.buffer(e)
		if err != nil {
			return nil, err
		}
		var def bfn
		if e.Default != nil {
			if def, err = c.bool(e.Default); err != nil {
				return nil, err
			}
		}
		return loadFn(c, e, b, b.b, def)
	case *ir.Unary:
		if e.Op != ir.Not {
			break
		}
		x, err := c.bool(e.X)
		if err != nil {
			return nil, err
		}
		return func(f *frame) bool { return !x(f) }, nil
	case *ir.Binary:
		return c.compare(e)
	case *ir.Select:
		return selectFn(c, e, c.bool)
	case *ir.Cast:
		switch classOf(e.X.Type()) {
		case clsFloat:
			x, err := c.float(e.X)
			if err != nil {
				return nil, err
			}
			return func(f *frame) bool { return x(f) != 0 }, nil
		case clsInt:
			x, err := c.int(e.X)
			if err != nil {
				return nil, err
			}
			return func(f *frame) bool { return x(f) != 0 }, nil
		case clsBool:
			return c.bool(e.X)
		}
	case *ir.Reduce:
		// Reduce 0/1 as integers: sum and max are "any", prod and min "all".
		body, err := withAxes(c, e, c.bool)
		if err != nil {
			return nil, err
		}
		ib := func(f *frame) int64 { return b2i(body(f)) }
		r, err := reduceNum(c, e, ib, 0, 1, nil)
		if err != nil {
			return nil, err
		}
		return func(f *frame) bool { return r(f) != 0 }, nil
	}
	return nil, fmt.Errorf("interp: cannot evaluate %s (%T) as %s", ir.Format(e), e, e.Type())
}

func (c *compiler) slot(e *ir.IndexRef) (int, error) {
	if e.Index == nil || !c.inScope(e.Index) {
		name := "<nil>"
		if e.Index != nil {
			name = e.Index.Name
		}
		return 0, fmt.Errorf("interp: index %s used outside its statement or reduction", name)
	}
	return c.slots[e.Index], nil
}

func (c *compiler) buffer(e *ir.Load) (*buffer, error) {
	b := c.bufs[e.Tensor]
	if b == nil {
		return nil, fmt.Errorf("interp: %s is not a tensor of kernel %s", e.Tensor.Name, c.k.Name)
	}
	if len(e.Index) != len(b.shape) {
		return nil, fmt.Errorf("interp: %s has rank %d but is read with %d indices", e.Tensor.Name, len(b.shape), len(e.Index))
	}
	if e.Default != nil && e.Default.Type() != e.Tensor.DType {
		return nil, fmt.Errorf("interp: default of %s is %s, not %s", e.Tensor.Name, e.Default.Type(), e.Tensor.DType)
	}
	return b, nil
}

// loadFn compiles a tensor read. Indices that are affine in the loop
// indices (i, 2*oh + kh - pad) are evaluated inline from the frame; others
// through their closures.
func loadFn[T any](c *compiler, e *ir.Load, b *buffer, data []T, def func(*frame) T) (func(*frame) T, error) {
	r := len(e.Index)
	if data == nil {
		data = []T{} // a tensor with no elements: every read is out of range
	}
	ix, err := c.indexer(e, b)
	if err != nil {
		return nil, err
	}
	oob := def
	if oob == nil {
		sc := c.snapshot()
		oob = func(f *frame) T {
			vals := make([]int64, r)
			for d := range vals {
				vals[d] = ix.index(f, d)
			}
			panic(oobError(e, b.shape, vals, sc, f))
		}
	}
	shape, st := b.shape, b.strides
	switch {
	case r == 0:
		if len(data) == 0 {
			return oob, nil
		}
		return func(*frame) T { return data[0] }, nil
	case ix.direct && r == 1:
		s0, n0 := ix.slots[0], uint64(shape[0])
		return func(f *frame) T {
			i := f.idx[s0]
			if uint64(i) >= n0 {
				return oob(f)
			}
			return data[i]
		}, nil
	case ix.direct && r == 2:
		s0, s1, n0, n1, st0 := ix.slots[0], ix.slots[1], uint64(shape[0]), uint64(shape[1]), st[0]
		return func(f *frame) T {
			i, j := f.idx[s0], f.idx[s1]
			if uint64(i) >= n0 || uint64(j) >= n1 {
				return oob(f)
			}
			return data[i*st0+j]
		}, nil
	case ix.affine:
		c0, ends, slots, coefs := ix.c0, ix.ends, ix.slots, ix.coefs
		return func(f *frame) T {
			off, t := int64(0), 0
			for d, end := range ends {
				i := c0[d]
				for ; t < end; t++ {
					i += coefs[t] * f.idx[slots[t]]
				}
				if uint64(i) >= uint64(shape[d]) {
					return oob(f)
				}
				off += i * st[d]
			}
			return data[off]
		}, nil
	}
	return func(f *frame) T {
		off := int64(0)
		for d := range r {
			i := ix.index(f, d)
			if uint64(i) >= uint64(shape[d]) {
				return oob(f)
			}
			off += i * st[d]
		}
		return data[off]
	}, nil
}

// indexer evaluates the indices of a read. Index d is affine when fns[d]
// is nil: c0[d] plus coefs[t] times the index in slots[t] for t in
// [ends[d-1], ends[d]).
type indexer struct {
	c0     []int64
	ends   []int
	slots  []int
	coefs  []int64
	fns    []ifn
	affine bool // every index is affine
	direct bool // every index is a loop index
}

func (ix *indexer) index(f *frame, d int) int64 {
	if ix.fns[d] != nil {
		return ix.fns[d](f)
	}
	t := 0
	if d > 0 {
		t = ix.ends[d-1]
	}
	i := ix.c0[d]
	for ; t < ix.ends[d]; t++ {
		i += ix.coefs[t] * f.idx[ix.slots[t]]
	}
	return i
}

func (c *compiler) indexer(e *ir.Load, b *buffer) (*indexer, error) {
	ix := &indexer{fns: make([]ifn, len(e.Index)), affine: true, direct: true}
	for _, ie := range e.Index {
		if a, ok := c.affine(ie); ok {
			ix.c0 = append(ix.c0, a.c0)
			ix.slots = append(ix.slots, a.slots...)
			ix.coefs = append(ix.coefs, a.coefs...)
			ix.ends = append(ix.ends, len(ix.slots))
			if a.c0 != 0 || len(a.slots) != 1 || a.coefs[0] != 1 {
				ix.direct = false
			}
			continue
		}
		fn, err := c.int(ie)
		if err != nil {
			return nil, err
		}
		ix.fns[len(ix.ends)] = fn
		ix.c0 = append(ix.c0, 0)
		ix.ends = append(ix.ends, len(ix.slots))
		ix.affine, ix.direct = false, false
	}
	if !ix.affine {
		ix.direct = false
	}
	return ix, nil
}

// affineForm is c0 + sum of coefs[t] * index in slots[t], each slot once.
type affineForm struct {
	c0    int64
	slots []int
	coefs []int64
}

func (a affineForm) scale(k int64) affineForm {
	r := affineForm{c0: a.c0 * k, slots: a.slots}
	for _, cf := range a.coefs {
		r.coefs = append(r.coefs, cf*k)
	}
	return r
}

func (a affineForm) plus(b affineForm) affineForm {
	r := affineForm{c0: a.c0 + b.c0, slots: append([]int(nil), a.slots...), coefs: append([]int64(nil), a.coefs...)}
outer:
	for t, s := range b.slots {
		for u, rs := range r.slots {
			if rs == s {
				r.coefs[u] += b.coefs[t]
				continue outer
			}
		}
		r.slots = append(r.slots, s)
		r.coefs = append(r.coefs, b.coefs[t])
	}
	return r
}

// affine recognizes an integer expression that is affine in the loop
// indices. Its value, computed in wrapping int64 arithmetic, equals the
// expression's.
func (c *compiler) affine(e ir.Expr) (affineForm, bool) {
	if e == nil || classOf(e.Type()) != clsInt {
		return affineForm{}, false
	}
	if c.isConst(e) {
		fn, err := c.int(e)
		if err != nil {
			return affineForm{}, false
		}
		if v, ok := try(fn); ok {
			return affineForm{c0: v}, true
		}
		return affineForm{}, false
	}
	switch e := e.(type) {
	case *ir.IndexRef:
		s, err := c.slot(e)
		if err != nil {
			return affineForm{}, false
		}
		return affineForm{slots: []int{s}, coefs: []int64{1}}, true
	case *ir.Cast:
		if e.T == ir.I64 && classOf(e.X.Type()) == clsInt {
			return c.affine(e.X) // the identity, as castInt compiles it
		}
	case *ir.Unary:
		if e.Op == ir.Neg {
			if a, ok := c.affine(e.X); ok {
				return a.scale(-1), true
			}
		}
	case *ir.Binary:
		if e.X == nil || e.Y == nil || e.X.Type() != e.Y.Type() {
			break
		}
		x, okx := c.affine(e.X)
		y, oky := c.affine(e.Y)
		if !okx || !oky {
			break
		}
		switch e.Op {
		case ir.Add:
			return x.plus(y), true
		case ir.Sub:
			return x.plus(y.scale(-1)), true
		case ir.Mul:
			if len(y.slots) == 0 {
				return x.scale(y.c0), true
			}
			if len(x.slots) == 0 {
				return y.scale(x.c0), true
			}
		}
	}
	return affineForm{}, false
}

// scopeSnap names the indices bound where an error can occur, for
// messages.
type scopeSnap struct {
	names []string
	slots []int
}

func (c *compiler) snapshot() scopeSnap {
	var sc scopeSnap
	for _, ix := range c.scope {
		sc.names = append(sc.names, ix.Name)
		sc.slots = append(sc.slots, c.slots[ix])
	}
	return sc
}

func (sc scopeSnap) at(f *frame) string {
	if len(sc.names) == 0 {
		return ""
	}
	parts := make([]string, len(sc.names))
	for i, n := range sc.names {
		parts[i] = fmt.Sprintf("%s=%d", n, f.idx[sc.slots[i]])
	}
	return " at " + strings.Join(parts, ", ")
}

func oobError(e *ir.Load, shape, vals []int64, sc scopeSnap, f *frame) *RunError {
	d := 0
	for i, v := range vals {
		if v < 0 || v >= shape[i] {
			d = i
			break
		}
	}
	strs := make([]string, len(vals))
	for i, v := range vals {
		strs[i] = fmt.Sprint(v)
	}
	extent := fmt.Sprint(shape[d])
	if ref, ok := e.Tensor.Shape[d].(*ir.DimRef); ok && ref.Dim != nil {
		extent = fmt.Sprintf("%s = %d", ref.Dim.Name, shape[d])
	}
	name := e.Tensor.Name
	return &RunError{
		Span: e.Span,
		Msg: fmt.Sprintf("out-of-range read %s[%s]: index %d is outside dim %d of %s (extent %s)%s; write '%s[...] ?? v' to read v outside %s",
			name, strings.Join(strs, ", "), vals[d], d+1, name, extent, sc.at(f), name, name),
	}
}

func selectFn[T any](c *compiler, e *ir.Select, comp func(ir.Expr) (func(*frame) T, error)) (func(*frame) T, error) {
	cond, err := c.bool(e.Cond)
	if err != nil {
		return nil, err
	}
	if c.isConst(e.Cond) {
		if v, ok := try(cond); ok {
			if v {
				return comp(e.X)
			}
			return comp(e.Y)
		}
	}
	x, err := comp(e.X)
	if err != nil {
		return nil, err
	}
	y, err := comp(e.Y)
	if err != nil {
		return nil, err
	}
	return func(f *frame) T {
		if cond(f) {
			return x(f)
		}
		return y(f)
	}, nil
}

func (c *compiler) sameType(e *ir.Binary) error {
	if e.X == nil || e.Y == nil {
		return fmt.Errorf("interp: missing operand")
	}
	if e.X.Type() != e.Y.Type() {
		return fmt.Errorf("interp: operands of %s differ: %s and %s in %s", e.Op, e.X.Type(), e.Y.Type(), ir.Format(e))
	}
	return nil
}

func (c *compiler) floatBinary(e *ir.Binary) (ffn, error) {
	if err := c.sameType(e); err != nil {
		return nil, err
	}
	x, err := c.float(e.X)
	if err != nil {
		return nil, err
	}
	y, err := c.float(e.Y)
	if err != nil {
		return nil, err
	}
	switch e.Op {
	case ir.Add:
		return func(f *frame) float64 { return x(f) + y(f) }, nil
	case ir.Sub:
		return func(f *frame) float64 { return x(f) - y(f) }, nil
	case ir.Mul:
		return func(f *frame) float64 { return x(f) * y(f) }, nil
	case ir.Div:
		return func(f *frame) float64 { return x(f) / y(f) }, nil
	case ir.Mod:
		return func(f *frame) float64 { return floatMod(x(f), y(f)) }, nil
	}
	return nil, fmt.Errorf("interp: operator %s does not yield a float", e.Op)
}

// floatMod is floor modulo, x - floor(x/y)*y, each step rounded (the
// conversion forbids fusing the multiply and subtract).
func floatMod(x, y float64) float64 {
	return x - float64(math.Floor(x/y)*y)
}

// floorDivMod is floor division and modulo of integers; y must not be 0.
func floorDivMod(x, y int64) (q, r int64) {
	q, r = x/y, x%y
	if r != 0 && (r < 0) != (y < 0) {
		q, r = q-1, r+y
	}
	return q, r
}

func (c *compiler) intBinary(e *ir.Binary) (ifn, error) {
	if err := c.sameType(e); err != nil {
		return nil, err
	}
	x, err := c.int(e.X)
	if err != nil {
		return nil, err
	}
	y, err := c.int(e.Y)
	if err != nil {
		return nil, err
	}
	// Index arithmetic such as oh*stride + kh - pad mostly has a constant
	// operand; evaluate those without a call.
	var ky int64
	yConst := false
	if c.isConst(e.Y) {
		ky, yConst = try(y)
	}
	switch e.Op {
	case ir.Add:
		if yConst {
			return func(f *frame) int64 { return x(f) + ky }, nil
		}
		return func(f *frame) int64 { return x(f) + y(f) }, nil
	case ir.Sub:
		if yConst {
			return func(f *frame) int64 { return x(f) - ky }, nil
		}
		return func(f *frame) int64 { return x(f) - y(f) }, nil
	case ir.Mul:
		if yConst {
			return func(f *frame) int64 { return x(f) * ky }, nil
		}
		return func(f *frame) int64 { return x(f) * y(f) }, nil
	case ir.Div, ir.Mod:
		div := e.Op == ir.Div
		if yConst && ky != 0 {
			if div {
				return func(f *frame) int64 { q, _ := floorDivMod(x(f), ky); return q }, nil
			}
			return func(f *frame) int64 { _, r := floorDivMod(x(f), ky); return r }, nil
		}
		sc := c.snapshot()
		return func(f *frame) int64 {
			a, b := x(f), y(f)
			if b == 0 {
				panic(&RunError{Span: e.Span, Msg: fmt.Sprintf("integer division by zero in %s%s", ir.Format(e), sc.at(f))})
			}
			q, r := floorDivMod(a, b)
			if div {
				return q
			}
			return r
		}, nil
	}
	return nil, fmt.Errorf("interp: operator %s does not yield an integer", e.Op)
}

func (c *compiler) compare(e *ir.Binary) (bfn, error) {
	if err := c.sameType(e); err != nil {
		return nil, err
	}
	switch classOf(e.X.Type()) {
	case clsFloat:
		x, err := c.float(e.X)
		if err != nil {
			return nil, err
		}
		y, err := c.float(e.Y)
		if err != nil {
			return nil, err
		}
		return compareFn(e.Op, x, y)
	case clsInt:
		x, err := c.int(e.X)
		if err != nil {
			return nil, err
		}
		y, err := c.int(e.Y)
		if err != nil {
			return nil, err
		}
		return compareFn(e.Op, x, y)
	case clsBool:
		x, err := c.bool(e.X)
		if err != nil {
			return nil, err
		}
		y, err := c.bool(e.Y)
		if err != nil {
			return nil, err
		}
		switch e.Op {
		case ir.And: // short-circuit, as in C: a guard protects the read after it
			return func(f *frame) bool { return x(f) && y(f) }, nil
		case ir.Or:
			return func(f *frame) bool { return x(f) || y(f) }, nil
		}
		xi := func(f *frame) int64 { return b2i(x(f)) }
		yi := func(f *frame) int64 { return b2i(y(f)) }
		return compareFn(e.Op, xi, yi)
	}
	return nil, c.typeErr(e.X, "a number or bool")
}

func compareFn[T float64 | int64](op ir.Op, x, y func(*frame) T) (bfn, error) {
	switch op {
	case ir.Eq:
		return func(f *frame) bool { return x(f) == y(f) }, nil
	case ir.Ne:
		return func(f *frame) bool { return x(f) != y(f) }, nil
	case ir.Lt:
		return func(f *frame) bool { return x(f) < y(f) }, nil
	case ir.Le:
		return func(f *frame) bool { return x(f) <= y(f) }, nil
	case ir.Gt:
		return func(f *frame) bool { return x(f) > y(f) }, nil
	case ir.Ge:
		return func(f *frame) bool { return x(f) >= y(f) }, nil
	}
	return nil, fmt.Errorf("interp: operator %s does not yield a bool from numbers", op)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (c *compiler) args(e *ir.Call) error {
	if len(e.Args) != e.Fn.Info().Arity {
		return fmt.Errorf("interp: %s takes %d arguments, has %d", e.Fn, e.Fn.Info().Arity, len(e.Args))
	}
	for _, a := range e.Args {
		if a == nil || a.Type() != e.T {
			return fmt.Errorf("interp: argument of %s is not %s in %s", e.Fn, e.T, ir.Format(e))
		}
	}
	return nil
}

var unaryFloat = map[ir.Builtin]func(float64) float64{
	ir.Exp:     math.Exp,
	ir.Exp2:    math.Exp2,
	ir.Log:     math.Log,
	ir.Log2:    math.Log2,
	ir.Sqrt:    math.Sqrt,
	ir.Rsqrt:   func(x float64) float64 { return 1 / math.Sqrt(x) },
	ir.Tanh:    math.Tanh,
	ir.Erf:     math.Erf,
	ir.Sigmoid: func(x float64) float64 { return 1 / (1 + math.Exp(-x)) },
	ir.Relu: func(x float64) float64 {
		if x > 0 || x != x {
			return x
		}
		return 0
	},
	ir.Abs:   math.Abs,
	ir.Sin:   math.Sin,
	ir.Cos:   math.Cos,
	ir.Floor: math.Floor,
	ir.Ceil:  math.Ceil,
	ir.TF32:  func(x float64) float64 { return float64(ir.RoundTF32(float32(x))) },
}

func (c *compiler) floatCall(e *ir.Call) (ffn, error) {
	if err := c.args(e); err != nil {
		return nil, err
	}
	a := make([]ffn, len(e.Args))
	for i, arg := range e.Args {
		var err error
		if a[i], err = c.float(arg); err != nil {
			return nil, err
		}
	}
	if g, ok := unaryFloat[e.Fn]; ok {
		x := a[0]
		if e.Fn == ir.Exp {
			return func(f *frame) float64 { return math.Exp(x(f)) }, nil
		}
		return func(f *frame) float64 { return g(x(f)) }, nil
	}
	switch e.Fn {
	case ir.MinFn: // Go's min and max propagate NaN
		x, y := a[0], a[1]
		return func(f *frame) float64 { return min(x(f), y(f)) }, nil
	case ir.MaxFn:
		x, y := a[0], a[1]
		return func(f *frame) float64 { return max(x(f), y(f)) }, nil
	case ir.Pow:
		x, y := a[0], a[1]
		return func(f *frame) float64 { return math.Pow(x(f), y(f)) }, nil
	case ir.Clamp:
		x, lo, hi := a[0], a[1], a[2]
		return func(f *frame) float64 { v := x(f); l := lo(f); return min(max(v, l), hi(f)) }, nil
	case ir.Fma:
		x, y, z := a[0], a[1], a[2]
		return func(f *frame) float64 { return math.FMA(x(f), y(f), z(f)) }, nil
	}
	return nil, fmt.Errorf("interp: builtin %s is not defined on %s", e.Fn, e.T)
}

func (c *compiler) intCall(e *ir.Call) (ifn, error) {
	if err := c.args(e); err != nil {
		return nil, err
	}
	a := make([]ifn, len(e.Args))
	for i, arg := range e.Args {
		var err error
		if a[i], err = c.int(arg); err != nil {
			return nil, err
		}
	}
	switch e.Fn {
	case ir.Relu:
		x := a[0]
		return func(f *frame) int64 { return max(x(f), 0) }, nil
	case ir.Abs:
		x := a[0]
		return func(f *frame) int64 {
			v := x(f)
			if v < 0 {
				return -v // wraps for math.MinInt64
			}
			return v
		}, nil
	case ir.MinFn:
		x, y := a[0], a[1]
		return func(f *frame) int64 { return min(x(f), y(f)) }, nil
	case ir.MaxFn:
		x, y := a[0], a[1]
		return func(f *frame) int64 { return max(x(f), y(f)) }, nil
	case ir.Clamp:
		x, lo, hi := a[0], a[1], a[2]
		return func(f *frame) int64 { v := x(f); l := lo(f); return min(max(v, l), hi(f)) }, nil
	}
	return nil, fmt.Errorf("interp: builtin %s is not defined on %s", e.Fn, e.T)
}

func (c *compiler) castFloat(e *ir.Cast) (ffn, error) {
	dt := e.T
	if e.X == nil {
		return nil, c.typeErr(e.X, "a value")
	}
	switch classOf(e.X.Type()) {
	case clsFloat:
		x, err := c.float(e.X)
		if err != nil {
			return nil, err
		}
		switch dt {
		case ir.F64:
			return x, nil
		case ir.F32:
			return func(f *frame) float64 { return roundF32(x(f)) }, nil
		}
		return func(f *frame) float64 { return tensor.RoundFloat(dt, x(f)) }, nil
	case clsInt:
		x, err := c.int(e.X)
		if err != nil {
			return nil, err
		}
		return func(f *frame) float64 { return intToFloat(dt, x(f)) }, nil
	case clsBool:
		x, err := c.bool(e.X)
		if err != nil {
			return nil, err
		}
		return func(f *frame) float64 { return float64(b2i(x(f))) }, nil
	}
	return nil, c.typeErr(e.X, "a number or bool")
}

func (c *compiler) castInt(e *ir.Cast) (ifn, error) {
	dt := e.T
	if e.X == nil {
		return nil, c.typeErr(e.X, "a value")
	}
	switch classOf(e.X.Type()) {
	case clsFloat:
		x, err := c.float(e.X)
		if err != nil {
			return nil, err
		}
		lo, hi := dt.IntRange()
		return func(f *frame) int64 { return truncSat(x(f), lo, hi) }, nil
	case clsInt:
		x, err := c.int(e.X)
		if err != nil {
			return nil, err
		}
		switch dt {
		case ir.I64:
			return x, nil
		case ir.I32:
			return func(f *frame) int64 { return int64(int32(x(f))) }, nil
		}
		return func(f *frame) int64 { return wrapInt(dt, x(f)) }, nil
	case clsBool:
		x, err := c.bool(e.X)
		if err != nil {
			return nil, err
		}
		return func(f *frame) int64 { return b2i(x(f)) }, nil
	}
	return nil, c.typeErr(e.X, "a number or bool")
}

// roundF32 rounds to float32, nearest even. In range, Go's conversion is
// the IEEE operation; values that may overflow, and NaN, go through
// tensor.RoundFloat, whose result Go leaves unspecified otherwise.
func roundF32(v float64) float64 {
	if math.Abs(v) <= math.MaxFloat32 {
		return float64(float32(v))
	}
	return tensor.RoundFloat(ir.F32, v)
}

// intToFloat rounds an integer to float dtype dt in one step.
func intToFloat(dt ir.DType, v int64) float64 {
	const exact = 1 << 53
	if -exact <= v && v <= exact {
		if dt == ir.F64 {
			return float64(v)
		}
		return tensor.RoundFloat(dt, float64(v))
	}
	t := tensor.New(dt, nil) // rare: float64(v) would round first
	t.SetInt(0, v)
	return t.Float(0)
}

// wrapInt wraps v to integer dtype dt, two's complement.
func wrapInt(dt ir.DType, v int64) int64 {
	switch dt {
	case ir.I8:
		return int64(int8(v))
	case ir.U8:
		return int64(uint8(v))
	case ir.I32:
		return int64(int32(v))
	}
	return v
}

// truncSat truncates v toward zero and clamps it to [lo, hi]; NaN gives 0.
func truncSat(v float64, lo, hi int64) int64 {
	const two63 = 1 << 63
	var i int64
	switch {
	case v != v:
		return 0
	case v >= two63:
		i = math.MaxInt64
	case v <= -two63:
		i = math.MinInt64
	default:
		i = int64(v)
	}
	return min(max(i, lo), hi)
}

// axis is a compiled reduction axis.
type axis struct {
	slot   int
	lo, hi ifn
}

// withAxes compiles a reduction's bounds in the enclosing scope and its
// body with the axes bound.
func withAxes[T any](c *compiler, e *ir.Reduce, comp func(ir.Expr) (func(*frame) T, error)) (func(*frame) T, error) {
	if len(e.Axes) == 0 {
		return nil, fmt.Errorf("interp: reduction %s has no axes", ir.Format(e))
	}
	if e.Body == nil || e.Body.Type() != e.T {
		return nil, fmt.Errorf("interp: %s body does not have the accumulation type %s", e.Op, e.T)
	}
	n := len(c.scope)
	defer func() { c.scope = c.scope[:n] }()
	for _, ax := range e.Axes {
		c.bind(ax)
		if ax.Lo == nil || ax.Hi == nil {
			return nil, fmt.Errorf("interp: reduction index %s has no range", ax.Name)
		}
	}
	c.scope = append(c.scope, e.Axes...)
	return comp(e.Body)
}

type num interface{ ~float64 | ~int64 }

// reduceNum compiles a reduction whose body is already compiled. lowest
// and highest are the identities of max and min. fast, if not nil, may
// return a replacement for the loop nest that computes the same values
// faster.
func reduceNum[T num](c *compiler, e *ir.Reduce, body func(*frame) T, lowest, highest T, fast func(e *ir.Reduce, axes []axis, slow loopFn[T]) loopFn[T]) (func(*frame) T, error) {
	axes := make([]axis, len(e.Axes))
	for i, ax := range e.Axes {
		lo, err := c.int(ax.Lo)
		if err != nil {
			return nil, fmt.Errorf("range of %s: %v", ax.Name, err)
		}
		hi, err := c.int(ax.Hi)
		if err != nil {
			return nil, fmt.Errorf("range of %s: %v", ax.Name, err)
		}
		axes[i] = axis{slot: c.slots[ax], lo: lo, hi: hi}
	}
	var ident T
	switch e.Op {
	case ir.Sum:
		ident = 0
	case ir.Prod:
		ident = 1
	case ir.Max:
		ident = lowest
	case ir.Min:
		ident = highest
	default:
		return nil, fmt.Errorf("interp: unknown reduction %v", e.Op)
	}
	loop := innerLoop(e.Op, axes[len(axes)-1], body)
	for i := len(axes) - 2; i >= 0; i-- {
		loop = outerLoop(axes[i], loop)
	}
	if fast != nil {
		if f := fast(e, axes, loop); f != nil {
			loop = f
		}
	}
	return func(f *frame) T { return loop(f, ident) }, nil
}

// A loop folds the points of some axes into an accumulator.
type loopFn[T num] func(f *frame, acc T) T

func innerLoop[T num](op ir.ReduceOp, ax axis, body func(*frame) T) loopFn[T] {
	s, lof, hif := ax.slot, ax.lo, ax.hi
	switch op {
	case ir.Sum:
		return func(f *frame, acc T) T {
			idx := f.idx
			for i, hi := lof(f), hif(f); i < hi; i++ {
				idx[s] = i
				acc += body(f)
			}
			return acc
		}
	case ir.Prod:
		return func(f *frame, acc T) T {
			idx := f.idx
			for i, hi := lof(f), hif(f); i < hi; i++ {
				idx[s] = i
				acc *= body(f)
			}
			return acc
		}
	case ir.Max: // Go's max propagates NaN
		return func(f *frame, acc T) T {
			idx := f.idx
			for i, hi := lof(f), hif(f); i < hi; i++ {
				idx[s] = i
				acc = max(acc, body(f))
			}
			return acc
		}
	}
	return func(f *frame, acc T) T {
		idx := f.idx
		for i, hi := lof(f), hif(f); i < hi; i++ {
			idx[s] = i
			acc = min(acc, body(f))
		}
		return acc
	}
}

func outerLoop[T num](ax axis, inner loopFn[T]) loopFn[T] {
	s, lof, hif := ax.slot, ax.lo, ax.hi
	return func(f *frame, acc T) T {
		idx := f.idx
		for i, hi := lof(f), hif(f); i < hi; i++ {
			idx[s] = i
			acc = inner(f, acc)
		}
		return acc
	}
}
