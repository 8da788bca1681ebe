package runtime

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"kgen.dev/kgen/interp"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
	"kgen.dev/kgen/tensor"
)

// CheckResult is the outcome of running one plan at one shape and seed on
// the GPU against the reference interpreter.
type CheckResult struct {
	Plan     string
	Shape    string
	Seed     uint64
	Dist     tensor.Dist
	MaxError float64 // the largest relative error over all outputs
	Err      error   // nil when correct; a *Failure, or a *Mismatch wrapped with the output's name
}

// Executor runs the plans of one compiled module on a runner.
type Executor struct {
	Runner *Runner
	Binary string // what the runner loads: a cubin for CUDA
	module *Module
	funcs  map[string]Function
}

// Check runs plan p at env (sizes of p.Source) on inputs drawn from dist
// and seed, and compares every output with the interpreter's. Outputs and
// the workspace are poisoned with NaN (0xFF bytes) before the launches;
// inputs must come back unchanged.
//
// Where an output is out of its tolerance, the interpreter evaluates the
// kernel again with every operation rounded to its declared type
// (interp.Options.RoundOps), and the outputs are compared once more
// within the tolerances that this evaluation's own error widens
// (Conditioned): a kernel computing in f32 need not beat the spec's
// formulas evaluated in f32. (A softplus written log(1 + exp(-abs(x))),
// whose f32 sum 1 + exp(-9) keeps few of exp's digits, turns exp's last
// bit into a relative error of 1e-4.)
func (c *Executor) Check(ctx context.Context, p *lower.Plan, env *ir.Env, dist tensor.Dist, seed uint64) CheckResult {
	res := CheckResult{Plan: p.Name, Shape: env.String(), Seed: seed, Dist: dist}
	k := p.Source
	inputs, err := interp.RandomInputs(k, env, dist, seed)
	if err != nil {
		res.Err = err
		return res
	}
	want, err := interp.Run(k, env, inputs, interp.Options{})
	if err != nil {
		res.Err = fmt.Errorf("reference interpreter: %w", err)
		return res
	}
	return c.checkOutputs(ctx, p, env, inputs, want, Tolerances(k, env), seed, dist, func() ([]Tolerance, []*tensor.Tensor, error) {
		return RoundedReference(k, env, inputs, want)
	})
}

// RoundedReference evaluates k again on inputs with every operation
// rounded to its declared type (interp.Options.RoundOps), for outputs out
// of tolerance against want, the exact evaluation: it returns the
// tolerances that this evaluation's own error widens (Conditioned) and its
// outputs, which an element may match instead of want's (CompareEither).
func RoundedReference(k *ir.Kernel, env *ir.Env, inputs, want []*tensor.Tensor) ([]Tolerance, []*tensor.Tensor, error) {
	rounded, err := interp.Run(k, env, inputs, interp.Options{RoundOps: true})
	if err != nil {
		return nil, nil, fmt.Errorf("reference interpreter, rounding every operation: %w", err)
	}
	return Conditioned(Tolerances(k, env), k, rounded, want), rounded, nil
}

// CheckAgainst is Check with the reference kernels (refPlan, loaded in
// ref) in place of the interpreter, for sizes too large for it: both run
// on the GPU on the same inputs. With a rounding plan (lower.BuildRounding,
// in ref too), the tolerances allow what its sums' rounding amounts to
// (Conditioned).
func (c *Executor) CheckAgainst(ctx context.Context, p *lower.Plan, ref *Executor, refPlan, rounding *lower.Plan, env *ir.Env, dist tensor.Dist, seed uint64) CheckResult {
	res := CheckResult{Plan: p.Name, Shape: env.String(), Seed: seed, Dist: dist}
	inputs, want, tols, err := ref.Reference(ctx, refPlan, rounding, env, dist, seed)
	if err != nil {
		res.Err = err
		return res
	}
	return c.CheckOutputsWithin(ctx, p, env, inputs, want, tols, seed, dist)
}

