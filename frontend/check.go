package frontend

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/tensor"
)

// reserved words cannot name anything.
var reserved = map[string]bool{
	"kernel": true, "fn": true, "instance": true, "let": true, "where": true,
	"in": true, "inf": true, "true": true, "false": true,
}

// Check type-checks a parsed file into IR, reporting every problem it finds
// to diags. Kernels with errors are left out of the program; the others
// are verified.
func Check(f *File, diags *diag.List) *ir.Program {
	c := &checker{file: f, diags: diags, fns: map[string]*FnDecl{}, kernels: map[string]*ir.Kernel{}}
	c.run()
	return c.prog
}

// CheckSource parses and checks one source text.
func CheckSource(name, text string) (*ir.Program, *diag.List) {
	var diags diag.List
	f := Parse(diag.NewSource(name, text), &diags)
	prog := Check(f, &diags)
	diags.Sort()
	return prog, &diags
}

type checker struct {
	file    *File
	diags   *diag.List
	prog    *ir.Program
	fns     map[string]*FnDecl
	kernels map[string]*ir.Kernel // checked without errors
	failed  map[string]bool       // kernels that had errors
}

func (c *checker) errorf(span diag.Span, format string, args ...any) *diag.Diagnostic {
	return c.diags.Errorf(span, format, args...)
}

func (c *checker) run() {
	c.prog = &ir.Program{}
	c.failed = map[string]bool{}
	seen := map[string]diag.Span{}
	declare := func(id Ident, what string) bool {
		if reserved[id.Name] {
			c.errorf(id.Span, "'%s' is a reserved word; choose another name for this %s", id.Name, what)
			return false
		}
		if prev, ok := seen[id.Name]; ok {
			c.errorf(id.Span, "'%s' is already declared; rename this %s", id.Name, what).Notef(prev, "'%s' was declared here", id.Name)
			return false
		}
		seen[id.Name] = id.Span
		return true
	}
	for _, d := range c.file.Decls {
		switch d := d.(type) {
		case *FnDecl:
			if declare(d.Name, "fn") {
				c.fns[d.Name.Name] = d
			}
		case *KernelDecl:
			declare(d.Name, "kernel")
		case *InstanceDecl:
			declare(d.Name, "instance")
		}
	}
	c.checkFnCycles()
	for _, d := range c.file.Decls {
		switch d := d.(type) {
		case *FnDecl:
			c.checkFnParams(d)
		case *KernelDecl:
			before := len(c.diags.Diags)
			k := c.kernel(d)
			hasErr := false
			for _, dg := range c.diags.Diags[before:] {
				hasErr = hasErr || dg.Severity == diag.Error
			}
			if hasErr || k == nil {
				c.failed[d.Name.Name] = true
				continue
			}
			if errs := ir.Verify(k); len(errs) > 0 {
				// The checker promises verified IR; a failure is a bug in
				// kgen, reported as such rather than as the user's error.
				panic(fmt.Sprintf("internal error: checker produced invalid IR for %s: %v", k.Name, errs))
			}
			c.kernels[k.Name] = k
			c.prog.Kernels = append(c.prog.Kernels, k)
		}
	}
	for _, d := range c.file.Decls {
		if d, ok := d.(*InstanceDecl); ok {
			c.instance(d)
		}
	}
}

func (c *checker) checkFnParams(d *FnDecl) {
	seen := map[string]bool{}
	for _, p := range d.Params {
		if reserved[p.Name] {
			c.errorf(p.Span, "'%s' is a reserved word; choose another name for this parameter", p.Name)
		} else if seen[p.Name] {
			c.errorf(p.Span, "parameter '%s' appears twice in fn '%s'; rename one of them", p.Name, d.Name.Name)
		}
		seen[p.Name] = true
	}
}

// checkFnCycles reports fns that call themselves, directly or through
// others: fns are inlined, so recursion could not terminate.
func (c *checker) checkFnCycles() {
	const (
		unvisited = iota
		active
		done
	)
	state := map[string]int{}
	var visit func(name string, path []string)
	visit = func(name string, path []string) {
		d := c.fns[name]
		state[name] = active
		path = append(path, name)
		walkAST(d.Body, func(e Expr) {
			call, ok := e.(*CallExpr)
			if !ok || c.fns[call.Fn.Name] == nil {
				return
			}
			switch state[call.Fn.Name] {
			case active:
				cycle := append(path[indexOf(path, call.Fn.Name):], call.Fn.Name)
				c.errorf(call.Fn.Span, "fn '%s' calls itself (%s); fns are inlined, so they cannot recurse: remove the recursive call", call.Fn.Name, strings.Join(cycle, " -> "))
			case unvisited:
				visit(call.Fn.Name, path)
			}
		})
		state[name] = done
	}
	for _, d := range c.file.Decls {
		if d, ok := d.(*FnDecl); ok && c.fns[d.Name.Name] == d && state[d.Name.Name] == unvisited {
			visit(d.Name.Name, nil)
		}
	}
}

