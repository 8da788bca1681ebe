package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/ir"
)

// gen generates one random spec. Everything it draws comes from r, so a
// spec is a function of its seed; every choice is made so that the spec
// checks (reads provably in range or padded with ??, no integer division
// by data, defined derived dims) and so that its numbers stay tame enough
// for the tolerances of runtime/compare.go (no division by values near
// zero, exp of bounded arguments, no float modulo), since a disagreement
// caused by an ill-conditioned formula would be noise, not a bug.
type gen struct {
	r    *rand.Rand
	spec *Spec
	k    *Kernel

	dims    []*dimInfo
	pool    []*tval // tensors statements may read: inputs, earlier outputs and lets
	kinds   []string
	nParams int
	lowp    bool // the kernel stores f16 or bf16: casts to them are fair
	fns     map[string]bool
}

// dimInfo is a declared or derived dim and how to size it.
type dimInfo struct {
	name    string
	lo, hi  int64 // the range instance sizes are drawn from
	derived bool
	// long: a long row (rowReduce's), drawn as a multiple of 8 and
	// shrunk last, so that rows reach the templates' paths for long
	// rows (whole 16-byte chunks, a block a row) inside the work bound.
	long bool
}

// tval is a tensor a statement may read.
type tval struct {
	name  string
	dims  []string // dim names, one per axis
	dtype string   // storage dtype; "" for a let (it computes in kind)
	kind  byte
}

// scope maps a statement's indices to the dims they run over.
type scope struct {
	idx  []string
	dim  []string
	used map[string]bool // every index name taken in the statement
	out  map[string]bool // output indices of an output statement (not a let)
}

func newScope() *scope { return &scope{used: map[string]bool{}, out: map[string]bool{}} }

var indexNames = []string{"i", "j", "k", "l", "m", "n", "o", "q", "r", "s", "u", "v", "w", "x", "y", "z", "a", "b", "c", "d", "e", "f", "g", "h"}

// fresh returns an index name not yet used in the statement.
func (sc *scope) fresh() string {
	for _, n := range indexNames {
		if !sc.used[n] {
			sc.used[n] = true
			return n
		}
	}
	for i := 0; ; i++ {
		n := fmt.Sprintf("i%d", i)
		if !sc.used[n] {
			sc.used[n] = true
			return n
		}
	}
}

// bind adds a fresh index over dim d to the scope and returns it.
func (sc *scope) bind(d string) string {
	n := sc.fresh()
	sc.idx = append(sc.idx, n)
	sc.dim = append(sc.dim, d)
	return n
}

func (sc *scope) over(d string) []string {
	var out []string
	for i, dd := range sc.dim {
		if dd == d {
			out = append(out, sc.idx[i])
		}
	}
	return out
}

// Generate returns the spec of seed: one kernel of one to three blocks of
// random statement kinds.
func Generate(seed uint64) *Spec { return GenerateKinds(seed, nil) }

// GenerateKinds returns the spec of seed made of one block of each of
// kinds, or of random ones when kinds is empty.
func GenerateKinds(seed uint64, kinds []string) *Spec {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), fns: map[string]bool{}}
	g.spec = &Spec{K: Kernel{Name: fmt.Sprintf("k%d", seed)}}
	g.k = &g.spec.K
	if len(kinds) == 0 {
		for range 1 + g.r.IntN(3) {
			g.block("")
		}
	}
	for _, k := range kinds {
		g.block(k)
	}
	// @acc(f32) on f64 data would make the kernel less precise than
	// the f64 tolerance assumes; f64 accumulation is always fair.
	if len(g.k.Attrs) == 0 {
		if g.chance(0.2) && !g.hasF64() {
			g.k.Attrs = append(g.k.Attrs, "@acc(f32)")
		} else if g.chance(0.1) {
			g.k.Attrs = append(g.k.Attrs, "@acc(f64)")
		}
	}
	g.spec.fixRanges()
	g.instances()
	g.spec.Header = []string{fmt.Sprintf("difftest seed %d: %s", seed, strings.Join(g.kinds, ", "))}
	return g.spec
}

