package cuda

import (
	"fmt"
	"slices"
	"strings"

	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
)

// colReduce renders a col-reduce launch (lower.MatchColumns): a
// grid-stride loop over tiles, each a strip of TX*VEC output columns at
// one point of the outer output indices. Thread tx + TX*ty accumulates
// the strip's columns tx*VEC .. tx*VEC + VEC-1 over the reduction's
// points ty, ty + TY, ..., UNROLL of them a step; the body's reads along
// the columns are VEC-wide vector loads when the sizes and pointers allow
// (kg_vec, checked at run time), a step's loads all issued before its
// arithmetic. kg_col_combine then combines each column's TY partial
// results in a fixed order, and the thread that holds a column's result
// applies the rest of the statement and stores it.
func (e *emitter) colReduce(l *lower.Launch) {
	m := lower.MatchColumns(l.Stmt)
	r := m.Reduce
	c := l.Config
	tx, ty, vec := c["TX"], c["TY"], c["VEC"]
	width := tx * vec
	t := e.cType(r.T)
	e.printf("  __shared__ %s kg_part[%d];\n", t, lower.ColParts(l)*width)
	e.printf("  const int64_t kg_cols = %s;\n", e.expr(lower.Extent([]*ir.Index{m.C})))
	tiles := "kg_strips"
	if len(m.Outer) > 0 {
		tiles = e.paren(lower.Extent(m.Outer)) + " * kg_strips"
	}
	e.printf("  const int64_t kg_strips = (kg_cols + %d) / %d, kg_tiles = %s;\n", width-1, width, tiles)
	e.printf("  const int64_t kg_tx = threadIdx.x %% %d, kg_ty = threadIdx.x / %d;\n", tx, tx)
	// The reduction's length, and the thread's number of steps, once, or
	// per tile when the ranges depend on the outer indices.
	perTile := slices.ContainsFunc(r.Axes, func(ax *ir.Index) bool {
		return slices.ContainsFunc(m.Outer, func(ix *ir.Index) bool { return lower.Mentions(ax.Lo, ix) || lower.Mentions(ax.Hi, ix) })
	})
	if !perTile {
		e.colSteps("  ", m, c)
	}
	loads := colVectorLoads(m)
	vector := vec > 1 && len(loads) > 0
	if vector {
		e.printf("  const bool kg_vec = %s;\n", e.colVectorOK(m, loads, vec))
	}
	e.printf("  for (int64_t kg_t = blockIdx.x; kg_t < kg_tiles; kg_t += gridDim.x) {\n")
	if len(m.Outer) > 0 {
		e.printf("    const int64_t kg_o = kg_t / kg_strips;\n")
		e.decompose("    ", "kg_o", "kg_orest", m.Outer)
	}
	if perTile {
		e.colSteps("    ", m, c)
	}
	e.printf("    const int64_t kg_q0 = kg_t %% kg_strips * %d;  // the strip's first column\n", width)
	e.printf("    const int64_t kg_qt = kg_q0 + kg_tx * %d;  // the thread's first column\n", vec)
	e.printf("    %s kg_acc[%d];\n", t, vec)
	e.printf("    #pragma unroll\n")
	e.printf("    for (int kg_v = 0; kg_v < %d; ++kg_v) kg_acc[kg_v] = %s;\n", vec, identity(r.Op, r.T))
	e.printf("    if (kg_qt < kg_cols) {\n")
	if vector {
		e.printf("      if (kg_vec) {\n")
		e.colVectorLoop("        ", m, loads, c)
		e.printf("      } else {\n")
		e.colScalarLoop("        ", m, c)
		e.printf("      }\n")
	} else {
		e.colScalarLoop("      ", m, c)
	}
	e.printf("    }\n")
	e.printf("    kg_col_combine<%s, %d, %d, %d>(kg_acc, kg_part, [](%s a, %s b) { return %s; });\n", t, tx, ty, vec, t, t, combine(r.Op, t, "a", "b"))
	e.printf("    for (int kg_i = threadIdx.x; kg_i < %d; kg_i += blockDim.x) {\n", width)
	e.printf("      const int64_t kg_q = kg_q0 + kg_i;\n")
	e.printf("      if (kg_q < kg_cols) {\n")
	e.printf("        const int64_t %s = %s;\n", name(m.C.Name), e.column(m.C, "kg_q"))
	e.reduced = map[*ir.Reduce]string{r: "kg_part[kg_i]"}
	e.store("        ", l.Stmt)
	e.reduced = nil
	e.printf("      }\n")
	e.printf("    }\n")
	e.printf("  }\n")
}

