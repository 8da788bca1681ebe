package cuda

import (
	"fmt"
	"slices"

	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
)

// colGroup renders a col-group launch (lower.MatchColGroup): a
// grid-stride loop over tiles, each a strip of TX*VEC columns at one outer
// point. Thread tx + TX*ty holds the strip's columns tx*VEC .. tx*VEC +
// VEC-1 at the reduced points ty, ty + TY, ...: with the points cached
// (lower.ColGroupCache), each input read at [o..., k, c] is loaded once
// into kg_c_X[p] (a VEC-wide vector load where kg_vec holds), and every
// let and the output read it there; otherwise each pass reads memory.
// Each let accumulates its thread's points, kg_col_combine combines the
// TY rows of partial results in a fixed order, and every thread takes its
// columns' values into registers (kg_v_L) for the lets and the output
// after it. The output is stored a vector per point where kg_vec holds.
func (e *emitter) colGroup(l *lower.Launch) {
	g := lower.MatchColGroup(l)
	c := l.Config
	tx, ty, vec := c["TX"], c["TY"], c["VEC"]
	width := tx * vec
	o := len(g.Outer)
	// The lets over the final statement's outer and column indices.
	aliases := map[*ir.Index]ir.Expr{}
	for _, s := range g.Lets {
		for d := range o {
			aliases[s.Index[d]] = &ir.IndexRef{Index: g.Outer[d]}
		}
		aliases[s.Index[o]] = &ir.IndexRef{Index: g.C}
	}
	var lets []*ir.Stmt
	for _, s := range g.Lets {
		lets = append(lets, &ir.Stmt{Target: s.Target, Index: s.Index, Value: ir.Substitute(s.Value, aliases)})
	}
	for _, t := range lower.ColGroupAccTypes(l) {
		e.printf("  __shared__ %s kg_part_%s[%d];\n", e.cType(t), t, lower.ColParts(l)*width)
	}
	e.printf("  const int64_t kg_cols = %s;\n", e.expr(lower.Extent([]*ir.Index{g.C})))
	e.printf("  const int64_t kg_n = %s;\n", e.expr(lower.Extent([]*ir.Index{g.K})))
	tiles := "kg_strips"
	if o > 0 {
		tiles = e.paren(lower.Extent(g.Outer)) + " * kg_strips"
	}
	e.printf("  const int64_t kg_strips = (kg_cols + %d) / %d, kg_tiles = %s;\n", width-1, width, tiles)
	e.printf("  const int64_t kg_tx = threadIdx.x %% %d, kg_ty = threadIdx.x / %d;\n", tx, tx)

	// The inputs kept in registers: those read at [o..., k, c].
	p := lower.ColGroupCache(l)
	canonical := func(ld *ir.Load, axis *ir.Index) bool {
		if ld.Default != nil || ld.Tensor.Kind != ir.Input || len(ld.Index) != o+2 {
			return false
		}
		want := append(append(append([]*ir.Index{}, g.Outer...), axis), g.C)
		for d, ix := range ld.Index {
			if ref, ok := ix.(*ir.IndexRef); !ok || ref.Index != want[d] {
				return false
			}
		}
		return true
	}
	cacheLoads := map[*ir.Load]string{}
	var cached []*ir.Tensor
	if p > 0 {
		note := func(s *ir.Stmt, axis *ir.Index) {
			ir.Walk(s.Value, func(x ir.Expr) bool {
				if ld, ok := x.(*ir.Load); ok && canonical(ld, axis) {
					cacheLoads[ld] = "kg_c_" + ld.Tensor.Name + "[kg_p].v[kg_v]"
					if !slices.Contains(cached, ld.Tensor) {
						cached = append(cached, ld.Tensor)
					}
				}
				return true
			})
		}
		for _, s := range lets {
			note(s, ir.TopReductions(s.Value)[0].Axes[0])
		}
		note(g.Final, g.K)
	}
	if vec > 1 {
		conds := []string{fmt.Sprintf("kg_cols %% %d == 0", vec)}
		if lo, ok := g.C.Lo.(*ir.Const); !ok || lo.I != 0 {
			conds = append(conds, fmt.Sprintf("%s %% %d == 0", e.paren(g.C.Lo), vec))
		}
		e.printf("  const bool kg_vec = %s;  // whole aligned vectors of columns\n", e.alignedRows(conds, append(append([]*ir.Tensor{}, cached...), g.Final.Target), nil, vec))
	}
	point := func(axis *ir.Index) []ir.Expr {
		return lower.Refs(append(slices.Clone(g.Outer), axis, g.C))
	}

	e.printf("  for (int64_t kg_t = blockIdx.x; kg_t < kg_tiles; kg_t += gridDim.x) {\n")
	if o > 0 {
		e.printf("    const int64_t kg_o = kg_t / kg_strips;\n")
		e.decompose("    ", "kg_o", "kg_orest", g.Outer)
	}
	e.printf("    const int64_t kg_q0 = kg_t %% kg_strips * %d;  // the strip's first column\n", width)
	e.printf("    const int64_t kg_qt = kg_q0 + kg_tx * %d;  // the thread's first column\n", vec)
	col := func(indent, q string) {
		e.printf("%sconst int64_t %s = %s;\n", indent, name(g.C.Name), e.column(g.C, q))
	}
	// points opens the loop over the thread's reduced points, declaring
	// axis, and returns the indentation inside.
	points := func(indent string, axis *ir.Index) string {
		if p > 0 {
			e.printf("%s#pragma unroll\n", indent)
			e.printf("%sfor (int kg_p = 0; kg_p < %d; ++kg_p) {\n", indent, p)
			e.printf("%s  const int64_t kg_k = kg_ty + (int64_t)kg_p * %d;\n", indent, ty)
			e.printf("%s  if (kg_k < kg_n) {\n", indent)
		} else {
			e.printf("%sfor (int64_t kg_k = kg_ty; kg_k < kg_n; kg_k += %d) {\n", indent, ty)
			e.printf("%s  {\n", indent)
		}
		e.decompose(indent+"    ", "kg_k", "kg_krest", []*ir.Index{axis})
		return indent + "    "
	}
	closePoints := func(indent string) {
		e.printf("%s  }\n", indent)
		e.printf("%s}\n", indent)
	}
	// move moves the thread's VEC columns at a point: whole, with
	// vector (a statement of the column kg_qt) where kg_vec holds, else
	// each column inside the output with elem (of column kg_qt + kg_v).
	move := func(indent, vector, elem string) {
		if vec > 1 {
			e.printf("%sif (kg_vec) {\n", indent)
			col(indent+"  ", "kg_qt")
			e.printf("%s  %s\n", indent, vector)
			e.printf("%s} else {\n", indent)
		} else {
			e.printf("%s{\n", indent)
		}
		e.printf("%s  #pragma unroll\n", indent)
		e.printf("%s  for (int kg_v = 0; kg_v < %d; ++kg_v) {\n", indent, vec)
		e.printf("%s    if (kg_qt + kg_v < kg_cols) {\n", indent)
		col(indent+"      ", "kg_qt + kg_v")
		e.printf("%s      %s\n", indent, elem)
		e.printf("%s    }\n", indent)
		e.printf("%s  }\n", indent)
		e.printf("%s}\n", indent)
	}
	for _, t := range cached {
		ct := e.cType(t.DType)
		e.printf("    KgVec<%s, %d> kg_c_%s[%d];\n", ct, vec, t.Name, p)
	}
	if len(cached) > 0 {
		e.printf("    if (kg_qt < kg_cols) {\n")
		in := points("      ", g.K)
		for _, t := range cached {
			ct, at := e.cType(t.DType), e.linear(point(g.K), t.Shape)
			move(in,
				fmt.Sprintf("kg_c_%s[kg_p] = *(const KgVec<%s, %d>*)(%s + %s);", t.Name, ct, vec, name(t.Name), at),
				fmt.Sprintf("kg_c_%s[kg_p].v[kg_v] = %s[%s];", t.Name, name(t.Name), at))
		}
		closePoints("      ")
		e.printf("    }\n")
	}
	e.loads = cacheLoads
	e.regs, e.reduced = map[*ir.Tensor]string{}, map[*ir.Reduce]string{}
	for i, s := range lets {
		r := ir.TopReductions(s.Value)[0]
		t := e.cType(r.T)
		e.printf("    %s kg_v_%s[%d];\n", e.cType(s.Target.DType), s.Target.Name, vec)
		e.printf("    {  // let %s\n", s.Target.Name)
		e.printf("      %s kg_acc[%d];\n", t, vec)
		e.printf("      #pragma unroll\n")
		e.printf("      for (int kg_v = 0; kg_v < %d; ++kg_v) kg_acc[kg_v] = %s;\n", vec, identity(r.Op, r.T))
		e.printf("      if (kg_qt < kg_cols) {\n")
		in := points("        ", r.Axes[0])
		e.printf("%s#pragma unroll\n", in)
		e.printf("%sfor (int kg_v = 0; kg_v < %d; ++kg_v) {\n", in, vec)
		e.printf("%s  if (kg_qt + kg_v < kg_cols) {\n", in)
		col(in+"    ", "kg_qt + kg_v")
		e.printf("%s    kg_acc[kg_v] = %s;\n", in, e.accumulate(r, "kg_acc[kg_v]"))
		e.printf("%s  }\n", in)
		e.printf("%s}\n", in)
		closePoints("        ")
		e.printf("      }\n")
		e.printf("      kg_col_combine<%s, %d, %d, %d>(kg_acc, kg_part_%s, [](%s a, %s b) { return %s; });\n", t, tx, ty, vec, r.T, t, t, combine(r.Op, t, "a", "b"))
		e.printf("      __syncthreads();  // every column's result is in kg_part_%s\n", r.T)
		e.printf("      #pragma unroll\n")
		e.printf("      for (int kg_v = 0; kg_v < %d; ++kg_v) {\n", vec)
		e.printf("        if (kg_qt + kg_v < kg_cols) {\n")
		col("          ", "kg_qt + kg_v")
		e.reduced[r] = fmt.Sprintf("kg_part_%s[kg_tx * %d + kg_v]", r.T, vec)
		e.printf("          kg_v_%s[kg_v] = %s;\n", s.Target.Name, e.expr(s.Value))
		e.printf("        }\n")
		e.printf("      }\n")
		e.printf("    }\n")
		e.regs[g.Lets[i].Target] = fmt.Sprintf("kg_v_%s[kg_v]", s.Target.Name)
	}
	// The strip's outputs.
	out := e.cType(g.Final.Target.DType)
	e.printf("    if (kg_qt < kg_cols) {\n")
	in := points("      ", g.K)
	e.printf("%sKgVec<%s, %d> kg_vy;\n", in, out, vec)
	e.printf("%s#pragma unroll\n", in)
	e.printf("%sfor (int kg_v = 0; kg_v < %d; ++kg_v) {\n", in, vec)
	e.printf("%s  if (kg_qt + kg_v < kg_cols) {\n", in)
	col(in+"    ", "kg_qt + kg_v")
	e.printf("%s    kg_vy.v[kg_v] = %s;\n", in, e.expr(g.Final.Value))
	e.printf("%s  }\n", in)
	e.printf("%s}\n", in)
	y, at := name(g.Final.Target.Name), e.linear(point(g.K), g.Final.Target.Shape)
	move(in,
		vecAt(out, vec, y, at)+" = kg_vy;",
		fmt.Sprintf("%s[%s] = kg_vy.v[kg_v];", y, at))
	closePoints("      ")
	e.printf("    }\n")
	e.printf("  }\n")
	e.loads, e.regs, e.reduced = nil, nil, nil
}
