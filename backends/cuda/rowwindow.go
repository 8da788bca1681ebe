package cuda

import (
	"fmt"

	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
)

// rowWindow is a generic launch's window load (lower.MatchWindow),
// computed VEC points a thread: the vector loop loads the columns that
// the group's taps read, row by row, as aligned VEC-element vectors into
// registers, from which the taps read (at stride SW along the output's
// last index, the group's columns start at its first point's times SW). Read
// point by point, each tap is a scalar load, and the same tap of
// neighbouring threads' points VEC elements apart: a warp's load of it
// touches twice the sectors it uses at VEC 2, and dw_mobilenet's
// point-by-point launch was bound by its L1 (92% of its throughput, 49%
// of its sectors excess, in
// testsuite/results/2026-11-28-h200-s31-third/ncu/).
type rowWindow struct {
	w *lower.Window
	// base is the first column a group loads, relative to its first
	// point (a multiple of VEC at or below the least column a tap
	// reads), and vecs the vectors a row.
	base, vecs int64
	// rows is the output rows a group spans (ROWS): their input rows,
	// lower.WindowRows of them, are loaded once for all.
	rows int64
}

// vectorWindow is the row window of a generic launch's statements at
// VEC vec, or nil.
func vectorWindow(l *lower.Launch, stmts []*ir.Stmt, vec int64) *rowWindow {
	if l.Template.Name() != "generic" || len(stmts) != 1 {
		return nil
	}
	w := lower.MatchWindow(stmts[0])
	if w == nil {
		return nil
	}
	rows := max(l.Config["ROWS"], 1)
	base, vecs, ok := lower.RowVectors(w, vec, rows)
	if !ok {
		return nil
	}
	return &rowWindow{w: w, base: base, vecs: vecs, rows: rows}
}

// loadWindowRows emits the group's rows into kg_wr and makes the window load
// read them; kg_first is the group's first point's last index, and the
// output's row index the group's first row. Where the group spans several
// output rows, the window load reads kg_h's (the row's among them).
func (e *emitter) loadWindowRows(indent string, rw *rowWindow, vec int64) {
	w := rw.w
	in := w.Load.Tensor
	n := len(in.Shape)
	t := e.cType(in.DType)
	rows := lower.WindowRows(w, rw.rows)
	row, col, at, dflt := e.windowAt(w, "kg_row", "kg_col")
	e.printf("%s// the window's rows, columns %d to %d of the group's, as vectors\n", indent, rw.base, rw.base+rw.vecs*vec-1)
	e.printf("%s%s kg_wr[%d][%d];\n", indent, t, rows, rw.vecs*vec)
	e.printf("%s#pragma unroll\n", indent)
	e.printf("%sfor (int kg_r = 0; kg_r < %d; ++kg_r) {\n", indent, rows)
	r, c := name(row.Name), name(col.Name)
	e.printf("%s  const int64_t %s = %s * %d + (%d + kg_r);\n", indent, r, name(w.OH.Name), w.SH, w.H0)
	e.printf("%s  #pragma unroll\n", indent)
	e.printf("%s  for (int kg_k = 0; kg_k < %d; ++kg_k) {\n", indent, rw.vecs)
	e.printf("%s    const int64_t %s = kg_first%s + (%d + kg_k * %d);\n", indent, c, times(w.SW), rw.base, vec)
	e.printf("%s    KgVec<%s, %d> kg_t;\n", indent, t, vec)
	e.printf("%s    if (0 <= %s && %s < %s && 0 <= %s && %s < %s) {\n", indent, r, r, e.paren(in.Shape[n-2]), c, c, e.paren(in.Shape[n-1]))
	e.printf("%s      kg_t = *(const KgVec<%s, %d>*)(%s + %s);\n", indent, t, vec, name(in.Name), e.linear32(at, in.Shape))
	e.printf("%s    } else {\n", indent)
	e.printf("%s      #pragma unroll\n", indent)
	e.printf("%s      for (int kg_v = 0; kg_v < %d; ++kg_v) kg_t.v[kg_v] = %s;\n", indent, vec, dflt)
	e.printf("%s    }\n", indent)
	e.printf("%s    #pragma unroll\n", indent)
	e.printf("%s    for (int kg_v = 0; kg_v < %d; ++kg_v) kg_wr[kg_r][kg_k * %d + kg_v] = kg_t.v[kg_v];\n", indent, vec, vec)
	e.printf("%s  }\n", indent)
	e.printf("%s}\n", indent)
	// A tap's row among the group's rows and column among its columns:
	// the load's subscripts at oh = 0 and ow = the group's first point.
	at0 := func(x ir.Expr, o *ir.Index, less int64) string {
		return e.paren(lower.Simplify(&ir.Binary{Op: ir.Sub, X: ir.Substitute(x, map[*ir.Index]ir.Expr{o: ir.IntConst(0)}), Y: ir.IntConst(less)}))
	}
	// The point's place in the group is kg_v, the loop's counter (its
	// last index is kg_first + kg_v), written so: as ow - kg_first,
	// hipcc (clang) kept dw_mobilenet's rows in scratch memory, 160 bytes
	// a lane on gfx90a (nvcc saw through both).
	tap := fmt.Sprintf("kg_v + %s", at0(w.Load.Index[n-1], w.OW, rw.base))
	if w.SW != 1 {
		tap = fmt.Sprintf("kg_v * %d + %s", w.SW, at0(w.Load.Index[n-1], w.OW, rw.base))
	}
	r0 := at0(w.Load.Index[n-2], w.OH, w.H0)
	if rw.rows > 1 {
		r0 = fmt.Sprintf("(kg_h%s + %s)", times(w.SH), r0)
	}
	v := fmt.Sprintf("kg_wr[(int)%s][(int)(%s)]", r0, tap)
	e.aliasLoads(w.Stmt.Value, w.Load, v)
}

// times is " * k" where k is not 1.
func times(k int64) string {
	if k == 1 {
		return ""
	}
	return fmt.Sprintf(" * %d", k)
}