// blockKind is a statement kind, with its weight among random blocks.
type blockKind struct {
	name   string
	weight int
	fn     func(*gen)
}

// statement kinds, with weights.
var blockKinds = []blockKind{
	{"elementwise", 4, (*gen).elementwise},
	{"transpose", 2, (*gen).transpose},
	{"row-reduce", 3, (*gen).rowReduce},
	{"col-reduce", 2, (*gen).colReduce},
	{"full-reduce", 1, (*gen).fullReduce},
	{"contraction", 3, (*gen).contraction},
	{"conv", 2, (*gen).conv},
	{"pool", 1, (*gen).pooling},
	{"gather", 2, (*gen).gather},
	{"groupnorm", 1, (*gen).groupnorm},
	{"quantize", 1, (*gen).quantize},
	{"chain", 2, (*gen).chain},
	{"nested", 1, (*gen).nested},
}

// block adds a block of statements of kind, or of a random kind.
func (g *gen) block(kind string) {
	for _, b := range blockKinds {
		if b.name == kind {
			if b.name == "chain" && len(g.k.Outputs) == 0 {
				b = blockKinds[0]
			}
			g.kinds = append(g.kinds, b.name)
			b.fn(g)
			return
		}
	}
	total := 0
	for _, b := range blockKinds {
		total += b.weight
	}
	n := g.r.IntN(total)
	for _, b := range blockKinds {
		if n < b.weight {
			if b.name == "chain" && len(g.k.Outputs) == 0 {
				b = blockKinds[0]
			}
			g.kinds = append(g.kinds, b.name)
			b.fn(g)
			return
		}
		n -= b.weight
	}
}

func (g *gen) pick(n int) int { return g.r.IntN(n) }
func (g *gen) chance(p float64) bool {
	return g.r.Float64() < p
}
func pickOf[T any](g *gen, xs []T) T { return xs[g.r.IntN(len(xs))] }

var dimNames = []string{"M", "N", "R", "D", "B", "C", "L", "F", "P", "Q", "S", "T", "U", "V", "E", "G", "H", "J", "K", "A"}

// newDim declares a dim sized lo..hi in instances.
func (g *gen) newDim(lo, hi int64) string {
	for _, n := range dimNames {
		if g.dimInfo(n) == nil {
			g.dims = append(g.dims, &dimInfo{name: n, lo: lo, hi: hi})
			g.k.Dims = append(g.k.Dims, n)
			return n
		}
	}
	n := fmt.Sprintf("Z%d", len(g.dims))
	g.dims = append(g.dims, &dimInfo{name: n, lo: lo, hi: hi})
	g.k.Dims = append(g.k.Dims, n)
	return n
}

// derived declares a where-clause dim.
func (g *gen) derived(expr string) string {
	n := fmt.Sprintf("O%d", len(g.k.Where))
	g.dims = append(g.dims, &dimInfo{name: n, derived: true})
	g.k.Where = append(g.k.Where, Derived{Name: n, Expr: expr})
	return n
}

func (g *gen) dimInfo(n string) *dimInfo {
	for _, d := range g.dims {
		if d.name == n {
			return d
		}
	}
	return nil
}

// someDim returns an existing plain dim (half the time, when there is
// one) or a new one.
func (g *gen) someDim() string {
	var plain []string
	for _, d := range g.dims {
		if !d.derived && d.hi > 4 {
			plain = append(plain, d.name)
		}
	}
	if len(plain) > 0 && g.chance(0.5) {
		return pickOf(g, plain)
	}
	return g.newDim(1, 40)
}

// someDims returns n distinct dims.
func (g *gen) someDims(n int) []string {
	var out []string
	for len(out) < n {
		d := g.someDim()
		if !slices.Contains(out, d) {
			out = append(out, d)
		} else {
			out = append(out, g.newDim(1, 40))
		}
	}
	return out
}

var floatTypes = []string{"f32", "f32", "f32", "f16", "bf16", "f64"}
var intTypes = []string{"i32", "i8", "u8", "i64"}

func kindOf(dtype string) byte {
	switch dtype {
	case "f32", "f16", "bf16", "f64":
		return kFloat
	case "bool":
		return kBool
	}
	return kInt
}

