package lower

import (
	"fmt"

	"kgen.dev/kgen/ir"
)

// Window is a statement whose points each reduce over a two-dimensional
// window of one input that slides along the output's last two indices: a
// depthwise convolution, a stride-1 pooling. The input's subscripts are
// the output's other indices, in order, then a row OH*SH + f(taps) and a
// column OW*SW + g(taps), the taps being the indices of the reduction
// around the load, of constant extents. Read point by point, each input
// element is loaded once for every window that covers it (9 times for a
// 3 x 3 window at stride 1), from the L1 at best; staged through a
// shared-memory tile, it comes from memory once a tile.
type Window struct {
	Stmt   *ir.Stmt
	Load   *ir.Load    // the staged load
	Reduce *ir.Reduce  // the reduction over the taps that reads it
	OH, OW *ir.Index   // the output's last two indices
	Batch  []*ir.Index // the output's other indices, in order
	SH, SW int64       // the window's strides along the rows and columns
	// H0 and W0 are the least row and column a tap of the point (0, 0)
	// reads (minus the padding); SpanH and SpanW the rows and columns the
	// taps of one point span; Taps the window's points.
	H0, W0       int64
	SpanH, SpanW int64
	Taps         int64
}

// MinWindowReuse is the least number of windows that cover an input
// element (taps over the strides' product, Reuse) for which the window
// template stages the input: below it, the loads of a point-by-point
// launch share little (a 3 x 3 window at stride 2 covers an element 2.25
// times, and maxpool_3x3_s2_p1 reached 96% of a same-size copy's speed
// point by point, testsuite/results/2026-11-28-h200-s27-memory-compile/).
const MinWindowReuse = 4

// Reuse is the number of windows that cover an input element, on average.
func (w *Window) Reuse() float64 { return float64(w.Taps) / float64(w.SH*w.SW) }

// maxWindowTaps bounds the taps whose offsets MatchWindow enumerates.
const maxWindowTaps = 1024

// MatchWindow recognizes s as a window statement, or returns nil.
func MatchWindow(s *ir.Stmt) *Window {
	n := len(s.Index)
	if n < 2 || len(ir.TopReductions(s.Value)) == 0 {
		return nil
	}
	for _, ix := range s.Index {
		if !zeroLo(ix) {
			return nil
		}
	}
	oh, ow := s.Index[n-2], s.Index[n-1]
	var w *Window
	for _, r := range ir.TopReductions(s.Value) {
		taps, ok := constExtent(r.Axes)
		if !ok || taps < 2 || taps > maxWindowTaps {
			continue
		}
		ir.Walk(r.Body, func(e ir.Expr) bool {
			l, ok := e.(*ir.Load)
			if !ok || w != nil {
				return w == nil
			}
			if l.Tensor.Kind != ir.Input || len(l.Index) != n {
				return true
			}
			for d := 0; d < n-2; d++ {
				ref, ok := l.Index[d].(*ir.IndexRef)
				if !ok || ref.Index != s.Index[d] {
					return true
				}
			}
			sh, h0, spanH, okH := slide(l.Index[n-2], oh, r.Axes)
			sw, w0, spanW, okW := slide(l.Index[n-1], ow, r.Axes)
			if !okH || !okW {
				return true
			}
			w = &Window{Stmt: s, Load: l, Reduce: r, OH: oh, OW: ow, Batch: s.Index[:n-2], SH: sh, SW: sw, H0: h0, W0: w0, SpanH: spanH, SpanW: spanW, Taps: taps}
			return false
		})
		if w != nil {
			return w
		}
	}
	return nil
}

// slide analyzes the subscript e of a window's load along output index o
// and taps: e must be stride*o + f(taps), with stride a positive constant
// and f depending on the taps alone. It returns the stride, the least f
// and the span of f (its largest less its least, plus one), found by
// evaluating e at every tap and at o = 0, 1 and 2.
func slide(e ir.Expr, o *ir.Index, taps []*ir.Index) (stride, lo, span int64, ok bool) {
	at := make([]int64, len(taps))
	for d, t := range taps {
		at[d] = constLo(t)
	}
	first := true
	var hi int64
	for {
		var v [3]int64
		for k := range v {
			subst := map[*ir.Index]ir.Expr{o: ir.IntConst(int64(k))}
			for d, t := range taps {
				subst[t] = ir.IntConst(at[d])
			}
			c, isConst := Simplify(ir.Substitute(e, subst)).(*ir.Const)
			if !isConst {
				return 0, 0, 0, false
			}
			v[k] = c.I
		}
		st := v[1] - v[0]
		if st <= 0 || v[2]-v[1] != st || (!first && st != stride) {
			return 0, 0, 0, false
		}
		if first {
			stride, lo, hi, first = st, v[0], v[0], false
		}
		lo, hi = min(lo, v[0]), max(hi, v[0])
		// The next tap, the last index fastest.
		d := len(taps) - 1
		for ; d >= 0; d-- {
			at[d]++
			if at[d] < constHi(taps[d]) {
				break
			}
			at[d] = constLo(taps[d])
		}
		if d < 0 {
			return stride, lo, hi - lo + 1, true
		}
	}
}

