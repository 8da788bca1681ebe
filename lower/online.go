package lower

import (
	"kgen.dev/kgen/ir"
)

// MinOnlineRow is the shortest row that splitOnline splits.
const MinOnlineRow = 32768

// splitOnline splits a row maximum and the sum of exponentials shifted by
// it, the statistics of a softmax, a log-softmax or a logsumexp, over
// whole chunks of long rows when the rows are too few to fill the GPU
// (128 rows of 50257 logits): a launch computes each chunk's maximum, a
// block a chunk and row, another each chunk's sum shifted by the chunk's
// maximum (its row chunk mostly still in L2), and the launch that reads the
// statistics combines the chunks' pairs, rescaling each sum to the row's
// maximum (the online softmax's combine), before its own work:
//
//	let mx[r] = max[d](X[r, d])
//	let den[r] = sum[d](exp(X[r, d] - mx[r]))
//
// becomes
//
//	let mx_loc[r, chunk] = max[d in 0..CH](X[r, chunk * CH + d])
//	let den_loc[r, chunk] = sum[d in 0..CH](exp(X[r, chunk * CH + d] - mx_loc[r, chunk]))
//	let mx[r] = max[chunk](mx_loc[r, chunk])
//	let den[r] = sum[chunk](den_loc[r, chunk] / exp(mx[r] - mx_loc[r, chunk]))
//
// mx is the row's maximum exactly, and den the same sum up to rounding:
// the statements that read them do not change, and the combine fuses into
// their launch. Rows of at least MinOnlineRow points, at most 2 bigGPU
// rows, whole chunks (a divisor of the row from 1024 to 4096 points),
// every size known.
func splitOnline(k *ir.Kernel) {
	for i := 0; i < len(k.Stmts); i++ {
		m := k.Stmts[i]
		mr, ok := m.Value.(*ir.Reduce)
		if m.Target.Kind != ir.Let || !ok || mr.Op != ir.Max || len(mr.Axes) != 1 || mr.T != m.Target.DType {
			continue
		}
		for j := i + 1; j < len(k.Stmts); j++ {
			s := k.Stmts[j]
			sr, h := shiftedExpSum(s, m)
			if sr == nil {
				continue
			}
			chunk := onlineChunk(m, mr, sr)
			if chunk == 0 {
				break
			}
			stmts := onlineSplit(k, m, mr, s, sr, h, chunk)
			for n, p := range stmts {
				insertLet(k, i+n, p)
			}
			i += len(stmts)
			break
		}
	}
}

// shiftedExpSum finds in statement s (a let, or an output such as a
// logsumexp, over m's rows) the reduction sum[d](exp(H - m[rows])), over
// one axis, H not reading m: it returns the reduction and H, or nil.
func shiftedExpSum(s, m *ir.Stmt) (*ir.Reduce, ir.Expr) {
	if len(s.Index) != len(m.Index) {
		return nil, nil
	}
	for _, r := range ir.TopReductions(s.Value) {
		e, ok := r.Body.(*ir.Call)
		if r.Op != ir.Sum || len(r.Axes) != 1 || r.T != m.Target.DType || !ok || e.Fn != ir.Exp || e.T != r.T {
			continue
		}
		sub, ok := e.Args[0].(*ir.Binary)
		if !ok || sub.Op != ir.Sub || !loadsAtRows(sub.Y, m.Target, s.Index) || reads(sub.X, m.Target) {
			continue
		}
		return r, sub.X
	}
	return nil, nil
}

// loadsAtRows reports whether x reads t at exactly the indices ixs.
func loadsAtRows(x ir.Expr, t *ir.Tensor, ixs []*ir.Index) bool {
	ld, ok := x.(*ir.Load)
	if !ok || ld.Tensor != t || ld.Default != nil || len(ld.Index) != len(ixs) {
		return false
	}
	for d, e := range ld.Index {
		if ref, ok := e.(*ir.IndexRef); !ok || ref.Index != ixs[d] {
			return false
		}
	}
	return true
}

// reads reports whether x reads t.
func reads(x ir.Expr, t *ir.Tensor) bool {
	found := false
	ir.Walk(x, func(e ir.Expr) bool {
		if ld, ok := e.(*ir.Load); ok && ld.Tensor == t {
			found = true
		}
		return !found
	})
	return found
}

