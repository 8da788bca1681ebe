package frontend

import "kgen.dev/kgen/diag"

// File is a parsed source file. Comments are kept apart from the tree, in
// source order, for the formatter.
type File struct {
	Src      *diag.Source
	Decls    []Decl
	Comments []Comment
	// Broken names the declarations that did not parse.
	Broken []string
}

// Comment is a line (`//`) or block (`/* */`) comment.
type Comment struct {
	Span diag.Span
	Text string
}

// Decl is a top-level declaration: *FnDecl, *KernelDecl or *InstanceDecl.
type Decl interface{ Pos() diag.Span }

// Ident is a name with its span.
type Ident struct {
	Name string
	Span diag.Span
}

// FnDecl is `fn name(params) = body`.
type FnDecl struct {
	Span   diag.Span
	Name   Ident
	Params []Ident
	Body   Expr
}

// KernelDecl is a kernel definition.
type KernelDecl struct {
	Span    diag.Span
	Name    Ident
	Dims    []Ident
	Params  []*ParamDecl
	Inputs  []*TensorDecl
	Outputs []*TensorDecl
	Where   []*Derived
	Attrs   []*Attr
	Stmts   []*Stmt
	Close   diag.Span // the closing brace
}

// ParamDecl is `name: type [= default]` in a kernel's size list.
type ParamDecl struct {
	Name    Ident
	Type    Ident
	Default *Literal
}

// Literal is a number, inf, true or false, with an optional minus sign.
type Literal struct {
	Span diag.Span
	Text string // as written, sign included
}

// TensorDecl is `name: dtype[shape]`; Shape is nil for a scalar written
// without brackets.
type TensorDecl struct {
	Span   diag.Span
	Name   Ident
	Type   Ident
	Ranked bool
	Shape  []Expr
}

// Derived is `name = expr` in a where clause.
type Derived struct {
	Name  Ident
	Value Expr
}

// Attr is `@name` or `@name(args)`.
type Attr struct {
	Span    diag.Span
	Name    Ident
	HasArgs bool
	Args    []AttrArg
}

// AttrArg is `v`, `[v, ...]`, `key = v` or `key = [v, ...]`.
type AttrArg struct {
	Span   diag.Span
	Key    *Ident
	BadKey bool // the key is not a name (a number or a string)
	List   bool
	Values []Literal
}

// Stmt is `[let] name[indices] = value`.
type Stmt struct {
	Span    diag.Span
	Let     bool
	Name    Ident
	Indexed bool
	Index   []*IndexItem
	Value   Expr
}

// IndexItem is an index expression with an optional range `x in lo..hi`.
type IndexItem struct {
	Span   diag.Span
	X      Expr
	Lo, Hi Expr
}

// InstanceDecl is `instance name = kernel<bindings>`.
type InstanceDecl struct {
	Span     diag.Span
	Name     Ident
	Kernel   Ident
	Bindings []*Binding
}

// Binding is `name = literal` in an instance.
type Binding struct {
	Name  Ident
	Value *Literal
}

func (d *FnDecl) Pos() diag.Span       { return d.Span }
func (d *KernelDecl) Pos() diag.Span   { return d.Span }
func (d *InstanceDecl) Pos() diag.Span { return d.Span }

// Expr is an expression node.
type Expr interface{ Pos() diag.Span }

// Number is an integer or float literal as written.
type Number struct {
	Span diag.Span
	Text string
}

// Name is a bare name: an index, dim, param, scalar, fn parameter or one
// of inf, true, false.
type Name struct {
	Span diag.Span
	Name string
}

// Access is a tensor read `T[i, j]`.
type Access struct {
	Span  diag.Span
	Name  Ident
	Index []*IndexItem
}

// CallExpr is a builtin, fn or cast applied to arguments.
type CallExpr struct {
	Span diag.Span
	Fn   Ident
	Args []Expr
}

// ReduceExpr is `op[axes](body)`.
type ReduceExpr struct {
	Span diag.Span
	Op   Ident
	Axes []*IndexItem
	Body Expr
}

// UnaryExpr is `-x`, `+x` or `!x`.
type UnaryExpr struct {
	Span diag.Span
	Op   string
	X    Expr
}

// BinaryExpr is `x op y`.
type BinaryExpr struct {
	Span   diag.Span
	Op     string
	OpSpan diag.Span
	X, Y   Expr
}

// CondExpr is `c ? a : b`.
type CondExpr struct {
	Span             diag.Span
	Cond, Then, Else Expr
}

// DefaultExpr is `x ?? d`.
type DefaultExpr struct {
	Span    diag.Span
	X       Expr
	Default Expr
}

// ParenExpr keeps the user's parentheses so that formatting preserves them.
type ParenExpr struct {
	Span diag.Span
	X    Expr
}

func (e *Number) Pos() diag.Span      { return e.Span }
func (e *Name) Pos() diag.Span        { return e.Span }
func (e *Access) Pos() diag.Span      { return e.Span }
func (e *CallExpr) Pos() diag.Span    { return e.Span }
func (e *ReduceExpr) Pos() diag.Span  { return e.Span }
func (e *UnaryExpr) Pos() diag.Span   { return e.Span }
func (e *BinaryExpr) Pos() diag.Span  { return e.Span }
func (e *CondExpr) Pos() diag.Span    { return e.Span }
func (e *DefaultExpr) Pos() diag.Span { return e.Span }
func (e *ParenExpr) Pos() diag.Span   { return e.Span }
