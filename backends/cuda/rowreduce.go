package cuda

import (
	"fmt"
	"slices"

	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
)

// rowReduce renders a row-reduce launch: a block per row (grid-stride over
// rows); each fused let's reductions are split across the block's threads
// and combined by kg_block_reduce (shuffles within warps, shared memory
// across them); the let's value then lives in a register every thread
// holds; finally the threads share the row's output elements, or thread 0
// writes a row's single result.
func (e *emitter) rowReduce(l *lower.Launch) {
	e.regs, e.reduced = map[*ir.Tensor]string{}, map[*ir.Reduce]string{}
	aliases := lower.RowAliases(l)
	var stmts []*ir.Stmt
	for _, s := range l.Fused {
		stmts = append(stmts, &ir.Stmt{Target: s.Target, Index: s.Index, Value: ir.Substitute(s.Value, aliases)})
	}
	final := l.Stmt
	stmts = append(stmts, final)
	// One shared scratch array per accumulation type.
	var accTypes []ir.DType
	for _, s := range stmts {
		for _, r := range topReductions(s.Value) {
			if !slices.Contains(accTypes, r.T) {
				accTypes = append(accTypes, r.T)
			}
		}
	}
	for _, t := range accTypes {
		e.printf("  __shared__ %s kg_smem_%s[32];\n", cType(t), t)
	}
	e.printf("  const int64_t kg_rows = %s;\n", e.expr(lower.Rows(l)))
	e.printf("  for (int64_t kg_row = blockIdx.x; kg_row < kg_rows; kg_row += gridDim.x) {\n")
	e.decompose("    ", "kg_row", "kg_rrest", final.Index[:l.RowDims])
	e.rowCache(l, stmts)
	for _, s := range stmts[:len(stmts)-1] {
		reg := "kg_v_" + s.Target.Name
		e.printf("    %s %s;\n", cType(s.Target.DType), reg)
		e.printf("    {  // let %s\n", s.Target.Name)
		e.blockReductions("      ", s.Value)
		e.printf("      %s = %s;\n", reg, e.expr(s.Value))
		e.printf("    }\n")
		e.regs[s.Target] = reg
	}
	if len(final.Index) > l.RowDims {
		e.printf("    const int64_t kg_cols = %s;\n", e.expr(lower.Cols(l)))
		in := e.rowLoop("    ", "kg_q", "kg_cols", final.Index[l.RowDims:])
		e.decompose(in, "kg_q", "kg_crest", final.Index[l.RowDims:])
		e.store(in, final)
		e.closeRowLoop("    ")
	} else {
		e.blockReductions("    ", final.Value)
		e.printf("    if (threadIdx.x == 0) {\n")
		e.store("      ", final)
		e.printf("    }\n")
	}
	e.printf("  }\n")
	e.regs, e.reduced, e.cache = nil, nil, nil
}

// rowCache decides whether the launch keeps rows of its inputs in
// registers, and if so loads them: when every loop over the row (each
// reduction, and the output's columns) runs over one index of the same
// constant extent n, at most 32 elements a thread, each input read as
// X[row..., i] by such a loop is loaded once, element i = threadIdx.x +
// j * THREADS into kg_c_X[j], and every pass reads the registers: a
// softmax or layernorm reads its row from memory once, with all of a
// thread's loads in flight together.
func (e *emitter) rowCache(l *lower.Launch, stmts []*ir.Stmt) {
	threads := l.Config["THREADS"]
	n := int64(-1)
	same := func(ix []*ir.Index) bool {
		if len(ix) != 1 {
			return false
		}
		c, ok := lower.Simplify(&ir.Binary{Op: ir.Sub, X: ix[0].Hi, Y: ix[0].Lo}).(*ir.Const)
		if !ok || (n >= 0 && c.I != n) {
			return false
		}
		n = c.I
		return true
	}
	var loops []*ir.Index
	for _, s := range stmts {
		for _, r := range topReductions(s.Value) {
			if !same(r.Axes) {
				return
			}
			loops = append(loops, r.Axes[0])
		}
	}
	final := l.Stmt
	if len(final.Index) > l.RowDims {
		if !same(final.Index[l.RowDims:]) {
			return
		}
		loops = append(loops, final.Index[l.RowDims])
	}
	if n < 0 || (n+threads-1)/threads > 32 {
		return // no loop of constant length, or too much to hold
	}
	j := (n + threads - 1) / threads
	e.cache = map[*ir.Tensor]string{}
	e.rowIndex = final.Index[:l.RowDims]
	e.cacheN, e.cacheJ, e.cacheThreads = n, j, threads
	for _, s := range stmts {
		ir.Walk(s.Value, func(x ir.Expr) bool {
			ld, ok := x.(*ir.Load)
			if !ok || ld.Tensor.Kind != ir.Input || e.cache[ld.Tensor] != "" || !e.rowLoad(ld, l, loops) {
				return true
			}
			reg := "kg_c_" + ld.Tensor.Name
			e.cache[ld.Tensor] = reg
			var idx []ir.Expr
			for d := range l.RowDims {
				idx = append(idx, &ir.IndexRef{Index: final.Index[d]})
			}
			idx = append(idx, ir.IntConst(0))
			t := cType(ld.Tensor.DType)
			e.printf("    %s %s[%d];\n", t, reg, j)
			e.printf("    {\n")
			e.printf("      const %s* kg_rp = %s + %s;\n", t, name(ld.Tensor.Name), e.linear(idx, ld.Tensor.Shape))
			e.printf("      #pragma unroll\n")
			e.printf("      for (int kg_j = 0; kg_j < %d; ++kg_j) {\n", j)
			e.printf("        const int64_t kg_i = threadIdx.x + (int64_t)kg_j * %d;\n", threads)
			e.printf("        %s[kg_j] = kg_i < %dL ? kg_rp[kg_i] : kg_zero<%s>();\n", reg, n, t)
			e.printf("      }\n")
			e.printf("    }\n")
			return true
		})
	}
}

