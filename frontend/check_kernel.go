package frontend

import (
	"fmt"
	"strings"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/ir"
)

// symbol is what a name means inside a kernel.
type symbol struct {
	dim    *ir.Dim
	param  *ir.Param
	tensor *ir.Tensor
	span   diag.Span
}

func (s symbol) kind() string {
	switch {
	case s.dim != nil && s.dim.Def != nil:
		return "derived dim"
	case s.dim != nil:
		return "dim"
	case s.param != nil:
		return "param"
	}
	return s.tensor.Kind.String() + " tensor"
}

// aKind is kind with its indefinite article: "a dim", "an input tensor".
func (s symbol) aKind() string {
	if k := s.kind(); strings.IndexByte("aeiou", k[0]) < 0 {
		return "a " + k
	}
	return "an " + s.kind()
}

// kernelChecker checks one kernel declaration.
type kernelChecker struct {
	*checker
	decl    *KernelDecl
	k       *ir.Kernel
	syms    map[string]symbol
	written map[*ir.Tensor]bool
	read    map[*ir.Tensor]bool
	// uses records, for each index, the tensor dimensions it indexes alone,
	// from which ranges are inferred.
	uses map[*ir.Index][]indexUse
	// inlining holds the fns being inlined, to stop runaway recursion.
	inlining map[*FnDecl]bool
	// broken holds names whose declaration failed (a reserved word, a
	// clash, a let whose statement has errors): uses of them are not
	// reported again.
	broken map[string]bool
	// badDecl holds tensors whose declaration has errors (an unknown dtype
	// or shape entry): reads of them and rank checks are not reported.
	badDecl map[*ir.Tensor]bool
	// pending holds the let names of the statements, to tell a read before
	// the let from an unknown name.
	pending map[string]diag.Span
	// writtenAt holds the statement that wrote each tensor.
	writtenAt map[*ir.Tensor]diag.Span
	// extentHint holds, for an index used only inside compound indices, the
	// extent of a dimension it helps index: a guess for its range.
	extentHint map[*ir.Index]ir.Expr
	// poisoned is set when an expression fails without a new diagnostic
	// (its cause was reported elsewhere): the kernel must not be emitted.
	poisoned bool
}

type indexUse struct {
	extent ir.Expr
	tensor *ir.Tensor
	dim    int
	span   diag.Span
}

func (c *checker) kernel(d *KernelDecl) *ir.Kernel {
	kc := &kernelChecker{
		checker: c, decl: d,
		k:          &ir.Kernel{Name: d.Name.Name, Span: d.Span},
		syms:       map[string]symbol{},
		written:    map[*ir.Tensor]bool{},
		read:       map[*ir.Tensor]bool{},
		uses:       map[*ir.Index][]indexUse{},
		inlining:   map[*FnDecl]bool{},
		broken:     map[string]bool{},
		badDecl:    map[*ir.Tensor]bool{},
		pending:    map[string]diag.Span{},
		writtenAt:  map[*ir.Tensor]diag.Span{},
		extentHint: map[*ir.Index]ir.Expr{},
	}
	before := len(c.diags.Diags)
	kc.header()
	for _, s := range d.Stmts {
		if _, dup := kc.pending[s.Name.Name]; s.Let && !dup {
			kc.pending[s.Name.Name] = s.Name.Span
		}
	}
	for _, s := range d.Stmts {
		kc.stmt(s)
	}
	for _, t := range kc.k.Outputs {
		if !kc.written[t] {
			kc.errorf(t.Span, "output '%s' is never written; add a statement '%s%s = ...'", t.Name, t.Name, indexHint(len(t.Shape)))
		}
	}
	hasErr := false
	for _, dg := range c.diags.Diags[before:] {
		hasErr = hasErr || dg.Severity == diag.Error
	}
	// In a kernel with errors, unread tensors are most often the
	// consequence of an expression that failed to check: not reported.
	for _, t := range append(append([]*ir.Tensor(nil), kc.k.Inputs...), kc.k.Lets...) {
		if !kc.read[t] && !hasErr {
			kc.diags.Warnf(t.Span, "%s '%s' is never read", t.Kind, t.Name)
		}
	}
	if kc.poisoned {
		if !c.diags.HasErrors() {
			// A poisoned kernel's cause must have been reported; if it
			// was not, dropping the kernel silently would hide a bug.
			kc.errorf(d.Name.Span, "internal error: kernel '%s' failed to check without a diagnostic; please report it", d.Name.Name)
		}
		return nil
	}
	return kc.k
}