func indexOf(xs []string, x string) int {
	for i, s := range xs {
		if s == x {
			return i
		}
	}
	return 0
}

// walkAST calls f on every expression node under e.
func walkAST(e Expr, f func(Expr)) {
	if e == nil {
		return
	}
	f(e)
	items := func(its []*IndexItem) {
		for _, it := range its {
			walkAST(it.X, f)
			walkAST(it.Lo, f)
			walkAST(it.Hi, f)
		}
	}
	switch e := e.(type) {
	case *Access:
		items(e.Index)
	case *CallExpr:
		for _, a := range e.Args {
			walkAST(a, f)
		}
	case *ReduceExpr:
		items(e.Axes)
		walkAST(e.Body, f)
	case *UnaryExpr:
		walkAST(e.X, f)
	case *BinaryExpr:
		walkAST(e.X, f)
		walkAST(e.Y, f)
	case *CondExpr:
		walkAST(e.Cond, f)
		walkAST(e.Then, f)
		walkAST(e.Else, f)
	case *DefaultExpr:
		walkAST(e.X, f)
		walkAST(e.Default, f)
	case *ParenExpr:
		walkAST(e.X, f)
	}
}

// parseLiteral converts a literal to a constant of type t, reporting
// values that t cannot hold.
func (c *checker) parseLiteral(lit *Literal, t ir.DType, what string) *ir.Const {
	text := lit.Text
	k := &ir.Const{T: t, Span: lit.Span}
	neg := strings.HasPrefix(text, "-")
	body := strings.TrimPrefix(text, "-")
	switch {
	case t == ir.Bool:
		if body != "true" && body != "false" || neg {
			c.errorf(lit.Span, "%s is bool; write true or false, not %s", what, text)
			return nil
		}
		if body == "true" {
			k.I = 1
		}
	case t.IsInt():
		v, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			c.errorf(lit.Span, "%s is %s; write an integer, not %s", what, t, text)
			return nil
		}
		if neg {
			v = -v
		}
		if lo, hi := t.IntRange(); v < lo || v > hi {
			c.errorf(lit.Span, "%s is %s; %s is outside its range: choose a value in %d..%d", what, t, text, lo, hi)
			return nil
		}
		k.I = v
	default:
		v, ok := parseFloat(body)
		if !ok {
			c.errorf(lit.Span, "%s is %s; write a number, not %s", what, t, text)
			return nil
		}
		if neg {
			v = -v
		}
		k.F = tensor.RoundFloat(t, v)
	}
	return k
}

