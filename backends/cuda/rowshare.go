package cuda

import (
	"fmt"

	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
)

// A row-reduce launch that keeps its rows in registers runs one loop over
// a thread's registers for each of its reductions and one for its
// outputs. A costly value of the row's point that two of those loops
// compute, such as a softmax's exp(x - max) in its sum and again in its
// outputs, is kept instead: the first loop that computes it stores it in
// a register array as it goes (kg_sN[kg_j] = ...), and the later ones read
// it there.

// rowShare is one kept value: its register array, of the value's type,
// or with staged set, that input's staged row, which the value replaces
// point by point (keepStagedShare).
type rowShare struct {
	name   string
	t      ir.DType
	staged *ir.Tensor
}

// rowPassOf is one loop over the row: what it evaluates at each point
// (a reduction's body, or the output's value outside its reductions), the
// loop's index, and its key in shareUses (the *ir.Reduce or *ir.Stmt).
type rowPassOf struct {
	key   any
	loop  *ir.Index
	value ir.Expr
}

// maxShared is the most registers a thread gives to kept values: a value
// that would take more is computed again.
const maxShared = lower.MaxCached

// planRowShares finds the values the passes of a cached row share and
// fills e.shares (kept arrays, in order) and e.shareUses (for each pass,
// the nodes that store or read one). passes are in the order the launch
// runs them.
func (e *emitter) planRowShares(passes []rowPassOf) {
	e.shares, e.shareUses = nil, map[any]map[ir.Expr]shareUse{}
	type candidate struct {
		node  ir.Expr
		pass  rowPassOf
		share *rowShare
	}
	var cands []*candidate
	for _, p := range passes {
		uses := map[ir.Expr]shareUse{}
		visit := func(x ir.Expr, sure bool) bool {
			if _, ok := x.(*ir.Reduce); ok {
				return false // its own pass
			}
			if costly(x) && !hasReduce(x) {
				for _, c := range cands {
					if c.pass.key == p.key || !ir.EqualUnder(c.node, x, map[*ir.Index]*ir.Index{c.pass.loop: p.loop}) {
						continue
					}
					if c.share == nil {
						if int64(len(e.shares)+1)*e.cacheJ > maxShared {
							continue
						}
						c.share = &rowShare{name: fmt.Sprintf("kg_s%d", len(e.shares)), t: c.node.Type()}
						e.shares = append(e.shares, c.share)
						e.shareUses[c.pass.key][c.node] = shareUse{c.share, true}
					}
					uses[x] = shareUse{c.share, false}
					return false
				}
				if sure {
					cands = append(cands, &candidate{node: x, pass: p})
				}
			}
			return true
		}
		e.shareUses[p.key] = uses
		visitSure(p.value, true, visit)
	}
}

// visitSure calls f on x and, where f returns true, on its operands, in
// order, with sure telling whether the node is evaluated at every point
// where x is: a select's branches are not, nor the right operand of &&
// and ||. A load's indices are visited; its default, read only outside
// the tensor, is not.
func visitSure(x ir.Expr, sure bool, f func(x ir.Expr, sure bool) bool) {
	if !f(x, sure) {
		return
	}
	switch x := x.(type) {
	case *ir.Select:
		visitSure(x.Cond, sure, f)
		visitSure(x.X, false, f)
		visitSure(x.Y, false, f)
	case *ir.Binary:
		visitSure(x.X, sure, f)
		visitSure(x.Y, sure && x.Op != ir.And && x.Op != ir.Or, f)
	case *ir.Unary:
		visitSure(x.X, sure, f)
	case *ir.Cast:
		visitSure(x.X, sure, f)
	case *ir.Call:
		for _, a := range x.Args {
			visitSure(a, sure, f)
		}
	case *ir.Load:
		for _, a := range x.Index {
			visitSure(a, sure, f)
		}
	}
}

// shareUse is how a pass renders a node: storing the kept value as it
// computes it (def) or reading it.
type shareUse struct {
	share *rowShare
	def   bool
}

// sharedExpr renders x where the current pass keeps or reads it.
func (e *emitter) sharedExpr(x ir.Expr) (string, bool) {
	u, ok := e.shareUse[x]
	if !ok || e.loop == nil {
		return "", false
	}
	at := u.share.name + "[kg_j]"
	if t := u.share.staged; t != nil {
		if v, ok := e.stageVec[t]; ok && !u.def {
			return v + ".v[kg_e]", true
		}
		at = fmt.Sprintf("%s[%s + kg_sh_%s]", e.stage[t], name(e.loop.Name), t.Name)
	}
	if !u.def {
		return at, true
	}
	delete(e.shareUse, x)
	v := e.expr(x)
	e.shareUse[x] = u
	return fmt.Sprintf("(%s = %s)", at, v), true
}

