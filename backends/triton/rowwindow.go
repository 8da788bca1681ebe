package triton

import (
	"fmt"
	"strconv"

	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
)

// rowWindow computes a generic statement whose points reduce over a
// window (lower.RowVectorsFit) VEC consecutive points a lane, as CUDA's
// generic template does: each lane loads the columns its group's taps
// read, row by row, as VEC-element vectors ([BLOCK // VEC, VEC] blocks
// whose rows Triton loads with one vector load each), splits them into
// one block of values a column, and computes each point's reduction over
// the taps unrolled, each tap reading its column's values; the group's
// VEC points are joined back into a [BLOCK // VEC, VEC] block and stored
// as vectors. Read point by point, each tap of a lane's point is a
// scalar load: on the H200, dw_mobilenet took 68.35 us point by point and
// 34.91 so, KernelBench's 3 x 3 depthwise convolution 326.24 and 147.62
// (testsuite/results/2026-11-28-h200-s32-second/).
//
// With ROWS > 1 a lane takes VEC points of each of ROWS consecutive output
// rows (lower.RowsFit): it loads their input rows once, and computes and
// stores the rows one by one.
func (e *emitter) rowWindow(w *lower.Window, vec int64) {
	s := e.launch.Stmt
	rows := max(e.launch.Config["ROWS"], 1)
	base, vecs, _ := lower.RowVectors(w, vec, rows)
	e.shape = "[BLOCK // VEC]"
	for _, n := range []string{"kg_p", "kg_pm", "kg_v", "kg_row", "kg_rm", "kg_col", "kg_t", "kg_g"} {
		e.used[n] = true
	}
	if rows > 1 {
		// Lane group kg_g starts at group kg_g % (OW / VEC) of output row
		// kg_g / (OW / VEC) * ROWS (OW, a constant multiple of VEC).
		ow := lower.Simplify(lower.Extent([]*ir.Index{w.OW})).(*ir.Const).I
		e.line("kg_g = tl.program_id(0).to(tl.int64) * (BLOCK // VEC) + tl.arange(0, BLOCK // VEC)")
		e.line("kg_p = kg_g // %d * %d + kg_g %% %d * VEC  # each lane's first point, of %d rows", ow/vec, ow*rows, ow/vec, rows)
	} else {
		e.line("kg_p = (tl.program_id(0).to(tl.int64) * (BLOCK // VEC) + tl.arange(0, BLOCK // VEC)) * VEC  # each lane's first point")
	}
	e.line("kg_pm = kg_p < %s", e.paren(lower.Points(s), ""))
	e.decompose("kg_p", s.Index, true)
	e.line("kg_v = tl.arange(0, VEC)")

	in := w.Load.Tensor
	n := len(in.Shape)
	row, col, at := lower.WindowAt(w, "kg_row", "kg_col")
	e.vars[row], e.lane[row] = "kg_row", true
	e.vars[col], e.lane[col] = "kg_col", true
	dflt := "0"
	if w.Load.Default != nil {
		dflt = strip(e.expr(w.Load.Default, ""))
	}
	oh, ow := e.vars[w.OH], e.vars[w.OW]
	first := "the column of the lane's first point"
	if w.SW != 1 {
		first = fmt.Sprintf("%d times %s", w.SW, first)
	}
	e.line("# the window's rows as vectors: columns %d to %d past %s", base, base+vecs*vec-1, first)
	vals := make([][]string, lower.WindowRows(w, rows))
	for r := range vals {
		e.line("kg_row = %s", plus(times(oh, w.SH), w.H0+int64(r)))
		e.line("kg_rm = kg_pm & (kg_row >= 0) & (kg_row < %s)", e.paren(in.Shape[n-2], ""))
		vals[r] = make([]string, vecs*vec)
		for k := range vecs {
			e.line("kg_col = %s", plus(times(ow, w.SW), base+k*vec))
			e.line("kg_t = tl.load(%s + (%s)[:, None] + kg_v[None, :], mask=(kg_rm & (kg_col >= 0) & (kg_col < %s))[:, None], other=%s)",
				name(in.Name), e.linear(at, in.Shape), e.paren(in.Shape[n-1], ""), dflt)
			names := make([]string, vec)
			for j := range names {
				names[j] = e.fresh(fmt.Sprintf("kg_w%d_%d", r, k*vec+int64(j)))
			}
			e.split("kg_t", vec, names)
			copy(vals[r][k*vec:], names)
		}
	}

	// Each point's value, its window's taps unrolled, an output row at a
	// time.
	if e.cache == nil {
		e.cache = map[string]string{}
	}
	for h := range rows {
		if h > 0 {
			ohh := e.fresh(fmt.Sprintf("kg_%s%d", oh, h))
			e.line("%s = %s", ohh, plus(oh, h))
			e.vars[w.OH] = ohh
		}
		e.windowRow(w, vec, base, h, vals)
	}
	e.vars[w.OH] = oh
}

