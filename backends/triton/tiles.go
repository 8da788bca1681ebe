package triton

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
)

// rowReduce renders a row-reduce launch: a program per row (the leading
// RowDims indices, scalars). Each fused let's value is computed into a
// variable, its top reductions across the row in blocks of BLOCK lanes,
// then the final statement is stored along the row. When the row is
// known to fit in BLOCK (lower.RowLength), every loop over the row is the
// one block kg_c, and each input element is loaded once and kept for
// every reduction and output; otherwise each loop steps through the row.
// With BLOCK_ROWS > 1 (rows that fit), a program takes BLOCK_ROWS rows:
// the row indices are [BLOCK_ROWS, 1] blocks, kg_c a [1, BLOCK] one, the
// reductions run along the tile's rows, and rows past the end recompute
// the last row and store nothing.
func (e *emitter) rowReduce() {
	l := e.launch
	s := l.Stmt
	n := lower.RowLength(l)
	fits := n > 0 && n <= l.Config["BLOCK"]
	e.rows = lower.RowsPerBlock(l) > 1
	defer func() { e.rows = false }()
	e.used["kg_row"] = true
	if e.rows {
		e.used["kg_live"] = true
		rows := e.paren(lower.Rows(l), "")
		e.line("kg_row = tl.program_id(0).to(tl.int64) * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)[:, None]")
		e.line("kg_live = kg_row < %s", rows)
		e.line("kg_row = tl.minimum(kg_row, %s - 1)", rows)
	} else {
		e.line("kg_row = tl.program_id(0).to(tl.int64)")
	}
	e.decompose("kg_row", s.Index[:l.RowDims], false)
	for from, to := range lower.RowAliases(l) {
		e.vars[from] = e.vars[to.(*ir.IndexRef).Index]
	}
	if e.head = l.Config["CACHE"]; e.head > 0 {
		// The row's first CACHE points, kept from the first pass to the
		// last: loaded once (cache), their lanes' values the loops'
		// starting values (headLanes), their outputs stored last.
		e.cache = map[string]string{}
		e.used["kg_h"] = true
		e.line("kg_h = tl.arange(0, %d).to(tl.int64)", e.head)
		defer func() { e.head, e.cache = 0, nil }()
	}
	if fits {
		e.cache = map[string]string{}
		e.used["kg_c"] = true
		if e.rows {
			e.line("kg_c = tl.arange(0, BLOCK).to(tl.int64)[None, :]")
		} else {
			e.line("kg_c = tl.arange(0, BLOCK).to(tl.int64)")
		}
	}
	// Rows streamed through blocks compute a max and its sum of shifted
	// exponentials, or a sum and its squared deviations, in one pass
	// (lower.AllPairs: a pass fewer, whether or not an outputs' pass
	// remains); a row that fits a block is loaded once.
	var pairs lower.Passes
	if !fits {
		pairs = lower.AllPairs(append(slices.Clone(l.Fused), s), l.RowDims)
	}
	e.online = map[*ir.Reduce]string{}
	defer func() { e.online = nil }()
	shifted := map[*ir.Tensor]centered{}
	for _, m := range l.Fused {
		for _, p := range pairs.Online {
			if p.Shift == m.Target {
				e.online[p.Max], e.online[p.Sum] = e.onlinePass(p)
			}
		}
		for _, p := range pairs.Centered {
			if p.Mean == m.Target {
				shifted[m.Target] = e.centeredPass(p)
			}
		}
		v := e.rowValue(m.Value, fits)
		reg := e.fresh("kg_" + m.Target.Name)
		e.line("%s = %s", reg, v)
		e.regs[m.Target] = reg
		for _, p := range pairs.Centered {
			if p.Mean == m.Target {
				e.online[p.Squares] = e.centeredSquares(shifted[m.Target], reg)
			}
		}
		if m.Target.Kind == ir.Output || e.plan.Slot(m.Target) != nil {
			e.regsStore(m, reg) // a fused output, stored too
		}
	}
	for _, a := range l.Also {
		e.rowStore(a, fits)
	}
	if len(s.Index) == l.RowDims {
		v := e.rowValue(s.Value, fits)
		e.regsStore(s, v)
		return
	}
	e.rowStore(s, fits)
}

