package main

import (
	"fmt"
	"slices"
)

// The statement kinds the generator composes into kernels. Each adds its
// dims, inputs, lets and outputs; later blocks may read what earlier ones
// wrote (through the pool), which is how fused chains arise.

// elementwise: an output over 1-3 dims computed from broadcast reads.
func (g *gen) elementwise() {
	dims := g.someDims(1 + g.pick(3))
	dt := g.outDType()
	out := g.output(dt, dims)
	sc := newScope()
	for _, d := range dims {
		sc.bind(d)
	}
	l := g.leavesFor(sc, true)
	g.emit(false, out, sc.idx, g.valueFor(dt, 1+g.pick(3), l))
}

// chain: an elementwise statement over an earlier output's dims that reads
// it, sometimes through a let.
func (g *gen) chain() {
	prev := g.pool[len(g.pool)-1]
	for _, t := range slices.Backward(g.pool) {
		if t.dtype != "" && len(t.dims) > 0 && t.kind == kFloat {
			prev = t
			break
		}
	}
	dims := prev.dims
	if len(dims) == 0 {
		dims = g.someDims(1)
	}
	sc := newScope()
	for _, d := range dims {
		sc.bind(d)
	}
	l := g.leavesFor(sc, true)
	if g.chance(0.5) {
		lt := g.let(dims, kFloat)
		g.emit(true, lt, g.lhsItems(sc, false), g.floatExpr(2, l))
		dt := pickOf(g, []string{"f32", "f32", "f16", "bf16"})
		g.emit(false, g.output(dt, dims), sc.idx, bin(pickOf(g, []string{"+", "*", "-"}), kFloat, g.plainRead(lt, sc), g.floatExpr(2, l)))
		return
	}
	dt := g.outDType()
	g.emit(false, g.output(dt, dims), sc.idx, g.valueFor(dt, 2, l))
}

// transpose: an output whose dims are a permutation of an input's.
func (g *gen) transpose() {
	dims := g.someDims(2 + g.pick(3))
	dt := pickOf(g, []string{"f32", "f32", "bf16", "f16", "i32", "u8", "f64"})
	x := g.input(dt, dims)
	perm := slices.Clone(dims)
	for slices.Equal(perm, dims) {
		g.r.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	}
	sc := newScope()
	for _, d := range perm {
		sc.bind(d)
	}
	rd := g.plainRead(x, sc)
	var rhs *Expr = rd
	// An f64 output is compared at f64 precision: only data movement
	// can promise it.
	if x.kind == kFloat && dt != "f64" && g.chance(0.4) {
		l := g.leavesFor(sc, false)
		l.reads = []*tval{x}
		rhs = bin(pickOf(g, []string{"+", "*"}), kFloat, rd, g.floatExpr(1, l))
	}
	g.emit(false, g.output(dt, perm), sc.idx, rhs)
}

// reduceBody wraps a float body for reduction op: a product is taken of
// values near 1, so that it neither overflows nor vanishes.
func (g *gen) reduceBody(op string, body *Expr) *Expr {
	if op == "prod" {
		return bin("+", kFloat, lit("1", kFloat), bin("*", kFloat, lit("0.1", kFloat), call("tanh", kFloat, body)))
	}
	return body
}

var reduceOps = []string{"sum", "sum", "sum", "max", "min", "prod"}

