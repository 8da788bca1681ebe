package cuda

import (
	"fmt"

	"kgen.dev/kgen/ir"
)

// A row-reduce launch's outputs often apply, at every point of the row, a
// costly value of the row alone: a norm's rsqrt(var + eps), a division by
// the row's sum. nvcc leaves such a call inside the outputs' loop (the
// row of center_2m, staged by clusters of 16, ran one MUFU.RSQ a point),
// so hoistRowValues computes each once a row, after the row's lets and
// before its outputs, into a register (kg_rvN) that the loops read. The
// value is the same expression evaluated once: the outputs do not change.

// hoistRowValues declares and computes the row values of stmts (the
// outputs stored along the row: their indices past rowDims are the row's
// points) and records them in e.rowValues.
func (e *emitter) hoistRowValues(indent string, stmts []*ir.Stmt, rowDims int) {
	e.rowValues = map[ir.Expr]string{}
	var found []ir.Expr
	for _, s := range stmts {
		if len(s.Index) <= rowDims {
			continue // a single result a row: computed once anyway
		}
		rows := map[*ir.Index]bool{}
		for _, ix := range s.Index[:rowDims] {
			rows[ix] = true
		}
		visitSure(s.Value, true, func(x ir.Expr, sure bool) bool {
			if !sure || hasReduce(x) || !e.ofRow(x, rows) || !ir.Any(x, costly) {
				return true
			}
			for _, f := range found {
				if ir.Equal(f, x) {
					e.rowValues[x] = e.rowValues[f]
					return false
				}
			}
			v := fmt.Sprintf("kg_rv%d", len(found))
			e.printf("%sconst %s %s = %s;  // of the row alone\n", indent, e.cType(x.Type()), v, e.expr(x))
			e.rowValues[x] = v
			found = append(found, x)
			return false
		})
	}
}

// ofRow reports whether x depends on the row alone: its indices are the
// row's, and the only tensors it reads are the row's lets that the launch
// holds in registers (e.regs).
func (e *emitter) ofRow(x ir.Expr, rows map[*ir.Index]bool) bool {
	return !ir.Any(x, func(y ir.Expr) bool {
		switch y := y.(type) {
		case *ir.IndexRef:
			return !rows[y.Index]
		case *ir.Load:
			_, reg := e.regs[y.Tensor]
			return !reg || y.Default != nil
		}
		return false
	})
}