// costly reports whether x costs enough to keep rather than compute again:
// a transcendental function, a power or a floating-point division.
func costly(x ir.Expr) bool {
	switch x := x.(type) {
	case *ir.Call:
		return x.Fn.Library() || x.Fn == ir.Sqrt || x.Fn == ir.Rsqrt
	case *ir.Binary:
		return (x.Op == ir.Div || x.Op == ir.Mod) && x.Type().IsFloat()
	}
	return false
}

// hasReduce reports whether x holds a reduction.
func hasReduce(x ir.Expr) bool {
	return ir.Any(x, func(y ir.Expr) bool { _, ok := y.(*ir.Reduce); return ok })
}

// keepShared plans the kept values of a cached row's loops (rowPasses)
// and declares their register arrays.
func (e *emitter) keepShared(stmts, also []*ir.Stmt, rowDims int) {
	e.planRowShares(e.rowPasses(stmts, also, rowDims))
	for _, sh := range e.shares {
		e.printf("    %s %s[%d];  // a value two of the row's loops compute, kept by the first\n", e.cType(sh.t), sh.name, e.cacheJ)
	}
}

// keepStagedShare plans a kept value of a staged row's loops, stored in
// place of the row's points in shared memory rather than in registers:
// the first value that two loops compute (planRowShares) of the one
// staged input's type, where a reduction's loop computes it first and no
// loop from that one on reads the input but through it. Every loop of a
// staged launch runs over the whole row (lower.RowStage), so each point's
// value is in place for the later loops' same point. A softmax's sum then
// stores its exponentials over the row, and its outputs read them
// instead of the row.
func (e *emitter) keepStagedShare(stmts, also []*ir.Stmt, rowDims int) {
	if len(e.staged) != 1 {
		return
	}
	x := e.staged[0]
	passes := e.rowPasses(stmts, also, rowDims)
	e.planRowShares(passes)
	var kept *rowShare
	for _, sh := range e.shares {
		if sh.t != x.DType {
			continue
		}
		// A reduction's loop stores it (the threads' combination then
		// waits for every thread's stores, while an output's loop would
		// leave the next loop to read points another thread has yet to
		// store), and the loops from that one on read only it of x.
		stored := false
		for _, p := range passes {
			uses := e.shareUses[p.key]
			for _, u := range uses {
				if _, reduces := p.key.(*ir.Reduce); u.share == sh && u.def {
					stored = reduces
				}
			}
			if stored && readsBesides(p.value, x, uses, sh) {
				stored = false
				break
			}
		}
		if stored {
			kept = sh
			break
		}
	}
	for _, uses := range e.shareUses {
		for node, u := range uses {
			if u.share != kept {
				delete(uses, node)
			}
		}
	}
	e.shares = nil
	if kept != nil {
		kept.name, kept.staged = e.stage[x], x
		e.shares = []*rowShare{kept}
	}
}

// readsBesides reports whether v reads tensor x outside the nodes where
// uses reads or stores share sh.
func readsBesides(v ir.Expr, x *ir.Tensor, uses map[ir.Expr]shareUse, sh *rowShare) bool {
	found := false
	var visit func(y ir.Expr) bool
	visit = func(y ir.Expr) bool {
		if u, ok := uses[y]; ok && u.share == sh {
			return false
		}
		if ld, ok := y.(*ir.Load); ok && ld.Tensor == x {
			found = true
		}
		return !found
	}
	ir.Walk(v, visit)
	return found
}

// rowPasses are the loops over a row in the order rowReduce runs them:
// each let's reductions (but those already computed, as a staged row's
// copy computes some), the statements stored beside the last (also), the
// last statement's reductions, then its outputs.
func (e *emitter) rowPasses(stmts, also []*ir.Stmt, rowDims int) []rowPassOf {
	var passes []rowPassOf
	reductions := func(s *ir.Stmt) {
		for _, r := range ir.TopReductions(s.Value) {
			if _, done := e.reduced[r]; !done {
				passes = append(passes, rowPassOf{key: r, loop: r.Axes[0], value: r.Body})
			}
		}
	}
	final := stmts[len(stmts)-1]
	for _, s := range stmts[:len(stmts)-1] {
		reductions(s)
	}
	for _, s := range also {
		passes = append(passes, rowPassOf{key: s, loop: s.Index[len(s.Index)-1], value: s.Value})
	}
	reductions(final)
	if len(final.Index) > rowDims {
		passes = append(passes, rowPassOf{key: final, loop: final.Index[len(final.Index)-1], value: final.Value})
	}
	return passes
}