// rowReduce: reductions over the last axis fused with the statements that
// use them: softmax, layer norm, RMS norm, a log-sum-exp or a variance per
// row (one pass over streamed rows: lower.OnePass), or random ones.
func (g *gen) rowReduce() {
	outer := g.someDims(1 + g.pick(2))
	D := g.newDim(1, 48)
	if g.chance(0.2) {
		// Long rows: over 2048 elements a block of 512 threads takes
		// each row, in 16-byte chunks when the row is made of them.
		d := g.dimInfo(D)
		d.lo, d.hi, d.long = 2049, 4096, true
	}
	x := g.input(pickOf(g, []string{"f32", "f32", "f16", "bf16"}), append(slices.Clone(outer), D))
	if g.chance(0.3) {
		// The rows are an output computed elementwise from the input's,
		// which the row's launch stores too (lower's prologueGroup).
		ps := newScope()
		for _, d := range append(slices.Clone(outer), D) {
			ps.bind(d)
		}
		l := g.leavesFor(ps, false)
		l.reads = []*tval{x}
		p := g.output(pickOf(g, []string{"f32", "f32", "f16", "bf16"}), append(slices.Clone(outer), D))
		g.emit(false, p, ps.idx, bin(pickOf(g, []string{"+", "*", "-"}), kFloat, g.plainRead(x, ps), g.floatExpr(1, l)))
		x = p
	}
	sc := newScope()
	for _, d := range outer {
		sc.bind(d)
	}
	outIdx := slices.Clone(sc.idx)
	red := func(op string, body func(sc *scope, d string) *Expr) *tval {
		ls := &scope{idx: slices.Clone(outIdx), dim: slices.Clone(outer), used: map[string]bool{}, out: map[string]bool{}}
		for _, n := range outIdx {
			ls.used[n] = true
		}
		names, items := g.axes(ls, []string{D})
		t := g.let(outer, kFloat)
		g.emit(true, t, g.lhsItems(&scope{idx: outIdx, dim: outer}, false), reduce(op, items, []string{D}, g.reduceBody(op, body(ls, names[0]))))
		return t
	}
	xr := func(ls *scope, d string) *Expr {
		return read(x.name, kFloat, append(idxNames(outIdx), name(d, kInt))...)
	}
	full := &scope{idx: slices.Clone(outIdx), dim: slices.Clone(outer), used: map[string]bool{}, out: map[string]bool{}}
	for _, n := range outIdx {
		full.used[n] = true
	}
	dIdx := full.bind(D)
	X := read(x.name, kFloat, append(idxNames(outIdx), name(dIdx, kInt))...)
	at := func(t *tval) *Expr { return read(t.name, kFloat, idxNames(outIdx)...) }
	dt := pickOf(g, []string{"f32", "f32", "f16", "bf16"})
	switch g.pick(8) {
	case 7: // a costly value of the point in several loops, once under a
		// condition: what a cached row keeps in registers (rowshare.go)
		form := g.pick(4)
		costly := func(v *Expr) *Expr {
			switch form {
			case 0:
				return call("exp", kFloat, bin("*", kFloat, v, lit("0.5", kFloat)))
			case 1:
				return call("log", kFloat, bin("+", kFloat, lit("1", kFloat), bin("*", kFloat, v, v.Clone())))
			case 2:
				return call("sqrt", kFloat, call("abs", kFloat, v))
			}
			return bin("/", kFloat, v, lit("0.7", kFloat))
		}
		a := red("sum", func(ls *scope, d string) *Expr {
			v := xr(ls, d)
			return cond(bin(">", kBool, v, lit("0", kFloat)), costly(v.Clone()), lit("0", kFloat))
		})
		b := red(pickOf(g, []string{"sum", "max"}), func(ls *scope, d string) *Expr {
			return bin("*", kFloat, costly(xr(ls, d)), bin("+", kFloat, xr(ls, d), at(a)))
		})
		g.emit(false, g.output(dt, append(slices.Clone(outer), D)), full.idx,
			bin("+", kFloat, costly(X), bin("*", kFloat, at(a), at(b))))
	case 5: // log-sum-exp per row: a max and its shifted sum, one pass when streamed
		mx := red("max", xr)
		j := full.fresh()
		xj := read(x.name, kFloat, append(idxNames(outIdx), name(j, kInt))...)
		s := reduce("sum", []string{j}, []string{D}, call("exp", kFloat, bin("-", kFloat, xj, at(mx))))
		g.emit(false, g.output(dt, outer), outIdx, bin("+", kFloat, at(mx), call("log", kFloat, s)))
	case 6: // variance per row: a mean and its squared deviations, one pass when streamed
		ls := &scope{idx: slices.Clone(outIdx), dim: slices.Clone(outer), used: map[string]bool{}, out: map[string]bool{}}
		for _, n := range outIdx {
			ls.used[n] = true
		}
		names, items := g.axes(ls, []string{D})
		mean := g.let(outer, kFloat)
		g.emit(true, mean, g.lhsItems(&scope{idx: outIdx, dim: outer}, false),
			bin("/", kFloat, reduce("sum", items, []string{D}, xr(ls, names[0])), name(D, kInt)))
		j := full.fresh()
		c := bin("-", kFloat, read(x.name, kFloat, append(idxNames(outIdx), name(j, kInt))...), at(mean))
		v := bin("/", kFloat, reduce("sum", []string{j}, []string{D}, bin("*", kFloat, c, c.Clone())), name(D, kInt))
		g.emit(false, g.output(dt, outer), outIdx, v)
	case 4: // a reduction inline in the output's expression
		j := full.fresh()
		op := pickOf(g, []string{"max", "min", "sum"})
		r := reduce(op, []string{j}, []string{D}, read(x.name, kFloat, append(idxNames(outIdx), name(j, kInt))...))
		if op == "sum" {
			r = bin("/", kFloat, r, name(D, kInt))
		}
		g.emit(false, g.output(dt, append(slices.Clone(outer), D)), full.idx, bin("-", kFloat, X, r))
	case 0: // softmax
		mx := red("max", xr)
		if g.chance(0.4) {
			// The shifted exponentials an output too, between the max
			// and their sum: stored by the row's launch (lower's
			// storedRowGroup).
			e := g.output(pickOf(g, []string{"f32", "f32", "f16", "bf16"}), append(slices.Clone(outer), D))
			g.emit(false, e, full.idx, call("exp", kFloat, bin("-", kFloat, X, at(mx))))
			den := red("sum", func(ls *scope, d string) *Expr {
				return read(e.name, kFloat, append(idxNames(outIdx), name(d, kInt))...)
			})
			g.emit(false, g.output(dt, append(slices.Clone(outer), D)), full.idx,
				bin("/", kFloat, read(e.name, kFloat, append(idxNames(outIdx), name(dIdx, kInt))...), at(den)))
			break
		}
		den := red("sum", func(ls *scope, d string) *Expr {
			return call("exp", kFloat, bin("-", kFloat, xr(ls, d), at(mx)))
		})
		g.emit(false, g.output(dt, append(slices.Clone(outer), D)), full.idx,
			bin("/", kFloat, call("exp", kFloat, bin("-", kFloat, X, at(mx))), at(den)))
	case 1: // layer norm
		mean := red("sum", xr)
		meanD := bin("/", kFloat, at(mean), name(D, kInt))
		vr := red("sum", func(ls *scope, d string) *Expr {
			c := bin("-", kFloat, xr(ls, d), meanD.Clone())
			return bin("*", kFloat, c, c.Clone())
		})
		eps := g.param("f32", "1e-5")
		gamma := g.input(pickOf(g, floatTypes), []string{D})
		y := bin("*", kFloat, bin("-", kFloat, X, meanD), call("rsqrt", kFloat, bin("+", kFloat, bin("/", kFloat, at(vr), name(D, kInt)), name(eps, kFloat))))
		y = bin("*", kFloat, y, read(gamma.name, kFloat, name(dIdx, kInt)))
		g.emit(false, g.output(dt, append(slices.Clone(outer), D)), full.idx, y)
	case 2: // RMS norm
		ss := red("sum", func(ls *scope, d string) *Expr { v := xr(ls, d); return bin("*", kFloat, v, v.Clone()) })
		inv := call("rsqrt", kFloat, bin("+", kFloat, bin("/", kFloat, at(ss), name(D, kInt)), lit("1e-6", kFloat)))
		g.emit(false, g.output(dt, append(slices.Clone(outer), D)), full.idx, bin("*", kFloat, X, inv))
	default: // random reductions, fused
		n := 1 + g.pick(2)
		var lets []*tval
		for i := 0; i < n; i++ {
			op := pickOf(g, reduceOps)
			lets = append(lets, red(op, func(ls *scope, d string) *Expr {
				l := g.leavesFor(ls, false)
				l.reads = append([]*tval{x}, lets...)
				body := g.floatExpr(1+g.pick(2), l)
				// keep the index alone somewhere so its range is inferred
				return bin("+", kFloat, xr(ls, d), body)
			}))
		}
		// Every let is read by the output, so none is dead.
		useAll := func(e *Expr) *Expr {
			for _, t := range lets {
				e = bin(pickOf(g, []string{"+", "*", "-"}), kFloat, e, at(t))
			}
			return e
		}
		if g.chance(0.5) {
			l := g.leavesFor(full, false)
			l.reads = append([]*tval{x}, lets...)
			g.emit(false, g.output(dt, append(slices.Clone(outer), D)), full.idx, useAll(bin("+", kFloat, X, g.floatExpr(2, l))))
		} else {
			ol := g.leavesFor(&scope{idx: outIdx, dim: outer, used: map[string]bool{}}, false)
			ol.reads = lets
			g.emit(false, g.output(dt, outer), outIdx, useAll(g.floatExpr(2, ol)))
		}
	}
}

