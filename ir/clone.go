package ir

// Clone returns a deep copy of k that shares nothing mutable with it, so
// that lowering can specialize and rewrite it freely.
func Clone(k *Kernel) *Kernel {
	c := &cloner{
		dims: map[*Dim]*Dim{}, params: map[*Param]*Param{},
		tensors: map[*Tensor]*Tensor{}, indices: map[*Index]*Index{},
	}
	nk := &Kernel{Name: k.Name, Span: k.Span, Acc: k.Acc, Attrs: k.Attrs}
	for _, d := range k.Dims {
		nd := &Dim{Name: d.Name, Span: d.Span}
		c.dims[d] = nd
		nk.Dims = append(nk.Dims, nd)
	}
	for _, p := range k.Params {
		np := &Param{Name: p.Name, Span: p.Span, Type: p.Type, Default: p.Default}
		c.params[p] = np
		nk.Params = append(nk.Params, np)
	}
	for _, d := range k.Dims {
		if d.Def != nil {
			c.dims[d].Def = c.Expr(d.Def)
		}
	}
	tensors := func(ts []*Tensor) []*Tensor {
		var out []*Tensor
		for _, t := range ts {
			nt := &Tensor{Name: t.Name, Span: t.Span, Kind: t.Kind, DType: t.DType}
			for _, e := range t.Shape {
				nt.Shape = append(nt.Shape, c.Expr(e))
			}
			c.tensors[t] = nt
			out = append(out, nt)
		}
		return out
	}
	nk.Inputs = tensors(k.Inputs)
	nk.Outputs = tensors(k.Outputs)
	nk.Lets = tensors(k.Lets)
	for _, s := range k.Stmts {
		ns := &Stmt{Target: c.tensors[s.Target], Span: s.Span}
		for _, ix := range s.Index {
			ns.Index = append(ns.Index, c.index(ix))
		}
		ns.Value = c.Expr(s.Value)
		nk.Stmts = append(nk.Stmts, ns)
	}
	return nk
}

type cloner struct {
	dims    map[*Dim]*Dim
	params  map[*Param]*Param
	tensors map[*Tensor]*Tensor
	indices map[*Index]*Index
}

func (c *cloner) index(ix *Index) *Index {
	n := &Index{Name: ix.Name, Span: ix.Span, Lo: c.Expr(ix.Lo), Hi: c.Expr(ix.Hi)}
	c.indices[ix] = n
	return n
}

// Expr copies e, mapping the kernel's objects to their copies.
func (c *cloner) Expr(e Expr) Expr {
	switch e := e.(type) {
	case *Const:
		n := *e
		return &n
	case *IndexRef:
		ix := c.indices[e.Index]
		if ix == nil {
			ix = e.Index
		}
		return &IndexRef{Index: ix, Span: e.Span}
	case *DimRef:
		d := c.dims[e.Dim]
		if d == nil {
			d = e.Dim
		}
		return &DimRef{Dim: d, Span: e.Span}
	case *ParamRef:
		p := c.params[e.Param]
		if p == nil {
			p = e.Param
		}
		return &ParamRef{Param: p, Span: e.Span}
	case *Load:
		t := c.tensors[e.Tensor]
		if t == nil {
			t = e.Tensor
		}
		n := &Load{Tensor: t, Span: e.Span}
		for _, ix := range e.Index {
			n.Index = append(n.Index, c.Expr(ix))
		}
		if e.Default != nil {
			n.Default = c.Expr(e.Default)
		}
		return n
	case *Unary:
		return &Unary{Op: e.Op, X: c.Expr(e.X), Span: e.Span}
	case *Binary:
		return &Binary{Op: e.Op, X: c.Expr(e.X), Y: c.Expr(e.Y), Span: e.Span}
	case *Select:
		return &Select{Cond: c.Expr(e.Cond), X: c.Expr(e.X), Y: c.Expr(e.Y), Span: e.Span}
	case *Call:
		n := &Call{Fn: e.Fn, T: e.T, Span: e.Span}
		for _, a := range e.Args {
			n.Args = append(n.Args, c.Expr(a))
		}
		return n
	case *Cast:
		return &Cast{X: c.Expr(e.X), T: e.T, Span: e.Span}
	case *Reduce:
		n := &Reduce{Op: e.Op, T: e.T, Span: e.Span}
		for _, ax := range e.Axes {
			n.Axes = append(n.Axes, c.index(ax))
		}
		n.Body = c.Expr(e.Body)
		return n
	}
	return e
}

