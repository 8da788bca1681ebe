// Package ir is kgen's typed tensor IR: kernels over symbolic dims, with
// statements whose right-hand sides are expression trees with explicit
// reduction axes, explicit conversions and accumulation types. Every node
// keeps the source span it came from so that any pass can report against
// the user's spec.
package ir

import "kgen.dev/kgen/diag"

// Program is a checked source file: its kernels and instances in source
// order. Scalar fns are inlined by the checker and do not appear.
type Program struct {
	Kernels   []*Kernel
	Instances []*Instance
}

// Kernel returns the kernel called name, or nil.
func (p *Program) Kernel(name string) *Kernel {
	for _, k := range p.Kernels {
		if k.Name == name {
			return k
		}
	}
	return nil
}

// Instance returns the instance called name, or nil.
func (p *Program) Instance(name string) *Instance {
	for _, in := range p.Instances {
		if in.Name == name {
			return in
		}
	}
	return nil
}

// Kernel is one tensor operation: inputs, outputs, and statements that
// compute the outputs (and temporaries) from the inputs.
type Kernel struct {
	Name    string
	Span    diag.Span
	Dims    []*Dim // declared dims first, then derived dims in 'where' order
	Params  []*Param
	Inputs  []*Tensor
	Outputs []*Tensor
	Lets    []*Tensor // temporaries, in statement order
	Stmts   []*Stmt
	Attrs   []*Attr
	// Acc is the accumulation type that @acc asked for; Invalid means the
	// default (f32 for floats, f64 for f64 bodies, i64 for integers).
	Acc DType
}

// Dim is a symbolic size. A derived dim has a defining integer expression
// over declared dims and params.
type Dim struct {
	Name string
	Span diag.Span
	Def  Expr // nil for a declared dim
}

// Param is a typed compile-time scalar.
type Param struct {
	Name    string
	Span    diag.Span
	Type    DType
	Default *Const // nil when the param must be given
}

// TensorKind says where a tensor comes from.
type TensorKind uint8

const (
	Input TensorKind = iota
	Output
	Let
)

func (k TensorKind) String() string {
	return [...]string{"input", "output", "let"}[k]
}

// Tensor is a named dense tensor. A let's shape comes from the ranges of
// its statement's indices; a scalar let has rank 0.
type Tensor struct {
	Name  string
	Span  diag.Span
	Kind  TensorKind
	DType DType
	Shape []Expr // integer expressions: DimRef or Const for inputs and outputs
}

// Index is a loop index: an output index of a statement or a reduction
// axis. It ranges over the half-open interval [Lo, Hi).
type Index struct {
	Name   string
	Span   diag.Span
	Lo, Hi Expr
}

// Stmt computes Target[Index...] = Value for every point of its indices.
// Value has Target's dtype: the checker inserts the rounding conversion.
type Stmt struct {
	Target *Tensor
	Index  []*Index
	Value  Expr
	Span   diag.Span
}

// Attr is an @attribute on a kernel, kept verbatim for lowering.
type Attr struct {
	Name string
	Args []AttrArg
	Span diag.Span
}

// AttrArg is one argument of an attribute: a value (`@acc(f32)`), or a key
// with a value or a list of values (`@tune(BM = [64, 128])`).
type AttrArg struct {
	Key    string // empty for a positional argument
	Values []string
	List   bool
	// Span is the key's (the whole argument's when it has none), and
	// ValueSpans each value's, for errors found after checking (an
	// unknown @tune parameter).
	Span       diag.Span
	ValueSpans []diag.Span
}

// Instance names a specialization of a kernel with concrete sizes.
type Instance struct {
	Name   string
	Span   diag.Span
	Kernel *Kernel
	Env    *Env
}

// Attr returns the first attribute called name, or nil.
func (k *Kernel) Attr(name string) *Attr {
	for _, a := range k.Attrs {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// Tensors returns inputs, outputs and lets, in that order.
func (k *Kernel) Tensors() []*Tensor {
	var ts []*Tensor
	ts = append(ts, k.Inputs...)
	ts = append(ts, k.Outputs...)
	return append(ts, k.Lets...)
}

// DeclaredDims returns the dims that are not derived.
func (k *Kernel) DeclaredDims() []*Dim {
	var ds []*Dim
	for _, d := range k.Dims {
		if d.Def == nil {
			ds = append(ds, d)
		}
	}
	return ds
}

// Writer returns the statement that writes t, or nil.
func (k *Kernel) Writer(t *Tensor) *Stmt {
	for _, s := range k.Stmts {
		if s.Target == t {
			return s
		}
	}
	return nil
}
