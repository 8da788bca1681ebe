package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/interp"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/tensor"
)

// inFlag collects repeated --in values: NAME=path.npy, or a bare path for
// the next input in declaration order.
type inFlag []string

func (f *inFlag) String() string     { return strings.Join(*f, " ") }
func (f *inFlag) Set(v string) error { *f = append(*f, v); return nil }

func init() {
	register(&command{
		name: "eval", args: "--kernel K [--shape NAME=V,...] [--in [NAME=]FILE.npy ...] [--out DIR] [--seed S] [--dist D] FILE",
		short: "evaluate a kernel with the reference interpreter",
		long: `
Eval runs kernel (or instance) K of FILE with kgen's reference interpreter,
which computes in float64 and rounds exactly where the language says (stores
and casts), and prints a summary of each output.

Sizes come from the instance, then from the shapes of the .npy inputs given
with --in, then from --shape; each overrides the one before. Inputs
not given are generated from --seed and --dist (normal, uniform, large,
ints). --in takes NAME=FILE.npy or, positionally, FILE.npy for the next
input in declaration order; inputs of another dtype are converted with the
language's rounding rules. With --out, each output is written to
DIR/NAME.npy (bf16 as float32, which numpy can hold), and with
--save-inputs the inputs used too, to DIR/inputs/NAME.npy.`,
		setup: func(fs *flag.FlagSet) func([]string) int {
			kernel := fs.String("kernel", "", "the kernel or instance to run (required)")
			var shape shapeFlag
			fs.Var(&shape, "shape", "sizes and params: NAME=V,...")
			var ins inFlag
			fs.Var(&ins, "in", "an input .npy file, as NAME=FILE or FILE (repeatable)")
			out := fs.String("out", "", "write outputs as .npy files into this directory")
			saveInputs := fs.Bool("save-inputs", false, "with --out, also write the inputs used to DIR/inputs/")
			seed := fs.Uint64("seed", 1, "seed for generated inputs")
			dist := fs.String("dist", "normal", "distribution of generated inputs: normal, uniform, large, ints")
			show := fs.Int("show", 8, "print at most this many values of each output")
			asJSON := fs.Bool("json", false, "print diagnostics as JSON lines")
			force := fs.Bool("force", false, "run even when the sizes would take the interpreter very long")
			return func(args []string) int {
				if len(args) != 1 {
					return usageError("eval", "want exactly one FILE")
				}
				if *kernel == "" {
					return usageError("eval", "--kernel is required")
				}
				d, err := tensor.ParseDist(*dist)
				if err != nil {
					return usageError("eval", "--dist: %v", err)
				}
				if *saveInputs && *out == "" {
					return usageError("eval", "--save-inputs needs --out")
				}
				var diags diag.List
				files := loadFiles(args, &diags)
				if code := report(&diags, *asJSON); code != exitOK {
					return code
				}
				k, inst, err := findKernel(files, *kernel)
				if err != nil {
					fmt.Fprintf(stderr, "kgen eval: %v\n", err)
					return exitUser
				}
				e := &evaluation{cmd: "eval", k: k, inst: inst, shape: shape, ins: ins, dist: d, seed: *seed, force: *force}
				return e.run(*out, *saveInputs, *show)
			}
		},
	})
}

type evaluation struct {
	cmd   string // the command, for messages: eval or run
	k     *ir.Kernel
	inst  *ir.Instance
	shape shapeFlag
	ins   inFlag
	dist  tensor.Dist
	seed  uint64
	force bool
}

// maxWork is the most expression evaluations eval runs without --force:
// about a minute of the interpreter on a laptop.
const maxWork = 2e10

func (e *evaluation) fail(format string, args ...any) int {
	fmt.Fprintf(stderr, "kgen %s: %s\n", e.cmd, fmt.Sprintf(format, args...))
	return exitUser
}

