package runtime

import (
	"fmt"
	"slices"
	"strings"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/ir"
)

// Shape is one set of sizes a kernel is tested at.
type Shape struct {
	Name string // what the sizes exercise: "nominal", "primes", "ones", "odd"
	Env  *ir.Env
}

// testPrimes are the sizes the "primes" shape draws from, in order: small,
// distinct, and a multiple of no tile size.
var testPrimes = []int64{13, 11, 7, 17, 5, 19, 3, 23, 29, 31}

// TestShapes picks the sizes kgen test checks a kernel at: the nominal
// sizes of each of its instances (when the interpreter can afford them),
// then, starting from the first instance's sizes (or 16 everywhere), the
// same sizes capped at distinct primes, with as many dims as possible set
// to 1, and capped at 33 (just past a power of two). Shapes at which the
// kernel's sizes are invalid (a negative derived dim) or a read can fall
// out of range are skipped; so are duplicates.
func TestShapes(k *ir.Kernel, instances []*ir.Instance, maxWork float64) []Shape {
	var shapes []Shape
	seen := map[string]bool{}
	try := func(name string, dims map[string]int64, params map[string]*ir.Const) bool {
		env, err := ir.Bind(k, dims, params)
		if err != nil || ir.Work(k, env) > maxWork {
			return false
		}
		var diags diag.List
		if !frontend.CheckBounds(k, env, &diags, name) {
			return false
		}
		if key := env.String(); !seen[key] {
			seen[key] = true
			shapes = append(shapes, Shape{Name: name, Env: env})
		}
		return true
	}
	base := map[string]int64{}
	var params map[string]*ir.Const
	for _, d := range k.DeclaredDims() {
		base[d.Name] = 16
	}
	for i, in := range instances {
		if in.Kernel != k {
			continue
		}
		dims, prm := sizesOf(in.Env)
		if i == 0 || params == nil {
			base, params = dims, prm
		}
		try("nominal "+in.Name, dims, prm)
	}
	names := make([]string, 0, len(base))
	for _, d := range k.DeclaredDims() {
		names = append(names, d.Name)
	}
	capped := func(caps func(i int) int64) map[string]int64 {
		out := map[string]int64{}
		for i, n := range names {
			out[n] = min(base[n], caps(i))
		}
		return out
	}
	if !try("primes", capped(func(i int) int64 { return testPrimes[i%len(testPrimes)] }), params) {
		try("small", capped(func(int) int64 { return 4 }), params)
	}
	// Ones: set each dim to 1 in turn, keeping the change when the sizes
	// stay valid.
	ones := capped(func(i int) int64 { return testPrimes[i%len(testPrimes)] })
	for _, n := range names {
		old := ones[n]
		ones[n] = 1
		if _, err := ir.Bind(k, ones, params); err != nil {
			ones[n] = old
		}
	}
	try("ones", ones, params)
	try("odd", capped(func(int) int64 { return 33 }), params)
	return shapes
}

func sizesOf(env *ir.Env) (map[string]int64, map[string]*ir.Const) {
	dims := map[string]int64{}
	for d, v := range env.Dims {
		if d.Def == nil {
			dims[d.Name] = v
		}
	}
	params := map[string]*ir.Const{}
	for p, v := range env.Params {
		params[p.Name] = v
	}
	return dims, params
}

// DescribeShapes lists shapes for messages.
func DescribeShapes(shapes []Shape) string {
	var parts []string
	for _, s := range shapes {
		parts = append(parts, fmt.Sprintf("%s (%s)", s.Name, s.Env))
	}
	slices.Sort(parts)
	return strings.Join(parts, "; ")
}