// windowRow computes and stores output row h of a lane's rows (rowWindow),
// whose input rows' values vals names.
func (e *emitter) windowRow(w *lower.Window, vec, base, h int64, vals [][]string) {
	s := e.launch.Stmt
	n := len(w.Load.Tensor.Shape)
	ow := e.vars[w.OW]
	e.alias = map[*ir.Load]string{}
	r := w.Reduce
	outs := make([]string, vec)
	bindOW := mentionsBesides(s.Value, w.Load, w.OW)
	for j := range outs {
		if bindOW {
			owj := e.fresh(fmt.Sprintf("kg_%s%d", ow, j))
			e.line("%s = %s", owj, plus(ow, int64(j)))
			e.vars[w.OW] = owj
		}
		acc := e.temp("acc")
		e.line("%s = tl.full([BLOCK // VEC], %s, %s)", acc, constant(lower.Identity(r.Op, r.T)), tlType(r.T))
		// The taps are Python ints, as a static loop's counters are.
		e.counters = append(e.counters, r.Axes...)
		for _, tap := range taps(r.Axes) {
			subst := map[*ir.Index]ir.Expr{w.OH: ir.IntConst(0), w.OW: ir.IntConst(0)}
			for d, ax := range r.Axes {
				e.vars[ax], e.lane[ax] = strconv.FormatInt(tap[d], 10), false
				subst[ax] = ir.IntConst(tap[d])
			}
			at := func(x ir.Expr) int64 { return lower.Simplify(ir.Substitute(x, subst)).(*ir.Const).I }
			e.alias[w.Load] = vals[h*w.SH+at(w.Load.Index[n-2])-w.H0][int64(j)*w.SW+at(w.Load.Index[n-1])-base]
			e.line("%s = %s", acc, combine(r.Op, r.T, acc, e.value(r.Body, "kg_pm")))
		}
		e.counters = e.counters[:len(e.counters)-len(r.Axes)]
		for _, ax := range r.Axes {
			delete(e.vars, ax)
			delete(e.lane, ax)
		}
		e.reduced[r] = acc
		outs[j] = e.fresh(fmt.Sprintf("kg_o%d", j))
		e.line("%s = %s", outs[j], e.value(s.Value, "kg_pm"))
		delete(e.reduced, r)
	}
	e.vars[w.OW] = ow
	e.alias = nil
	target := name(s.Target.Name) + " + (" + e.linear(lower.Refs(s.Index), s.Target.Shape) + ")[:, None] + kg_v[None, :]"
	e.line("tl.store(%s, tl.reshape(%s, [BLOCK // VEC, VEC]), mask=kg_pm[:, None])", target, join(outs, 0, 1))
}

// mentionsBesides reports whether x reads index ix other than in load ld.
func mentionsBesides(x ir.Expr, ld *ir.Load, ix *ir.Index) bool {
	found := false
	ir.Walk(x, func(y ir.Expr) bool {
		if y == ir.Expr(ld) {
			return false
		}
		if ref, ok := y.(*ir.IndexRef); ok && ref.Index == ix {
			found = true
		}
		return !found
	})
	return found
}

// plus is x plus k.
func plus(x string, k int64) string {
	switch {
	case k > 0:
		return fmt.Sprintf("%s + %d", x, k)
	case k < 0:
		return fmt.Sprintf("%s - %d", x, -k)
	}
	return x
}

// times is x times k, or x where k is 1.
func times(x string, k int64) string {
	if k == 1 {
		return x
	}
	return fmt.Sprintf("%s * %d", x, k)
}

// split binds names (vec of them, a power of two above 1) to the columns of t, a
// [G, vec] block: reshaped to [G, 2, ..., 2], each tl.split takes its
// last axis apart, the lowest bit of the column first.
func (e *emitter) split(t string, vec int64, names []string) {
	shape := "BLOCK // VEC"
	for v := vec; v > 1; v /= 2 {
		shape += ", 2"
	}
	var rec func(x string, offset, stride int64)
	rec = func(x string, offset, stride int64) {
		if 2*stride == vec {
			e.line("%s, %s = tl.split(%s)", names[offset], names[offset+stride], x)
			return
		}
		a, b := e.temp("lo"), e.temp("hi")
		e.line("%s, %s = tl.split(%s)", a, b, x)
		rec(a, offset, stride*2)
		rec(b, offset+stride, stride*2)
	}
	r := e.temp("t")
	e.line("%s = tl.reshape(%s, [%s])", r, t, shape)
	rec(r, 0, 1)
}

// join is split's inverse: the values outs[offset], outs[offset+stride],
// ... as the last axes of one block (tl.join adds an axis of 2 last).
func join(outs []string, offset, stride int64) string {
	if stride == int64(len(outs)) {
		return outs[offset]
	}
	return fmt.Sprintf("tl.join(%s, %s)", join(outs, offset, stride*2), join(outs, offset+stride, stride*2))
}

// taps lists the points of axes (constant bounds), the last fastest.
func taps(axes []*ir.Index) [][]int64 {
	out := [][]int64{nil}
	for _, ax := range axes {
		lo := lower.Simplify(ax.Lo).(*ir.Const).I
		hi := lower.Simplify(ax.Hi).(*ir.Const).I
		var next [][]int64
		for _, t := range out {
			for v := lo; v < hi; v++ {
				next = append(next, append(append([]int64{}, t...), v))
			}
		}
		out = next
	}
	return out
}