// rowStore stores the row's elements of s, the final statement of a
// row-reduce launch or one it stores beside it (lower.RowOutputs), a
// block of columns at a time.
func (e *emitter) rowStore(s *ir.Stmt, fits bool) {
	l := e.launch
	cols := s.Index[l.RowDims:]
	e.shape = e.blockShape()
	if fits {
		ext, _ := constExtent(cols)
		e.bindRow(cols, "kg_c")
		e.storeOnly(s, e.laneMask(ext), e.live())
		return
	}
	// The output pass takes the row's blocks last first: the reductions'
	// passes read them first to last, so the blocks they read last are
	// the likeliest still in the L2. On the H100 (Triton 3.6,
	// testsuite/results/2026-11-27-h100-s22-instancenorm/), instancenorm
	// over 1024 rows of 65536 f32 in blocks of 8192 with 16 warps and 4
	// stages took 270.30 us first to last and 245.09 last first.
	e.used["kg_c0"], e.used["kg_cr"] = true, true
	ext := e.paren(lower.Extent(cols), "")
	e.line("for kg_cr in %s:", e.streamFrom(e.head, ext, "BLOCK"))
	e.ind += "    "
	e.loops++
	e.streamedPass(true)
	if e.head > 0 {
		e.line("kg_c0 = (%s - 1) // BLOCK * BLOCK - (kg_cr - %d)", ext, e.head)
	} else {
		e.line("kg_c0 = (%s - 1) // BLOCK * BLOCK - kg_cr", ext)
	}
	e.line("kg_c = kg_c0 + tl.arange(0, BLOCK)")
	e.line("kg_cm = kg_c < %s", ext)
	e.decompose("kg_c", cols, true)
	e.store(s, "kg_cm")
	e.endStream()
	if e.head > 0 {
		// The kept points' outputs, from the registers.
		e.shape = fmt.Sprintf("[%d]", e.head)
		e.bindRow(cols, "kg_h")
		e.store(s, "")
		e.shape = e.blockShape()
	}
}

// blockShape and rowShape are the shapes of a row-reduce program's blocks
// and of its values per row.
func (e *emitter) blockShape() string {
	if e.rows {
		return "[BLOCK_ROWS, BLOCK]"
	}
	return "[BLOCK]"
}

func (e *emitter) rowShape() string {
	if e.rows {
		return "[BLOCK_ROWS, 1]"
	}
	return ""
}

// live is the mask of a program's rows that exist ("" with one row).
func (e *emitter) live() string {
	if e.rows {
		return "kg_live"
	}
	return ""
}

// laneMask is the mask of the first n lanes of a row kept in one block,
// "" when n is the whole block.
func (e *emitter) laneMask(n int64) string {
	if n == e.launch.Config["BLOCK"] {
		return ""
	}
	return fmt.Sprintf("(kg_c < %d)", n)
}

// regsStore stores v, the value of a statement with one point per row.
func (e *emitter) regsStore(s *ir.Stmt, v string) {
	refs := lower.Refs(s.Index)
	ptr := name(s.Target.Name)
	if len(s.Index) > 0 {
		ptr += " + " + e.linear(refs, s.Target.Shape)
	}
	if m := e.live(); m != "" {
		e.line("tl.store(%s, %s, mask=%s)", ptr, v, m)
		return
	}
	e.line("tl.store(%s, %s)", ptr, v)
}

// bindRow binds the row loop indices ix to the lanes of kg_c: a single
// index from 0 is kg_c itself (so that loads of the same element share
// their text and are read once), others are decomposed from it.
func (e *emitter) bindRow(ix []*ir.Index, flat string) {
	if len(ix) == 1 {
		if c, ok := ix[0].Lo.(*ir.Const); ok && c.I == 0 {
			e.vars[ix[0]], e.lane[ix[0]] = flat, true
			return
		}
	}
	e.decompose(flat, ix, true)
}

// rowValue renders x, a value per row: its top reductions run across the
// row's lanes, the rest is scalar.
func (e *emitter) rowValue(x ir.Expr, fits bool) string {
	for _, r := range ir.TopReductions(x) {
		if v, ok := e.online[r]; ok {
			e.reduced[r] = v
			continue
		}
		e.reduced[r] = e.rowReduction(r, fits)
	}
	e.shape = e.rowShape()
	v := e.value(x, "")
	for _, r := range ir.TopReductions(x) {
		delete(e.reduced, r)
	}
	return v
}

