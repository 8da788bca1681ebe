package ir

// RangeViolation is a read without a default whose index can leave its
// tensor: dimension Dim takes values Lo..Hi (inclusive) against Extent.
type RangeViolation struct {
	Load           *Load
	Dim            int
	Lo, Hi, Extent int64
}

// interval is an inclusive integer range.
type interval struct{ lo, hi int64 }

// OutOfRange finds, by interval arithmetic at the sizes of env, every read
// without `??` that can fall outside its tensor. Reads under a ?: branch
// or on the right of && and || are skipped, since the condition may guard
// them, and so are indices the analysis cannot bound (values read from
// tensors); the interpreter checks those at run time. The analysis may over-approximate (x - x spans
// -N..N), never under-approximate.
func OutOfRange(k *Kernel, env *Env) []RangeViolation {
	b := &bounds{env: env, ranges: map[*Index]interval{}}
	for _, s := range k.Stmts {
		live := true
		for _, ix := range s.Index {
			live = live && b.bind(ix)
		}
		if live {
			b.expr(s.Value)
		}
	}
	return b.out
}

// IndexInterval returns the values e can take when the given indices range
// over their intervals at env, and whether the analysis could bound it.
// Lowering uses it to drop bounds checks it can prove unnecessary.
func IndexInterval(e Expr, env *Env, indices []*Index) (lo, hi int64, ok bool) {
	b := &bounds{env: env, ranges: map[*Index]interval{}}
	for _, ix := range indices {
		if !b.bind(ix) {
			return 0, -1, true
		}
	}
	iv, ok := b.interval(e)
	return iv.lo, iv.hi, ok
}

type bounds struct {
	env    *Env
	ranges map[*Index]interval
	out    []RangeViolation
}

// bind sets the interval of ix; it returns false when the range is empty,
// so that nothing under it runs.
func (b *bounds) bind(ix *Index) bool {
	lo, err1 := b.env.Int(ix.Lo)
	hi, err2 := b.env.Int(ix.Hi)
	if err1 != nil || err2 != nil || hi <= lo {
		return false
	}
	b.ranges[ix] = interval{lo, hi - 1}
	return true
}

func (b *bounds) expr(e Expr) {
	switch e := e.(type) {
	case *Select:
		b.expr(e.Cond)
	case *Binary:
		b.expr(e.X)
		if e.Op != And && e.Op != Or { // the right of && and || may be guarded by the left
			b.expr(e.Y)
		}
	case *Reduce:
		for _, ax := range e.Axes {
			if !b.bind(ax) {
				return
			}
		}
		b.expr(e.Body)
	case *Load:
		for _, ix := range e.Index {
			b.expr(ix)
		}
		if e.Default != nil {
			return
		}
		shape, err := b.env.Shape(e.Tensor)
		if err != nil {
			return
		}
		for d, ix := range e.Index {
			iv, ok := b.interval(ix)
			if ok && (iv.lo < 0 || iv.hi >= shape[d]) {
				b.out = append(b.out, RangeViolation{Load: e, Dim: d, Lo: iv.lo, Hi: iv.hi, Extent: shape[d]})
				break
			}
		}
	default:
		for _, c := range Children(e) {
			b.expr(c)
		}
	}
}

func (b *bounds) interval(e Expr) (interval, bool) {
	switch e := e.(type) {
	case *Const:
		if e.T.IsInt() {
			return interval{e.I, e.I}, true
		}
	case *IndexRef:
		iv, ok := b.ranges[e.Index]
		return iv, ok
	case *DimRef, *ParamRef:
		v, err := b.env.Int(e)
		return interval{v, v}, err == nil
	case *Cast:
		if e.T.IsInt() && e.X.Type().IsInt() {
			return b.interval(e.X)
		}
	case *Unary:
		if x, ok := b.interval(e.X); ok && e.Op == Neg {
			return interval{-x.hi, -x.lo}, true
		}
	case *Call:
		if e.Fn == Abs {
			x, ok := b.interval(e.Args[0])
			switch {
			case !ok:
				return interval{}, false
			case x.lo >= 0:
				return x, true
			case x.hi <= 0:
				return interval{-x.hi, -x.lo}, true
			}
			return interval{0, max(-x.lo, x.hi)}, true
		}
		if e.Fn == Clamp {
			x, okx := b.interval(e.Args[0])
			lo, oklo := b.interval(e.Args[1])
			hi, okhi := b.interval(e.Args[2])
			if !okx || !oklo || !okhi {
				return interval{}, false
			}
			// clamp(x, lo, hi) = min(max(x, lo), hi)
			m := interval{max(x.lo, lo.lo), max(x.hi, lo.hi)}
			return interval{min(m.lo, hi.lo), min(m.hi, hi.hi)}, true
		}
		if e.Fn == MinFn || e.Fn == MaxFn {
			x, okx := b.interval(e.Args[0])
			y, oky := b.interval(e.Args[1])
			if !okx || !oky {
				return interval{}, false
			}
			if e.Fn == MinFn {
				return interval{min(x.lo, y.lo), min(x.hi, y.hi)}, true
			}
			return interval{max(x.lo, y.lo), max(x.hi, y.hi)}, true
		}
	case *Select:
		x, okx := b.interval(e.X)
		y, oky := b.interval(e.Y)
		return interval{min(x.lo, y.lo), max(x.hi, y.hi)}, okx && oky
	case *Binary:
		x, okx := b.interval(e.X)
		y, oky := b.interval(e.Y)
		if !okx || !oky {
			return interval{}, false
		}
		switch e.Op {
		case Add:
			return interval{x.lo + y.lo, x.hi + y.hi}, true
		case Sub:
			return interval{x.lo - y.hi, x.hi - y.lo}, true
		case Mul:
			p := [4]int64{x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi}
			return interval{min(p[0], p[1], p[2], p[3]), max(p[0], p[1], p[2], p[3])}, true
		case Div:
			if y.lo == y.hi && y.lo > 0 {
				lo, _ := IntOp(Div, x.lo, y.lo)
				hi, _ := IntOp(Div, x.hi, y.lo)
				return interval{lo, hi}, true
			}
		case Mod:
			if y.lo == y.hi && y.lo > 0 {
				d := y.lo
				qlo, _ := IntOp(Div, x.lo, d)
				qhi, _ := IntOp(Div, x.hi, d)
				if qlo == qhi {
					lo, _ := IntOp(Mod, x.lo, d)
					hi, _ := IntOp(Mod, x.hi, d)
					return interval{lo, hi}, true
				}
				return interval{0, d - 1}, true
			}
		}
	}
	return interval{}, false
}