// constLo and constHi are an index's bounds, known constant (constExtent
// checked the extent; the bounds of a specialized window are constants).
func constLo(ix *ir.Index) int64 {
	c, _ := Simplify(ix.Lo).(*ir.Const)
	if c == nil {
		return 0
	}
	return c.I
}

func constHi(ix *ir.Index) int64 {
	c, _ := Simplify(ix.Hi).(*ir.Const)
	if c == nil {
		return constLo(ix)
	}
	return c.I
}

// RowVectors is how a thread of a point-by-point launch that takes vec
// consecutive points of each of rows output rows of w reads their taps as
// vectors along the input's rows (the generic template's, on every
// backend): base is the first column it loads, relative to its first
// point's column times the stride (a multiple of vec, at or below the
// least column a tap reads), and vecs the vectors a row; false where its
// input rows, (rows-1)*SH + SpanH of them (WindowRows), take more than
// maxRowVectorRegs registers. At stride SW, the vec points' taps span
// (vec-1)*SW + SpanW columns.
func RowVectors(w *Window, vec, rows int64) (base, vecs int64, ok bool) {
	if vec < 2 {
		return 0, 0, false
	}
	base = w.W0 / vec * vec
	if base > w.W0 {
		base -= vec
	}
	vecs = ((vec-1)*w.SW + w.W0 + w.SpanW - base + vec - 1) / vec
	return base, vecs, WindowRows(w, rows)*vecs*vec <= maxRowVectorRegs
}

// WindowRows is the input rows that rows consecutive output rows of w
// read.
func WindowRows(w *Window, rows int64) int64 { return (rows-1)*w.SH + w.SpanH }

// maxRowVectorRegs bounds the registers a thread gives a window's rows:
// 96 takes dw_s2_5x5's 11 rows of 8 columns at VEC 2 and ROWS 4
// (64 registers a thread in all, no spills, under nvcc 13.0), and its 5
// rows of 16 at VEC 4 (57), which 64 refused.
const maxRowVectorRegs = 96

// rowVectorShape is the default VEC and ROWS of a point-by-point launch
// whose window RowVectors reads as vectors. VEC is 4 where the output's
// rows and the input's are whole vectors of 4 (RowVectorsFit), else 2
// where they are of 2. ROWS is above 1 where the window covers an input
// element at least MinWindowReuse times (its taps' loads, not memory,
// bound it) and a shape of ROWS 2 or 4 and VEC 2 or 4 that fits loads
// fewer input elements a point than VEC alone: the fewest, then the
// fewest registers.
//
// VEC: on the H200 (testsuite/results/2026-11-28-h200-s31-sixth/sweep/),
// dw_mobilenet (3 x 3 taps over 16 x 64 x 112 x 112 f32) took 41.44 us on
// cuda:sm_90 with VEC 2 and UNROLL 4 (the default before) and 37.98 with
// VEC 4 and UNROLL 1 (39.90 with UNROLL 2, 40.90 with 4; 129 with VEC 8,
// its rows too many registers). ROWS, on the H100
// (testsuite/results/2026-12-07-h100-s41-rows/call2/, each against VEC 4
// alone, the default before): dw_s2_5x5 (5 x 5 taps at stride 2, 6.25
// windows an element) 11.37 -> 8.86 us at ROWS 4 and VEC 2 (11 elements
// a point where VEC 4 loads 20; 9.83 at ROWS 2 and VEC 4, 14; 9.54 at
// ROWS 4 and VEC 4, 11 in 176 registers), and on triton:sm_90 11.39 ->
// 8.91; KernelBench's 3 x 3 depthwise convolution over 16 x 64 x 256 x
// 256 194.40 -> 183.30 at ROWS 4 and VEC 2 (4.5 a point where VEC 4
// loads 9; 182.50 at ROWS 2, VEC 4), dw_mobilenet 41.50 -> 40.86; and
// at stride 2 with 3 x 3 taps (2.25 windows an element, near the copy's
// speed already) slower: maxpool_3x3_s2_p1 44.83 -> 44.99 at ROWS 2 and
// VEC 2, 46.85 at ROWS 4, dw_relu6_s2 35.26 -> 38.70 at ROWS 4.
func rowVectorShape(l *Launch) (vec, rows int64, ok bool) {
	for _, v := range []int64{4, 2} {
		if _, err := RowVectorsFit(l, v); err == nil {
			vec, rows, ok = v, 1, true
			break
		}
	}
	if !ok {
		return 0, 0, false
	}
	w := MatchWindow(l.Stmt)
	if w.Reuse() < MinWindowReuse {
		return vec, 1, true
	}
	// A shape's elements loaded (as many registers) and points: it loads
	// loads/points elements a point.
	cost := func(v, r int64) (loads, points int64) {
		_, vecs, _ := RowVectors(w, v, r)
		return WindowRows(w, r) * vecs * v, v * r
	}
	bl, bp := cost(vec, 1)
	for _, r := range []int64{2, 4} {
		for _, v := range []int64{2, 4} {
			if _, err := RowsFit(l, v, r); err != nil {
				continue
			}
			lo, p := cost(v, r)
			if lo*bp < bl*p || lo*bp == bl*p && lo < bl && rows > 1 {
				vec, rows, bl, bp = v, r, lo, p
			}
		}
	}
	return vec, rows, true
}