// input declares a new input.
func (g *gen) input(dtype string, dims []string) *tval {
	t := &tval{name: fmt.Sprintf("X%d", len(g.k.Inputs)), dims: slices.Clone(dims), dtype: dtype, kind: kindOf(dtype)}
	g.k.Inputs = append(g.k.Inputs, Decl{Name: t.name, DType: dtype, Shape: slices.Clone(dims)})
	g.pool = append(g.pool, t)
	return t
}

// output declares a new output; it joins the pool once written.
func (g *gen) output(dtype string, dims []string) *tval {
	t := &tval{name: fmt.Sprintf("Y%d", len(g.k.Outputs)), dims: slices.Clone(dims), dtype: dtype, kind: kindOf(dtype)}
	g.k.Outputs = append(g.k.Outputs, Decl{Name: t.name, DType: dtype, Shape: slices.Clone(dims)})
	if dtype == "f16" || dtype == "bf16" {
		g.lowp = true
	}
	return t
}

// param declares a param and returns its name.
func (g *gen) param(dtype, def string) string {
	n := fmt.Sprintf("p%d", g.nParams)
	g.nParams++
	g.k.Params = append(g.k.Params, Param{Name: n, DType: dtype, Default: def})
	return n
}

// emit appends a statement; a let joins the pool with the kind it
// computes in.
func (g *gen) emit(let bool, t *tval, lhs []string, rhs *Expr) {
	g.k.Stmts = append(g.k.Stmts, &Stmt{Let: let, Name: t.name, LHS: lhs, Dims: slices.Clone(t.dims), RHS: rhs})
	g.pool = append(g.pool, t)
}

func (g *gen) let(dims []string, kind byte) *tval {
	n := 0
	for _, s := range g.k.Stmts {
		if s.Let {
			n++
		}
	}
	return &tval{name: fmt.Sprintf("t%d", n), dims: slices.Clone(dims), kind: kind}
}

// outDType draws an output dtype.
func (g *gen) outDType() string {
	switch n := g.pick(20); {
	case n < 10:
		return "f32"
	case n < 12:
		return "f16"
	case n < 15:
		return "bf16"
	case n < 17:
		return "i32"
	case n < 18:
		return "i8"
	case n < 19:
		return "u8"
	}
	return "bool"
}

// lhsItems returns the left-hand side of a let over sc's indices, giving
// some ranges explicitly.
func (g *gen) lhsItems(sc *scope, explicit bool) []string {
	var out []string
	for i, ix := range sc.idx {
		if explicit || g.chance(0.2) {
			out = append(out, fmt.Sprintf("%s in 0..%s", ix, sc.dim[i]))
		} else {
			out = append(out, ix)
		}
	}
	return out
}

// reduce builds a reduction over axes items that run over dims.
func reduce(op string, items, dims []string, body *Expr) *Expr {
	return &Expr{Op: "red", Text: op, Axes: items, AxisDims: slices.Clone(dims), Args: []*Expr{body}, Kind: body.Kind}
}

// axes returns reduction axes over dims, some with explicit ranges.
func (g *gen) axes(sc *scope, dims []string) ([]string, []string) {
	var names, items []string
	for _, d := range dims {
		ix := sc.bind(d)
		names = append(names, ix)
		if g.chance(0.2) {
			items = append(items, fmt.Sprintf("%s in 0..%s", ix, d))
		} else {
			items = append(items, ix)
		}
	}
	return names, items
}

// plainRead reads t with sc's indices, one per axis, none compound: the
// read that fixes the ranges of let and reduction indices.
func (g *gen) plainRead(t *tval, sc *scope) *Expr {
	var idx []*Expr
	for _, d := range t.dims {
		ixs := sc.over(d)
		if len(ixs) == 0 {
			return nil
		}
		idx = append(idx, name(pickOf(g, ixs), kInt))
	}
	return read(t.name, t.kind, idx...)
}

