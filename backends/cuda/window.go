package cuda

import (
	"fmt"

	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
)

// window renders a window launch: per TH x TW tile of (OH, OW), the block
// copies the input rows and columns the tile's windows read into shared
// memory, consecutive threads along the input's rows, several loads a
// thread in flight, the load's default outside the input (0 where it has
// none: no point reads there); then consecutive threads along OW compute
// the tile's points, the staged load read from the tile at its subscripts
// less the tile's first row and column. Tiles run ow fastest, then oh,
// then the batch, so that neighbouring blocks share the rows of their
// edges in the L2.
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
	ih, iw, at, dflt := e.windowAt(w, "kg_ih", "kg_iw")
	// Whole steps of the block's threads, unrolled, in chunks of at most
	// windowChunk: a thread's loads of a chunk are issued together, into
	// registers, then stored, so that they are in flight together
	// (stored as loaded, each waited for its load).
	threads := l.Config["THREADS"]
	steps := (rows*cols + threads - 1) / threads
	chunk := min(steps, windowChunk)
	ct := e.cType(in.DType)
	e.printf("    #pragma unroll 1\n")
	e.printf("    for (int kg_s0 = 0; kg_s0 < %d; kg_s0 += %d) {\n", steps, chunk)
	e.printf("      %s kg_x[%d];\n", ct, chunk)
	e.printf("      #pragma unroll\n")
	e.printf("      for (int kg_s = 0; kg_s < %d; ++kg_s) {\n", chunk)
	e.printf("        const int kg_i = threadIdx.x + (kg_s0 + kg_s) * %d;\n", threads)
	e.printf("        const int64_t %s = kg_ih0 + kg_i / %d, %s = kg_iw0 + kg_i %% %d;\n", name(ih.Name), cols, name(iw.Name), cols)
	e.printf("        kg_x[kg_s] = kg_i < %d && 0 <= %s && %s < %s && 0 <= %s && %s < %s ? %s[%s] : %s;\n",
		rows*cols, name(ih.Name), name(ih.Name), e.paren(in.Shape[n-2]), name(iw.Name), name(iw.Name), e.paren(in.Shape[n-1]),
		name(in.Name), e.linear32(at, in.Shape), dflt)
	e.printf("      }\n")
	e.printf("      #pragma unroll\n")
	e.printf("      for (int kg_s = 0; kg_s < %d; ++kg_s) {\n", chunk)
	e.printf("        const int kg_i = threadIdx.x + (kg_s0 + kg_s) * %d;\n", threads)
	e.printf("        if (kg_i < %d) kg_win[kg_i / %d][kg_i %% %d] = kg_x[kg_s];\n", rows*cols, cols, cols)
	e.printf("      }\n")
	e.printf("    }\n")

	// The taps' own loads (a filter's weights: loads under the window's
	// reduction that depend on the batch and the taps alone), in
	// registers for the tile: the points' taps then index them with
	// constants once nvcc unrolls the window's loops.
	loads := map[*ir.Load]string{}
	for i, tl := range windowTapLoads(w) {
		v := fmt.Sprintf("kg_tap%d", i)
		e.printf("    %s %s[%d];\n", e.cType(tl.Tensor.DType), v, w.Taps)
		e.printf("    #pragma unroll\n")
		e.printf("    for (int kg_k = 0; kg_k < %d; ++kg_k) {\n", w.Taps)
		e.decompose("      ", "kg_k", "kg_krest", w.Reduce.Axes)
		e.printf("      %s[kg_k] = %s;\n", v, e.expr(tl))
		e.printf("    }\n")
		loads[tl] = fmt.Sprintf("%s[%s]", v, tapOffset(w.Reduce.Axes))
	}
	e.printf("    __syncthreads();\n")

	// The compute pass: the tile's points, the staged load from kg_win.
	// Every step computes a point, those past the tile or the output at
	// its last row and column (in the tile, in the output), and stores
	// only its own, so that no load reads past a tensor.
	e.printf("    #pragma unroll\n")
	e.printf("    for (int kg_s = 0; kg_s < %d; ++kg_s) {\n", (th*tw+threads-1)/threads)
	e.printf("      const int kg_i = threadIdx.x + kg_s * %d, kg_j = kg_i < %d ? kg_i : %d;\n", threads, th*tw, th*tw-1)
	e.printf("      const int64_t kg_oh = kg_oh0 + kg_j / %d, kg_ow = kg_ow0 + kg_j %% %d;\n", tw, tw)
	e.printf("      const int64_t %s = kg_oh < kg_OH ? kg_oh : kg_OH - 1, %s = kg_ow < kg_OW ? kg_ow : kg_OW - 1;\n", name(w.OH.Name), name(w.OW.Name))
	loads[w.Load] = fmt.Sprintf("kg_win[(int)(%s - kg_ih0)][(int)(%s - kg_iw0)]", e.paren(w.Load.Index[n-2]), e.paren(w.Load.Index[n-1]))
	e.loads = loads
	st := l.Stmt
	e.printf("      const auto kg_v = %s;\n", e.expr(st.Value))
	e.loads = nil
	e.printf("      if (kg_i < %d && kg_oh < kg_OH && kg_ow < kg_OW) %s[%s] = kg_v;\n", th*tw, name(st.Target.Name), e.linear(lower.Refs(st.Index), st.Target.Shape))
	e.printf("    }\n")
	e.printf("    __syncthreads();  // the tile is free for the next one\n")
	e.printf("  }\n")
}

