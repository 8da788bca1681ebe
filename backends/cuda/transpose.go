package cuda

import (
	"strings"

	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
)

// transpose renders a transpose launch: per tile, the staged load's
// TILE x TILE values at (Q, P) go to shared memory with consecutive
// threads along Q (the load's rows), then consecutive threads along P (the
// output's rows) compute the statement, the staged load read from the
// tile's transposed position. The tile rows are padded to an odd number
// of 4-byte words (one element of 4 bytes, two of 2, four of 1), so that
// the second pass's column, one element a row, falls in distinct banks:
// a row of 65 2-byte elements is 32.5 words, and put two of a warp's
// threads on each bank.
func (e *emitter) transpose(l *lower.Launch) {
	t := lower.MatchTranspose(l.Stmt)
	tile, rows := l.Config["TILE"], l.Config["ROWS"]
	ty := e.cType(t.Load.Tensor.DType)
	pad := max(1, 4/int64(t.Load.Tensor.DType.Size()))
	e.printf("  __shared__ %s kg_tile[%d][%d];\n", ty, tile, tile+pad)
	e.printf("  const int64_t kg_Q = %s, kg_P = %s;\n", e.expr(lower.Extent([]*ir.Index{t.Q})), e.expr(lower.Extent([]*ir.Index{t.P})))
	e.printf("  const int64_t kg_tq = (kg_Q + %d) / %d, kg_tp = (kg_P + %d) / %d;\n", tile-1, tile, tile-1, tile)
	e.printf("  const int64_t kg_tiles = %s;\n", e.expr(lower.TransposeTiles(l)))
	e.printf("  const int kg_tx = threadIdx.x %% %d, kg_ty = threadIdx.x / %d;\n", tile, tile)
	e.printf("  for (int64_t kg_t = blockIdx.x; kg_t < kg_tiles; kg_t += gridDim.x) {\n")
	e.printf("    const int64_t kg_q0 = kg_t %% kg_tq * %d, kg_p0 = kg_t / kg_tq %% kg_tp * %d;\n", tile, tile)
	if len(t.Batch) > 0 {
		e.printf("    int64_t kg_b = kg_t / (kg_tq * kg_tp);\n")
		e.decompose("    ", "kg_b", "kg_brest", t.Batch)
	}
	// pass runs body for the tile's points, consecutive threads along
	// inner; in and out name inner's and outer's variables (p or q). Its
	// loop counts TILE / ROWS steps, a constant, and is unrolled whole:
	// nvcc 11.8 stopped with "unsupported operation" unrolling in part a
	// loop from kg_ty, a trip count it could not know, for tiles partly
	// past the edge (a transpose of 104 x 63, found by the differential
	// tester: testsuite/corpus/compile-s230020.kg). Where tiles divide
	// both extents, no point is past the edge and none is checked.
	steps := tile / rows
	whole := divides(tile, lower.Extent([]*ir.Index{t.Q})) && divides(tile, lower.Extent([]*ir.Index{t.P}))
	pass := func(inner, outer *ir.Index, in, out string, body func()) {
		e.printf("    #pragma unroll\n")
		e.printf("    for (int kg_s = 0; kg_s < %d; ++kg_s) {\n", steps)
		e.printf("      const int kg_r = kg_ty + kg_s * %d;\n", rows)
		e.printf("      const int64_t %s = kg_%s0 + kg_tx, %s = kg_%s0 + kg_r;\n", name(inner.Name), in, name(outer.Name), out)
		if whole {
			body()
		} else {
			e.printf("      if (%s < kg_%s && %s < kg_%s) {\n", name(inner.Name), strings.ToUpper(in), name(outer.Name), strings.ToUpper(out))
			body()
			e.printf("      }\n")
		}
		e.printf("    }\n")
	}
	pass(t.Q, t.P, "q", "p", func() { e.printf("        kg_tile[kg_r][kg_tx] = %s;\n", e.expr(t.Load)) })
	e.printf("    __syncthreads();\n")
	pass(t.P, t.Q, "p", "q", func() {
		e.loads = map[*ir.Load]string{t.Load: "kg_tile[kg_tx][kg_r]"}
		e.store("        ", l.Stmt)
		e.loads = nil
	})
	e.printf("    __syncthreads();  // the tile is free for the next one\n")
	e.printf("  }\n")
}

// divides reports whether n is a constant multiple of d.
func divides(d int64, n ir.Expr) bool {
	c, ok := n.(*ir.Const)
	return ok && c.I%d == 0
}