// onlineChunk is the length of splitOnline's chunks for m's maximum mr
// and the sum sr: 0 when it does not split them.
func onlineChunk(m *ir.Stmt, mr, sr *ir.Reduce) int64 {
	rows, rok := constExtent(m.Index)
	n, nok := constExtent(mr.Axes)
	sn, sok := constExtent(sr.Axes)
	if !rok || !nok || !sok || n != sn || rows == 0 || rows > 2*bigGPU || n < MinOnlineRow ||
		!allZeroLo(m.Index) || !zeroLo(mr.Axes[0]) || !zeroLo(sr.Axes[0]) {
		return 0
	}
	for chunk := int64(4096); chunk >= 1024; chunk-- {
		if n%chunk == 0 {
			return chunk
		}
	}
	return 0
}

// onlineSplit returns splitOnline's two statements of partial results
// for m and s (whose reductions are mr and sr = sum(exp(h - m))) over
// chunks of chunk points, and rewrites m and s to combine them.
func onlineSplit(k *ir.Kernel, m *ir.Stmt, mr *ir.Reduce, s *ir.Stmt, sr *ir.Reduce, h ir.Expr, chunk int64) []*ir.Stmt {
	n, _ := constExtent(mr.Axes)
	parts := n / chunk
	taken := names(k)
	chunkName := fresh(taken, "chunk")
	t := mr.T
	var shape []ir.Expr
	for _, ix := range m.Index {
		shape = append(shape, ix.Hi)
	}
	shape = append(shape, ir.IntConst(parts))
	// partial is a let over stmt's rows and the chunks, reducing body
	// (over r's axis) over each chunk: body's axis and rows become the
	// partial's.
	partial := func(name string, stmt *ir.Stmt, r *ir.Reduce, op ir.ReduceOp, body func(ix []*ir.Index) ir.Expr) *ir.Stmt {
		copied, _, subst := copies(stmt.Index)
		c := &ir.Index{Name: chunkName, Lo: ir.IntConst(0), Hi: ir.IntConst(parts)}
		ix := append(copied, c)
		ax := r.Axes[0]
		part := &ir.Index{Name: ax.Name, Span: ax.Span, Lo: ir.IntConst(0), Hi: ir.IntConst(chunk)}
		subst[ax] = add(mul(&ir.IndexRef{Index: c}, ir.IntConst(chunk)), &ir.IndexRef{Index: part})
		tensor := &ir.Tensor{Name: fresh(taken, name), Span: stmt.Target.Span, Kind: ir.Let, DType: t, Shape: shape}
		return &ir.Stmt{Target: tensor, Index: ix, Span: stmt.Span,
			Value: &ir.Reduce{Op: op, Axes: []*ir.Index{part}, Body: ir.Substitute(body(ix), subst), T: t, Span: r.Span}}
	}
	mxLoc := partial(m.Target.Name+"_loc", m, mr, ir.Max, func([]*ir.Index) ir.Expr { return mr.Body })
	// The shift reads mx_loc at the partial's own point, which the
	// substitution of s's rows leaves alone.
	denLoc := partial(s.Target.Name+"_loc", s, sr, ir.Sum, func(ix []*ir.Index) ir.Expr {
		return &ir.Call{Fn: ir.Exp, T: t, Args: []ir.Expr{&ir.Binary{Op: ir.Sub, X: h, Y: &ir.Load{Tensor: mxLoc.Target, Index: refs(ix)}}}}
	})

	// m and s combine the chunks' pairs, in order.
	read := func(p *ir.Stmt, rows []*ir.Index, c *ir.Index) ir.Expr {
		return &ir.Load{Tensor: p.Target, Index: refs(append(append([]*ir.Index{}, rows...), c))}
	}
	cm := &ir.Index{Name: chunkName, Lo: ir.IntConst(0), Hi: ir.IntConst(parts)}
	m.Value = &ir.Reduce{Op: ir.Max, Axes: []*ir.Index{cm}, Body: read(mxLoc, m.Index, cm), T: t, Span: mr.Span}
	cs := &ir.Index{Name: chunkName, Lo: ir.IntConst(0), Hi: ir.IntConst(parts)}
	// den_loc / exp(mx - mx_loc), not den_loc * exp(mx_loc - mx): a
	// quotient keeps the combine a row reduction (a product of two
	// tensors would classify as a contraction), and a chunk far below
	// the maximum still adds 0 (a sum over an infinite divisor).
	rescaled := &ir.Binary{Op: ir.Div, X: read(denLoc, s.Index, cs), Y: &ir.Call{Fn: ir.Exp, T: t, Args: []ir.Expr{
		&ir.Binary{Op: ir.Sub, X: &ir.Load{Tensor: m.Target, Index: refs(s.Index)}, Y: read(mxLoc, s.Index, cs)}}}}
	replace(s, sr, &ir.Reduce{Op: ir.Sum, Axes: []*ir.Index{cs}, Body: rescaled, T: t, Span: sr.Span})
	return []*ir.Stmt{mxLoc, denLoc}
}