// windowAt is lower.WindowAt with, as C, the load's default (0 where it
// has none: the input's edge is then never read).
func (e *emitter) windowAt(w *lower.Window, row, col string) (r, c *ir.Index, at []ir.Expr, dflt string) {
	r, c, at = lower.WindowAt(w, row, col)
	dflt = e.expr(&ir.Const{T: w.Load.Tensor.DType})
	if w.Load.Default != nil {
		dflt = e.expr(w.Load.Default)
	}
	return r, c, at, dflt
}

// windowChunk is the most staged elements a thread loads at once.
const windowChunk = 8

// maxTapRegisters bounds the registers a thread gives the taps' loads.
const maxTapRegisters = 32

// windowTapLoads are the loads under w's reduction, other than the staged
// one, whose subscripts read the batch indices and the taps alone, while
// their taps fit in maxTapRegisters registers.
func windowTapLoads(w *lower.Window) []*ir.Load {
	ok := map[*ir.Index]bool{}
	for _, ix := range w.Batch {
		ok[ix] = true
	}
	for _, ix := range w.Reduce.Axes {
		ok[ix] = true
	}
	var out []*ir.Load
	seen := map[*ir.Load]bool{}
	ir.Walk(w.Reduce.Body, func(x ir.Expr) bool {
		l, isLoad := x.(*ir.Load)
		if !isLoad || l == w.Load || seen[l] {
			return true
		}
		seen[l] = true
		if ir.Any(l, func(y ir.Expr) bool {
			switch y := y.(type) {
			case *ir.IndexRef:
				return !ok[y.Index]
			case *ir.Load:
				return y != l // an indirect subscript
			case *ir.Reduce:
				return true
			}
			return false
		}) {
			return true
		}
		if int64(len(out)+1)*w.Taps <= maxTapRegisters {
			out = append(out, l)
		}
		return true
	})
	return out
}

// tapOffset is the flat offset of the current tap among taps, the last
// fastest, as C.
func tapOffset(taps []*ir.Index) string {
	s := ""
	for _, t := range taps {
		ext := lower.Simplify(&ir.Binary{Op: ir.Sub, X: t.Hi, Y: t.Lo}).(*ir.Const).I
		at := name(t.Name)
		if lo := lower.Simplify(t.Lo).(*ir.Const).I; lo != 0 {
			at = fmt.Sprintf("(%s - %d)", at, lo)
		}
		if s == "" {
			s = at
		} else {
			s = fmt.Sprintf("(%s) * %d + %s", s, ext, at)
		}
	}
	return fmt.Sprintf("(int)(%s)", s)
}