// Reference draws inputs from dist and seed and computes the reference
// kernels' outputs on them (refPlan, loaded in c), with the tolerances a
// kernel's outputs get: Tolerances, widened by the rounding plan's error
// when there is one (Conditioned).
func (c *Executor) Reference(ctx context.Context, refPlan, rounding *lower.Plan, env *ir.Env, dist tensor.Dist, seed uint64) (inputs, want []*tensor.Tensor, tols []Tolerance, err error) {
	k := refPlan.Source
	if inputs, err = interp.RandomInputs(k, env, dist, seed); err != nil {
		return nil, nil, nil, err
	}
	if want, err = c.Execute(ctx, refPlan, env, inputs); err != nil {
		return nil, nil, nil, fmt.Errorf("reference kernels: %w", err)
	}
	tols = Tolerances(k, env)
	if rounding != nil {
		rounded, err := c.Execute(ctx, rounding, env, inputs)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("reference kernels with rounded sums: %w", err)
		}
		tols = Conditioned(tols, k, rounded, want)
	}
	return inputs, want, tols, nil
}

// CheckOutputs runs p at env on inputs and compares its outputs with
// want, as Check does after computing want: for callers that check many
// kernels of one computation (the tuner's candidates) against one
// reference computed once.
func (c *Executor) CheckOutputs(ctx context.Context, p *lower.Plan, env *ir.Env, inputs, want []*tensor.Tensor, seed uint64, dist tensor.Dist) CheckResult {
	return c.CheckOutputsWithin(ctx, p, env, inputs, want, Tolerances(p.Source, env), seed, dist)
}

// CheckOutputsWithin is CheckOutputs with the outputs' tolerances given.
func (c *Executor) CheckOutputsWithin(ctx context.Context, p *lower.Plan, env *ir.Env, inputs, want []*tensor.Tensor, tols []Tolerance, seed uint64, dist tensor.Dist) CheckResult {
	return c.checkOutputs(ctx, p, env, inputs, want, tols, seed, dist, nil)
}

// checkOutputs is CheckOutputsWithin; where an output is out of
// tolerance and widen is not nil, the outputs are compared again within
// the tolerances widen returns, each element against want or the
// alternative reference widen returns (CompareEither).
func (c *Executor) checkOutputs(ctx context.Context, p *lower.Plan, env *ir.Env, inputs, want []*tensor.Tensor, tols []Tolerance, seed uint64, dist tensor.Dist, widen func() ([]Tolerance, []*tensor.Tensor, error)) CheckResult {
	res := CheckResult{Plan: p.Name, Shape: env.String(), Seed: seed, Dist: dist}
	k := p.Source
	got, err := c.Execute(ctx, p, env, inputs)
	if err != nil {
		res.Err = err
		var f *Failure
		if errors.As(err, &f) && (f.Kind == Crash || f.Kind == Timeout) {
			// The runner restarts; every executor reloads its module on its
			// next use, since the module's generation is stale.
			if rerr := c.Runner.Restart(); rerr != nil {
				res.Err = fmt.Errorf("%w; restarting the runner failed: %v", err, rerr)
			}
		}
		return res
	}
	e, i, m, err := CompareOutputs(got, want, tols, widen)
	res.MaxError = e
	switch {
	case err != nil:
		res.Err = err
	case m != nil:
		res.Err = &Failure{Kind: WrongResult, Msg: fmt.Sprintf("output %s: %v", k.Outputs[i].Name, m)}
	}
	return res
}

// CompareOutputs compares each output in got with want's within tols, in
// order, up to the first out of tolerance. Where one is, and widen is not
// nil, the outputs from it on are compared again within the tolerances
// widen returns, each element against want or the alternative reference
// widen returns (CompareEither). It returns the largest relative error
// so far and, for an output out of tolerance even so, its index and how
// it differs.
func CompareOutputs(got, want []*tensor.Tensor, tols []Tolerance, widen func() ([]Tolerance, []*tensor.Tensor, error)) (maxErr float64, bad int, m *Mismatch, err error) {
	var alt []*tensor.Tensor
	for i := range want {
		e, m, err := Compare(got[i], want[i], tols[i])
		if err != nil {
			return maxErr, i, nil, err
		}
		if m != nil && widen != nil {
			if tols, alt, err = widen(); err != nil {
				return maxErr, i, nil, err
			}
			widen = nil
		}
		if m != nil && alt != nil {
			if e, m, err = CompareEither(got[i], want[i], alt[i], tols[i]); err != nil {
				return maxErr, i, nil, err
			}
		}
		maxErr = max(maxErr, e)
		if m != nil {
			return maxErr, i, m, nil
		}
	}
	return maxErr, -1, nil, nil
}

