package cuda

import (
	"fmt"

	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
)

// window renders a window launch: per TH x TW tile of (OH, OW), the block
// copies the input rows and columns the tile's windows read into shared
// memory, consecutive threads along the input's rows, the load's default
// (0 where it has none: no point reads it) outside the input; then
// consecutive threads along OW compute the tile's points, the staged load
// read from the tile at its subscripts less the tile's first row and
// column. Tiles run ow fastest, then oh, then the batch, so that
// neighbouring blocks share the rows of their edges in the L2.
func (e *emitter) window(l *lower.Launch) {
	w := lower.MatchWindow(l.Stmt)
	th, tw := l.Config["TH"], l.Config["TW"]
	rows, cols := lower.WindowStaged(w, th, tw)
	in := w.Load.Tensor
	n := len(in.Shape)
	e.printf("  __shared__ %s kg_win[%d][%d];\n", e.cType(in.DType), rows, cols)
	e.printf("  const int64_t kg_OH = %s, kg_OW = %s;\n", e.expr(lower.Extent([]*ir.Index{w.OH})), e.expr(lower.Extent([]*ir.Index{w.OW})))
	e.printf("  const int64_t kg_th = (kg_OH + %d) / %d, kg_tw = (kg_OW + %d) / %d;\n", th-1, th, tw-1, tw)
	e.printf("  const int64_t kg_tiles = %s;\n", e.expr(lower.WindowTiles(l)))
	e.printf("  for (int64_t kg_t = blockIdx.x; kg_t < kg_tiles; kg_t += gridDim.x) {\n")
	e.printf("    const int64_t kg_ow0 = kg_t %% kg_tw * %d, kg_oh0 = kg_t / kg_tw %% kg_th * %d;\n", tw, th)
	if len(w.Batch) > 0 {
		e.printf("    int64_t kg_b = kg_t / (kg_tw * kg_th);\n")
		e.decompose("    ", "kg_b", "kg_brest", w.Batch)
	}
	e.printf("    const int64_t kg_ih0 = kg_oh0 * %d + %d, kg_iw0 = kg_ow0 * %d + %d;  // the tile's first input row and column\n", w.SH, w.H0, w.SW, w.W0)

	// The staging pass: the input at (batch, kg_ih0 + r, kg_iw0 + c).
	ih, iw := &ir.Index{Name: "kg_ih", Lo: ir.IntConst(0), Hi: in.Shape[n-2]}, &ir.Index{Name: "kg_iw", Lo: ir.IntConst(0), Hi: in.Shape[n-1]}
	at := append(append([]ir.Expr{}, w.Load.Index[:n-2]...), &ir.IndexRef{Index: ih}, &ir.IndexRef{Index: iw})
	dflt := e.expr(&ir.Const{T: in.DType})
	if w.Load.Default != nil {
		dflt = e.expr(w.Load.Default)
	}
	e.printf("    for (int kg_i = threadIdx.x; kg_i < %d; kg_i += blockDim.x) {\n", rows*cols)
	e.printf("      const int kg_r = kg_i / %d, kg_c = kg_i %% %d;\n", cols, cols)
	e.printf("      const int64_t %s = kg_ih0 + kg_r, %s = kg_iw0 + kg_c;\n", name(ih.Name), name(iw.Name))
	e.printf("      kg_win[kg_r][kg_c] = 0 <= %s && %s < %s && 0 <= %s && %s < %s ? %s[%s] : %s;\n",
		name(ih.Name), name(ih.Name), e.paren(in.Shape[n-2]), name(iw.Name), name(iw.Name), e.paren(in.Shape[n-1]),
		name(in.Name), e.linear32(at, in.Shape), dflt)
	e.printf("    }\n")
	e.printf("    __syncthreads();\n")

	// The compute pass: the tile's points, the staged load from kg_win.
	e.printf("    for (int kg_i = threadIdx.x; kg_i < %d; kg_i += blockDim.x) {\n", th*tw)
	e.printf("      const int64_t %s = kg_oh0 + kg_i / %d, %s = kg_ow0 + kg_i %% %d;\n", name(w.OH.Name), tw, name(w.OW.Name), tw)
	e.printf("      if (%s < kg_OH && %s < kg_OW) {\n", name(w.OH.Name), name(w.OW.Name))
	e.loads = map[*ir.Load]string{w.Load: fmt.Sprintf("kg_win[(int)(%s - kg_ih0)][(int)(%s - kg_iw0)]", e.paren(w.Load.Index[n-2]), e.paren(w.Load.Index[n-1]))}
	e.store("        ", l.Stmt)
	e.loads = nil
	e.printf("      }\n")
	e.printf("    }\n")
	e.printf("    __syncthreads();  // the tile is free for the next one\n")
	e.printf("  }\n")
}