// column renders output column q (a flat position from 0) as a value of
// the column index c.
func (e *emitter) column(c *ir.Index, q string) string {
	if lo, ok := c.Lo.(*ir.Const); ok && lo.I == 0 {
		return q
	}
	return e.paren(c.Lo) + " + " + q
}

// colSteps declares the reduction's length kg_n and the number of steps
// of UNROLL points that thread row kg_ty takes, kg_steps. (The loops
// count steps rather than points: nvcc 11.8 fails with "unsupported
// operation" on some loops that step kg_k0 from kg_ty up to kg_n.)
func (e *emitter) colSteps(indent string, m *lower.Columns, c lower.Config) {
	step := c["TY"] * c["UNROLL"]
	e.printf("%sconst int64_t kg_n = %s;\n", indent, e.expr(lower.Extent(m.Reduce.Axes)))
	e.printf("%sconst int64_t kg_steps = kg_ty < kg_n ? (kg_n - kg_ty + %d) / %d : 0;\n", indent, step-1, step)
}

// colStepLoop opens the loop over the thread's steps, the first point of
// each kg_k0, and returns the indentation of the step's body.
func (e *emitter) colStepLoop(indent string, c lower.Config) string {
	e.printf("%sfor (int64_t kg_s = 0; kg_s < kg_steps; ++kg_s) {\n", indent)
	e.printf("%s  const int64_t kg_k0 = kg_ty + kg_s * %d;\n", indent, c["TY"]*c["UNROLL"])
	return indent + "  "
}

// colPoints opens the unrolled loop over a step's points kg_k, declaring
// the reduction's axes when decl, and returns the indentation inside.
func (e *emitter) colPoints(indent string, m *lower.Columns, c lower.Config, decl bool) string {
	e.printf("%s#pragma unroll\n", indent)
	e.printf("%sfor (int kg_u = 0; kg_u < %d; ++kg_u) {\n", indent, c["UNROLL"])
	e.printf("%s  const int64_t kg_k = kg_k0 + kg_u * %dL;\n", indent, c["TY"])
	e.printf("%s  if (kg_k < kg_n) {\n", indent)
	if decl {
		e.decompose(indent+"    ", "kg_k", "kg_krest", m.Reduce.Axes)
	}
	return indent + "    "
}

func (e *emitter) closePoints(indent string) {
	e.printf("%s  }\n", indent)
	e.printf("%s}\n", indent)
}

// colScalarLoop accumulates the thread's columns with scalar reads, each
// column checked against the edge of the output.
func (e *emitter) colScalarLoop(indent string, m *lower.Columns, c lower.Config) {
	r := m.Reduce
	in := e.colStepLoop(indent, c)
	body := e.colPoints(in, m, c, true)
	e.printf("%s#pragma unroll\n", body)
	e.printf("%sfor (int kg_v = 0; kg_v < %d; ++kg_v) {\n", body, c["VEC"])
	e.printf("%s  const int64_t kg_q = kg_qt + kg_v;\n", body)
	e.printf("%s  if (kg_q < kg_cols) {\n", body)
	e.printf("%s    const int64_t %s = %s;\n", body, name(m.C.Name), e.column(m.C, "kg_q"))
	e.printf("%s    kg_acc[kg_v] = %s;\n", body, e.accumulate(r, "kg_acc[kg_v]"))
	e.printf("%s  }\n", body)
	e.printf("%s}\n", body)
	e.closePoints(in)
	e.printf("%s}\n", indent)
}