func (c *Executor) load(ctx context.Context) error {
	c.Runner.mu.Lock()
	current := c.module != nil && c.module.gen == c.Runner.gen
	c.Runner.mu.Unlock()
	if current {
		return nil
	}
	m, err := c.Runner.Load(ctx, c.Binary)
	if err != nil {
		return err
	}
	c.module, c.funcs = &m, map[string]Function{}
	return nil
}

// Unload unloads the executor's module from the runner, if loaded: a
// tuner measures hundreds of candidates' modules one after another. The
// next use loads it again.
func (c *Executor) Unload(ctx context.Context) error {
	c.Runner.mu.Lock()
	current := c.module != nil && c.module.gen == c.Runner.gen
	c.Runner.mu.Unlock()
	m := c.module
	c.module, c.funcs = nil, nil
	if !current {
		return nil
	}
	return c.Runner.Unload(ctx, *m)
}

// Execute launches p's entry points on the inputs (one per input of
// p.Source, at the sizes of env) and returns the outputs.
func (c *Executor) Execute(ctx context.Context, p *lower.Plan, env *ir.Env, inputs []*tensor.Tensor) ([]*tensor.Tensor, error) {
	run, err := c.setup(ctx, p, env, inputs)
	defer run.free(ctx)
	if err != nil {
		return nil, err
	}
	r := c.Runner
	for _, spec := range run.launches {
		if err := r.Launch(ctx, spec); err != nil {
			return nil, err
		}
	}
	if err := r.Sync(ctx); err != nil {
		return nil, err
	}
	for i, o := range run.outs {
		if len(o.Data) == 0 {
			continue
		}
		data, err := r.Read(ctx, run.outBufs[i])
		if err != nil {
			return nil, err
		}
		copy(o.Data, data)
	}
	for i, in := range inputs {
		if len(in.Data) == 0 {
			continue
		}
		data, err := r.Read(ctx, run.inBufs[i])
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(data, in.Data) {
			return nil, &Failure{Kind: WrongResult, Msg: fmt.Sprintf("input %s was modified by the kernel", p.Source.Inputs[i].Name)}
		}
	}
	return run.outs, nil
}

// Time runs the timing protocol (spec's fields other than Launches) on
// p's launches at env, with inputs as given.
func (c *Executor) Time(ctx context.Context, p *lower.Plan, env *ir.Env, inputs []*tensor.Tensor, spec TimeSpec) (Timing, error) {
	run, err := c.setup(ctx, p, env, inputs)
	defer run.free(ctx)
	if err != nil {
		return Timing{}, err
	}
	return c.timeRun(ctx, p, env, run, spec)
}

// timeRun runs the timing protocol on a prepared run of p.
func (c *Executor) timeRun(ctx context.Context, p *lower.Plan, env *ir.Env, run *prepared, spec TimeSpec) (Timing, error) {
	spec.Launches = run.launches
	if len(spec.Launches) == 0 {
		return Timing{}, fmt.Errorf("%s launches nothing at %s", p.Name, env)
	}
	return c.Runner.Time(ctx, spec)
}

// prepared is a plan made ready to launch: its buffers on the GPU, inputs
// written, outputs and workspace poisoned, and the launches' specs.
type prepared struct {
	r               *Runner
	bufs            []Buffer
	inBufs, outBufs []Buffer
	outs            []*tensor.Tensor
	launches        []LaunchSpec
}

func (run *prepared) free(ctx context.Context) {
	for _, b := range run.bufs {
		run.r.Free(ctx, b)
	}
}

func (c *Executor) setup(ctx context.Context, p *lower.Plan, env *ir.Env, inputs []*tensor.Tensor) (*prepared, error) {
	return c.setupOn(ctx, p, env, inputs, nil)
}