// rowReduction renders a top reduction across the row: lanes over the
// reduction's points (flattened), combined with a tree reduction.
func (e *emitter) rowReduction(r *ir.Reduce, fits bool) string {
	ident := constant(lower.Identity(r.Op, r.T))
	e.shape = e.blockShape()
	if fits {
		n, _ := constExtent(r.Axes)
		mask := e.laneMask(n)
		e.bindRow(r.Axes, "kg_c")
		body := e.padded(r.Body, mask, lower.Identity(r.Op, r.T))
		v := e.temp("red")
		if e.rows {
			// Along the tile's rows, each row's result a [BLOCK_ROWS, 1]
			// block; a body the same on every lane is made a whole tile.
			if !slices.ContainsFunc(r.Axes, func(ix *ir.Index) bool { return lower.Mentions(r.Body, ix) }) {
				body = fmt.Sprintf("tl.broadcast_to(%s, [BLOCK_ROWS, BLOCK])", body)
			}
			e.line("%s = %s", v, reduceRows(r.Op, body))
			return v
		}
		e.line("%s = %s", v, reduceAxis(r.Op, body, 0))
		return v
	}
	acc := e.temp("acc")
	if e.head > 0 {
		e.line("%s = %s.to(%s)", acc, reduceAxis(r.Op, e.headLanes(r.Body, r.Axes), 0), tlType(r.T))
	} else {
		e.line("%s = tl.full([BLOCK], %s, %s)", acc, ident, tlType(r.T))
	}
	km := e.streamRow(r.Axes)
	e.line("%s = %s", acc, combine(r.Op, r.T, acc, e.padded(r.Body, km, lower.Identity(r.Op, r.T))))
	e.endStream()
	v := e.temp("red")
	e.line("%s = %s", v, reduceAxis(r.Op, acc, 0))
	return v
}

// stream is the range of a loop that streams n elements through blocks of
// step: with num_stages > 1, a tl.range that asks Triton's pipeliner to
// issue that many iterations' loads ahead (through shared memory), which
// a kernel's own num_stages does only for loads that feed tl.dot.
func (e *emitter) stream(n, step string) string { return e.streamFrom(0, n, step) }

// streamFrom is stream's range from the point from on.
func (e *emitter) streamFrom(from int64, n, step string) string {
	if s := e.launch.Config["num_stages"]; s > 1 {
		return fmt.Sprintf("tl.range(%d, %s, %s, num_stages=%d)", from, n, step, s)
	}
	return fmt.Sprintf("range(%d, %s, %s)", from, n, step)
}

// headLanes renders x over the row's kept points (CACHE, kg_h) as a
// [CACHE // BLOCK, BLOCK] block: lane l of its row j is the point j *
// BLOCK + l, where a streamed loop's block j has it, so that reducing it
// along axis 0 gives each lane's value over the kept points.
func (e *emitter) headLanes(x ir.Expr, axes []*ir.Index) string {
	e.shape = fmt.Sprintf("[%d]", e.head)
	e.bindRow(axes, "kg_h")
	v := strip(e.value(x, ""))
	if !slices.ContainsFunc(axes, func(ix *ir.Index) bool { return lower.Mentions(x, ix) }) {
		v = fmt.Sprintf("tl.broadcast_to(%s, %s)", v, e.shape) // the same at every point
	}
	e.shape = e.blockShape()
	h := e.temp("hx")
	e.line("%s = tl.reshape(%s, [%d, BLOCK])", h, v, e.head/e.launch.Config["BLOCK"])
	return h
}

// streamRow opens a loop over axes, a row streamed through blocks of
// BLOCK lanes, binding the axes to the lanes' points; it returns the
// mask of the lanes inside the row. endStream closes it.
func (e *emitter) streamRow(axes []*ir.Index) (mask string) {
	e.streamedPass(false)
	ext := lower.Extent(axes)
	k0 := e.fresh("kg_k0")
	e.line("for %s in %s:", k0, e.streamFrom(e.head, e.expr(ext, ""), "BLOCK"))
	e.ind += "    "
	e.loops++
	kk, km := e.fresh("kg_k"), e.fresh("kg_km")
	e.line("%s = %s + tl.arange(0, BLOCK)", kk, k0)
	e.line("%s = %s < %s", km, kk, e.paren(ext, ""))
	e.decompose(kk, axes, true)
	return km
}

// endStream closes streamRow's loop.
func (e *emitter) endStream() {
	e.loops--
	e.ind = e.ind[4:]
	e.evict = ""
}

// evictHint is the eviction_policy argument of a load of t in a streamed
// pass of a row-reduce program with EVICT set (lower.tileRowReduce): its
// reductions' passes read with evict_last, which keeps their lines in the
// L2 before others while lines not so marked remain (Triton's hint,
// PTX's L2::evict_last), so that the passes after them read the row from
// the L2; the outputs' pass reads with evict_first what those passes read
// before it (its last read of them), and nothing else so: a tensor read
// only by the outputs' pass, such as a layer norm's weights, is read
// again by the next row's program.
func (e *emitter) evictHint(t *ir.Tensor) string {
	switch {
	case e.evict == "evict_last":
		e.reread[t] = true
	case e.evict == "evict_first" && e.reread[t]:
	default:
		return ""
	}
	return fmt.Sprintf(", eviction_policy=%q", e.evict)
}

// streamedPass sets the eviction hint of the loads of the streamed pass
// that opens next, where the launch asks for hints (EVICT): a reductions'
// pass's (last false) or the outputs' pass's (last true).
func (e *emitter) streamedPass(last bool) {
	e.evict = ""
	if e.launch.Config["EVICT"] == 1 {
		e.evict = "evict_last"
		if last {
			e.evict = "evict_first"
		}
	}
}