// RowVectorsFit is the window of l's statement when a thread taking vec
// consecutive points of its output rows can read the window's rows as
// vectors (RowVectors): the output's rows and the input's are whole
// vectors, their lengths constants; on a tile-level target, the statement
// alone (no siblings). Else an error that says why not.
func RowVectorsFit(l *Launch, vec int64) (*Window, error) {
	return RowsFit(l, vec, 1)
}

// RowsFit is RowVectorsFit for a thread that takes vec consecutive points
// of each of rows consecutive output rows (the generic template's ROWS),
// loading the input rows they read once for all of them: above one row,
// only for a statement alone whose output rows are a constant multiple of
// rows (a thread's rows are then in one plane).
func RowsFit(l *Launch, vec, rows int64) (*Window, error) {
	if (l.Target.Tiles || rows > 1) && len(l.Also) > 0 {
		return nil, fmt.Errorf("a launch of several statements")
	}
	w := MatchWindow(l.Stmt)
	if w == nil {
		return nil, fmt.Errorf("the statement is no window of constant strides and offsets over its output's last two indices")
	}
	if rows > 1 {
		oh := Simplify(Extent([]*ir.Index{w.OH}))
		if c, ok := oh.(*ir.Const); !ok || c.I%rows != 0 {
			return nil, fmt.Errorf("output planes of %s rows, not a multiple of %d", ir.Format(oh), rows)
		}
	}
	return w, rowsFit(w, vec, rows)
}

// rowsFit is RowsFit's test of the window alone.
func rowsFit(w *Window, vec, rows int64) error {
	if _, _, ok := RowVectors(w, vec, rows); !ok {
		return fmt.Errorf("the window's %d rows of %d-point groups take more than %d registers", WindowRows(w, rows), vec, maxRowVectorRegs)
	}
	n := len(w.Load.Tensor.Shape)
	for _, e := range []ir.Expr{Extent([]*ir.Index{w.OW}), w.Load.Tensor.Shape[n-1]} {
		c, ok := Simplify(e).(*ir.Const)
		if !ok {
			return fmt.Errorf("rows of a length known only at run time")
		}
		if c.I%vec != 0 {
			return fmt.Errorf("rows of %d elements, not whole vectors of %d", c.I, vec)
		}
	}
	return nil
}

// WindowAt is w's load at the batch's element (row, col) of the input:
// two new indices of those names, and the load's subscripts there.
func WindowAt(w *Window, row, col string) (r, c *ir.Index, at []ir.Expr) {
	in := w.Load.Tensor
	n := len(in.Shape)
	r, c = &ir.Index{Name: row, Lo: ir.IntConst(0), Hi: in.Shape[n-2]}, &ir.Index{Name: col, Lo: ir.IntConst(0), Hi: in.Shape[n-1]}
	at = append(append([]ir.Expr{}, w.Load.Index[:n-2]...), &ir.IndexRef{Index: r}, &ir.IndexRef{Index: c})
	return r, c, at
}

// WindowStaged is the tile of the input that a TH x TW tile of outputs
// reads: its rows and columns.
func WindowStaged(w *Window, th, tw int64) (rows, cols int64) {
	return (th-1)*w.SH + w.SpanH, (tw-1)*w.SW + w.SpanW
}