// setupOn is setup with the inputs already in device memory in resident
// (one buffer an input, which the run does not free), or, when resident
// is nil, written to buffers of the run's own.
func (c *Executor) setupOn(ctx context.Context, p *lower.Plan, env *ir.Env, inputs []*tensor.Tensor, resident []Buffer) (*prepared, error) {
	run := &prepared{r: c.Runner}
	if err := c.load(ctx); err != nil {
		return run, err
	}
	r := c.Runner
	penv := p.Bind(env)
	alloc := func(n int64) (Buffer, error) {
		b, err := r.Alloc(ctx, max(n, 1))
		if err == nil {
			run.bufs = append(run.bufs, b)
		}
		return b, err
	}
	var args []Arg
	for i, in := range inputs {
		if resident != nil {
			run.inBufs = append(run.inBufs, resident[i])
			args = append(args, BufArg(resident[i]))
			continue
		}
		b, err := alloc(int64(len(in.Data)))
		if err != nil {
			return run, err
		}
		if len(in.Data) > 0 {
			if err := r.Write(ctx, b, in.Data); err != nil {
				return run, err
			}
		}
		run.inBufs = append(run.inBufs, b)
		args = append(args, BufArg(b))
	}
	for _, t := range p.Source.Outputs {
		shape, err := env.Shape(t)
		if err != nil {
			return run, err
		}
		o := tensor.New(t.DType, shape)
		b, err := alloc(int64(len(o.Data)))
		if err != nil {
			return run, err
		}
		if err := r.Fill(ctx, b, 0xFF); err != nil {
			return run, err
		}
		run.outs, run.outBufs = append(run.outs, o), append(run.outBufs, b)
		args = append(args, BufArg(b))
	}
	if p.HasWorkspace() {
		n, err := penv.Int(p.WorkspaceBytes())
		if err != nil {
			return run, err
		}
		b, err := alloc(n)
		if err != nil {
			return run, err
		}
		if err := r.Fill(ctx, b, 0xFF); err != nil {
			return run, err
		}
		args = append(args, BufArg(b))
	}
	if p.Env == nil {
		for _, d := range p.Source.DeclaredDims() {
			args = append(args, I64(env.Dims[d]))
		}
		for _, prm := range p.Source.Params {
			args = append(args, scalarArg(env.Params[prm]))
		}
	}
	for _, l := range p.Launches {
		g := l.Grid()
		blocks, err := penv.Int(g.Blocks)
		if err != nil {
			return run, err
		}
		if blocks == 0 {
			continue
		}
		fn, ok := c.funcs[l.Name]
		if !ok {
			if fn, err = r.Func(ctx, *c.module, l.Name); err != nil {
				return run, err
			}
			c.funcs[l.Name] = fn
		}
		if g.Cluster > 1 {
			// A launch by clusters strides its rows by the grid: only the
			// clusters that fit at once, each looping over the rows, rather
			// than a cluster a row that relaunches clusters as others
			// leave (lower.Grid's Cluster).
			n, err := r.MaxActiveClusters(ctx, fn, int(g.Threads), int(g.Smem), int(g.Cluster))
			if err != nil {
				return run, err
			}
			if n > 0 {
				blocks = min(blocks, int64(n)*g.Cluster)
			}
		}
		run.launches = append(run.launches, LaunchSpec{Func: fn, Grid: [3]int{int(blocks), 1, 1}, Block: [3]int{int(g.Threads), 1, 1}, Smem: int(g.Smem), Args: args})
	}
	return run, nil
}

// scalarArg passes a param value as its ABI type.
func scalarArg(c *ir.Const) Arg {
	switch c.T {
	case ir.F64:
		return F64(c.F)
	case ir.F32:
		return F32(float32(c.F))
	case ir.F16, ir.BF16:
		t := tensor.New(c.T, []int64{1})
		t.SetFloat(0, c.F)
		return U16(binary.LittleEndian.Uint16(t.Data))
	case ir.I64:
		return I64(c.I)
	}
	return I32(int32(c.I)) // i32, and i8/u8/bool, whose low byte is read on little-endian
}

// LongestReduction is the largest number of terms any reduction of k sums
// at env, for the tolerance.
func LongestReduction(k *ir.Kernel, env *ir.Env) int64 {
	longest := int64(1)
	for _, s := range k.Stmts {
		ir.Walk(s.Value, func(e ir.Expr) bool {
			if r, ok := e.(*ir.Reduce); ok {
				n := int64(1)
				for _, ax := range r.Axes {
					lo, _ := env.Int(ax.Lo)
					hi, _ := env.Int(ax.Hi)
					n *= max(hi-lo, 1)
				}
				longest = max(longest, n)
			}
			return true
		})
	}
	return longest
}