// onlinePass renders an OnlineSum's max and sum of shifted exponentials
// in one pass over a row that does not fit a block (see lower.OnlineSum),
// returning the two values: each lane keeps a running max m and sum s,
// then the lanes' maxima combine, and their sums rescaled to the row's
// (rescaled).
//
// A lane's point x takes one exponential, e = exp(-|x - m|) (expNegAbs):
// above m, s is rescaled by e, exp(m - x), and x adds its own term, 1 (a
// max of -inf so far: s is replaced by 1, dropping the NaN terms of -inf
// points); else x adds e, exp(x - m). The sum's special values come out
// as the unsplit sum's: a -inf point while m is -inf adds NaN until a
// finite max replaces s; a +inf point adds 1 here and its NaN term
// exp(inf - inf) in rescaled; a NaN point makes m and s NaN. Lanes past
// the row's end read -inf, the max's identity, which adds what a -inf
// point of the row would: nothing once the row has a point above -inf,
// and a NaN that the unsplit sum also has where every point of the row is
// -inf.
func (e *emitter) onlinePass(p lower.OnlineSum) (mx, sum string) {
	t := p.Max.T
	inf, zero := lower.Identity(ir.Max, t), lower.Identity(ir.Sum, t)
	m, s := e.temp("om"), e.temp("os")
	e.shape = e.blockShape()
	if e.head > 0 {
		// Each lane's max over the kept points, and its sum of their
		// exponentials shifted by it: NaN where the max is -inf or +inf
		// (exp(-inf - -inf), exp(inf - inf)), as the loop's own update
		// leaves it.
		h := e.headLanes(p.Max.Body, p.Max.Axes)
		e.line("%s = %s", m, reduceAxis(ir.Max, h, 0))
		e.line("%s = tl.sum(%s, axis=0).to(%s)", s, expNegAbs(t, fmt.Sprintf("%s - %s[None, :]", h, m)), tlType(t))
	} else {
		e.line("%s = tl.full([BLOCK], %s, %s)", m, constant(inf), tlType(t))
		e.line("%s = tl.full([BLOCK], %s, %s)", s, constant(zero), tlType(t))
	}
	km := e.streamRow(p.Max.Axes)
	x, up, ex := e.temp("ox"), e.temp("oup"), e.temp("oe")
	one := typed(&ir.Const{T: t, F: 1})
	e.line("%s = %s", x, e.padded(p.Max.Body, km, inf))
	e.line("%s = %s > %s", up, x, m)
	e.line("%s = %s", ex, expNegAbs(t, fmt.Sprintf("%s - %s", x, m)))
	e.line("%s = tl.where(%s, tl.where(%s == %s, %s, %s * %s + %s), %s + %s)", s, up, m, typed(inf), one, s, ex, one, s, ex)
	e.line("%s = %s", m, combine(ir.Max, t, m, x))
	e.endStream()
	mx, sum = e.temp("red"), e.temp("red")
	e.line("%s = %s", mx, reduceAxis(ir.Max, m, 0))
	e.line("%s = %s", sum, reduceAxis(ir.Sum, rescaled(m, mx, s, inf, zero), 0))
	return mx, sum
}

// centered names a CenteredSum's lanes' count n, shift k (each lane's
// first point) and shifted sums s1 and s2 (centeredPass).
type centered struct{ n, k, s1, s2 string }