func idxNames(ns []string) []*Expr {
	var out []*Expr
	for _, n := range ns {
		out = append(out, name(n, kInt))
	}
	return out
}

// colReduce: a reduction over an outer axis, Y[d] = op[r](f(X[r, d])),
// or over the middle axis of a 3-D tensor.
func (g *gen) colReduce() {
	var dims []string
	var keep []int
	if g.chance(0.5) {
		dims = []string{g.newDim(1, 200), g.someDim()}
		keep = []int{1}
	} else {
		dims = []string{g.someDim(), g.newDim(1, 64), g.someDim()}
		if dims[2] == dims[0] {
			dims[2] = g.newDim(1, 40)
		}
		keep = []int{0, 2}
	}
	x := g.input(pickOf(g, []string{"f32", "f32", "bf16", "f16", "f64", "i32", "i8"}), dims)
	sc := newScope()
	var outDims []string
	for _, i := range keep {
		sc.bind(dims[i])
		outDims = append(outDims, dims[i])
	}
	outIdx := slices.Clone(sc.idx)
	var rdim string
	for i, d := range dims {
		if !slices.Contains(keep, i) {
			rdim = d
		}
	}
	names, items := g.axes(sc, []string{rdim})
	_ = names
	op := pickOf(g, reduceOps)
	rd := g.plainRead(x, sc)
	var body *Expr = rd
	if x.kind == kFloat && g.chance(0.5) {
		l := g.leavesFor(sc, false)
		l.reads = []*tval{x}
		body = bin("+", kFloat, rd, g.floatExpr(1, l))
	}
	if x.kind == kFloat || op == "prod" {
		if x.kind != kFloat {
			body = call("f32", kFloat, body)
		}
		body = g.reduceBody(op, body)
	}
	rhs := reduce(op, items, []string{rdim}, body)
	dt := pickOf(g, []string{"f32", "f32", "bf16", "f16"})
	if rhs.Kind == kInt {
		dt = pickOf(g, []string{"i32", "i64", "f32"})
	}
	if op == "sum" && g.chance(0.5) {
		rhs = bin("/", kFloat, rhs, name(rdim, kInt))
		if kindOf(dt) == kInt {
			dt = "f32"
		}
	}
	g.emit(false, g.output(dt, outDims), outIdx, rhs)
}

