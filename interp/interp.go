// Package interp is kgen's reference interpreter: it evaluates a checked
// kernel on concrete host tensors and is the ground truth that every GPU
// backend is verified against.
//
// # Semantics
//
// The interpreter computes exactly what the IR says and rounds only where
// the IR says so:
//
//   - Floating-point values of every float dtype are computed in float64,
//     integers of every integer dtype in int64 (wrapping on overflow), bools
//     as bool. Loads widen f16, bf16 and f32 elements exactly.
//   - A Cast rounds: to float dtypes to nearest even from float64 (via
//     tensor.RoundFloat, or one exact step from integers); from floats to
//     integers it truncates toward zero and saturates, NaN giving 0; between
//     integers it wraps (two's complement) to the target width; to bool it
//     tests != 0. Stores round to the target's dtype the same way.
//   - Outputs written by an earlier statement are read back rounded to
//     their dtype, exactly as stored. Lets are kept unrounded in float64 or
//     int64 buffers: their dtype is a compute type (f32, f64, i64, bool). A
//     let whose dtype is a storage-only type (f16, bf16, i8, u8, i32) is
//     rounded to it on store.
//   - Integer / and % are floor division and floor modulo; integer division
//     by zero is a *RunError. Float % is floor modulo x - floor(x/y)*y;
//     float division follows IEEE 754.
//   - && and || short-circuit, as in C: the right operand is evaluated
//     only when the left does not decide the result, and c ? a : b
//     evaluates only the chosen branch, so a read guarded by a condition
//     (i > 0 && X[i - 1] > 0, or i > 0 ? X[i - 1] : 0) never faults when
//     the condition excludes it.
//   - T[i, ...] ?? v yields v when any index is outside [0, extent); v is
//     evaluated only then. Without ?? an out-of-range read is a *RunError at
//     the read's span.
//   - A reduction visits every point of its axes in order, the first axis
//     outermost, each over its half-open range, and accumulates in float64
//     or int64 without intermediate rounding. An empty range gives the
//     identity: sum 0, prod 1, max -Inf and min +Inf for floats,
//     math.MinInt64 and math.MaxInt64 for integers. Float max and min
//     propagate NaN: if any element is NaN the result is NaN (as do the
//     builtins min, max and clamp; relu keeps NaN). Bool reductions reduce
//     0/1 as integers and test the result != 0.
//   - Literal constants are used at the value the IR holds (Const.F or
//     Const.I); they are not rounded to their type.
//
// Results do not depend on Options.Workers: each output point is computed
// by one goroutine, with reductions in a fixed order.
package interp

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/tensor"
)

// Options tune a run; they never change its results.
type Options struct {
	// Workers is the number of goroutines each statement is split across;
	// 0 (or negative) means runtime.GOMAXPROCS(0).
	Workers int
	// RoundOps rounds the result of every operation on f32, f16 or bf16
	// values to its type, as a GPU evaluating the spec in its declared
	// types does (a reduction's total, not each of its steps). Without
	// it, such operations are evaluated in f64 and rounded where a value
	// is stored or cast: the reference. The difference between the two
	// measures how much the spec's own formulas amplify rounding
	// (runtime.Conditioned).
	RoundOps bool
}

// RunError is a failure while evaluating a kernel: an out-of-range read
// without ??, an integer division by zero. Span is the offending
// expression in the spec.
type RunError struct {
	Span diag.Span
	Msg  string
}

// Error formats the error as file:line:col: message when the span is known.
func (e *RunError) Error() string {
	if !e.Span.IsValid() {
		return e.Msg
	}
	p := e.Span.Src.Pos(e.Span.Start)
	return fmt.Sprintf("%s:%d:%d: %s", e.Span.Src.Name, p.Line, p.Col, e.Msg)
}