// colVectorLoop accumulates the thread's VEC columns, all inside the
// output, reading each of loads as one vector per point: first every
// point's vectors of the step, then the arithmetic.
func (e *emitter) colVectorLoop(indent string, m *lower.Columns, loads []*ir.Load, c lower.Config) {
	r := m.Reduce
	vec, u := c["VEC"], c["UNROLL"]
	in := e.colStepLoop(indent, c)
	var decls []string
	for i, ld := range loads {
		decls = append(decls, fmt.Sprintf("kg_x%d[%d]", i, u))
		if i == len(loads)-1 || loads[i+1].Tensor.DType != ld.Tensor.DType {
			e.printf("%sKgVec<%s, %d> %s;\n", in, e.cType(ld.Tensor.DType), vec, strings.Join(decls, ", "))
			decls = nil
		}
	}
	body := e.colPoints(in, m, c, true)
	e.printf("%sconst int64_t %s = %s;\n", body, name(m.C.Name), e.column(m.C, "kg_qt"))
	for i, ld := range loads {
		t := e.cType(ld.Tensor.DType)
		e.printf("%skg_x%d[kg_u] = *(const KgVec<%s, %d>*)(%s + %s);\n", body, i, t, vec, name(ld.Tensor.Name), e.linear(ld.Index, ld.Tensor.Shape))
	}
	e.closePoints(in)
	e.loads = map[*ir.Load]string{}
	ir.Walk(r.Body, func(x ir.Expr) bool {
		if ld, ok := x.(*ir.Load); ok {
			if i := slices.IndexFunc(loads, func(v *ir.Load) bool { return sameLoad(v, ld) }); i >= 0 {
				e.loads[ld] = fmt.Sprintf("kg_x%d[kg_u].v[kg_v]", i)
			}
		}
		return true
	})
	// The axes and the column are declared only where the body reads them
	// outside its vectors.
	body = e.colPoints(in, m, c, e.readsOutsideLoads(r.Body, r.Axes...))
	e.printf("%s#pragma unroll\n", body)
	e.printf("%sfor (int kg_v = 0; kg_v < %d; ++kg_v) {\n", body, vec)
	if e.readsOutsideLoads(r.Body, m.C) {
		e.printf("%s  const int64_t %s = %s;\n", body, name(m.C.Name), e.column(m.C, "kg_qt + kg_v"))
	}
	e.printf("%s  kg_acc[kg_v] = %s;\n", body, e.accumulate(r, "kg_acc[kg_v]"))
	e.printf("%s}\n", body)
	e.closePoints(in)
	e.printf("%s}\n", indent)
	e.loads = nil
}

// readsOutsideLoads reports whether x refers to any of ix other than
// inside the loads that e.loads stands in for.
func (e *emitter) readsOutsideLoads(x ir.Expr, ix ...*ir.Index) bool {
	found := false
	ir.Walk(x, func(n ir.Expr) bool {
		switch n := n.(type) {
		case *ir.Load:
			if _, ok := e.loads[n]; ok {
				return false
			}
		case *ir.IndexRef:
			found = found || slices.Contains(ix, n.Index)
		}
		return !found
	})
	return found
}

// colVectorLoads lists the column reads of m that can be vector loads,
// each element once: inputs read without a default, at a point where the
// body reads them whatever its conditions, so that loading them up front
// reads nothing the spec does not (r + 1 < R ? X[r + 1, d] : 0 does not).
func colVectorLoads(m *lower.Columns) []*ir.Load {
	var out []*ir.Load
	for _, ld := range evaluatedLoads(m.Reduce.Body) {
		if slices.Contains(m.Loads, ld) && ld.Default == nil && ld.Tensor.Kind == ir.Input && !slices.ContainsFunc(out, func(o *ir.Load) bool { return sameLoad(o, ld) }) {
			out = append(out, ld)
		}
	}
	return out
}

// evaluatedLoads lists the loads of x that every evaluation of x
// performs: none in a branch of ?:, on the right of && or ||, or in the
// default of ??.
func evaluatedLoads(x ir.Expr) []*ir.Load {
	var out []*ir.Load
	walkEvaluated(x, func(x ir.Expr) bool {
		if ld, ok := x.(*ir.Load); ok {
			out = append(out, ld)
		}
		return true
	})
	return out
}

// walkEvaluated calls f on x and on each of its subexpressions that is
// evaluated whenever x is: not the arms of ?:, the right operand of && or
// ||, nor a load's default; where f returns false, not on that node's.
func walkEvaluated(x ir.Expr, f func(ir.Expr) bool) {
	if !f(x) {
		return
	}
	switch x := x.(type) {
	case *ir.Select:
		walkEvaluated(x.Cond, f)
		return
	case *ir.Binary:
		if x.Op == ir.And || x.Op == ir.Or {
			walkEvaluated(x.X, f)
			return
		}
	case *ir.Load:
		for _, ix := range x.Index {
			walkEvaluated(ix, f)
		}
		return
	}
	for _, c := range ir.Children(x) {
		walkEvaluated(c, f)
	}
}

// colVectorOK is the run-time condition of the vector loop: the columns
// come in whole vectors from a multiple of vec, and every vector-read
// tensor has aligned rows and an aligned base pointer.
func (e *emitter) colVectorOK(m *lower.Columns, loads []*ir.Load, vec int64) string {
	conds := []string{fmt.Sprintf("%s %% %d == 0", e.paren(lower.Extent([]*ir.Index{m.C})), vec)}
	if lo, ok := m.C.Lo.(*ir.Const); !ok || lo.I != 0 {
		conds = append(conds, fmt.Sprintf("%s %% %d == 0", e.paren(m.C.Lo), vec))
	}
	return e.alignedRows(conds, nil, loads, vec)
}