// fullReduce: a rank-0 output reducing everything.
func (g *gen) fullReduce() {
	dims := g.someDims(1 + g.pick(2))
	x := g.input(pickOf(g, []string{"f32", "f32", "f64", "bf16"}), dims)
	sc := newScope()
	_, items := g.axes(sc, dims)
	op := pickOf(g, reduceOps)
	l := g.leavesFor(sc, false)
	l.reads = []*tval{x}
	if x.dtype != "f64" && g.chance(0.4) {
		// A scalar let, then an elementwise statement normalizing by it.
		s := &tval{name: g.let(nil, kFloat).name, kind: kFloat}
		body := bin("*", kFloat, g.plainRead(x, sc), g.plainRead(x, sc))
		g.emit(true, s, nil, reduce("sum", items, dims, body))
		oc := newScope()
		for _, d := range dims {
			oc.bind(d)
		}
		y := bin("*", kFloat, g.plainRead(x, oc), call("rsqrt", kFloat, bin("+", kFloat, name(s.name, kFloat), lit("1", kFloat))))
		g.emit(false, g.output(pickOf(g, []string{"f32", "bf16"}), dims), oc.idx, y)
		return
	}
	body := g.plainRead(x, sc)
	dt := "f64"
	if x.dtype != "f64" || g.chance(0.5) {
		body = bin("+", kFloat, body, g.floatExpr(1, l))
		dt = "f32"
	}
	g.emit(false, g.output(dt, nil), nil, reduce(op, items, dims, g.reduceBody(op, body)))
}