// Run evaluates kernel k at the sizes of env on inputs (one per k.Inputs,
// in order, with matching dtype and shape) and returns the outputs (one per
// k.Outputs). Run-time failures are returned as *RunError; inputs are not
// modified.
func Run(k *ir.Kernel, env *ir.Env, inputs []*tensor.Tensor, opts Options) (outs []*tensor.Tensor, err error) {
	defer func() {
		// Evaluation recovers its own failures; this catches a kernel the
		// compiler mishandles, which is kgen's bug, not the user's.
		if x := recover(); x != nil {
			outs, err = nil, fmt.Errorf("interp: internal error: %v", x)
		}
	}()
	if k == nil || env == nil {
		return nil, fmt.Errorf("interp: nil kernel or env")
	}
	if env.Kernel != nil && env.Kernel != k {
		return nil, fmt.Errorf("interp: env is for kernel %s, not %s", env.Kernel.Name, k.Name)
	}
	if len(inputs) != len(k.Inputs) {
		return nil, fmt.Errorf("kernel %s takes %d inputs (%s), got %d", k.Name, len(k.Inputs), tensorNames(k.Inputs), len(inputs))
	}
	c := &compiler{k: k, env: env, slots: map[*ir.Index]int{}, bufs: map[*ir.Tensor]*buffer{}, round: opts.RoundOps}
	read := loadedTensors(k)
	for i, t := range k.Inputs {
		in := inputs[i]
		shape, err := shapeOf(env, t)
		if err != nil {
			return nil, err
		}
		if in == nil {
			return nil, fmt.Errorf("input %d (%s) is nil", i, t.Name)
		}
		if in.DType != t.DType || !equalShape(in.Shape, shape) {
			return nil, fmt.Errorf("input %s must be %s%v at %s, got %s%v", t.Name, t.DType, shape, env, in.DType, in.Shape)
		}
		if n, _ := numElements(shape); int64(len(in.Data)) != n*int64(t.DType.Size()) {
			return nil, fmt.Errorf("input %s has %d bytes of data, want %d", t.Name, len(in.Data), n*int64(t.DType.Size()))
		}
		b := newBuffer(t, shape)
		b.fill(in)
		c.bufs[t] = b
	}
	outs = make([]*tensor.Tensor, len(k.Outputs))
	for i, t := range k.Outputs {
		shape, err := shapeOf(env, t)
		if err != nil {
			return nil, err
		}
		outs[i] = tensor.New(t.DType, shape)
		b := &buffer{t: t, shape: shape, strides: strides(shape), out: outs[i]}
		if read[t] {
			b.alloc()
		}
		c.bufs[t] = b
	}
	for _, t := range k.Lets {
		shape, err := shapeOf(env, t)
		if err != nil {
			return nil, err
		}
		c.bufs[t] = newBuffer(t, shape)
	}

	stmts := make([]*compiledStmt, len(k.Stmts))
	for i, s := range k.Stmts {
		cs, err := c.stmt(s)
		if err != nil {
			return nil, err
		}
		stmts[i] = cs
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	for _, cs := range stmts {
		if err := cs.run(workers, c.nslots); err != nil {
			return nil, err
		}
		if b := c.bufs[cs.target]; b.out != nil {
			b.fill(b.out) // read back what was stored, rounded (no-op when unread)
		}
	}
	return outs, nil
}

// InputSeed is the seed RandomInputs uses for input i: a SplitMix64 hash of
// seed and i, so that inputs get unrelated streams.
func InputSeed(seed uint64, i int) uint64 {
	return tensor.SplitMix(seed, uint64(i))
}

// RandomInputs makes seeded inputs for k at env: input i is drawn from dist
// with seed InputSeed(seed, i), so the result depends only on the kernel's
// input dtypes and shapes, dist and seed.
func RandomInputs(k *ir.Kernel, env *ir.Env, dist tensor.Dist, seed uint64) ([]*tensor.Tensor, error) {
	if _, err := tensor.ParseDist(dist.String()); err != nil {
		return nil, err
	}
	ins := make([]*tensor.Tensor, len(k.Inputs))
	for i, t := range k.Inputs {
		shape, err := shapeOf(env, t)
		if err != nil {
			return nil, err
		}
		if t.DType.Size() == 0 {
			return nil, fmt.Errorf("input %s has invalid dtype %s", t.Name, t.DType)
		}
		ins[i] = tensor.Random(t.DType, shape, dist, InputSeed(seed, i))
	}
	return ins, nil
}

func tensorNames(ts []*ir.Tensor) string {
	var names []string
	for _, t := range ts {
		names = append(names, t.Name)
	}
	return strings.Join(names, ", ")
}

func equalShape(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// shapeOf evaluates t's shape and checks that it is addressable.
func shapeOf(env *ir.Env, t *ir.Tensor) ([]int64, error) {
	shape, err := env.Shape(t)
	if err != nil {
		return nil, fmt.Errorf("shape of %s: %v", t.Name, err)
	}
	for d, n := range shape {
		if n < 0 {
			return nil, fmt.Errorf("shape of %s: dim %d is %d at %s", t.Name, d+1, n, env)
		}
	}
	if _, ok := numElements(shape); !ok {
		return nil, fmt.Errorf("%s%v is too large", t.Name, shape)
	}
	return shape, nil
}

// numElements returns the product of shape and whether it stays within
// what a byte slice of 8-byte elements can hold.
func numElements(shape []int64) (int64, bool) {
	const limit = math.MaxInt / 8
	n := int64(1)
	for _, d := range shape {
		if d != 0 && n > limit/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

func strides(shape []int64) []int64 {
	st := make([]int64, len(shape))
	s := int64(1)
	for d := len(shape) - 1; d >= 0; d-- {
		st[d] = s
		s *= shape[d]
	}
	return st
}

// loadedTensors returns the tensors some statement reads.
func loadedTensors(k *ir.Kernel) map[*ir.Tensor]bool {
	read := map[*ir.Tensor]bool{}
	for _, s := range k.Stmts {
		ir.Walk(s.Value, func(e ir.Expr) bool {
			if l, ok := e.(*ir.Load); ok {
				read[l.Tensor] = true
			}
			return true
		})
	}
	return read
}

// class is how a dtype's values are held while computing.
type class uint8

const (
	clsInvalid class = iota
	clsFloat
	clsInt
	clsBool
)

func classOf(t ir.DType) class {
	switch {
	case t.IsFloat():
		return clsFloat
	case t.IsInt():
		return clsInt
	case t == ir.Bool:
		return clsBool
	}
	return clsInvalid
}

// buffer holds a tensor's elements in compute form: exactly one of f, i, b
// is allocated, by the dtype's class. For an output, out is the tensor
// being written, and the buffer (allocated only if a later statement reads
// the output) is filled from it after its statement.
type buffer struct {
	t       *ir.Tensor
	shape   []int64
	strides []int64
	f       []float64
	i       []int64
	b       []bool
	out     *tensor.Tensor
}

func newBuffer(t *ir.Tensor, shape []int64) *buffer {
	b := &buffer{t: t, shape: shape, strides: strides(shape)}
	b.alloc()
	return b
}

func (b *buffer) alloc() {
	n, _ := numElements(b.shape)
	switch classOf(b.t.DType) {
	case clsFloat:
		b.f = make([]float64, n)
	case clsInt:
		b.i = make([]int64, n)
	case clsBool:
		b.b = make([]bool, n)
	}
}

// fill copies t's elements, exactly widened.
func (b *buffer) fill(t *tensor.Tensor) {
	switch {
	case b.f != nil:
		for i := range b.f {
			b.f[i] = t.Float(int64(i))
		}
	case b.i != nil:
		for i := range b.i {
			b.i[i] = t.Int(int64(i))
		}
	case b.b != nil:
		for i := range b.b {
			b.b[i] = t.Int(int64(i)) != 0
		}
	}
}

// frame is one goroutine's evaluation state: the current value of every
// index, by slot.
type frame struct {
	idx []int64
}

// newFrame returns a frame with nslots index slots, padded so that the
// frames of different workers, written at every step of a reduction, never
// share a cache line.
func newFrame(nslots int) *frame {
	const pad = 16 // int64s: 128 bytes
	buf := make([]int64, pad+nslots+pad)
	return &frame{idx: buf[pad : pad+nslots : pad+nslots]}
}

// compiledStmt is a statement ready to run over its points.
type compiledStmt struct {
	target  *ir.Tensor
	slots   []int
	lo, hi  []int64 // range of each statement index
	strides []int64 // of the target, per statement index
	total   int64
	store   func(f *frame, off int64)
}

// stmt compiles s. The statement's indices must range inside the target.
func (c *compiler) stmt(s *ir.Stmt) (*compiledStmt, error) {
	t := s.Target
	b := c.bufs[t]
	if b == nil || t.Kind == ir.Input {
		return nil, fmt.Errorf("interp: statement writes %s, which is not an output or let of kernel %s", t.Name, c.k.Name)
	}
	if len(s.Index) != len(b.shape) {
		return nil, fmt.Errorf("interp: %s has rank %d but its statement has %d indices", t.Name, len(b.shape), len(s.Index))
	}
	cs := &compiledStmt{target: t, strides: b.strides, total: 1}
	for d, ix := range s.Index {
		lo, hi := int64(0), b.shape[d]
		var err error
		if ix.Lo != nil {
			if lo, err = c.env.Int(ix.Lo); err != nil {
				return nil, fmt.Errorf("range of %s: %v", ix.Name, err)
			}
		}
		if ix.Hi != nil {
			if hi, err = c.env.Int(ix.Hi); err != nil {
				return nil, fmt.Errorf("range of %s: %v", ix.Name, err)
			}
		}
		if hi > lo && (lo < 0 || hi > b.shape[d]) {
			return nil, fmt.Errorf("interp: index %s of %s ranges over [%d, %d), outside its extent %d", ix.Name, t.Name, lo, hi, b.shape[d])
		}
		n := max(hi-lo, 0)
		if n != 0 && cs.total > math.MaxInt64/n {
			return nil, fmt.Errorf("interp: statement for %s has too many points", t.Name)
		}
		cs.total *= n
		cs.lo = append(cs.lo, lo)
		cs.hi = append(cs.hi, max(hi, lo))
		cs.slots = append(cs.slots, c.bind(ix))
	}
	c.scope = append(c.scope[:0], s.Index...)
	defer func() { c.scope = c.scope[:0] }()
	store, err := c.storeFn(s, b)
	if err != nil {
		return nil, err
	}
	cs.store = store
	return cs, nil
}

func (c *compiler) storeFn(s *ir.Stmt, b *buffer) (func(*frame, int64), error) {
	t := s.Target
	if s.Value == nil {
		return nil, fmt.Errorf("interp: statement for %s has no value", t.Name)
	}
	if s.Value.Type() != t.DType {
		return nil, fmt.Errorf("interp: statement for %s computes %s, not %s", t.Name, s.Value.Type(), t.DType)
	}
	dt := t.DType
	switch classOf(dt) {
	case clsFloat:
		v, err := c.float(s.Value)
		if err != nil {
			return nil, err
		}
		if out := b.out; out != nil {
			return func(f *frame, off int64) { out.SetFloat(off, v(f)) }, nil
		}
		buf := b.f
		if dt.Compute() != dt {
			return func(f *frame, off int64) { buf[off] = tensor.RoundFloat(dt, v(f)) }, nil
		}
		return func(f *frame, off int64) { buf[off] = v(f) }, nil
	case clsInt:
		v, err := c.int(s.Value)
		if err != nil {
			return nil, err
		}
		if out := b.out; out != nil {
			return func(f *frame, off int64) { out.SetInt(off, v(f)) }, nil
		}
		buf := b.i
		return func(f *frame, off int64) { buf[off] = wrapInt(dt, v(f)) }, nil
	case clsBool:
		v, err := c.bool(s.Value)
		if err != nil {
			return nil, err
		}
		if out := b.out; out != nil {
			return func(f *frame, off int64) { out.SetInt(off, b2i(v(f))) }, nil
		}
		buf := b.b
		return func(f *frame, off int64) { buf[off] = v(f) }, nil
	}
	return nil, fmt.Errorf("interp: %s has invalid dtype %s", t.Name, dt)
}

// run evaluates the statement at every point, split into chunks that
// workers claim in order. On failure the error of the first failing point
// (in row-major order) is returned, whatever the number of workers.
func (cs *compiledStmt) run(workers, nslots int) error {
	if cs.total == 0 {
		return nil
	}
	chunk := max(1, (cs.total+int64(workers)*16-1)/(int64(workers)*16))
	nchunks := (cs.total + chunk - 1) / chunk
	workers = int(min(int64(workers), nchunks))

	var (
		next    atomic.Int64
		mu      sync.Mutex
		errAt   atomic.Int64 // flat index of the first failure found so far
		firstEr error
	)
	errAt.Store(math.MaxInt64)
	work := func() {
		f := newFrame(nslots)
		for {
			ci := next.Add(1) - 1
			if ci >= nchunks {
				return
			}
			start := ci * chunk
			if start > errAt.Load() {
				continue // a failure precedes this chunk
			}
			end := min(start+chunk, cs.total)
			if p, err := cs.runChunk(f, start, end); err != nil {
				mu.Lock()
				if p < errAt.Load() {
					errAt.Store(p)
					firstEr = err
				}
				mu.Unlock()
			}
		}
	}
	if workers <= 1 {
		work()
	} else {
		var wg sync.WaitGroup
		for range workers {
			wg.Go(work)
		}
		wg.Wait()
	}
	return firstEr
}

// runChunk evaluates points [start, end); on failure it returns the flat
// index of the failing point and its error.
func (cs *compiledStmt) runChunk(f *frame, start, end int64) (p int64, err error) {
	r := len(cs.slots)
	cur := make([]int64, r)
	off := int64(0)
	rem := start
	for d := r - 1; d >= 0; d-- {
		n := cs.hi[d] - cs.lo[d]
		cur[d] = cs.lo[d] + rem%n
		rem /= n
		f.idx[cs.slots[d]] = cur[d]
		off += cur[d] * cs.strides[d]
	}
	p = start
	defer func() {
		if x := recover(); x != nil {
			if re, ok := x.(*RunError); ok {
				err = re
			} else {
				err = fmt.Errorf("interp: internal error evaluating %s: %v", cs.target.Name, x)
			}
		}
	}()
	store := cs.store
	for ; p < end; p++ {
		store(f, off)
		for d := r - 1; d >= 0; d-- {
			cur[d]++
			off += cs.strides[d]
			if cur[d] < cs.hi[d] {
				f.idx[cs.slots[d]] = cur[d]
				break
			}
			off -= cs.strides[d] * (cs.hi[d] - cs.lo[d])
			cur[d] = cs.lo[d]
			f.idx[cs.slots[d]] = cur[d]
		}
	}
	return p, nil
}
