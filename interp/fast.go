package interp

import "kgen.dev/kgen/ir"

// A float reduction whose body is a tensor read, or the product of two,
// with indices affine in the loop indices (a row sum or max, the dot
// product of a matmul or any contraction, the window of a convolution) is
// evaluated by walking the tensors with strides instead of calling the
// body's closures: the offset of such a read is affine in the reduction's
// axes, and the whole box of axis values is checked against the tensor's
// extents once per evaluation. The fast loop performs the same operations
// in the same order as the general one, so the results are identical;
// when some point of the box is outside a tensor (a padded border of a
// convolution) the general loop runs instead, applying ?? or reporting the
// error.

const maxFastAxes = 8

// boxTerm is coef times the index in slot, a loop index bound outside the
// reduction.
type boxTerm struct {
	slot int
	coef int64
}

// boxDim is one index of a read: c0 + outer terms + sum over axes j of
// axis[j] * axis value j.
type boxDim struct {
	c0     int64
	outer  []boxTerm
	axis   [maxFastAxes]int64
	extent int64
	stride int64
}

// boxLoad is a float read over the box.
type boxLoad struct {
	data []float64
	dims []boxDim
	step [maxFastAxes]int64 // offset change per unit of each axis
}

// origin returns the offset of the read at the box's low corner, and false
// if any point of the box is outside the tensor. lo and hi bound each of
// the n axes, with lo < hi.
func (l *boxLoad) origin(f *frame, n int, lo, hi *[maxFastAxes]int64) (int64, bool) {
	off := int64(0)
	for d := range l.dims {
		dm := &l.dims[d]
		v := dm.c0
		for _, t := range dm.outer {
			v += t.coef * f.idx[t.slot]
		}
		// The index is affine in the axes: its extremes are at corners.
		vlo, vmin, vmax := v, v, v
		for j := range n {
			a := dm.axis[j]
			vlo += a * lo[j]
			if a > 0 {
				vmin += a * lo[j]
				vmax += a * (hi[j] - 1)
			} else {
				vmin += a * (hi[j] - 1)
				vmax += a * lo[j]
			}
		}
		if vmin < 0 || vmax >= dm.extent {
			return 0, false
		}
		off += vlo * dm.stride
	}
	return off, true
}

// boxRead recognizes e as a read for the box of axes, looking through
// widening casts that are exact (f16, bf16 and f32 to f32; any float to
// f64). A read with ?? qualifies: the box check sends reads that may fall
// outside to the general loop.
func (c *compiler) boxRead(e ir.Expr, axes []*ir.Index) *boxLoad {
	if cst, ok := e.(*ir.Cast); ok {
		from := cst.X.Type()
		if !from.IsFloat() || !(cst.T == ir.F64 || cst.T == ir.F32 && from != ir.F64) {
			return nil
		}
		e = cst.X
	}
	l, ok := e.(*ir.Load)
	if !ok || classOf(l.Tensor.DType) != clsFloat {
		return nil
	}
	b := c.bufs[l.Tensor]
	if b == nil || b.f == nil || len(l.Index) != len(b.shape) {
		return nil
	}
	axisOf := map[int]int{}
	for j, ax := range axes {
		axisOf[c.slots[ax]] = j
	}
	bl := &boxLoad{data: b.f}
	for d, ie := range l.Index {
		a, ok := c.affine(ie)
		if !ok {
			return nil
		}
		dm := boxDim{c0: a.c0, extent: b.shape[d], stride: b.strides[d]}
		for t, s := range a.slots {
			if j, ok := axisOf[s]; ok {
				dm.axis[j] += a.coefs[t]
			} else {
				dm.outer = append(dm.outer, boxTerm{s, a.coefs[t]})
			}
		}
		for j := range axes {
			bl.step[j] += dm.axis[j] * dm.stride
		}
		bl.dims = append(bl.dims, dm)
	}
	return bl
}

// fastReduce returns a replacement for the whole loop nest of e, or nil.
func (c *compiler) fastReduce(e *ir.Reduce, axes []axis, slow loopFn[float64]) loopFn[float64] {
	n := len(e.Axes)
	if n > maxFastAxes {
		return nil
	}
	// The bounds are evaluated once, so they must not depend on the axes.
	for _, ax := range e.Axes {
		for _, bound := range []ir.Expr{ax.Lo, ax.Hi} {
			dep := false
			ir.Walk(bound, func(x ir.Expr) bool {
				if r, ok := x.(*ir.IndexRef); ok {
					for _, a := range e.Axes {
						dep = dep || r.Index == a
					}
				}
				return !dep
			})
			if dep {
				return nil
			}
		}
	}
	sc := len(c.scope)
	c.scope = append(c.scope, e.Axes...)
	defer func() { c.scope = c.scope[:sc] }()

	var loads []*boxLoad
	op := e.Op
	if bin, ok := e.Body.(*ir.Binary); ok && bin.Op == ir.Mul && op == ir.Sum {
		x, y := c.boxRead(bin.X, e.Axes), c.boxRead(bin.Y, e.Axes)
		if x == nil || y == nil {
			return nil
		}
		loads = []*boxLoad{x, y}
	} else if x := c.boxRead(e.Body, e.Axes); x != nil && op != ir.Prod {
		loads = []*boxLoad{x}
	} else {
		return nil
	}

	los := make([]ifn, n)
	his := make([]ifn, n)
	for j, ax := range axes {
		los[j], his[j] = ax.lo, ax.hi
	}
	return func(f *frame, acc float64) float64 {
		var lo, hi, cur [maxFastAxes]int64
		for j := range n {
			lo[j], hi[j] = los[j](f), his[j](f)
			if lo[j] >= hi[j] {
				return acc // an empty axis: no point is visited
			}
		}
		var off [2]int64
		for i, l := range loads {
			o, ok := l.origin(f, n, &lo, &hi)
			if !ok {
				return slow(f, acc)
			}
			off[i] = o
		}
		cur = lo
		last := n - 1
		cnt := hi[last] - lo[last]
		x := loads[0]
		dx, sx := x.data, x.step[last]
		for {
			ox := off[0]
			switch {
			case len(loads) == 2:
				dy, sy, oy := loads[1].data, loads[1].step[last], off[1]
				for range cnt {
					acc += float64(dx[ox] * dy[oy]) // a rounded product: never fused
					ox += sx
					oy += sy
				}
			case op == ir.Sum:
				for range cnt {
					acc += dx[ox]
					ox += sx
				}
			case op == ir.Max: // Go's max propagates NaN
				for range cnt {
					acc = max(acc, dx[ox])
					ox += sx
				}
			default:
				for range cnt {
					acc = min(acc, dx[ox])
					ox += sx
				}
			}
			// Advance the outer axes, the last fastest.
			j := last - 1
			for ; j >= 0; j-- {
				cur[j]++
				for i, l := range loads {
					off[i] += l.step[j]
				}
				if cur[j] < hi[j] {
					break
				}
				for i, l := range loads {
					off[i] -= l.step[j] * (hi[j] - lo[j])
				}
				cur[j] = lo[j]
			}
			if j < 0 {
				return acc
			}
		}
	}
}