// contraction: matrix products, batched or not, operands in either
// layout (f32 ones sometimes times a 16-bit one), with an epilogue; also
// matrix-vector products and dot products.
func (g *gen) contraction() {
	M, N := g.newDim(1, 40), g.newDim(1, 40)
	Kd := g.newDim(1, 48)
	var batch string
	if g.chance(0.3) {
		batch = g.newDim(1, 4)
	}
	in := pickOf(g, []string{"f32", "f32", "f16", "bf16", "bf16", "i8", "f64"})
	tf := in == "f32" && g.chance(0.3)
	withBatch := func(ds ...string) []string {
		if batch == "" {
			return ds
		}
		return append([]string{batch}, ds...)
	}
	aDims, bDims := withBatch(M, Kd), withBatch(Kd, N)
	if g.chance(0.4) {
		aDims = withBatch(Kd, M)
	}
	if g.chance(0.4) {
		bDims = withBatch(N, Kd)
	}
	vec := g.pick(6) == 0 // a matrix-vector product: no N
	if vec {
		bDims = withBatch(Kd)
	}
	if batch != "" && g.chance(0.3) {
		bDims = bDims[1:] // a shared right operand
	}
	// Sometimes f32 times a 16-bit operand, which the language widens (an
	// exact ieee dot on Triton, as attention's probabilities times V).
	inB := in
	if in == "f32" && !tf && g.chance(0.3) {
		inB = pickOf(g, []string{"f16", "bf16"})
	}
	A, B := g.input(in, aDims), g.input(inB, bDims)
	sc := newScope()
	if batch != "" {
		sc.bind(batch)
	}
	sc.bind(M)
	outDims := withBatch(M)
	if !vec {
		sc.bind(N)
		outDims = withBatch(M, N)
	}
	outIdx := slices.Clone(sc.idx)
	_, items := g.axes(sc, []string{Kd})
	ra, rb := g.plainRead(A, sc), g.plainRead(B, sc)
	if tf {
		ra, rb = call("tf32", kFloat, ra), call("tf32", kFloat, rb)
	}
	kind := kindOf(in)
	prod := reduce("sum", items, []string{Kd}, bin("*", kind, ra, rb))
	if kind == kInt {
		var rhs *Expr = prod
		if g.chance(0.5) {
			bias := g.input(pickOf(g, []string{"i32", "i8"}), []string{outDims[len(outDims)-1]})
			rhs = bin("+", kInt, prod, g.plainRead(bias, &scope{idx: outIdx[len(outIdx)-1:], dim: outDims[len(outDims)-1:]}))
		}
		g.emit(false, g.output(pickOf(g, []string{"i32", "i32", "f32"}), outDims), outIdx, rhs)
		return
	}
	if (in == "f16" || in == "bf16") && g.chance(0.6) && !slices.Contains(g.k.Attrs, "@acc(f32)") {
		g.k.Attrs = append(g.k.Attrs, "@acc(f32)")
	}
	osc := &scope{idx: outIdx, dim: outDims, used: map[string]bool{}}
	l := g.leavesFor(osc, true)
	var rhs *Expr = prod
	epilogue := g.pick(7) // 5 and 6: none
	if in == "f64" {
		epilogue = pickOf(g, []int{0, 6}) // f64 throughout: a bias or nothing
	}
	switch epilogue {
	case 0:
		bias := g.input(in, outDims[len(outDims)-1:])
		rhs = bin("+", kFloat, prod, g.plainRead(bias, osc))
	case 1:
		bias := g.input(in, outDims[len(outDims)-1:])
		rhs = call("relu", kFloat, bin("+", kFloat, prod, g.plainRead(bias, osc)))
	case 2:
		rhs = g.fnCall(prod)
	case 3:
		rhs = bin("+", kFloat, bin("*", kFloat, name(g.param("f32", "0.5"), kFloat), prod), g.floatExpr(1, l))
	case 4:
		t := g.let(outDims, kFloat)
		g.emit(true, t, g.lhsItems(osc, false), prod)
		rhs = bin(pickOf(g, []string{"+", "*", "-"}), kFloat, g.plainRead(t, osc), g.floatExpr(2, l))
	}
	dt := pickOf(g, []string{"f32", in, in})
	if in == "f64" {
		dt = "f64"
	}
	g.emit(false, g.output(dt, outDims), outIdx, rhs)
}