// Substitute returns a copy of e with each read of an index in subst
// replaced by a copy of its expression. Reduction axes inside e are fresh
// in the copy.
func Substitute(e Expr, subst map[*Index]Expr) Expr {
	c := &cloner{dims: map[*Dim]*Dim{}, params: map[*Param]*Param{}, tensors: map[*Tensor]*Tensor{}, indices: map[*Index]*Index{}}
	return c.substitute(e, subst)
}

func (c *cloner) substitute(e Expr, subst map[*Index]Expr) Expr {
	if r, ok := e.(*IndexRef); ok {
		if s, ok := subst[r.Index]; ok {
			return (&cloner{indices: map[*Index]*Index{}}).Expr(s)
		}
	}
	// Copy this node, then rewrite its children.
	n := c.shallow(e)
	switch n := n.(type) {
	case *Load:
		for i, ix := range n.Index {
			n.Index[i] = c.substitute(ix, subst)
		}
		if n.Default != nil {
			n.Default = c.substitute(n.Default, subst)
		}
	case *Unary:
		n.X = c.substitute(n.X, subst)
	case *Binary:
		n.X, n.Y = c.substitute(n.X, subst), c.substitute(n.Y, subst)
	case *Select:
		n.Cond, n.X, n.Y = c.substitute(n.Cond, subst), c.substitute(n.X, subst), c.substitute(n.Y, subst)
	case *Call:
		for i, a := range n.Args {
			n.Args[i] = c.substitute(a, subst)
		}
	case *Cast:
		n.X = c.substitute(n.X, subst)
	case *Reduce:
		for i, ax := range n.Axes {
			nax := &Index{Name: ax.Name, Span: ax.Span, Lo: c.substitute(ax.Lo, subst), Hi: c.substitute(ax.Hi, subst)}
			c.indices[ax] = nax
			n.Axes[i] = nax
		}
		n.Body = c.substitute(n.Body, subst)
	case *IndexRef:
		if ix := c.indices[n.Index]; ix != nil {
			n.Index = ix
		}
	}
	return n
}

// shallow copies one node; its children are still shared.
func (c *cloner) shallow(e Expr) Expr {
	switch e := e.(type) {
	case *Const:
		n := *e
		return &n
	case *IndexRef:
		n := *e
		return &n
	case *DimRef:
		n := *e
		return &n
	case *ParamRef:
		n := *e
		return &n
	case *Load:
		n := *e
		n.Index = append([]Expr(nil), e.Index...)
		return &n
	case *Unary:
		n := *e
		return &n
	case *Binary:
		n := *e
		return &n
	case *Select:
		n := *e
		return &n
	case *Call:
		n := *e
		n.Args = append([]Expr(nil), e.Args...)
		return &n
	case *Cast:
		n := *e
		return &n
	case *Reduce:
		n := *e
		n.Axes = append([]*Index(nil), e.Axes...)
		return &n
	}
	return e
}

// Rewrite replaces, bottom-up, every node for which f returns a non-nil
// expression. It edits e in place and returns the new root.
func Rewrite(e Expr, f func(Expr) Expr) Expr {
	switch n := e.(type) {
	case *Load:
		for i, ix := range n.Index {
			n.Index[i] = Rewrite(ix, f)
		}
		if n.Default != nil {
			n.Default = Rewrite(n.Default, f)
		}
	case *Unary:
		n.X = Rewrite(n.X, f)
	case *Binary:
		n.X, n.Y = Rewrite(n.X, f), Rewrite(n.Y, f)
	case *Select:
		n.Cond, n.X, n.Y = Rewrite(n.Cond, f), Rewrite(n.X, f), Rewrite(n.Y, f)
	case *Call:
		for i, a := range n.Args {
			n.Args[i] = Rewrite(a, f)
		}
	case *Cast:
		n.X = Rewrite(n.X, f)
	case *Reduce:
		for _, ax := range n.Axes {
			ax.Lo, ax.Hi = Rewrite(ax.Lo, f), Rewrite(ax.Hi, f)
		}
		n.Body = Rewrite(n.Body, f)
	}
	if r := f(e); r != nil {
		return r
	}
	return e
}