func (e *evaluation) run(outDir string, saveInputs bool, show int) int {
	env, inputs, code := e.prepare(true)
	if code != exitOK {
		return code
	}
	outputs, err := interp.Run(e.k, env, inputs, interp.Options{})
	var rerr *interp.RunError
	if errors.As(err, &rerr) {
		var diags diag.List
		diags.Add(diag.Error, rerr.Span, rerr.Msg+fmt.Sprintf(" (at %s)", env))
		return report(&diags, false)
	}
	if err != nil {
		return e.fail("%v", err)
	}
	return e.finish(env, inputs, outputs, outDir, saveInputs, show)
}

// prepare works out the sizes and the inputs (from files, else generated)
// and checks the reads at those sizes. A code other than exitOK means the
// problem is reported and the command should stop.
func (e *evaluation) prepare(interpreter bool) (*ir.Env, []*tensor.Tensor, int) {
	k := e.k
	given, err := e.readInputs()
	if err != nil {
		return nil, nil, e.fail("%v", err)
	}
	env, err := e.bind(given)
	var bad badSizes
	if errors.As(err, &bad) {
		return nil, nil, usageError(e.cmd, "%v", err)
	}
	if err != nil {
		return nil, nil, e.fail("%v", err)
	}
	if w := ir.Work(k, env); interpreter && w > maxWork && !e.force {
		return nil, nil, e.fail("%s at %s is about %.2g operations, too many for the interpreter (it checks kernels at small and medium sizes); give smaller sizes with --shape, or --force", k.Name, env, w)
	}
	var diags diag.List
	if !frontend.CheckBounds(k, env, &diags, "these sizes") {
		return nil, nil, report(&diags, false)
	}
	inputs, err := interp.RandomInputs(k, env, e.dist, e.seed)
	if err != nil {
		return nil, nil, e.fail("%v", err)
	}
	for i, t := range k.Inputs {
		g := given[t]
		if g == nil {
			continue
		}
		want, _ := env.Shape(t)
		if !slices.Equal(g.Shape, want) {
			return nil, nil, e.fail("input %s: %s has shape %v, but %s needs %v at %s", t.Name, e.inPath(t), g.Shape, t.Name, want, env)
		}
		if g.DType != t.DType {
			g = g.Convert(t.DType)
		}
		inputs[i] = g
	}
	return env, inputs, exitOK
}

// finish prints a summary of the outputs and writes them (and, if asked,
// the inputs) as .npy files.
func (e *evaluation) finish(env *ir.Env, inputs, outputs []*tensor.Tensor, outDir string, saveInputs bool, show int) int {
	k := e.k
	fmt.Fprintf(stdout, "%s at %s\n", k.Name, env)
	for i, t := range k.Outputs {
		printSummary(t, outputs[i], show)
	}
	if outDir == "" {
		return exitOK
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return e.fail("%v", err)
	}
	for i, t := range k.Outputs {
		if err := tensor.Save(filepath.Join(outDir, t.Name+".npy"), outputs[i]); err != nil {
			return e.fail("%v", err)
		}
	}
	if saveInputs {
		dir := filepath.Join(outDir, "inputs")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return e.fail("%v", err)
		}
		for i, t := range k.Inputs {
			if err := tensor.Save(filepath.Join(dir, t.Name+".npy"), inputs[i]); err != nil {
				return e.fail("%v", err)
			}
		}
	}
	return exitOK
}

// readInputs loads the --in files and assigns them to inputs.
func (e *evaluation) readInputs() (map[*ir.Tensor]*tensor.Tensor, error) {
	given := map[*ir.Tensor]*tensor.Tensor{}
	next := 0
	for _, spec := range e.ins {
		var t *ir.Tensor
		path := spec
		if name, p, ok := strings.Cut(spec, "="); ok && !strings.ContainsAny(name, "/\\.") {
			path = p
			for _, in := range e.k.Inputs {
				if in.Name == name {
					t = in
				}
			}
			if t == nil {
				var names []string
				for _, in := range e.k.Inputs {
					names = append(names, in.Name)
				}
				return nil, fmt.Errorf("--in %s: kernel %s has no input %q (inputs: %s)", spec, e.k.Name, name, strings.Join(names, ", "))
			}
		} else {
			for next < len(e.k.Inputs) && given[e.k.Inputs[next]] != nil {
				next++
			}
			if next >= len(e.k.Inputs) {
				return nil, fmt.Errorf("--in %s: kernel %s has only %d inputs", spec, e.k.Name, len(e.k.Inputs))
			}
			t = e.k.Inputs[next]
		}
		if given[t] != nil {
			return nil, fmt.Errorf("--in %s: input %s is given twice", spec, t.Name)
		}
		v, err := tensor.Load(path)
		if err != nil {
			return nil, err
		}
		if len(v.Shape) != len(t.Shape) {
			return nil, fmt.Errorf("input %s has rank %d, but %s has rank %d", t.Name, len(t.Shape), path, len(v.Shape))
		}
		given[t] = v
	}
	return given, nil
}