// conv: 1-D or 2-D convolutions with stride, padding and dilation params,
// the output sizes derived in the where clause; sometimes depthwise,
// sometimes transposed (through floor division and modulo; a 2-D one
// tests both axes' taps in one conjunction).
func (g *gen) conv() {
	nd := 1 + g.pick(2)
	Nb, C := g.newDim(1, 3), g.newDim(1, 6)
	stride := g.param("i32", fmt.Sprint(1+g.pick(2)))
	pad := g.param("i32", fmt.Sprint(g.pick(3)))
	dil := ""
	if g.chance(0.3) {
		dil = g.param("i32", "2")
	}
	depthwise := g.chance(0.25)
	transposed := !depthwise && dil == "" && g.chance(0.25)
	var F string
	if !depthwise {
		F = g.newDim(1, 6)
	}
	var sp, ks, os []string
	for i := 0; i < nd; i++ {
		sp = append(sp, g.newDim(9, 20))
		ks = append(ks, g.newDim(1, 4))
	}
	for i := 0; i < nd; i++ {
		dk := ks[i]
		if dil != "" {
			dk = fmt.Sprintf("%s * (%s - 1) + 1", dil, ks[i])
		} else {
			dk = ks[i]
		}
		if transposed {
			os = append(os, g.derived(fmt.Sprintf("(%s - 1) * %s - 2 * %s + %s", sp[i], stride, pad, ks[i])))
		} else {
			os = append(os, g.derived(fmt.Sprintf("(%s + 2 * %s - (%s)) / %s + 1", sp[i], pad, dk, stride)))
		}
	}
	dt := pickOf(g, []string{"f32", "f32", "bf16", "f16"})
	X := g.input(dt, append([]string{Nb, C}, sp...))
	var wDims []string
	switch {
	case depthwise:
		wDims = append([]string{C}, ks...)
	case transposed:
		wDims = append([]string{C, F}, ks...)
	default:
		wDims = append([]string{F, C}, ks...)
	}
	Wt := g.input(dt, wDims)
	sc := newScope()
	n := sc.bind(Nb)
	var f string
	if depthwise {
		f = sc.bind(C)
	} else {
		f = sc.bind(F)
	}
	var oi []string
	for _, o := range os {
		oi = append(oi, sc.bind(o))
	}
	outIdx := slices.Clone(sc.idx)
	outDims := slices.Clone(sc.dim)
	var axesDims []string
	if !depthwise {
		axesDims = append(axesDims, C)
	}
	axesDims = append(axesDims, ks...)
	names, items := g.axes(sc, axesDims)
	var c string
	kIdx := names
	if !depthwise {
		c, kIdx = names[0], names[1:]
	} else {
		c = f
	}
	xIdx := []*Expr{name(n, kInt), name(c, kInt)}
	var guard *Expr
	for i := range sp {
		var e *Expr
		if transposed {
			num := bin("-", kInt, bin("+", kInt, name(oi[i], kInt), name(pad, kInt)), name(kIdx[i], kInt))
			e = bin("/", kInt, &Expr{Op: "paren", Args: []*Expr{num}, Kind: kInt}, name(stride, kInt))
			test := bin("==", kBool, bin("%", kInt, num.Clone(), name(stride, kInt)), lit("0", kInt))
			if guard == nil {
				guard = test
			} else {
				guard = bin("&&", kBool, guard, test)
			}
		} else {
			kt := name(kIdx[i], kInt)
			if dil != "" {
				kt = bin("*", kInt, kt, name(dil, kInt))
			}
			e = bin("-", kInt, bin("+", kInt, bin("*", kInt, name(oi[i], kInt), name(stride, kInt)), kt), name(pad, kInt))
		}
		xIdx = append(xIdx, e)
	}
	xr := padded(read(X.name, kFloat, xIdx...), lit("0", kFloat))
	var wIdx []*Expr
	switch {
	case depthwise:
		wIdx = idxNames(append([]string{c}, kIdx...))
	case transposed:
		wIdx = idxNames(append([]string{c, f}, kIdx...))
	default:
		wIdx = idxNames(append([]string{f, c}, kIdx...))
	}
	body := bin("*", kFloat, xr, read(Wt.name, kFloat, wIdx...))
	if guard != nil {
		body = cond(guard, body, lit("0", kFloat))
	}
	var rhs *Expr = reduce("sum", items, axesDims, body)
	if g.chance(0.4) {
		bias := g.input(dt, []string{outDims[1]})
		rhs = bin("+", kFloat, read(bias.name, kFloat, name(f, kInt)), rhs)
		if g.chance(0.5) {
			rhs = call("clamp", kFloat, rhs, lit("0", kFloat), lit("6", kFloat))
		}
	}
	g.emit(false, g.output(pickOf(g, []string{"f32", dt}), outDims), outIdx, rhs)
}

// pool: max or average pooling windows with explicit ranges from params.
func (g *gen) pooling() {
	nd := 1 + g.pick(2)
	Nb := g.newDim(1, 4)
	ksz := g.param("i32", fmt.Sprint(1+g.pick(3)))
	stride := g.param("i32", fmt.Sprint(1+g.pick(2)))
	pad := g.param("i32", "0")
	if g.chance(0.5) {
		g.k.Params[len(g.k.Params)-1].Default = "1"
	}
	var sp, os []string
	for i := 0; i < nd; i++ {
		sp = append(sp, g.newDim(6, 20))
		os = append(os, g.derived(fmt.Sprintf("(%s + 2 * %s - %s) / %s + 1", sp[i], pad, ksz, stride)))
	}
	X := g.input(pickOf(g, []string{"f32", "f16", "bf16"}), append([]string{Nb}, sp...))
	sc := newScope()
	n := sc.bind(Nb)
	var oi []string
	for _, o := range os {
		oi = append(oi, sc.bind(o))
	}
	outIdx, outDims := slices.Clone(sc.idx), slices.Clone(sc.dim)
	var items, win []string
	for range sp {
		w := sc.fresh()
		win = append(win, w)
		items = append(items, fmt.Sprintf("%s in 0..%s", w, ksz))
	}
	idx := []*Expr{name(n, kInt)}
	for i := range sp {
		idx = append(idx, bin("-", kInt, bin("+", kInt, bin("*", kInt, name(oi[i], kInt), name(stride, kInt)), name(win[i], kInt)), name(pad, kInt)))
	}
	var rhs *Expr
	if g.chance(0.5) {
		rhs = &Expr{Op: "red", Text: "max", Axes: items, Args: []*Expr{padded(read(X.name, kFloat, idx...), &Expr{Op: "un", Text: "-", Args: []*Expr{lit("inf", kFloat)}, Kind: kFloat})}, Kind: kFloat}
	} else {
		den := name(ksz, kInt)
		rhs = bin("/", kFloat, &Expr{Op: "red", Text: "sum", Axes: items, Args: []*Expr{padded(read(X.name, kFloat, idx...), lit("0", kFloat))}, Kind: kFloat}, den)
	}
	g.emit(false, g.output(pickOf(g, []string{"f32", "f32", "bf16"}), outDims), outIdx, rhs)
}