func indexHint(rank int) string {
	if rank == 0 {
		return ""
	}
	names := []string{"i", "j", "k", "l", "m", "n", "o", "p"}
	var parts []string
	for i := range rank {
		if i < len(names) {
			parts = append(parts, names[i])
		} else {
			parts = append(parts, fmt.Sprintf("i%d", i))
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// declare adds a kernel-level name, reporting clashes.
func (kc *kernelChecker) declare(id Ident, s symbol) bool {
	s.span = id.Span
	if reserved[id.Name] {
		kc.errorf(id.Span, "'%s' is a reserved word; choose another name", id.Name)
		kc.broken[id.Name] = true
		return false
	}
	if prev, ok := kc.syms[id.Name]; ok {
		kc.errorf(id.Span, "'%s' is already declared in kernel %s as %s; rename one of them", id.Name, kc.k.Name, prev.aKind()).
			Notef(prev.span, "'%s' was declared here", id.Name)
		kc.broken[id.Name] = true
		return false
	}
	kc.syms[id.Name] = s
	return true
}

func (kc *kernelChecker) header() {
	d, k := kc.decl, kc.k
	for _, id := range d.Dims {
		dim := &ir.Dim{Name: id.Name, Span: id.Span}
		if kc.declare(id, symbol{dim: dim}) {
			k.Dims = append(k.Dims, dim)
		}
	}
	for _, pd := range d.Params {
		p := &ir.Param{Name: pd.Name.Name, Span: pd.Name.Span, Type: kc.dtype(pd.Type)}
		if pd.Default != nil && p.Type != ir.Invalid {
			p.Default = kc.parseLiteral(pd.Default, p.Type, "param "+p.Name)
		}
		if kc.declare(pd.Name, symbol{param: p}) {
			k.Params = append(k.Params, p)
		}
	}
	for _, w := range d.Where {
		def := kc.sizeExpr(w.Value, "derived dim "+w.Name.Name)
		dim := &ir.Dim{Name: w.Name.Name, Span: w.Name.Span, Def: def}
		if kc.declare(w.Name, symbol{dim: dim}) && def != nil {
			k.Dims = append(k.Dims, dim)
		}
	}
	k.Inputs = kc.tensorDecls(d.Inputs, ir.Input)
	k.Outputs = kc.tensorDecls(d.Outputs, ir.Output)
	if len(d.Outputs) == 0 {
		kc.errorf(d.Name.Span, "kernel %s has no outputs; declare them after '->', e.g. '-> (Y: f32[N])'", k.Name)
	}
	for _, a := range d.Attrs {
		kc.attr(a)
	}
}

func (kc *kernelChecker) tensorDecls(decls []*TensorDecl, kind ir.TensorKind) []*ir.Tensor {
	var ts []*ir.Tensor
	for _, td := range decls {
		t := &ir.Tensor{Name: td.Name.Name, Span: td.Name.Span, Kind: kind, DType: kc.dtype(td.Type)}
		kc.badDecl[t] = t.DType == ir.Invalid
		for _, e := range td.Shape {
			if s := kc.shapeEntry(e, t.Name); s != nil {
				t.Shape = append(t.Shape, s)
			} else {
				kc.badDecl[t] = true
			}
		}
		if kc.declare(td.Name, symbol{tensor: t}) {
			ts = append(ts, t)
		}
	}
	return ts
}

// shapeEntry checks one entry of a declared shape: a dim, a derived dim or
// an integer constant.
func (kc *kernelChecker) shapeEntry(e Expr, tensor string) ir.Expr {
	switch e := e.(type) {
	case *Number:
		if v, ok := parseIntLiteral(e.Text); ok {
			return &ir.Const{T: ir.I64, I: v, Span: e.Span}
		}
	case *Name:
		s, ok := kc.syms[e.Name]
		if ok && s.dim != nil {
			return &ir.DimRef{Dim: s.dim, Span: e.Span}
		}
		if !ok {
			var dims []string
			for _, d := range kc.k.Dims {
				dims = append(dims, d.Name)
			}
			hint := didYouMean(e.Name, dims)
			if hint == "" {
				hint = "; declare it in the kernel's <...> list or in a 'where' clause"
			}
			kc.errorf(e.Span, "unknown dim '%s' in the shape of %s%s", e.Name, tensor, hint)
			return nil
		}
		if s.param != nil {
			up := strings.ToUpper(e.Name)
			if _, taken := kc.syms[up]; taken || up == e.Name {
				up = "D"
			}
			kc.errorf(e.Span, "'%s' is a param, not a dim; a shape entry is a dim, a derived dim or an integer constant: declare 'where %s = %s' and use %s", e.Name, up, e.Name, up)
			return nil
		}
		kc.errorf(e.Span, "'%s' is %s, not a dim; a shape entry is a dim, a derived dim or an integer constant", e.Name, s.aKind())
		return nil
	}
	kc.errorf(e.Pos(), "a shape entry must be a dim, a derived dim or an integer constant; name this size in a 'where' clause (where D2 = %s) and use D2", exprText(e))
	return nil
}

func parseIntLiteral(text string) (int64, bool) {
	var v int64
	if len(text) == 0 {
		return 0, false
	}
	for _, r := range text {
		if r < '0' || r > '9' || v > (1<<62)/10 {
			return 0, false
		}
		v = v*10 + int64(r-'0')
	}
	return v, true
}

func (kc *kernelChecker) attr(a *Attr) {
	for _, arg := range a.Args {
		if arg.BadKey {
			kc.errorf(arg.Key.Span, "an attribute key is a name, not '%s'; write e.g. @tune(BM = [64, 128])", exprText(&Name{Span: arg.Key.Span}))
			return
		}
	}
	attr := &ir.Attr{Name: a.Name.Name, Span: a.Span}
	for _, arg := range a.Args {
		ia := ir.AttrArg{List: arg.List, Span: arg.Span}
		if arg.Key != nil {
			ia.Key, ia.Span = arg.Key.Name, arg.Key.Span
		}
		for _, v := range arg.Values {
			ia.Values = append(ia.Values, v.Text)
			ia.ValueSpans = append(ia.ValueSpans, v.Span)
		}
		attr.Args = append(attr.Args, ia)
	}
	kc.k.Attrs = append(kc.k.Attrs, attr)
	switch a.Name.Name {
	case "acc":
		if len(a.Args) != 1 || a.Args[0].Key != nil || a.Args[0].List {
			kc.errorf(a.Span, "@acc takes one dtype; write e.g. @acc(f32)")
			return
		}
		v := a.Args[0].Values[0]
		t := ir.ParseDType(v.Text)
		if t == ir.Invalid || t == ir.Bool {
			hint := dtypeHint(v.Text)
			if t == ir.Bool {
				hint = "; use f32 or f64"
			}
			kc.errorf(v.Span, "@acc needs a numeric dtype, not '%s'%s", v.Text, hint)
			return
		}
		if kc.k.Acc != ir.Invalid {
			kc.errorf(a.Span, "@acc is given twice; remove one")
		}
		if t == ir.I8 || t == ir.U8 || t == ir.I32 {
			kc.diags.Warnf(v.Span, "@acc(%s) accumulates in %s, which wraps on overflow on the GPU (the reference interpreter sums in i64); use @acc(i64) unless that is the point", t, t)
		}
		if t == ir.F16 || t == ir.BF16 {
			kc.diags.Warnf(v.Span, "@acc(%s) accumulates in %s, which loses precision on long reductions (the reference interpreter still sums in f64); use @acc(f32) unless that is the point", t, t)
		}
		kc.k.Acc = t
	case "tune":
		kc.tuneAttr(a)
	default:
		hint := ""
		if s := Suggest(a.Name.Name, []string{"acc", "tune"}); s != "" {
			hint = fmt.Sprintf(" (did you mean '@%s'?)", s)
		}
		kc.diags.Warnf(a.Name.Span, "unknown attribute '@%s'%s; it is kept in the IR as a hint for lowering", a.Name.Name, hint)
	}
}

// stmt checks `[let] name[indices] = value`.
func (kc *kernelChecker) stmt(s *Stmt) {
	var target *ir.Tensor
	name := s.Name.Name
	sym, known := kc.syms[name]
	if s.Let && !known {
		// A let whose statement fails stays undeclared; its later reads
		// are consequences, not new errors.
		defer func() {
			if _, ok := kc.syms[name]; !ok {
				kc.broken[name] = true
			}
		}()
	}
	switch {
	case !s.Let && kc.broken[name]:
		kc.poisoned = true // its declaration is already reported
		return
	case s.Let && known:
		kc.errorf(s.Name.Span, "let '%s' reuses the name of %s; choose another name", name, sym.aKind()).Notef(sym.span, "'%s' was declared here", name)
		return
	case s.Let && reserved[name]:
		kc.errorf(s.Name.Span, "'%s' is a reserved word; choose another name", name)
		return
	case s.Let:
	case !known:
		var outs []string
		for _, t := range kc.k.Outputs {
			outs = append(outs, t.Name)
		}
		hint := didYouMean(name, outs)
		if hint == "" {
			hint = fmt.Sprintf("; declare it as an output after '->' or write 'let %s...' for a temporary", name)
		}
		kc.errorf(s.Name.Span, "unknown output '%s'%s", name, hint)
		return
	case sym.tensor == nil:
		kc.errorf(s.Name.Span, "cannot assign to %s '%s'; write an output or a new let instead", sym.kind(), name)
		return
	case sym.tensor.Kind == ir.Input:
		kc.errorf(s.Name.Span, "cannot write input '%s'; inputs are read-only: declare an output after '->' and write that", name)
		return
	case kc.written[sym.tensor]:
		kc.errorf(s.Name.Span, "output '%s' is written twice; an output is written by one statement: compute the first value into a let and read it here", name).
			Notef(kc.writtenAt[sym.tensor], "'%s' is first written here", name)
		return
	default:
		target = sym.tensor
	}
	// The left-hand indices.
	st := &ir.Stmt{Span: s.Span}
	scope := &scope{indices: map[string]*ir.Index{}}
	ok := true
	for i, it := range s.Index {
		n, isName := it.X.(*Name)
		if !isName {
			kc.errorf(it.X.Pos(), "the left-hand side takes plain index names, one per dimension, not expressions; use a name here and move the arithmetic into the reads on the right-hand side")
			ok = false
			kc.adoptNames(it.X, scope)
			continue
		}
		ix := &ir.Index{Name: n.Name, Span: n.Span, Lo: ir.IntConst(0)}
		if !kc.checkIndexName(n, scope) {
			ok = false
			if !reserved[n.Name] {
				scope.indices[n.Name] = ix // for the right-hand side
			}
			continue
		}
		switch {
		case target != nil && it.Lo != nil:
			kc.errorf(it.Span, "output indices take their ranges from the shape of '%s'; write just '%s'", name, n.Name)
			ok = false
		case target != nil && i < len(target.Shape):
			ix.Hi = target.Shape[i]
		case it.Lo != nil:
			lo := kc.sizeExpr(it.Lo, "the range of "+n.Name)
			if c, isConst := lo.(*ir.Const); lo != nil && (!isConst || c.I != 0) {
				kc.errorf(it.Lo.Pos(), "let index ranges start at 0; write '%s in 0..%s'", n.Name, exprText(it.Hi))
				ok = false
			}
			ix.Hi = kc.sizeExpr(it.Hi, "the range of "+n.Name)
			ok = ok && ix.Hi != nil
		}
		scope.indices[n.Name] = ix
		st.Index = append(st.Index, ix)
	}
	if target != nil && len(s.Index) != len(target.Shape) && ok && !kc.badDecl[target] {
		kc.errorf(s.Name.Span, "'%s' has rank %d but is written with %s; write %s%s", name, len(target.Shape), plural(len(s.Index), "index", "indices"), name, indexHint(len(target.Shape)))
		ok = false
	}
	value := kc.expr(s.Value, scope)
	if target != nil {
		kc.written[target] = true // even if broken: do not also report it unwritten
		kc.writtenAt[target] = s.Name.Span
		ok = ok && !kc.badDecl[target]
	}
	if !ok || value.e == nil {
		return
	}
	// Let ranges not given are inferred from the right-hand side.
	for _, ix := range st.Index {
		if ix.Hi == nil {
			ix.Hi = kc.inferRange(ix, "let index", fmt.Sprintf("let %s[%s in 0..N]", name, ix.Name))
			if ix.Hi == nil {
				return
			}
		}
	}
	if target == nil {
		t := &ir.Tensor{Name: name, Span: s.Name.Span, Kind: ir.Let, DType: value.defaulted().Type()}
		for _, ix := range st.Index {
			t.Shape = append(t.Shape, ix.Hi)
		}
		kc.syms[name] = symbol{tensor: t, span: s.Name.Span}
		kc.k.Lets = append(kc.k.Lets, t)
		target = t
	}
	st.Target = target
	st.Value = kc.convert(value, target.DType, s.Value.Pos())
	kc.written[target] = true
	kc.k.Stmts = append(kc.k.Stmts, st)
}

// adoptNames declares the unknown names of a malformed index item (an
// expression where an index name belongs) as indices of sc, so that the
// expressions that use them are checked without follow-on errors.
func (kc *kernelChecker) adoptNames(e Expr, sc *scope) {
	walkAST(e, func(e Expr) {
		if n, isName := e.(*Name); isName && sc.lookupIndex(n.Name) == nil {
			if _, isSym := kc.syms[n.Name]; !isSym && !reserved[n.Name] {
				sc.indices[n.Name] = &ir.Index{Name: n.Name, Span: n.Span, Lo: ir.IntConst(0)}
			}
		}
	})
}

// checkIndexName checks that an index name is new in its scope and does
// not hide a kernel name.
func (kc *kernelChecker) checkIndexName(n *Name, sc *scope) bool {
	if reserved[n.Name] {
		kc.errorf(n.Span, "'%s' is a reserved word; choose another name for this index", n.Name)
		return false
	}
	if s, ok := kc.syms[n.Name]; ok {
		kc.errorf(n.Span, "index '%s' has the name of %s; rename the index (index names must differ from dims, params and tensors)", n.Name, s.aKind()).Notef(s.span, "'%s' was declared here", n.Name)
		return false
	}
	if sc.lookupIndex(n.Name) != nil {
		kc.errorf(n.Span, "index '%s' is already in use here; choose another name", n.Name)
		return false
	}
	return true
}

// inferRange gives an index the extent of the tensor dimensions it indexes
// alone; all must agree. kind names the index ("reduction index"); form
// shows how to give its range, with N standing for the extent.
func (kc *kernelChecker) inferRange(ix *ir.Index, kind, form string) ir.Expr {
	uses := kc.uses[ix]
	if len(uses) == 0 {
		extent := "SIZE"
		if h := kc.extentHint[ix]; h != nil {
			extent = ir.Format(h)
		}
		kc.errorf(ix.Span, "cannot infer the range of %s '%s': it never indexes a tensor dimension alone; give its range, as in '%s'", kind, ix.Name, strings.Replace(form, "N", extent, 1))
		return nil
	}
	first := uses[0]
	for _, u := range uses[1:] {
		if !sameExtent(u.extent, first.extent) {
			kc.errorf(ix.Span, "%s '%s' is used with two extents: %s (%s, dim %d) and %s (%s, dim %d); give its range with '%s'",
				kind, ix.Name, ir.Format(first.extent), first.tensor.Name, first.dim+1, ir.Format(u.extent), u.tensor.Name, u.dim+1,
				strings.Replace(form, "N", ir.Format(first.extent), 1)).
				Notef(first.span, "extent %s comes from here", ir.Format(first.extent)).
				Notef(u.span, "extent %s comes from here", ir.Format(u.extent))
			return nil
		}
	}
	return first.extent
}

func sameExtent(a, b ir.Expr) bool {
	switch a := a.(type) {
	case *ir.DimRef:
		b, ok := b.(*ir.DimRef)
		return ok && a.Dim == b.Dim
	case *ir.Const:
		b, ok := b.(*ir.Const)
		return ok && a.I == b.I
	}
	return ir.Format(a) == ir.Format(b)
}

func exprText(e Expr) string {
	sp := e.Pos()
	if !sp.IsValid() {
		return "N"
	}
	return sp.Src.Text[sp.Start:sp.End]
}

// plural formats a count with its noun: "1 index", "3 indices".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// readBeforeWrite reports a read of an output or let before the statement
// that writes it.
func (kc *kernelChecker) readBeforeWrite(t *ir.Tensor, span diag.Span) {
	for _, s := range kc.decl.Stmts {
		if s.Name.Name == t.Name && s.Span.Start <= span.Start && span.End <= s.Span.End {
			kc.errorf(span, "'%s' is read by the statement that writes it; a statement cannot read its own result (there are no recurrences): compute it from the inputs, e.g. a running sum as sum[j in 0..N](j <= i ? A[j] : 0)", t.Name)
			return
		}
	}
	d := kc.errorf(span, "'%s' is read before it is written; statements run in order: move the statement that writes '%s' above this one", t.Name, t.Name)
	for _, s := range kc.decl.Stmts {
		if s.Name.Name == t.Name && s.Name.Span.Start > span.Start {
			d.Notef(s.Name.Span, "'%s' is written here", t.Name)
			break
		}
	}
}

// readBeforeLet reports a read of a let that a later statement declares.
func (kc *kernelChecker) readBeforeLet(name string, span diag.Span) {
	at := kc.pending[name]
	if at.Start < span.Start {
		// The let comes first but its statement failed: already reported.
		kc.poisoned = true
		return
	}
	kc.errorf(span, "let '%s' is read before it is written; statements run in order: move the 'let %s' statement above this one", name, name).
		Notef(at, "'%s' is written here", name)
}

// tuneAttr checks `@tune(NAME = [v, ...], ...)`: every argument names a
// parameter and gives positive integers, each parameter once. Whether a
// template declares the name is lowering's to say (lower.TuneSpace).
func (kc *kernelChecker) tuneAttr(a *Attr) {
	if len(a.Args) == 0 {
		kc.errorf(a.Span, "@tune needs the parameters to search; write e.g. @tune(BM = [64, 128], STAGES = [3, 4])")
		return
	}
	seen := map[string]bool{}
	for _, arg := range a.Args {
		if arg.Key == nil {
			kc.errorf(arg.Span, "@tune takes NAME = [values]; write e.g. @tune(BM = [64, 128])")
			continue
		}
		if seen[arg.Key.Name] {
			kc.errorf(arg.Key.Span, "@tune gives %s twice; write all its values once: %s = [v1, v2]", arg.Key.Name, arg.Key.Name)
		}
		seen[arg.Key.Name] = true
		if len(arg.Values) == 0 {
			kc.errorf(arg.Span, "@tune gives %s no values; give at least one", arg.Key.Name)
		}
		vals := map[int64]bool{}
		for _, v := range arg.Values {
			n, ok := parseIntLiteral(v.Text)
			if !ok || n <= 0 {
				kc.errorf(v.Span, "@tune values are positive integers, not '%s'; remove it or write a positive integer", v.Text)
				continue
			}
			if vals[n] {
				kc.errorf(v.Span, "@tune lists %d twice for %s; remove one", n, arg.Key.Name)
			}
			vals[n] = true
		}
	}
}