// leafRead reads t in sc, sometimes through compound indices: ones the
// checker can prove in range (a flip, a rotation, a halving, a clamp), or
// shifted and strided ones padded with ??.
func (g *gen) leafRead(t *tval, sc *scope) *Expr {
	var idx []*Expr
	pad := false
	for _, d := range t.dims {
		ixs := sc.over(d)
		if len(ixs) == 0 {
			return nil
		}
		ix := name(pickOf(g, ixs), kInt)
		if !g.chance(0.2) {
			idx = append(idx, ix)
			continue
		}
		D := name(d, kInt)
		one := lit("1", kInt)
		c := lit(fmt.Sprint(1+g.pick(3)), kInt)
		switch g.pick(9) {
		case 8: // a read guarded by a condition instead of ??
			if len(t.dims) == 1 {
				shifted := read(t.name, t.kind, bin("-", kInt, ix, one))
				return cond(bin(">", kBool, ix.Clone(), lit("0", kInt)), shifted, g.padValue(t.kind))
			}
			idx = append(idx, ix)
		case 0: // flip
			idx = append(idx, bin("-", kInt, bin("-", kInt, D, one), ix))
		case 1: // rotate
			idx = append(idx, bin("%", kInt, bin("+", kInt, ix, c), D))
		case 2:
			idx = append(idx, bin("/", kInt, ix, lit("2", kInt)))
		case 3:
			idx = append(idx, call("min", kInt, bin("+", kInt, ix, one), bin("-", kInt, D, one)))
		case 4:
			idx = append(idx, call("clamp", kInt, bin("-", kInt, ix, c), lit("0", kInt), bin("-", kInt, D, one)))
		case 5:
			idx = append(idx, bin("+", kInt, ix, c))
			pad = true
		case 6:
			idx = append(idx, bin("-", kInt, ix, c))
			pad = true
		default:
			idx = append(idx, bin("-", kInt, bin("*", kInt, lit("2", kInt), ix), one))
			pad = true
		}
	}
	r := read(t.name, t.kind, idx...)
	if pad {
		r.Pad = g.padValue(t.kind)
	}
	return r
}

func (g *gen) padValue(kind byte) *Expr {
	switch kind {
	case kBool:
		return lit(pickOf(g, []string{"false", "true"}), kBool)
	case kInt:
		return lit(pickOf(g, []string{"0", "0", "1", "-3"}), kInt)
	}
	return lit(pickOf(g, []string{"0", "0", "1", "-1", "0.5"}), kFloat)
}

// leaves gathers what an expression over sc may read: tensors of the pool
// whose dims sc covers, and new inputs over some of sc's dims (a
// broadcast, sometimes permuted).
type leaves struct {
	g     *gen
	sc    *scope
	reads []*tval
	fresh bool // new inputs may be declared
}

func (g *gen) leavesFor(sc *scope, fresh bool) *leaves {
	l := &leaves{g: g, sc: sc, fresh: fresh}
	for _, t := range g.pool {
		ok := true
		for _, d := range t.dims {
			ok = ok && len(sc.over(d)) > 0
		}
		if ok {
			l.reads = append(l.reads, t)
		}
	}
	return l
}

// newInput declares an input over a random subset of sc's dims.
func (l *leaves) newInput(kind byte) *tval {
	g := l.g
	var dims []string
	for _, d := range uniq(l.sc.dim) {
		if g.chance(0.7) {
			dims = append(dims, d)
		}
	}
	if len(dims) > 1 && g.chance(0.3) {
		g.r.Shuffle(len(dims), func(i, j int) { dims[i], dims[j] = dims[j], dims[i] })
	}
	var dt string
	switch kind {
	case kFloat:
		dt = pickOf(g, floatTypes)
	case kInt:
		dt = pickOf(g, intTypes)
	default:
		dt = "bool"
	}
	t := g.input(dt, dims)
	l.reads = append(l.reads, t)
	return t
}