// gather: data-dependent and modular indexing: a gather through an index
// tensor, a roll, a tiling, a repeat, a concatenation, a constant pad.
func (g *gen) gather() {
	dt := pickOf(g, []string{"f32", "f32", "bf16", "i32", "f64"})
	kind := kindOf(dt)
	switch g.pick(6) {
	case 0: // Y[i, d] = X[idx[i], d] ?? 0
		R, N, D := g.newDim(1, 20), g.newDim(1, 20), g.someDim()
		X := g.input(dt, []string{R, D})
		ix := g.input(pickOf(g, []string{"i32", "i64", "i8"}), []string{N})
		sc := newScope()
		i, d := sc.bind(N), sc.bind(D)
		var at *Expr = read(ix.name, kInt, name(i, kInt))
		r := read(X.name, kind, at, name(d, kInt))
		if g.chance(0.5) {
			r.Pad = g.padValue(kind)
		} else {
			r.Args[0] = bin("%", kInt, call("abs", kInt, at), name(R, kInt))
		}
		g.emit(false, g.output(dt, []string{N, D}), sc.idx, r)
	case 1: // roll
		N := g.newDim(1, 40)
		shift := g.param("i32", fmt.Sprint(g.pick(9)-4))
		X := g.input(dt, []string{N})
		sc := newScope()
		i := sc.bind(N)
		g.emit(false, g.output(dt, []string{N}), sc.idx, read(X.name, kind, bin("%", kInt, bin("-", kInt, name(i, kInt), name(shift, kInt)), name(N, kInt))))
	case 2: // tile rows
		R, D, T := g.newDim(1, 8), g.someDim(), g.newDim(1, 4)
		RT := g.derived(R + " * " + T)
		X := g.input(dt, []string{R, D})
		sc := newScope()
		i, d := sc.bind(RT), sc.bind(D)
		g.emit(false, g.output(dt, []string{RT, D}), sc.idx, read(X.name, kind, bin("%", kInt, name(i, kInt), name(R, kInt)), name(d, kInt)))
	case 3: // repeat interleave
		R, T := g.newDim(1, 12), g.newDim(1, 4)
		RT := g.derived(R + " * " + T)
		X := g.input(dt, []string{R})
		sc := newScope()
		i := sc.bind(RT)
		g.emit(false, g.output(dt, []string{RT}), sc.idx, read(X.name, kind, bin("/", kInt, name(i, kInt), name(T, kInt))))
	case 4: // concat
		R, DA, DB := g.someDim(), g.newDim(1, 12), g.newDim(1, 12)
		DT := g.derived(DA + " + " + DB)
		A, B := g.input(dt, []string{R, DA}), g.input(dt, []string{R, DB})
		sc := newScope()
		r, j := sc.bind(R), sc.bind(DT)
		ra := padded(read(A.name, kind, name(r, kInt), name(j, kInt)), g.padValue(kind))
		rb := padded(read(B.name, kind, name(r, kInt), bin("-", kInt, name(j, kInt), name(DA, kInt))), g.padValue(kind))
		g.emit(false, g.output(dt, []string{R, DT}), sc.idx, cond(bin("<", kBool, name(j, kInt), name(DA, kInt)), ra, rb))
	default: // constant pad
		H, W := g.newDim(1, 12), g.newDim(1, 12)
		pad := g.param("i32", fmt.Sprint(g.pick(3)))
		PH, PW := g.derived(H+" + 2 * "+pad), g.derived(W+" + "+pad)
		X := g.input(dt, []string{H, W})
		sc := newScope()
		h, w := sc.bind(PH), sc.bind(PW)
		r := padded(read(X.name, kind, bin("-", kInt, name(h, kInt), name(pad, kInt)), name(w, kInt)), g.padValue(kind))
		g.emit(false, g.output(dt, []string{PH, PW}), sc.idx, r)
	}
}

