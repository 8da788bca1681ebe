package cuda

import (
	"fmt"
	"strings"

	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
)

// transpose renders a transpose launch: per tile, the staged load's
// TILE x TILE values at (Q, P) go to shared memory with consecutive
// threads along Q (the load's rows), then consecutive threads along P (the
// output's rows) compute the statement, the staged load read from the
// tile's transposed position. The tile rows are padded by one element so
// that both passes hit distinct banks. With 2-byte elements on both sides
// (bf16, f16), where the sizes and pointers allow (kg_pair, checked at run
// time), each thread moves pairs: a 4-byte load of two consecutive
// elements along Q, and two outputs along P computed and stored as one
// 4-byte store.
func (e *emitter) transpose(l *lower.Launch) {
	t := lower.MatchTranspose(l.Stmt)
	tile, rows := l.Config["TILE"], l.Config["ROWS"]
	ty := e.cType(t.Load.Tensor.DType)
	e.printf("  __shared__ %s kg_tile[%d][%d];\n", ty, tile, tile+1)
	e.printf("  const int64_t kg_Q = %s, kg_P = %s;\n", e.expr(lower.Extent([]*ir.Index{t.Q})), e.expr(lower.Extent([]*ir.Index{t.P})))
	e.printf("  const int64_t kg_tq = (kg_Q + %d) / %d, kg_tp = (kg_P + %d) / %d;\n", tile-1, tile, tile-1, tile)
	e.printf("  const int64_t kg_tiles = %s;\n", e.expr(lower.TransposeTiles(l)))
	e.printf("  const int kg_tx = threadIdx.x %% %d, kg_ty = threadIdx.x / %d;\n", tile, tile)
	pairs := lower.TransposePairs(t)
	if pairs {
		x, y := t.Load.Tensor, l.Stmt.Target
		e.printf("  const bool kg_pair = (uintptr_t)%s %% 4 == 0 && (uintptr_t)%s %% 4 == 0 && %s %% 2 == 0 && %s %% 2 == 0;\n",
			name(x.Name), name(y.Name), e.paren(x.Shape[len(x.Shape)-1]), e.paren(y.Shape[len(y.Shape)-1]))
		e.printf("  const int kg_px = threadIdx.x %% %d, kg_py = threadIdx.x / %d;\n", tile/2, tile/2)
	}
	e.printf("  for (int64_t kg_t = blockIdx.x; kg_t < kg_tiles; kg_t += gridDim.x) {\n")
	e.printf("    const int64_t kg_q0 = kg_t %% kg_tq * %d, kg_p0 = kg_t / kg_tq %% kg_tp * %d;\n", tile, tile)
	if len(t.Batch) > 0 {
		e.printf("    int64_t kg_b = kg_t / (kg_tq * kg_tp);\n")
		e.decompose("    ", "kg_b", "kg_brest", t.Batch)
	}
	indent := "    "
	if pairs {
		e.printf("    if (kg_pair) {\n")
		e.transposePairs(l, t)
		e.printf("    } else {\n")
		indent = "      "
	}
	// pass runs body for the tile's points, consecutive threads along
	// inner; in and out name inner's and outer's variables (p or q).
	pass := func(inner, outer *ir.Index, in, out string, body func()) {
		e.printf("%sfor (int kg_r = kg_ty; kg_r < %d; kg_r += %d) {\n", indent, tile, rows)
		e.printf("%s  const int64_t %s = kg_%s0 + kg_tx, %s = kg_%s0 + kg_r;\n", indent, name(inner.Name), in, name(outer.Name), out)
		e.printf("%s  if (%s < kg_%s && %s < kg_%s) {\n", indent, name(inner.Name), strings.ToUpper(in), name(outer.Name), strings.ToUpper(out))
		body()
		e.printf("%s  }\n", indent)
		e.printf("%s}\n", indent)
	}
	pass(t.Q, t.P, "q", "p", func() { e.printf("%s    kg_tile[kg_r][kg_tx] = %s;\n", indent, e.expr(t.Load)) })
	e.printf("%s__syncthreads();\n", indent)
	pass(t.P, t.Q, "p", "q", func() {
		e.loads = map[*ir.Load]string{t.Load: "kg_tile[kg_tx][kg_r]"}
		e.store(indent+"    ", l.Stmt)
		e.loads = nil
	})
	if pairs {
		e.printf("    }\n")
	}
	e.printf("    __syncthreads();  // the tile is free for the next one\n")
	e.printf("  }\n")
}

// transposePairs renders the paired passes of a transpose tile: thread
// (kg_px, kg_py) loads the pair at Q = 2 kg_px of rows kg_py, kg_py + 2
// ROWS, ..., then computes and stores the pair at P = 2 kg_px of the
// same rows of Q. The extents are even (kg_pair), so a pair is all in or
// all out.
func (e *emitter) transposePairs(l *lower.Launch, t *lower.Transpose) {
	tile, rows := l.Config["TILE"], l.Config["ROWS"]
	x, s := t.Load.Tensor, l.Stmt
	q, p := name(t.Q.Name), name(t.P.Name)
	e.printf("      for (int kg_r = kg_py; kg_r < %d; kg_r += %d) {\n", tile, 2*rows)
	e.printf("        const int64_t %s = kg_q0 + 2 * kg_px, %s = kg_p0 + kg_r;\n", q, p)
	e.printf("        if (%s < kg_Q && %s < kg_P) {\n", q, p)
	e.printf("          const KgVec<%s, 2> kg_w = *(const KgVec<%s, 2>*)&%s[%s];\n", e.cType(x.DType), e.cType(x.DType), name(x.Name), e.linear(t.Load.Index, x.Shape))
	e.printf("          kg_tile[kg_r][2 * kg_px] = kg_w.v[0];\n")
	e.printf("          kg_tile[kg_r][2 * kg_px + 1] = kg_w.v[1];\n")
	e.printf("        }\n")
	e.printf("      }\n")
	e.printf("      __syncthreads();\n")
	e.printf("      for (int kg_r = kg_py; kg_r < %d; kg_r += %d) {\n", tile, 2*rows)
	e.printf("        const int64_t kg_pp = kg_p0 + 2 * kg_px, %s = kg_q0 + kg_r;\n", q)
	e.printf("        if (kg_pp < kg_P && %s < kg_Q) {\n", q)
	e.printf("          KgVec<%s, 2> kg_v;\n", e.cType(s.Target.DType))
	for j := 0; j < 2; j++ {
		e.printf("          {\n")
		e.printf("            const int64_t %s = kg_pp + %d;\n", p, j)
		e.loads = map[*ir.Load]string{t.Load: fmt.Sprintf("kg_tile[2 * kg_px + %d][kg_r]", j)}
		e.printf("            kg_v.v[%d] = %s;\n", j, e.expr(s.Value))
		e.loads = nil
		e.printf("          }\n")
	}
	e.printf("          const int64_t %s = kg_pp;\n", p)
	e.printf("          *(KgVec<%s, 2>*)&%s[%s] = kg_v;\n", e.cType(s.Target.DType), name(s.Target.Name), e.linear(lower.Refs(s.Index), s.Target.Shape))
	e.printf("        }\n")
	e.printf("      }\n")
}