// centeredPass renders a CenteredSum's sum in one pass over a row that
// does not fit a block (see lower.CenteredSum) and records its value for
// the statement that reads it; each lane keeps its count, its first point
// and the sum and sum of squares of its points shifted by it, from which
// centeredSquares makes the squared deviations once the mean is known.
func (e *emitter) centeredPass(p lower.CenteredSum) centered {
	t := p.Sum.T
	tt := tlType(t)
	c := centered{e.temp("cn"), e.temp("ck"), e.temp("cs1"), e.temp("cs2")}
	acc := e.temp("acc")
	e.shape = e.blockShape()
	if e.head > 0 {
		// Each lane's count, shift (the mean of its kept points: any
		// value near them serves), and shifted sums over the kept points.
		h, d := e.headLanes(p.Sum.Body, p.Sum.Axes), e.temp("hd")
		n := e.head / e.launch.Config["BLOCK"]
		e.line("%s = tl.full([BLOCK], %d, %s)", c.n, n, tt)
		e.line("%s = tl.sum(%s, axis=0).to(%s)", acc, h, tt)
		e.line("%s = (%s / %d).to(%s)", c.k, acc, n, tt)
		e.line("%s = %s - %s[None, :]", d, h, c.k)
		e.line("%s = tl.sum(%s, axis=0).to(%s)", c.s1, d, tt)
		e.line("%s = tl.sum(%s * %s, axis=0).to(%s)", c.s2, d, d, tt)
	} else {
		for _, v := range []string{c.n, c.k, c.s1, c.s2, acc} {
			e.line("%s = tl.zeros([BLOCK], %s)", v, tt)
		}
	}
	km := e.streamRow(p.Sum.Axes)
	x, d := e.temp("cx"), e.temp("cd")
	zero := typed(lower.Identity(ir.Sum, t))
	e.line("%s = %s", x, e.padded(p.Sum.Body, km, lower.Identity(ir.Sum, t)))
	e.line("%s = tl.where(%s & (%s == 0), %s, %s)", c.k, km, c.n, x, c.k)
	e.line("%s = tl.where(%s, %s - %s, %s)", d, km, x, c.k, zero)
	e.line("%s = %s + %s", c.s1, c.s1, d)
	e.line("%s = %s + %s * %s", c.s2, c.s2, d, d)
	e.line("%s = %s + tl.where(%s, 1, 0).to(%s)", c.n, c.n, km, tt)
	e.line("%s = %s + %s", acc, acc, x)
	e.endStream()
	sum := e.temp("red")
	e.line("%s = %s", sum, reduceAxis(ir.Sum, acc, 0))
	e.online[p.Sum] = sum
	return c
}

// centeredSquares renders the sum of a CenteredSum's squared deviations
// from the mean (mean, a scalar) over the lanes' shifted sums: S2 - 2
// (mean - K) S1 + n (mean - K)^2.
func (e *emitter) centeredSquares(c centered, mean string) string {
	cm, sq := e.temp("cm"), e.temp("red")
	e.shape = e.blockShape()
	e.line("%s = %s - %s", cm, mean, c.k)
	e.line("%s = tl.sum(%s - 2 * %s * %s + %s * %s * %s, axis=0)", sq, c.s2, cm, c.s1, c.n, cm, cm)
	return sq
}

// expNegAbs renders exp(-|d|), an online update's term, of dtype t. In
// f32 it is 2^(|d| * -log2(e)) by libdevice's exp2, which Triton's flush
// of subnormals (enable_reflect_ftz) makes one ex2.approx.ftz with the
// abs and the product folded into one multiply, where tl.exp also scales
// subnormal results: a term below 2^-126 added to a sum of at least 1
// (a lane's sum once its max is finite), or a sum times it added to 1,
// rounds away all the same. Other dtypes take tl.exp.
func expNegAbs(t ir.DType, d string) string {
	if t != ir.F32 {
		return fmt.Sprintf("tl.exp(-tl.abs(%s))", d)
	}
	return fmt.Sprintf("tl.extra.libdevice.exp2(tl.abs(%s) * (-%s))", d, strconv.FormatFloat(math.Log2E, 'g', -1, 64))
}

// rescaled renders a lane's sum s of exponentials shifted by its max m,
// shifted by m2 >= m, the row's max, instead: s itself where m2 is m,
// save NaN where m is +inf, the term exp(inf - inf) of the lane's +inf
// point (onlinePass); nothing where m is -inf.
func rescaled(m, m2, s string, inf, zero *ir.Const) string {
	pinf, nan := &ir.Const{T: inf.T, F: math.Inf(1)}, &ir.Const{T: inf.T, F: math.NaN()}
	return fmt.Sprintf("tl.where(%s == %s, tl.where(%s == %s, %s, %s), tl.where(%s == %s, %s, %s * tl.exp(%s - %s)))",
		m2, m, m, typed(pinf), typed(nan), s, m, typed(inf), typed(zero), s, m, m2)
}