// rowLoad reports whether ld reads its tensor at the launch's row and
// one of the row loops' index, as its last (contiguous) dimension.
func (e *emitter) rowLoad(ld *ir.Load, l *lower.Launch, loops []*ir.Index) bool {
	if ld.Default != nil || len(ld.Index) != l.RowDims+1 {
		return false
	}
	for d := range l.RowDims {
		ref, ok := ld.Index[d].(*ir.IndexRef)
		if !ok || ref.Index != l.Stmt.Index[d] {
			return false
		}
	}
	ref, ok := ld.Index[l.RowDims].(*ir.IndexRef)
	return ok && slices.Contains(loops, ref.Index)
}

// rowLoop opens a loop of the block's threads over n points of a row: a
// grid-stride loop, or with the row cached, the unrolled loop over the
// thread's cached elements (flat is the point, kg_j the register). It
// returns the indentation of the loop's body.
func (e *emitter) rowLoop(indent, flat, n string, ix []*ir.Index) string {
	if e.cache == nil {
		e.printf("%s#pragma unroll 4\n", indent)
		e.printf("%sfor (int64_t %s = threadIdx.x; %s < %s; %s += blockDim.x) {\n", indent, flat, flat, n, flat)
		return indent + "  "
	}
	e.loop = ix[0]
	e.printf("%s#pragma unroll\n", indent)
	e.printf("%sfor (int kg_j = 0; kg_j < %d; ++kg_j) {\n", indent, e.cacheJ)
	e.printf("%s  const int64_t %s = threadIdx.x + (int64_t)kg_j * %d;\n", indent, flat, e.cacheThreads)
	e.printf("%s  if (%s < %dL) {\n", indent, flat, e.cacheN)
	return indent + "    "
}

func (e *emitter) closeRowLoop(indent string) {
	if e.cache != nil {
		e.printf("%s  }\n", indent)
		e.loop = nil
	}
	e.printf("%s}\n", indent)
}

// blockReductions computes each top-level reduction of v across the
// block into a register that expr then uses in its place.
func (e *emitter) blockReductions(indent string, v ir.Expr) {
	for _, r := range topReductions(v) {
		reg := fmt.Sprintf("kg_r%d", e.acc)
		e.acc++
		t := cType(r.T)
		var extents []ir.Expr
		for _, ax := range r.Axes {
			extents = append(extents, &ir.Binary{Op: ir.Sub, X: ax.Hi, Y: ax.Lo})
		}
		n := lower.Simplify(product(extents))
		e.printf("%s%s %s;\n", indent, t, reg)
		e.printf("%s{\n", indent)
		e.printf("%s  %s kg_part = %s;\n", indent, t, identity(r.Op, r.T))
		in := e.rowLoop(indent+"  ", "kg_k", e.expr(n), r.Axes)
		e.decompose(in, "kg_k", "kg_krest", r.Axes)
		e.printf("%skg_part = %s;\n", in, combine(r.Op, t, "kg_part", e.expr(r.Body)))
		e.closeRowLoop(indent + "  ")
		e.printf("%s  %s = kg_block_reduce<%s>(kg_part, %s, [](%s a, %s b) { return %s; }, kg_smem_%s);\n",
			indent, reg, t, identity(r.Op, r.T), t, t, combine(r.Op, t, "a", "b"), r.T)
		e.printf("%s}\n", indent)
		e.reduced[r] = reg
	}
}

func combine(op ir.ReduceOp, t, a, b string) string {
	switch op {
	case ir.Sum:
		return a + " + " + b
	case ir.Prod:
		return a + " * " + b
	case ir.Max:
		return fmt.Sprintf("kg_max<%s>(%s, %s)", t, a, b)
	}
	return fmt.Sprintf("kg_min<%s>(%s, %s)", t, a, b)
}

// topReductions lists the reductions of e that no other reduction
// contains, in evaluation order.
func topReductions(e ir.Expr) []*ir.Reduce {
	var rs []*ir.Reduce
	ir.Walk(e, func(x ir.Expr) bool {
		if r, ok := x.(*ir.Reduce); ok {
			rs = append(rs, r)
			return false
		}
		return true
	})
	return rs
}

func product(es []ir.Expr) ir.Expr {
	var p ir.Expr = ir.IntConst(1)
	for _, x := range es {
		p = &ir.Binary{Op: ir.Mul, X: p, Y: x}
	}
	return p
}
