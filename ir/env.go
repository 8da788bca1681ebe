package ir

import (
	"fmt"
	"slices"
	"strings"
)

// Env binds a kernel's dims (declared and derived) and params to concrete
// values.
type Env struct {
	Kernel *Kernel
	Dims   map[*Dim]int64
	Params map[*Param]*Const
}

// Bind makes an Env for k from concrete dim sizes and param values by name.
// Params left out take their defaults; derived dims are computed. Every
// declared dim must be given, and every size must be non-negative.
func Bind(k *Kernel, dims map[string]int64, params map[string]*Const) (*Env, error) {
	env := &Env{Kernel: k, Dims: map[*Dim]int64{}, Params: map[*Param]*Const{}}
	known := map[string]bool{}
	var missing []string
	for _, d := range k.DeclaredDims() {
		known[d.Name] = true
		v, ok := dims[d.Name]
		if !ok {
			missing = append(missing, d.Name)
			continue
		}
		if v < 0 {
			return nil, fmt.Errorf("dim %s = %d is negative", d.Name, v)
		}
		env.Dims[d] = v
	}
	for _, p := range k.Params {
		known[p.Name] = true
		v, ok := params[p.Name]
		switch {
		case ok:
			env.Params[p] = v
		case p.Default != nil:
			env.Params[p] = p.Default
		default:
			missing = append(missing, p.Name)
		}
	}
	for _, name := range slices.Sorted(mapKeys(dims, params)) {
		if !known[name] {
			return nil, fmt.Errorf("kernel %s has no dim or param %q (it has %s)", k.Name, name, strings.Join(k.sizeNames(), ", "))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("kernel %s needs a value for %s", k.Name, strings.Join(missing, ", "))
	}
	for _, d := range k.Dims {
		if d.Def == nil {
			continue
		}
		v, err := env.Int(d.Def)
		if err != nil {
			return nil, fmt.Errorf("derived dim %s: %v", d.Name, err)
		}
		if v < 0 {
			return nil, fmt.Errorf("derived dim %s = %d is negative for %s", d.Name, v, env)
		}
		env.Dims[d] = v
	}
	return env, nil
}

func mapKeys(dims map[string]int64, params map[string]*Const) func(func(string) bool) {
	return func(yield func(string) bool) {
		for n := range dims {
			if !yield(n) {
				return
			}
		}
		for n := range params {
			if _, dup := dims[n]; !dup && !yield(n) {
				return
			}
		}
	}
}

func (k *Kernel) sizeNames() []string {
	var names []string
	for _, d := range k.DeclaredDims() {
		names = append(names, d.Name)
	}
	for _, p := range k.Params {
		names = append(names, p.Name)
	}
	return names
}

// String lists the bindings of declared dims and params, as `M=64, N=32`.
func (env *Env) String() string {
	var parts []string
	for _, d := range env.Kernel.DeclaredDims() {
		parts = append(parts, fmt.Sprintf("%s=%d", d.Name, env.Dims[d]))
	}
	for _, p := range env.Kernel.Params {
		if c := env.Params[p]; c != nil {
			parts = append(parts, fmt.Sprintf("%s=%s", p.Name, FormatValue(c)))
		}
	}
	return strings.Join(parts, ", ")
}

// Int evaluates an integer expression over dims, params and constants.
func (env *Env) Int(e Expr) (int64, error) {
	switch e := e.(type) {
	case *Const:
		if e.T.IsFloat() {
			return int64(e.F), nil
		}
		return e.I, nil
	case *DimRef:
		v, ok := env.Dims[e.Dim]
		if !ok {
			return 0, fmt.Errorf("dim %s has no value", e.Dim.Name)
		}
		return v, nil
	case *ParamRef:
		c := env.Params[e.Param]
		if c == nil {
			return 0, fmt.Errorf("param %s has no value", e.Param.Name)
		}
		if c.T.IsFloat() {
			return int64(c.F), nil
		}
		return c.I, nil
	case *Cast:
		return env.Int(e.X)
	case *Unary:
		x, err := env.Int(e.X)
		if e.Op == Neg {
			x = -x
		}
		return x, err
	case *Binary:
		x, err := env.Int(e.X)
		if err != nil {
			return 0, err
		}
		y, err := env.Int(e.Y)
		if err != nil {
			return 0, err
		}
		return IntOp(e.Op, x, y)
	case *Call:
		if e.Fn == MinFn || e.Fn == MaxFn {
			x, err := env.Int(e.Args[0])
			if err != nil {
				return 0, err
			}
			y, err := env.Int(e.Args[1])
			if e.Fn == MinFn {
				return min(x, y), err
			}
			return max(x, y), err
		}
	}
	return 0, fmt.Errorf("%s is not a size expression", Format(e))
}

// Shape evaluates t's shape.
func (env *Env) Shape(t *Tensor) ([]int64, error) {
	shape := make([]int64, len(t.Shape))
	for i, e := range t.Shape {
		v, err := env.Int(e)
		if err != nil {
			return nil, err
		}
		shape[i] = v
	}
	return shape, nil
}

// IntOp applies a binary operator to integers with the language's
// semantics: / and % are floor division and floor modulo; comparisons yield
// 0 or 1.
func IntOp(op Op, x, y int64) (int64, error) {
	switch op {
	case Add:
		return x + y, nil
	case Sub:
		return x - y, nil
	case Mul:
		return x * y, nil
	case Div, Mod:
		if y == 0 {
			return 0, fmt.Errorf("integer division by zero")
		}
		q, r := x/y, x%y
		if r != 0 && (r < 0) != (y < 0) {
			q, r = q-1, r+y
		}
		if op == Div {
			return q, nil
		}
		return r, nil
	}
	b := false
	switch op {
	case Eq:
		b = x == y
	case Ne:
		b = x != y
	case Lt:
		b = x < y
	case Le:
		b = x <= y
	case Gt:
		b = x > y
	case Ge:
		b = x >= y
	case And:
		b = x != 0 && y != 0
	case Or:
		b = x != 0 || y != 0
	}
	if b {
		return 1, nil
	}
	return 0, nil
}