// colReduce renders a column reduction: a program per outer point and
// BLOCK_N columns, the reduction's points BLOCK_R rows at a time in a
// BLOCK_R x BLOCK_N tile, combined down the rows at the end.
func (e *emitter) colReduce() {
	s := e.launch.Stmt
	m := lower.MatchColumns(s)
	r := m.Reduce
	colsExt := lower.Extent([]*ir.Index{m.C})
	e.used["kg_pid"], e.used["kg_ncb"], e.used["kg_n"], e.used["kg_nm"] = true, true, true, true
	e.line("kg_pid = tl.program_id(0).to(tl.int64)")
	e.line("kg_ncb = %s", e.expr(lower.Simplify(&ir.Binary{Op: ir.Div, X: &ir.Binary{Op: ir.Add, X: colsExt, Y: ir.IntConst(e.launch.Config["BLOCK_N"] - 1)}, Y: ir.IntConst(e.launch.Config["BLOCK_N"])}), ""))
	e.decompose("kg_pid // kg_ncb", m.Outer, false)
	e.line("kg_n = (kg_pid %% kg_ncb) * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]")
	e.line("kg_nm = kg_n < %s", e.paren(colsExt, ""))
	e.decompose("kg_n", []*ir.Index{m.C}, true)
	ident := constant(lower.Identity(r.Op, r.T))
	acc := e.temp("acc")
	ext := lower.Extent(r.Axes)
	e.line("%s = tl.full([BLOCK_R, BLOCK_N], %s, %s)", acc, ident, tlType(r.T))
	e.line("for kg_r0 in %s:", e.stream(e.expr(ext, ""), "BLOCK_R"))
	e.used["kg_r0"], e.used["kg_r"], e.used["kg_rm"] = true, true, true
	e.ind += "    "
	e.loops++
	e.shape = "[BLOCK_R, BLOCK_N]"
	e.line("kg_r = kg_r0 + tl.arange(0, BLOCK_R)[:, None]")
	e.line("kg_rm = kg_r < %s", e.paren(ext, ""))
	e.decompose("kg_r", r.Axes, true)
	e.lanes = map[string][]*ir.Index{"kg_rm": r.Axes, "kg_nm": {m.C}}
	body := e.value(r.Body, "kg_rm & kg_nm")
	e.lanes = nil
	e.line("%s = %s", acc, combine(r.Op, r.T, acc, fmt.Sprintf("tl.where(kg_rm & kg_nm, %s, %s)", body, typed(lower.Identity(r.Op, r.T)))))
	e.loops--
	e.ind = e.ind[4:]
	red := e.temp("red")
	e.line("%s = %s[None, :]", red, reduceAxis(r.Op, acc, 0))
	e.reduced[r] = red
	e.shape = "[1, BLOCK_N]"
	e.store(s, "kg_nm")
}

// colGroup renders a column group (lower.MatchColGroup): a program per
// outer point and BLOCK_N columns, every reduced point in the BLOCK_K
// rows of one tile. The lets' reduced axes and the output's K are all the
// tile's rows kg_k, their columns kg_n, so that each input element's load
// has one text and is read once; each let reduces down the rows into a
// [1, BLOCK_N] value, and the output is stored as the whole tile.
func (e *emitter) colGroup() {
	l := e.launch
	g := lower.MatchColGroup(l)
	o := len(g.Outer)
	colsExt, n := lower.Extent([]*ir.Index{g.C}), lower.Extent([]*ir.Index{g.K})
	for _, v := range []string{"kg_pid", "kg_ncb", "kg_n", "kg_nm", "kg_k", "kg_km"} {
		e.used[v] = true
	}
	e.line("kg_pid = tl.program_id(0).to(tl.int64)")
	e.line("kg_ncb = %s", e.expr(lower.Simplify(&ir.Binary{Op: ir.Div, X: &ir.Binary{Op: ir.Add, X: colsExt, Y: ir.IntConst(l.Config["BLOCK_N"] - 1)}, Y: ir.IntConst(l.Config["BLOCK_N"])}), ""))
	e.decompose("kg_pid // kg_ncb", g.Outer, false)
	e.line("kg_n = (kg_pid %% kg_ncb) * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]")
	e.line("kg_nm = kg_n < %s", e.paren(colsExt, ""))
	e.line("kg_k = tl.arange(0, BLOCK_K)[:, None]")
	e.line("kg_km = kg_k < %s", e.paren(n, ""))
	e.bindRow([]*ir.Index{g.C}, "kg_n")
	e.bindRow([]*ir.Index{g.K}, "kg_k")
	e.cache = map[string]string{}
	mask := "kg_km & kg_nm"
	for _, m := range g.Lets {
		for d := range o {
			e.vars[m.Index[d]], e.lane[m.Index[d]] = e.vars[g.Outer[d]], false
		}
		e.vars[m.Index[o]], e.lane[m.Index[o]] = e.vars[g.C], true
		r := ir.TopReductions(m.Value)[0]
		e.vars[r.Axes[0]], e.lane[r.Axes[0]] = e.vars[g.K], true
		e.shape = "[BLOCK_K, BLOCK_N]"
		red := e.temp("red")
		e.line("%s = %s", red, reduce(r.Op, e.padded(r.Body, mask, lower.Identity(r.Op, r.T)), 0, ", keep_dims=True"))
		e.reduced[r] = red
		e.shape = "[1, BLOCK_N]"
		v := e.value(m.Value, "kg_nm")
		delete(e.reduced, r)
		reg := e.fresh("kg_" + m.Target.Name)
		e.line("%s = %s", reg, v)
		e.regs[m.Target] = reg
	}
	e.shape = "[BLOCK_K, BLOCK_N]"
	e.store(g.Final, mask)
}