// groupnorm: lets with explicit ranges over groups, compound reads
// g*CG + j, and reads of a let at c / CG.
func (g *gen) groupnorm() {
	Nb, G, CG, H := g.newDim(1, 3), g.newDim(1, 4), g.newDim(1, 4), g.newDim(1, 10)
	C := g.derived(G + " * " + CG)
	X := g.input(pickOf(g, []string{"f32", "bf16"}), []string{Nb, C, H})
	sc := newScope()
	n := sc.bind(Nb)
	gi := sc.fresh()
	j, h := sc.fresh(), sc.fresh()
	mu := g.let([]string{Nb, G}, kFloat)
	body := read(X.name, kFloat, name(n, kInt), bin("+", kInt, bin("*", kInt, name(gi, kInt), name(CG, kInt)), name(j, kInt)), name(h, kInt))
	g.emit(true, mu, []string{n, fmt.Sprintf("%s in 0..%s", gi, G)},
		bin("/", kFloat, reduce("sum", []string{fmt.Sprintf("%s in 0..%s", j, CG), h}, []string{CG, H}, body), &Expr{Op: "paren", Args: []*Expr{bin("*", kInt, name(CG, kInt), name(H, kInt))}, Kind: kInt}))
	oc := newScope()
	on, c, oh := oc.bind(Nb), oc.bind(C), oc.bind(H)
	y := bin("-", kFloat, read(X.name, kFloat, name(on, kInt), name(c, kInt), name(oh, kInt)), read(mu.name, kFloat, name(on, kInt), bin("/", kInt, name(c, kInt), name(CG, kInt))))
	g.emit(false, g.output(pickOf(g, []string{"f32", "bf16"}), []string{Nb, C, H}), oc.idx, y)
}

// quantize: float to int8 or uint8 with rounding and clamping, and back.
func (g *gen) quantize() {
	dims := g.someDims(1 + g.pick(2))
	X := g.input("f32", dims)
	scale := g.param("f32", pickOf(g, []string{"0.05", "0.5", "0.125"}))
	zp := g.param("i32", fmt.Sprint(g.pick(7)-3))
	sc := newScope()
	for _, d := range dims {
		sc.bind(d)
	}
	q := bin("+", kFloat, call("floor", kFloat, bin("+", kFloat, bin("/", kFloat, g.plainRead(X, sc), name(scale, kFloat)), lit("0.5", kFloat))), name(zp, kInt))
	dt, lo, hi := "i8", "-128", "127"
	if g.chance(0.4) {
		dt, lo, hi = "u8", "0", "255"
	}
	Q := g.output(dt, dims)
	g.emit(false, Q, sc.idx, call(dt, kInt, call("clamp", kFloat, q, lit(lo, kFloat), lit(hi, kFloat))))
	if g.chance(0.6) {
		sc2 := newScope()
		for _, d := range dims {
			sc2.bind(d)
		}
		deq := bin("*", kFloat, call("f32", kFloat, bin("-", kInt, g.plainRead(Q, sc2), name(zp, kInt))), name(scale, kFloat))
		g.emit(false, g.output("f32", dims), sc2.idx, deq)
	}
}

// nested: a reduction of an activation of a contraction, as in a linear
// layer followed by a row sum: Y[b] = sum[o](relu(sum[i](X[b, i] * W[o, i]) + bias[o])).
func (g *gen) nested() {
	B, O, I := g.someDim(), g.newDim(1, 24), g.newDim(1, 24)
	dt := pickOf(g, []string{"f32", "f32", "bf16", "f16"})
	X, W, bias := g.input(dt, []string{B, I}), g.input(dt, []string{O, I}), g.input(dt, []string{O})
	sc := newScope()
	b := sc.bind(B)
	o, i := sc.bind(O), sc.bind(I)
	inner := reduce("sum", []string{i}, []string{I}, bin("*", kFloat, read(X.name, kFloat, name(b, kInt)), read(W.name, kFloat, name(o, kInt))))
	inner.Args[0].Args[0].Args = append(inner.Args[0].Args[0].Args, name(i, kInt))
	inner.Args[0].Args[1].Args = append(inner.Args[0].Args[1].Args, name(i, kInt))
	act := call(pickOf(g, []string{"relu", "tanh", "sigmoid"}), kFloat, bin("+", kFloat, inner, read(bias.name, kFloat, name(o, kInt))))
	g.emit(false, g.output(pickOf(g, []string{"f32", dt}), []string{B}), []string{b}, reduce(pickOf(g, []string{"sum", "max"}), []string{o}, []string{O}, act))
}