func parseFloat(s string) (float64, bool) {
	if s == "inf" {
		return math.Inf(1), true
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil || isRangeErr(err)
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// dtype resolves a type name, suggesting the closest dtype on a typo or
// the dtype that another language's name stands for.
func (c *checker) dtype(id Ident) ir.DType {
	t := ir.ParseDType(id.Name)
	if t == ir.Invalid {
		c.errorf(id.Span, "unknown dtype '%s'%s", id.Name, dtypeHint(id.Name))
	}
	return t
}

// dtypeAliases maps the type names of C, numpy and PyTorch to kgen's.
var dtypeAliases = map[string]string{
	"float": "f32", "float32": "f32", "double": "f64", "float64": "f64",
	"half": "f16", "float16": "f16", "bfloat16": "bf16", "int": "i32",
	"int32": "i32", "long": "i64", "int64": "i64", "int8": "i8",
	"uint8": "u8", "char": "i8", "boolean": "bool",
}

// dtypeHint suggests a dtype for an unknown type name.
func dtypeHint(name string) string {
	if s := Suggest(name, ir.DTypeNames()); s != "" {
		return fmt.Sprintf("; did you mean '%s'?", s)
	}
	var aliases []string
	for a := range dtypeAliases {
		aliases = append(aliases, a)
	}
	if a, ok := dtypeAliases[strings.ToLower(name)]; ok {
		return fmt.Sprintf("; did you mean '%s'?", a)
	} else if s := Suggest(name, aliases); s != "" {
		return fmt.Sprintf("; did you mean '%s'?", dtypeAliases[s])
	}
	return "; use one of " + strings.Join(ir.DTypeNames(), " ")
}

func (c *checker) instance(d *InstanceDecl) {
	if c.failed[d.Kernel.Name] || slices.Contains(c.file.Broken, d.Kernel.Name) {
		return // its errors are already reported
	}
	k := c.kernels[d.Kernel.Name]
	if k == nil {
		var names []string
		for name := range c.kernels {
			names = append(names, name)
		}
		slices.Sort(names)
		hint := didYouMean(d.Kernel.Name, names)
		switch {
		case hint != "":
		case len(names) > 0:
			hint = fmt.Sprintf("; use one of the kernels of this file: %s", strings.Join(names, ", "))
		default:
			hint = "; declare it with 'kernel " + d.Kernel.Name + "<...>(...) -> (...) { ... }'"
		}
		msg := fmt.Sprintf("unknown kernel '%s'%s", d.Kernel.Name, hint)
		if c.fns[d.Kernel.Name] != nil {
			msg = fmt.Sprintf("'%s' is a fn, but an instance specializes a kernel; use a kernel's name here", d.Kernel.Name)
		}
		c.errorf(d.Kernel.Span, "%s", msg)
		return
	}
	dims := map[string]int64{}
	params := map[string]*ir.Const{}
	given := map[string]bool{}
	givenAt := map[string]diag.Span{}
	ok := true
	for _, b := range d.Bindings {
		name := b.Name.Name
		if given[name] {
			c.errorf(b.Name.Span, "'%s' is given twice; remove one", name).Notef(givenAt[name], "'%s' was first given here", name)
			ok = false
			continue
		}
		given[name], givenAt[name] = true, b.Name.Span
		if dim := findDim(k, name); dim != nil {
			if dim.Def != nil {
				c.errorf(b.Name.Span, "'%s' is a derived dim of %s: it is computed from the others; remove it", name, k.Name).Notef(dim.Span, "'%s' is defined here", name)
				ok = false
				continue
			}
			v := c.parseLiteral(b.Value, ir.I64, "dim "+name)
			if v == nil {
				ok = false
				continue
			}
			if v.I < 0 {
				c.errorf(b.Value.Span, "dim %s = %d is negative; give a size >= 0", name, v.I)
				ok = false
				continue
			}
			dims[name] = v.I
			continue
		}
		if p := findParam(k, name); p != nil {
			v := c.parseLiteral(b.Value, p.Type, "param "+name)
			if v == nil {
				ok = false
				continue
			}
			params[name] = v
			continue
		}
		var names []string
		for _, dd := range k.DeclaredDims() {
			names = append(names, dd.Name)
		}
		for _, p := range k.Params {
			names = append(names, p.Name)
		}
		hint := didYouMean(name, names)
		if hint == "" {
			hint = "; use one of " + strings.Join(names, ", ")
		}
		c.errorf(b.Name.Span, "kernel %s has no dim or param '%s'%s", k.Name, name, hint)
		ok = false
	}
	if !ok {
		return
	}
	var missing []string
	for _, dd := range k.DeclaredDims() {
		if !given[dd.Name] {
			missing = append(missing, dd.Name)
		}
	}
	for _, p := range k.Params {
		if !given[p.Name] && p.Default == nil {
			missing = append(missing, p.Name)
		}
	}
	if len(missing) > 0 {
		var adds []string
		for _, m := range missing {
			adds = append(adds, m+" = ...")
		}
		c.errorf(d.Span, "instance %s does not give %s; add '%s' (every dim of %s, and every param without a default, needs a value)", d.Name.Name, strings.Join(missing, ", "), strings.Join(adds, ", "), k.Name)
		return
	}
	env, err := ir.Bind(k, dims, params)
	if err != nil {
		c.errorf(d.Span, "instance %s: %v; choose sizes for which every derived dim is defined and >= 0", d.Name.Name, err)
		return
	}
	if checkBounds(k, env, c.diags, "instance "+d.Name.Name, d.Span) {
		c.prog.Instances = append(c.prog.Instances, &ir.Instance{Name: d.Name.Name, Span: d.Span, Kernel: k, Env: env})
	}
}

func findDim(k *ir.Kernel, name string) *ir.Dim {
	for _, d := range k.Dims {
		if d.Name == name {
			return d
		}
	}
	return nil
}

func findParam(k *ir.Kernel, name string) *ir.Param {
	for _, p := range k.Params {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// CheckBounds reports every read without `??` that can fall outside its
// tensor at the concrete sizes of env; where says which sizes (an instance,
// or the command line's). It returns whether all reads are in range.
func CheckBounds(k *ir.Kernel, env *ir.Env, diags *diag.List, where string) bool {
	return checkBounds(k, env, diags, where, diag.Span{})
}

// sourceText is an expression as the user wrote it, or as the IR prints it
// when it has no span.
func sourceText(e ir.Expr) string {
	if sp := e.Pos(); sp.IsValid() && sp.End > sp.Start {
		return sp.Src.Text[sp.Start:sp.End]
	}
	return ir.Format(e)
}

// checkBounds is CheckBounds with a note at the place that gave the sizes,
// when there is one (an instance).
func checkBounds(k *ir.Kernel, env *ir.Env, diags *diag.List, where string, at diag.Span) bool {
	ok := true
	for _, v := range ir.OutOfRange(k, env) {
		ok = false
		d := diags.Errorf(v.Load.Span, "read of %s can fall out of range for %s (%s): index %d (%s) takes values %d..%d but %s has extent %d there; pad the read with '?? 0' or narrow the index",
			v.Load.Tensor.Name, where, env, v.Dim+1, sourceText(v.Load.Index[v.Dim]), v.Lo, v.Hi, v.Load.Tensor.Name, v.Extent)
		if at.IsValid() {
			d.Notef(at, "the sizes come from %s", where)
		}
	}
	return ok
}
