package runtime

import (
	"context"

	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
	"kgen.dev/kgen/tensor"
)

// Resident is a set of inputs kept in a runner's device memory, on which
// the timings of many plans of one instance (a tuner's candidates, and
// the rounds of its confirmation) run without writing the inputs again:
// for an instance of a few hundred megabytes, writing its inputs through
// the runner took longer than timing it. The inputs are written at the
// first use and again after the runner restarts (a restart frees device
// memory). A timing does not check that its plan left the inputs
// unchanged: check a plan (Executor.CheckOutputs) before timing it on
// resident inputs.
type Resident struct {
	r      *Runner
	inputs []*tensor.Tensor
	bufs   []Buffer
}

// NewResident keeps inputs for timings on r; Free releases them.
func NewResident(r *Runner, inputs []*tensor.Tensor) *Resident {
	return &Resident{r: r, inputs: inputs}
}

// buffers returns the inputs' device buffers, writing them first where
// they are not current (not yet written, or the runner restarted since).
func (res *Resident) buffers(ctx context.Context) ([]Buffer, error) {
	res.r.mu.Lock()
	current := len(res.bufs) == len(res.inputs) && (len(res.bufs) == 0 || res.bufs[0].gen == res.r.gen)
	res.r.mu.Unlock()
	if current {
		return res.bufs, nil
	}
	res.Free(ctx)
	var bufs []Buffer
	for _, in := range res.inputs {
		b, err := res.r.Alloc(ctx, max(int64(len(in.Data)), 1))
		if err != nil {
			res.bufs = bufs
			res.Free(ctx)
			return nil, err
		}
		bufs = append(bufs, b)
		if len(in.Data) > 0 {
			if err := res.r.Write(ctx, b, in.Data); err != nil {
				res.bufs = bufs
				res.Free(ctx)
				return nil, err
			}
		}
	}
	res.bufs = bufs
	return bufs, nil
}

// Free releases the inputs' device memory (a later use writes them
// again).
func (res *Resident) Free(ctx context.Context) {
	for _, b := range res.bufs {
		res.r.Free(ctx, b) // a stale buffer went with the runner's process
	}
	res.bufs = nil
}

// TimeResident is Time on resident inputs (of p.Source, at env's sizes).
func (c *Executor) TimeResident(ctx context.Context, p *lower.Plan, env *ir.Env, res *Resident, spec TimeSpec) (Timing, error) {
	bufs, err := res.buffers(ctx)
	if err != nil {
		return Timing{}, err
	}
	run, err := c.setupOn(ctx, p, env, res.inputs, bufs)
	defer run.free(ctx)
	if err != nil {
		return Timing{}, err
	}
	return c.timeRun(ctx, p, env, run, spec)
}