func uniq(xs []string) []string {
	var out []string
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// leaf returns a value of kind.
func (l *leaves) leaf(kind byte) *Expr {
	g := l.g
	var cands []*tval
	for _, t := range l.reads {
		if t.kind == kind {
			cands = append(cands, t)
		}
	}
	switch {
	case len(cands) > 0 && g.chance(0.75) || len(cands) > 0 && !l.fresh:
		if r := g.leafRead(pickOf(g, cands), l.sc); r != nil {
			return r
		}
	case l.fresh && g.chance(0.8):
		if r := g.leafRead(l.newInput(kind), l.sc); r != nil {
			return r
		}
	}
	switch kind {
	case kBool:
		if len(l.sc.idx) > 0 {
			ix := pickOf(g, l.sc.idx)
			return bin("<", kBool, name(ix, kInt), lit(fmt.Sprint(1+g.pick(4)), kInt))
		}
		return lit("true", kBool)
	case kInt:
		if len(l.sc.idx) > 0 && g.chance(0.6) {
			return name(pickOf(g, l.sc.idx), kInt)
		}
		if len(l.sc.dim) > 0 && g.chance(0.5) {
			return name(pickOf(g, l.sc.dim), kInt)
		}
		return lit(fmt.Sprint(g.pick(7)-3), kInt)
	}
	switch g.pick(4) {
	case 0:
		return name(g.param("f32", pickOf(g, []string{"0.5", "-1.25", "2.0", "0.1"})), kFloat)
	case 1:
		if len(l.sc.idx) > 0 {
			// an index as a float value, kept small
			return bin("*", kFloat, call("f32", kFloat, name(pickOf(g, l.sc.idx), kInt)), lit("0.25", kFloat))
		}
	}
	return lit(pickOf(g, []string{"0.5", "1.5", "2", "-0.75", "3"}), kFloat)
}

// floatExpr builds a float expression of depth at most d.
func (g *gen) floatExpr(d int, l *leaves) *Expr {
	if d <= 0 || g.chance(0.25) {
		if g.chance(0.15) {
			return call(pickOf(g, []string{"f32", "f64"}), kFloat, g.intExpr(1, l))
		}
		return l.leaf(kFloat)
	}
	x := func() *Expr { return g.floatExpr(d-1, l) }
	switch g.pick(14) {
	case 0, 1:
		return bin(pickOf(g, []string{"+", "-", "*"}), kFloat, x(), x())
	case 2:
		return bin("/", kFloat, x(), bin("+", kFloat, lit("1", kFloat), call("abs", kFloat, x())))
	case 3:
		if g.chance(0.25) {
			// A sine and a cosine of one value, which the CUDA and HIP
			// backends compute together.
			y := x()
			return bin(pickOf(g, []string{"+", "-", "*"}), kFloat, call("sin", kFloat, y), call("cos", kFloat, y))
		}
		return call(pickOf(g, []string{"relu", "abs", "tanh", "sigmoid", "erf", "sin", "cos"}), kFloat, x())
	case 4:
		switch g.pick(5) {
		case 0:
			return call("sqrt", kFloat, call("abs", kFloat, x()))
		case 1:
			return call("log", kFloat, bin("+", kFloat, call("abs", kFloat, x()), lit("1", kFloat)))
		case 2:
			return call("rsqrt", kFloat, bin("+", kFloat, call("abs", kFloat, x()), lit("1", kFloat)))
		case 3:
			return call(pickOf(g, []string{"exp", "exp2"}), kFloat, &Expr{Op: "un", Text: "-", Args: []*Expr{call("abs", kFloat, x())}, Kind: kFloat})
		default:
			return call("pow", kFloat, bin("+", kFloat, call("abs", kFloat, x()), lit("0.5", kFloat)), lit(pickOf(g, []string{"2", "0.5", "1.5"}), kFloat))
		}
	case 5:
		return call(pickOf(g, []string{"max", "min"}), kFloat, x(), x())
	case 6:
		return call("fma", kFloat, x(), x(), x())
	case 7:
		return call("clamp", kFloat, x(), lit("-1", kFloat), lit("1.5", kFloat))
	case 8:
		return cond(g.boolExpr(d-1, l), x(), x())
	case 9:
		return &Expr{Op: "un", Text: "-", Args: []*Expr{x()}, Kind: kFloat}
	case 10:
		return g.fnCall(x())
	case 11:
		v := x()
		return bin("*", kFloat, v, v.Clone())
	case 12:
		// No casts to f16 or bf16 inside an expression: the kernel rounds
		// an f32 value where the interpreter rounds an f64 one, and a
		// value a rounding boundary apart becomes a difference of an ulp
		// of bf16 that later arithmetic may magnify past the tolerance.
		// Nor tf32() of computed values, for the same reason; the
		// contraction kind applies it to loads.
		return call("f64", kFloat, x())
	default:
		return call(pickOf(g, []string{"floor", "ceil"}), kFloat, bin("*", kFloat, x(), lit("4", kFloat)))
	}
}

// fns the generator may declare and call.
var fnDecls = map[string]Fn{
	"gelu":     {Name: "gelu", Params: []string{"x"}, Body: "0.5 * x * (1 + erf(x * 0.7071067811865476))"},
	"softplus": {Name: "softplus", Params: []string{"x"}, Body: "max(x, 0) + log(1 + exp(-abs(x)))"},
	"silu":     {Name: "silu", Params: []string{"x"}, Body: "x * sigmoid(x)"},
	"mish":     {Name: "mish", Params: []string{"x"}, Body: "x * tanh(softplus(x))"},
	"sq":       {Name: "sq", Params: []string{"x"}, Body: "x * x"},
}

func (g *gen) fnCall(x *Expr) *Expr {
	f := pickOf(g, []string{"gelu", "softplus", "silu", "mish", "sq"})
	g.useFn(f)
	if f == "mish" {
		g.useFn("softplus")
	}
	return call(f, kFloat, x)
}

func (g *gen) useFn(f string) {
	if !g.fns[f] {
		g.fns[f] = true
		g.spec.Fns = append(g.spec.Fns, fnDecls[f])
		slices.SortFunc(g.spec.Fns, func(a, b Fn) int { return strings.Compare(a.Name, b.Name) })
	}
}

// intExpr builds an integer expression; divisors are positive constants,
// so it never divides by zero.
func (g *gen) intExpr(d int, l *leaves) *Expr {
	if d <= 0 || g.chance(0.3) {
		return l.leaf(kInt)
	}
	x := func() *Expr { return g.intExpr(d-1, l) }
	switch g.pick(8) {
	case 0, 1:
		return bin(pickOf(g, []string{"+", "-", "*"}), kInt, x(), x())
	case 2:
		return bin(pickOf(g, []string{"/", "%"}), kInt, x(), lit(fmt.Sprint(2+g.pick(4)), kInt))
	case 3:
		return call(pickOf(g, []string{"min", "max"}), kInt, x(), x())
	case 4:
		return call(pickOf(g, []string{"abs", "relu"}), kInt, x())
	case 5:
		return call("clamp", kInt, x(), lit("-20", kInt), lit("20", kInt))
	case 6:
		return cond(g.boolExpr(d-1, l), x(), x())
	}
	return &Expr{Op: "un", Text: "-", Args: []*Expr{x()}, Kind: kInt}
}

// boolExpr builds a condition.
func (g *gen) boolExpr(d int, l *leaves) *Expr {
	switch g.pick(6) {
	case 0:
		return l.leaf(kBool)
	case 1:
		return bin(pickOf(g, []string{"<", ">", "<=", ">=", "==", "!="}), kBool, g.intExpr(d, l), g.intExpr(d, l))
	case 2:
		if d > 0 {
			return bin(pickOf(g, []string{"&&", "||"}), kBool, g.boolExpr(d-1, l), g.boolExpr(d-1, l))
		}
	case 3:
		if d > 0 {
			return &Expr{Op: "un", Text: "!", Args: []*Expr{g.boolExpr(d-1, l)}, Kind: kBool}
		}
	}
	return bin(pickOf(g, []string{"<", ">", "<=", ">="}), kBool, g.floatExpr(d, l), l.leaf(kFloat))
}

// hasF64 reports whether the kernel has f64 tensors.
func (g *gen) hasF64() bool {
	for _, d := range append(slices.Clone(g.k.Inputs), g.k.Outputs...) {
		if d.DType == "f64" {
			return true
		}
	}
	return false
}

// valueFor builds the right-hand side for an output of dtype.
func (g *gen) valueFor(dtype string, d int, l *leaves) *Expr {
	switch kindOf(dtype) {
	case kBool:
		return g.boolExpr(d, l)
	case kInt:
		if g.chance(0.3) {
			return call(dtype, kInt, g.floatExpr(d, l))
		}
		return g.intExpr(d, l)
	}
	return g.floatExpr(d, l)
}

// sizes instances draw from first: 1, small primes, and just past powers
// of two; a dim's own range bounds them.
var niceSizes = []int64{1, 2, 3, 5, 7, 8, 11, 13, 16, 17, 19, 31, 32, 33, 37, 64, 65}

func (g *gen) size(d *dimInfo) int64 {
	if d.long {
		return max(d.lo, (d.lo+g.r.Int64N(d.hi-d.lo+1))/8*8)
	}
	var ok []int64
	for _, s := range niceSizes {
		if s >= d.lo && s <= d.hi {
			ok = append(ok, s)
		}
	}
	if len(ok) > 0 && g.chance(0.7) {
		return pickOf(g, ok)
	}
	return d.lo + g.r.Int64N(d.hi-d.lo+1)
}

// maxWork bounds the interpreter's operations for an instance, keeping
// emulation (one host thread per CUDA thread) quick; long rows (dimInfo)
// stay long up to maxLongWork.
const (
	maxWork     = 1e5
	maxLongWork = 1e8
)

// instances adds one or two instances: random sizes shrunk until the
// kernel's work is small, and sometimes a second with the smallest sizes
// each dim allows (ones, mostly).
func (g *gen) instances() {
	bind := func(name string, sizes map[string]int64) {
		in := Instance{Name: name}
		for _, d := range g.dims {
			if !d.derived {
				in.Bindings = append(in.Bindings, Binding{Name: d.name, Value: sizes[d.name]})
			}
		}
		g.spec.Instances = append(g.spec.Instances, in)
	}
	sizes := map[string]int64{}
	for _, d := range g.dims {
		if !d.derived {
			sizes[d.name] = g.size(d)
		}
	}
	name := g.k.Name + "_a"
	for range 40 {
		bind(name, sizes)
		w := g.work()
		g.spec.Instances = g.spec.Instances[:len(g.spec.Instances)-1]
		if w <= maxWork {
			break
		}
		// Halve the largest dim that can shrink, long rows last.
		var big *dimInfo
		for _, long := range []bool{false, true} {
			for _, d := range g.dims {
				if !d.derived && d.long == long && sizes[d.name]/2 >= d.lo && (big == nil || sizes[d.name] > sizes[big.name]) {
					big = d
				}
			}
			if big != nil {
				break
			}
		}
		if big == nil && w > maxLongWork {
			// Long rows too many for the interpreter (two of them, a
			// row's reduction at each of a row's points: 2049^3): the
			// longest shrinks, long no more.
			for _, d := range g.dims {
				if !d.derived && sizes[d.name] > 1 && (big == nil || sizes[d.name] > sizes[big.name]) {
					big = d
				}
			}
		}
		if big == nil {
			break
		}
		sizes[big.name] /= 2
	}
	bind(name, sizes)
	if g.chance(0.5) {
		small := map[string]int64{}
		for _, d := range g.dims {
			if !d.derived {
				small[d.name] = d.lo
				if d.lo == 1 && g.chance(0.3) {
					small[d.name] = 1 + g.r.Int64N(min(d.hi, 6))
				}
			}
		}
		// Sometimes an empty tensor: a dim of 0 (sizes may be 0; a sum
		// over nothing is 0, a max -inf).
		if g.chance(0.15) {
			var ones []string
			for _, d := range g.dims {
				if !d.derived && d.lo <= 1 {
					ones = append(ones, d.name)
				}
			}
			if len(ones) > 0 {
				small[pickOf(g, ones)] = 0
			}
		}
		bind(g.k.Name+"_b", small)
	}
}

// work is the interpreter's cost of the spec's last instance, or +inf when
// the spec does not check (the driver reports that).
func (g *gen) work() float64 {
	prog, diags := frontend.CheckSource("gen.kg", g.spec.Text())
	if diags.HasErrors() || len(prog.Instances) == 0 {
		return 0
	}
	in := prog.Instances[len(prog.Instances)-1]
	return ir.Work(in.Kernel, in.Env)
}