// windowTemplate computes a window statement in TH x TW tiles of (OH, OW),
// a block of THREADS threads a tile (grid-stride over the tiles and the
// batch): the block stages the input's window of the tile in shared
// memory, along its rows, with the load's default where it falls outside
// the input, then computes the tile's points, consecutive threads along
// OW, reading the staged load from the tile and every other load
// directly.
type windowTemplate struct{}

func (windowTemplate) Name() string { return "window" }

// Accepts takes a window statement of at least MinWindowTaps taps that
// cover an element at least MinWindowReuse times, whose smallest tile's
// input fits maxWindowSmem, and whose rows a thread cannot read as
// vectors of 2 (rowsFit). Point by point with their rows read as
// vectors, on the H200 (testsuite/results/2026-11-28-h200-s32-third/),
// 5 x 5 taps at stride 2 over 8 x 128 x 56 x 56 f32 (dw_s2_5x5) took
// 11.72 us on cuda:sm_90 against 13.44 in this template's tiles, a
// moving average of 17 taps over rows of 16384 (moving_average_kb) 5.29
// against 7.83, and the same on hip:nvidia.
func (windowTemplate) Accepts(s *ir.Stmt) bool {
	w := MatchWindow(s)
	return w != nil && w.Taps >= MinWindowTaps && w.Reuse() >= MinWindowReuse && stagedBytes(w, 2, 32) <= maxWindowSmem && rowsFit(w, 2, 1) != nil
}

// MinWindowTaps is the fewest taps of a window the window template
// computes: smaller windows go point by point (the generic template),
// whose neighbouring points share their loads in registers and the L1.
// On the H200 (testsuite/results/2026-11-28-h200-s31-*/), 16 x 64 x 112
// x 112 f32 through 3 x 3 taps took 52.51 us point by point and 65.42 in
// the window template's default tiles (65.06 as tuned, 61.42 and 52.29
// at best of two sweeps of variants since removed: -second/ and
// -fourth/), and point by point with its rows read as vectors 37.98
// (-sixth/); 5 x 5 taps at stride 2 15.76 and 13.14, a moving average of
// 17 taps over rows of 16384 9.24 and 7.56 (-first/).
const MinWindowTaps = 10

func (windowTemplate) Space() map[string][]int64 {
	return map[string][]int64{"TH": {2, 4, 8, 16, 32}, "TW": {32, 64, 128}, "THREADS": {64, 128, 256, 512}}
}

// maxWindowSmem is the most static shared memory a window tile takes.
const maxWindowSmem = 48 << 10

// stagedBytes is the shared memory the input of a TH x TW tile of w takes.
func stagedBytes(w *Window, th, tw int64) int64 {
	r, c := WindowStaged(w, th, tw)
	return r * c * int64(w.Load.Tensor.DType.Size())
}

// Check refuses tiles whose staged input exceeds maxWindowSmem.
func (windowTemplate) Check(l *Launch) error {
	w := MatchWindow(l.Stmt)
	th, tw := l.Config["TH"], l.Config["TW"]
	if b := stagedBytes(w, th, tw); b > maxWindowSmem {
		r, c := WindowStaged(w, th, tw)
		return fmt.Errorf("TH=%d, TW=%d stage %d x %d elements, %d bytes of shared memory (at most %d)", th, tw, r, c, b, maxWindowSmem)
	}
	return nil
}

// Default: tiles as wide as the output's rows (32, 64 or 128 points) and
// about 1024 points, 4 a thread of 256, lowered while the staged input
// exceeds maxWindowSmem.
func (windowTemplate) Default(l *Launch) Config {
	w := MatchWindow(l.Stmt)
	tw := int64(128)
	if c, ok := Simplify(Extent([]*ir.Index{w.OW})).(*ir.Const); ok {
		for tw > 32 && tw/2 >= c.I {
			tw /= 2
		}
	}
	th := min(32, max(2, 1024/tw))
	for th > 2 && stagedBytes(w, th, tw) > maxWindowSmem {
		th /= 2
	}
	for tw > 32 && stagedBytes(w, th, tw) > maxWindowSmem {
		tw /= 2
	}
	return Config{"TH": th, "TW": tw, "THREADS": 256}
}

// WindowTiles is the number of tiles of a window launch: the batch points
// times the (OH, OW) tiles.
func WindowTiles(l *Launch) ir.Expr {
	w := MatchWindow(l.Stmt)
	th, tw := l.Config["TH"], l.Config["TW"]
	return Simplify(mul(Extent(w.Batch), mul(cdiv(Extent([]*ir.Index{w.OH}), th), cdiv(Extent([]*ir.Index{w.OW}), tw))))
}

func (windowTemplate) Grid(l *Launch) Grid {
	return Grid{Blocks: capBlocks(WindowTiles(l)), Threads: l.Config["THREADS"]}
}
