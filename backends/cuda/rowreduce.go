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
		e.printf("    for (int64_t kg_q = threadIdx.x; kg_q < kg_cols; kg_q += blockDim.x) {\n")
		e.decompose("      ", "kg_q", "kg_crest", final.Index[l.RowDims:])
		e.store("      ", final)
		e.printf("    }\n")
	} else {
		e.blockReductions("    ", final.Value)
		e.printf("    if (threadIdx.x == 0) {\n")
		e.store("      ", final)
		e.printf("    }\n")
	}
	e.printf("  }\n")
	e.regs, e.reduced = nil, nil
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
		e.printf("%s  for (int64_t kg_k = threadIdx.x; kg_k < %s; kg_k += blockDim.x) {\n", indent, e.expr(n))
		e.decompose(indent+"    ", "kg_k", "kg_krest", r.Axes)
		e.printf("%s    kg_part = %s;\n", indent, combine(r.Op, t, "kg_part", e.expr(r.Body)))
		e.printf("%s  }\n", indent)
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