func (e *evaluation) inPath(t *ir.Tensor) string {
	for _, spec := range e.ins {
		if name, p, ok := strings.Cut(spec, "="); ok && name == t.Name {
			return p
		}
	}
	return "its file"
}

// bind works out the sizes: the instance's, then the dims that input files
// imply, then --shape.
func (e *evaluation) bind(given map[*ir.Tensor]*tensor.Tensor) (*ir.Env, error) {
	vals := shapeFlag{}
	if e.inst != nil {
		for _, d := range e.k.DeclaredDims() {
			vals[d.Name] = strconv.FormatInt(e.inst.Env.Dims[d], 10)
		}
		for _, p := range e.k.Params {
			vals[p.Name] = ir.FormatValue(e.inst.Env.Params[p])
		}
	}
	from := map[string]string{}
	for _, t := range e.k.Inputs {
		g := given[t]
		if g == nil {
			continue
		}
		for i, s := range t.Shape {
			ref, ok := s.(*ir.DimRef)
			if !ok || ref.Dim.Def != nil {
				continue
			}
			v := strconv.FormatInt(g.Shape[i], 10)
			if prev, ok := from[ref.Dim.Name]; ok && vals[ref.Dim.Name] != v {
				return nil, fmt.Errorf("dim %s is %s from %s but %s from input %s (dim %d)", ref.Dim.Name, vals[ref.Dim.Name], prev, v, t.Name, i+1)
			}
			vals[ref.Dim.Name] = v
			from[ref.Dim.Name] = fmt.Sprintf("input %s (dim %d)", t.Name, i+1)
		}
	}
	for n, v := range e.shape {
		vals[n] = v
	}
	env, err := bindShape(e.k, vals)
	if err != nil {
		return nil, badSizes{err}
	}
	return env, nil
}

// badSizes is a size or param that the command line gave wrong, or did not
// give: a usage error.
type badSizes struct{ error }

// printSummary prints an output's dtype, shape, statistics and its first
// values.
func printSummary(t *ir.Tensor, v *tensor.Tensor, show int) {
	n := v.Len()
	fmt.Fprintf(stdout, "  %s: %s%v", t.Name, t.DType, v.Shape)
	if n == 0 {
		fmt.Fprintf(stdout, " (empty)\n")
		return
	}
	lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
	nans := 0
	for i := int64(0); i < n; i++ {
		x := v.Float(i)
		if math.IsNaN(x) {
			nans++
			continue
		}
		lo, hi, sum = min(lo, x), max(hi, x), sum+x
	}
	fmt.Fprintf(stdout, " min %s max %s mean %s", fmtVal(lo), fmtVal(hi), fmtVal(sum/float64(n-int64(nans))))
	if nans > 0 {
		fmt.Fprintf(stdout, " NaN %d", nans)
	}
	fmt.Fprintln(stdout)
	var vals []string
	for i := int64(0); i < n && i < int64(show); i++ {
		vals = append(vals, fmtVal(v.Float(i)))
	}
	more := ""
	if n > int64(show) {
		more = fmt.Sprintf(" ... (%d values)", n)
	}
	fmt.Fprintf(stdout, "    [%s%s]\n", strings.Join(vals, " "), more)
}

func fmtVal(x float64) string { return strconv.FormatFloat(x, 'g', 7, 64) }
