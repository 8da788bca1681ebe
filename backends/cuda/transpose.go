package cuda

import (
	"fmt"

	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
)

// transpose renders a transpose launch: per tile, the staged load's
// TILE x TILE values at (Q, P) go to shared memory with consecutive
// threads along Q (the load's rows), then consecutive threads along P (the
// output's rows) compute the statement, the staged load read from the
// tile's transposed position.
//
// Elements narrower than 4 bytes move in groups of 4 bytes (transposeVec:
// two of 2 bytes, four of 1), one vector load and one vector store a
// thread and group, where the sizes and pointers allow it at run time
// (kg_vec); else one at a time. The tile's rows are padded so that the
// second pass's reads of a column fall in distinct banks. Where groups
// move, rows are TILE + 1 elements: thread x reads rows of group x,
// consecutive threads' reads (TILE + 1) x 4 bytes apart, an odd number of
// words. Where points move one at a time, rows are an odd number of
// words: 65 f32, 66 2-byte and 68 1-byte elements (a row of 65 2-byte
// elements is 32.5 words, and put two of a warp's threads on each bank).
func (e *emitter) transpose(l *lower.Launch) {
	t := lower.MatchTranspose(l.Stmt)
	tile, rows := l.Config["TILE"], l.Config["ROWS"]
	in := t.Load.Tensor
	v := transposeVec(l, t)
	pad := int64(1)
	if v == 1 {
		pad = max(1, 4/int64(in.DType.Size()))
	}
	e.printf("  __shared__ %s kg_tile[%d][%d];\n", e.cType(in.DType), tile, tile+pad)
	e.printf("  const int64_t kg_Q = %s, kg_P = %s;\n", e.expr(lower.Extent([]*ir.Index{t.Q})), e.expr(lower.Extent([]*ir.Index{t.P})))
	e.printf("  const int64_t kg_tq = (kg_Q + %d) / %d, kg_tp = (kg_P + %d) / %d;\n", tile-1, tile, tile-1, tile)
	e.printf("  const int64_t kg_tiles = %s;\n", e.expr(lower.TransposeTiles(l)))
	e.printf("  const int kg_tx = threadIdx.x %% %d, kg_ty = threadIdx.x / %d;\n", tile, tile)
	if v > 1 {
		out := l.Stmt.Target
		e.printf("  const int kg_vx = threadIdx.x %% %d, kg_vy = threadIdx.x / %d;  // the thread's group of %d and row\n", tile/v, tile/v, v)
		e.printf("  const bool kg_vec = kg_Q %% %d == 0 && kg_P %% %d == 0 && %s %% %d == 0 && %s %% %d == 0 && (uintptr_t)%s %% %d == 0 && (uintptr_t)%s %% %d == 0;\n",
			v, v, e.paren(in.Shape[len(in.Shape)-1]), v, e.paren(out.Shape[len(out.Shape)-1]), v,
			name(in.Name), v*int64(in.DType.Size()), name(out.Name), v*int64(out.DType.Size()))
	}
	e.printf("  for (int64_t kg_t = blockIdx.x; kg_t < kg_tiles; kg_t += gridDim.x) {\n")
	e.printf("    const int64_t kg_q0 = kg_t %% kg_tq * %d, kg_p0 = kg_t / kg_tq %% kg_tp * %d;\n", tile, tile)
	if len(t.Batch) > 0 {
		e.printf("    int64_t kg_b = kg_t / (kg_tq * kg_tp);\n")
		e.decompose("    ", "kg_b", "kg_brest", t.Batch)
	}
	// steps opens a loop over n rows of a pass, a constant count unrolled
	// whole, kg_r the row from first, stride apart: nvcc 11.8 stopped
	// with "unsupported operation" unrolling in part a loop from kg_ty, a
	// trip count it could not know, for tiles partly past the edge (a
	// transpose of 104 x 63, found by the differential tester:
	// testsuite/corpus/compile-s230020.kg). The first pass (second false)
	// runs along Q, the second along P: inner's variable is innerAt,
	// outer's outerAt. Points past the edge are skipped, unless tiles
	// divide both extents. It returns the body's indentation and the
	// loop's end.
	whole := divides(tile, lower.Extent([]*ir.Index{t.Q})) && divides(tile, lower.Extent([]*ir.Index{t.P}))
	steps := func(indent string, second bool, first string, n, stride int64, innerAt, outerAt string) (string, func()) {
		inner, outer, ie, oe := t.Q, t.P, "kg_Q", "kg_P"
		if second {
			inner, outer, ie, oe = t.P, t.Q, "kg_P", "kg_Q"
		}
		e.printf("%s#pragma unroll\n", indent)
		e.printf("%sfor (int kg_s = 0; kg_s < %d; ++kg_s) {\n", indent, n)
		e.printf("%s  const int kg_r = %s + kg_s * %d;\n", indent, first, stride)
		e.printf("%s  const int64_t %s = %s, %s = %s;\n", indent, name(inner.Name), innerAt, name(outer.Name), outerAt)
		if whole {
			return indent + "  ", func() { e.printf("%s}\n", indent) }
		}
		e.printf("%s  if (%s < %s && %s < %s) {\n", indent, name(inner.Name), ie, name(outer.Name), oe)
		return indent + "    ", func() { e.printf("%s  }\n%s}\n", indent, indent) }
	}
	// points moves the tile a point a thread and step.
	points := func(indent string) {
		in, end := steps(indent, false, "kg_ty", tile/rows, rows, "kg_q0 + kg_tx", "kg_p0 + kg_r")
		e.printf("%skg_tile[kg_r][kg_tx] = %s;\n", in, e.expr(t.Load))
		end()
		e.printf("%s__syncthreads();\n", indent)
		in, end = steps(indent, true, "kg_ty", tile/rows, rows, "kg_p0 + kg_tx", "kg_q0 + kg_r")
		e.loads = map[*ir.Load]string{t.Load: "kg_tile[kg_tx][kg_r]"}
		e.store(in, l.Stmt)
		e.loads = nil
		end()
	}
	// groups moves the tile a group of v points a thread and step: one
	// vector load of the input's row, the points stored to the tile one
	// by one, then the tile's column read point by point and the
	// output's row stored with one vector store.
	groups := func(indent string) {
		in, end := steps(indent, false, "kg_vy", tile/(rows*v), rows*v, fmt.Sprintf("kg_q0 + kg_vx * %d", v), "kg_p0 + kg_r")
		ct := e.cType(t.Load.Tensor.DType)
		e.printf("%sconst KgVec<%s, %d> kg_x = *(const KgVec<%s, %d>*)(%s + %s);\n", in, ct, v, ct, v, name(t.Load.Tensor.Name), e.linear(t.Load.Index, t.Load.Tensor.Shape))
		e.printf("%s#pragma unroll\n", in)
		e.printf("%sfor (int kg_e = 0; kg_e < %d; ++kg_e) kg_tile[kg_r][kg_vx * %d + kg_e] = kg_x.v[kg_e];\n", in, v, v)
		end()
		e.printf("%s__syncthreads();\n", indent)
		in, end = steps(indent, true, "kg_vy", tile/(rows*v), rows*v, fmt.Sprintf("kg_p0 + kg_vx * %d", v), "kg_q0 + kg_r")
		s := l.Stmt
		ot := e.cType(s.Target.DType)
		p := name(t.P.Name)
		e.printf("%sKgVec<%s, %d> kg_y;\n", in, ot, v)
		e.printf("%s#pragma unroll\n", in)
		e.printf("%sfor (int kg_e = 0; kg_e < %d; ++kg_e) {\n", in, v)
		e.printf("%s  const int64_t %s = kg_p0 + kg_vx * %d + kg_e;\n", in, p, v)
		e.loads = map[*ir.Load]string{t.Load: fmt.Sprintf("kg_tile[kg_vx * %d + kg_e][kg_r]", v)}
		e.printf("%s  kg_y.v[kg_e] = %s;\n", in, e.expr(s.Value))
		e.loads = nil
		e.printf("%s}\n", in)
		e.printf("%s%s = kg_y;\n", in, vecAt(ot, v, name(s.Target.Name), e.linear(lower.Refs(s.Index), s.Target.Shape)))
		end()
	}
	if v > 1 {
		e.printf("    if (kg_vec) {\n")
		groups("      ")
		e.printf("    } else {\n")
		points("      ")
		e.printf("    }\n")
	} else {
		points("    ")
	}
	e.printf("    __syncthreads();  // the tile is free for the next one\n")
	e.printf("  }\n")
}

// transposeVec is the elements a thread of transpose launch l moves at a
// time: 4 bytes of the staged input's, where TILE / (ROWS x that) is a
// whole number of steps (else half as many), and 1 where the extents or
// rows, known, are no multiple of it.
func transposeVec(l *lower.Launch, t *lower.Transpose) int64 {
	tile, rows := l.Config["TILE"], l.Config["ROWS"]
	v := max(1, 4/int64(t.Load.Tensor.DType.Size()))
	for v > 1 && tile%(rows*v) != 0 {
		v /= 2
	}
	in, out := t.Load.Tensor, l.Stmt.Target
	for _, n := range []ir.Expr{lower.Extent([]*ir.Index{t.Q}), lower.Extent([]*ir.Index{t.P}), in.Shape[len(in.Shape)-1], out.Shape[len(out.Shape)-1]} {
		if c, ok := lower.Simplify(n).(*ir.Const); ok && c.I%v != 0 {
			return 1
		}
	}
	return v
}

// divides reports whether n is a constant multiple of d.
func divides(d int64, n ir.Expr) bool {
	c, ok := n.(*ir.Const)
	return ok && c.I%d == 0
}