// transpose renders a transpose: a program per TILE x TILE tile of
// (Q, P), Q down the tile's rows and P along them, so that the staged
// load reads along its rows and the store writes along the output's; the
// compiler converts between the two layouts through shared memory.
func (e *emitter) transpose() {
	s := e.launch.Stmt
	t := lower.MatchTranspose(s)
	q, p := lower.Extent([]*ir.Index{t.Q}), lower.Extent([]*ir.Index{t.P})
	tile := e.launch.Config["TILE"]
	cdiv := func(x ir.Expr) string {
		return e.expr(lower.Simplify(&ir.Binary{Op: ir.Div, X: &ir.Binary{Op: ir.Add, X: x, Y: ir.IntConst(tile - 1)}, Y: ir.IntConst(tile)}), "")
	}
	for _, n := range []string{"kg_pid", "kg_tp", "kg_tq", "kg_q", "kg_p", "kg_m"} {
		e.used[n] = true
	}
	e.line("kg_pid = tl.program_id(0).to(tl.int64)")
	e.line("kg_tp = %s", cdiv(p))
	e.line("kg_tq = %s", cdiv(q))
	e.decompose("kg_pid // (kg_tp * kg_tq)", t.Batch, false)
	e.line("kg_q = (kg_pid // kg_tp %% kg_tq) * TILE + tl.arange(0, TILE)[:, None]")
	e.line("kg_p = (kg_pid %% kg_tp) * TILE + tl.arange(0, TILE)[None, :]")
	e.line("kg_m = (kg_q < %s) & (kg_p < %s)", e.paren(q, ""), e.paren(p, ""))
	e.vars[t.Q], e.lane[t.Q] = "kg_q", true
	e.vars[t.P], e.lane[t.P] = "kg_p", true
	e.shape = "[TILE, TILE]"
	e.store(s, "kg_m")
}

