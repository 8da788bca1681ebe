package ir

import "math"

// Builtin is a built-in scalar function.
type Builtin uint8

const (
	Exp Builtin = iota
	Exp2
	Log
	Log2
	Sqrt
	Rsqrt
	Tanh
	Erf
	Sigmoid
	Relu
	Abs
	Sin
	Cos
	Floor
	Ceil
	MinFn
	MaxFn
	Pow
	Clamp
	Fma
	TF32
)

// BuiltinInfo describes a builtin's signature.
type BuiltinInfo struct {
	Name  string
	Arity int
	// IntOK builtins compute on integers as integers; the others convert
	// integer arguments to f32 (f64 when an argument is f64).
	IntOK bool
}

var builtins = [...]BuiltinInfo{
	Exp: {"exp", 1, false}, Exp2: {"exp2", 1, false}, Log: {"log", 1, false}, Log2: {"log2", 1, false},
	Sqrt: {"sqrt", 1, false}, Rsqrt: {"rsqrt", 1, false}, Tanh: {"tanh", 1, false}, Erf: {"erf", 1, false},
	Sigmoid: {"sigmoid", 1, false}, Relu: {"relu", 1, true}, Abs: {"abs", 1, true}, Sin: {"sin", 1, false},
	Cos: {"cos", 1, false}, Floor: {"floor", 1, false}, Ceil: {"ceil", 1, false}, MinFn: {"min", 2, true},
	MaxFn: {"max", 2, true}, Pow: {"pow", 2, false}, Clamp: {"clamp", 3, true}, Fma: {"fma", 3, false},
	TF32: {"tf32", 1, false},
}

// Library reports whether b is computed by a math library routine (an
// exponential, logarithm, power, trigonometric function, tanh, erf or
// sigmoid) rather than by an instruction or two.
func (b Builtin) Library() bool {
	switch b {
	case Exp, Exp2, Log, Log2, Tanh, Erf, Sigmoid, Sin, Cos, Pow:
		return true
	}
	return false
}

// Info returns b's signature.
func (b Builtin) Info() BuiltinInfo { return builtins[b] }

func (b Builtin) String() string { return builtins[b].Name }

// RoundTF32 rounds x to TensorFloat-32, the tensor cores' f32 input
// format: 10 mantissa bits, to nearest with ties away from zero (PTX's
// cvt.rna.tf32.f32); NaN and infinities pass. tf32(x) computes it.
func RoundTF32(x float32) float32 {
	u := math.Float32bits(x)
	if u&0x7f800000 != 0x7f800000 {
		u = (u + 0x1000) &^ 0x1fff
	}
	return math.Float32frombits(u)
}

// LookupBuiltin returns the builtin called name.
func LookupBuiltin(name string) (Builtin, bool) {
	for i, info := range builtins {
		if info.Name == name {
			return Builtin(i), true
		}
	}
	return 0, false
}

// BuiltinNames lists every builtin's name, for suggestions.
func BuiltinNames() []string {
	names := make([]string, len(builtins))
	for i, info := range builtins {
		names[i] = info.Name
	}
	return names
}