// contraction renders a matrix product or implicit GEMM: a program per
// BLOCK_M x BLOCK_N output tile (GROUP_M tile rows share their B tiles in
// L2), the batch's indices scalars. Each step over K loads an A tile
// (BLOCK_M x BLOCK_K) and a B tile (BLOCK_K x BLOCK_N) through the
// statement's own loads, masked at the edges and where a ?? default
// leaves the tensor, and multiplies them with tl.dot, or, for products
// tensor cores do not compute, in a BLOCK_M x BLOCK_K x BLOCK_N block of
// registers. The epilogue is the statement with the sum in the
// accumulator.
func (e *emitter) contraction() {
	l := e.launch
	c := lower.MatchContraction(l)
	s := l.Stmt
	cfg := l.Config
	M, N, K := lower.Extent(c.M), lower.Extent(c.N), lower.Extent(c.K)
	for _, n := range []string{"kg_pid", "kg_tm", "kg_tn", "kg_t", "kg_w", "kg_g0", "kg_gs", "kg_tr", "kg_tc", "kg_m", "kg_n", "kg_k0", "kg_k", "kg_acc", "kg_a", "kg_b", "kg_mm", "kg_nm"} {
		e.used[n] = true
	}
	e.line("kg_pid = tl.program_id(0).to(tl.int64)")
	e.line("kg_tm = tl.cdiv(%s, BLOCK_M)", strip(e.expr(M, "")))
	e.line("kg_tn = tl.cdiv(%s, BLOCK_N)", strip(e.expr(N, "")))
	e.decompose("kg_pid // (kg_tm * kg_tn)", c.Batch, false)
	e.line("kg_t = kg_pid %% (kg_tm * kg_tn)")
	e.line("kg_w = GROUP_M * kg_tn")
	e.line("kg_g0 = kg_t // kg_w * GROUP_M")
	e.line("kg_gs = tl.minimum(kg_tm - kg_g0, GROUP_M)")
	e.line("kg_tr = kg_g0 + kg_t %% kg_w %% kg_gs")
	e.line("kg_tc = kg_t %% kg_w // kg_gs")
	e.line("kg_m = kg_tr * BLOCK_M + tl.arange(0, BLOCK_M)")
	e.line("kg_n = kg_tc * BLOCK_N + tl.arange(0, BLOCK_N)")
	// Edge masks only where a block may pass the end.
	edge := func(ext ir.Expr, block int64, v string) string {
		if n, ok := lower.Simplify(ext).(*ir.Const); ok && n.I%block == 0 {
			return ""
		}
		return fmt.Sprintf("(%s < %s)", v, e.paren(ext, ""))
	}
	dot := c.Dot || c.IEEEDot
	if dot {
		e.line("kg_acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)")
	} else {
		e.line("kg_acc = tl.full([BLOCK_M, BLOCK_N], %s, %s)", constant(lower.Identity(c.Reduce.Op, c.Reduce.T)), tlType(c.Reduce.T))
	}
	e.line("for kg_k0 in range(0, %s, BLOCK_K):", strip(e.expr(K, "")))
	e.ind += "    "
	e.loops++
	e.line("kg_k = kg_k0 + tl.arange(0, BLOCK_K)")
	if dot {
		// A as BLOCK_M x BLOCK_K, B as BLOCK_K x BLOCK_N.
		e.bindFlat(c.M, "kg_m[:, None]", "kg_mi")
		e.bindFlat(c.K, "kg_k[None, :]", "kg_ka")
		e.shape = "[BLOCK_M, BLOCK_K]"
		a := e.load(c.A, and(edge(M, cfg["BLOCK_M"], "kg_m[:, None]"), edge(K, cfg["BLOCK_K"], "kg_k[None, :]")), "")
		e.bindFlat(c.K, "kg_k[:, None]", "kg_kb")
		e.bindFlat(c.N, "kg_n[None, :]", "kg_ni")
		e.shape = "[BLOCK_K, BLOCK_N]"
		b := e.load(c.B, and(edge(K, cfg["BLOCK_K"], "kg_k[:, None]"), edge(N, cfg["BLOCK_N"], "kg_n[None, :]")), "")
		e.line("kg_a = %s", a)
		e.line("kg_b = %s", b)
		if c.IEEEDot {
			// Operands widened exactly (lower.exactF32) multiply as f32.
			for _, o := range []struct {
				v string
				l *ir.Load
			}{{"kg_a", c.A}, {"kg_b", c.B}} {
				if o.l.Type() != ir.F32 {
					e.line("%s = %s.to(tl.float32)", o.v, o.v)
				}
			}
		}
		precision := ""
		switch {
		case c.TF32:
			e.line("kg_a = kg_tf32(kg_a)")
			e.line("kg_b = kg_tf32(kg_b)")
			precision = ", input_precision=\"tf32\""
		case c.Elem == ir.F32:
			precision = ", input_precision=\"ieee\""
		}
		e.line("kg_acc = tl.dot(kg_a, kg_b, kg_acc%s)", precision)
	} else {
		// The body at every (m, k, n) of a BLOCK_M x BLOCK_K x BLOCK_N
		// block, combined along k.
		e.bindFlat(c.M, "kg_m[:, None, None]", "kg_mi")
		e.bindFlat(c.K, "kg_k[None, :, None]", "kg_ka")
		e.bindFlat(c.N, "kg_n[None, None, :]", "kg_ni")
		e.shape = "[BLOCK_M, BLOCK_K, BLOCK_N]"
		mask := and(fmt.Sprintf("(kg_m[:, None, None] < %s)", e.paren(M, "")), fmt.Sprintf("(kg_k[None, :, None] < %s)", e.paren(K, "")), fmt.Sprintf("(kg_n[None, None, :] < %s)", e.paren(N, "")))
		body := e.padded(c.Reduce.Body, mask, lower.Identity(c.Reduce.Op, c.Reduce.T))
		e.line("kg_acc = %s", combine(c.Reduce.Op, c.Reduce.T, "kg_acc", reduceAxis(c.Reduce.Op, body, 1)))
	}
	e.loops--
	e.ind = e.ind[4:]
	e.bindFlat(c.M, "kg_m[:, None]", "kg_mi")
	e.bindFlat(c.N, "kg_n[None, :]", "kg_ni")
	e.shape = "[BLOCK_M, BLOCK_N]"
	e.line("kg_mm = kg_m[:, None] < %s", e.paren(M, ""))
	e.line("kg_nm = kg_n[None, :] < %s", e.paren(N, ""))
	acc := "kg_acc"
	if dot && c.Reduce.T != ir.F32 {
		acc = "kg_acc.to(" + tlType(c.Reduce.T) + ")"
	}
	e.reduced[c.Reduce] = acc
	e.store(s, "kg_mm & kg_nm")
}

// bindFlat binds indices ix to the flat block flat (a Python expression):
// one index from 0 is the block itself, others are decomposed into
// variables named after base.
func (e *emitter) bindFlat(ix []*ir.Index, flat string, base string) {
	if len(ix) == 1 {
		if c, ok := ix[0].Lo.(*ir.Const); ok && c.I == 0 {
			e.vars[ix[0]], e.lane[ix[0]] = flat, true
			return
		}
	}
	e.decompose(flat, ix, true)
}

// constExtent is the number of points of axes when it is a constant.
func constExtent(axes []*ir.Index) (int64, bool) {
	c, ok := lower.Simplify(lower.Extent(axes)).(*ir.Const)
	if !ok {
		return 0, false
	}
	return c.I, true
}
