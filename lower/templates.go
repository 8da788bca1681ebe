package lower

import (
	"fmt"
	"slices"

	"kgen.dev/kgen/ir"
)

// Template is a way to compute a statement on a GPU, with its tuning space.
// Backends register an implementation for each template by name.
type Template interface {
	Name() string
	// Accepts reports whether the template can compute s.
	Accepts(s *ir.Stmt) bool
	// Space lists the tuning parameters and their candidate values.
	Space() map[string][]int64
	// Default is the heuristic configuration an untuned build uses.
	Default(l *Launch) Config
	// Grid is the launch geometry of l under l.Config.
	Grid(l *Launch) Grid
}

// Grid is a one-dimensional launch: Blocks blocks (an i64 expression of
// the kernel's sizes) of Threads threads, each with Smem bytes of dynamic
// shared memory. A launch whose Blocks is 0 is skipped.
type Grid struct {
	Blocks  ir.Expr
	Threads int64
	Smem    int64
	// MinBlocks, when set, asks the compiler to fit that many blocks on
	// a multiprocessor (bounding registers per thread).
	MinBlocks int64
	// Cluster, when above 1, groups every Cluster consecutive blocks into
	// a thread block cluster (Blocks is a multiple of it), and the
	// launch's rows stride by the grid, gridDim.x / Cluster clusters
	// apart: any whole number of clusters up to Blocks computes every
	// row, and the runner launches only those that fit at once.
	Cluster int64
}

// MaxBlocks caps grid-stride launches: beyond it, each thread loops.
const MaxBlocks = 1 << 20

// templates is the table choose consults, most specific first. The generic
// template comes last and accepts every statement.
var templates = []Template{
	matmulWgmma{},
	matmulMfma{},
	matmulTemplate{mma: true},
	matmulTemplate{mma: false},
	igemmWgmma{},
	igemmTemplate{mma: true},
	igemmTemplate{mma: false},
	rowReduce{},
	colReduce{},
	colGroup{},
	transposeTemplate{},
	windowTemplate{},
	pointwise{name: "elementwise", accepts: func(s *ir.Stmt) bool { return ir.Classify(s) == ir.Elementwise }, vector: true},
	generic,
}

// generic computes any statement, one output point per thread.
var generic Template = pointwise{name: "generic", accepts: func(*ir.Stmt) bool { return true }}

// Points is the number of output points of s, an i64 expression.
func Points(s *ir.Stmt) ir.Expr {
	var extents []ir.Expr
	for _, ix := range s.Index {
		extents = append(extents, &ir.Binary{Op: ir.Sub, X: ix.Hi, Y: ix.Lo})
	}
	return Simplify(product(extents))
}

// pointwise computes one output point per thread in a grid-stride loop;
// reductions inside the point run serially in that thread. Each thread
// takes UNROLL points a block apart per step, so that their loads are in
// flight together, and with VEC > 1 VEC consecutive points at a time,
// with vector loads and stores where sizes and alignment allow (and, in a
// window's taps, loads of the same element that the compiler can share
// between the points). As "generic" it is the fallback that makes every
// spec run; as "elementwise" it is the template of statements without
// reductions, and with REUSE=1 visits its points in the reuse order
// (Reuse).
type pointwise struct {
	name    string
	accepts func(*ir.Stmt) bool
	vector  bool
}

func (t pointwise) Name() string            { return t.name }
func (t pointwise) Accepts(s *ir.Stmt) bool { return t.accepts(s) }
func (t pointwise) Space() map[string][]int64 {
	s := map[string][]int64{"THREADS": {64, 128, 256, 512, 1024}, "UNROLL": {1, 2, 4, 8}, "VEC": {1, 2, 4, 8}}
	if !t.vector {
		s["ROWS"] = []int64{1, 2, 4}
	} else {
		s["REUSE"] = []int64{0, 1}
		s["HOIST"] = []int64{0, 1}
		s["BLOCKS_PER_SM"] = blocksPerSM
	}
	return s
}

// Default takes 16 bytes of output per vector (at most 8 points), and
// with vectors, two of them per thread and step, or one where two would
// leave fewer than two blocks for each of bigGPU's multiprocessors: the
// points of a small launch spread over twice the threads, each with half
// the serial arithmetic. Before and after on the H200
// (testsuite/results/2026-11-28-h200-s30-second/small-default/): silu_kb
// (16 x 16384 f32) 3.07 -> 2.43 us on cuda:sm_90, gelu_kb 2.89 -> 2.30,
// the other activations of that size 0.78-0.85x, and the same on
// hip:nvidia; leaky_relu_kb (little arithmetic) and the launches under 2
// us the same. As "generic", 4 points a block apart a step, VEC
// consecutive points each where windowVec finds points that share work,
// or one group a step where the window's rows are read as vectors, of
// ROWS output rows where they share input rows (rowVectorShape).
func (t pointwise) Default(l *Launch) Config {
	if !t.vector || len(l.Stmt.Index) == 0 {
		c := Config{"THREADS": 256, "UNROLL": 4}
		if v, r, ok := rowVectorShape(l); ok {
			c["VEC"], c["UNROLL"] = v, 1
			if r > 1 {
				c["ROWS"] = r
			}
		} else if v, u := windowVec(l.Stmt); v > 1 {
			c["VEC"], c["UNROLL"] = v, u
		}
		return c
	}
	size := int64(l.Stmt.Target.DType.Size())
	for _, s := range l.Also {
		size = max(size, int64(s.Target.DType.Size()))
	}
	vec := min(max(16/size, 1), 8)
	for vec > 1 && !wholeGroups(l, vec) {
		vec /= 2
	}
	unroll := int64(2)
	if p, ok := Points(l.Stmt).(*ir.Const); ok && (p.I+256*unroll*vec-1)/(256*unroll*vec) < 2*bigGPU {
		unroll = 1
	}
	return withReuse(l, Config{"THREADS": 256, "UNROLL": unroll, "VEC": vec})
}

// wholeGroups tells whether groups of vec consecutive points of an
// elementwise launch can move as vectors, as far as its constant sizes
// tell: the last index's extent and start, and each output's rows, are
// multiples of vec. Where they are not, the backends take the scalar loop
// at run time, so the default takes a shorter vector that fits instead:
// with vectors of 4, padding 16 x 3 rows of 224 f32 by 3 (rows of 230)
// took 13.45 us on the H100, all of it in the scalar loop, and 9.59 us
// with vectors of 2 (testsuite/results/2026-11-27-h100-s19-tune/).
func wholeGroups(l *Launch, vec int64) bool {
	last := l.Stmt.Index[len(l.Stmt.Index)-1]
	sizes := []ir.Expr{&ir.Binary{Op: ir.Sub, X: last.Hi, Y: last.Lo}, last.Lo}
	for _, s := range append([]*ir.Stmt{l.Stmt}, l.Also...) {
		if len(s.Target.Shape) > 0 {
			sizes = append(sizes, s.Target.Shape[len(s.Target.Shape)-1])
		}
	}
	for _, e := range sizes {
		if c, ok := Simplify(e).(*ir.Const); ok && c.I%vec != 0 {
			return false
		}
	}
	return true
}

// implicit is the value that a template takes for a parameter of its space
// that a configuration leaves out (its defaults and a user's --config may):
// no reuse order, no staged rows, one point or element at a time, one
// pipeline stage.
var implicit = map[string]int64{"REUSE": 0, "STAGE": 0, "VEC": 1, "UNROLL": 1, "num_stages": 1, "HOIST": 0, "BLOCKS_PER_SM": 1, "ROWS": 1}

// WithoutImplicit is c less the parameters at their implicit value, which
// generate the same kernel present or absent: two configurations of one
// template that differ only there are the same configuration (see
// tune.CanonicalConfig).
func (c Config) WithoutImplicit() Config {
	out := Config{}
	for k, v := range c {
		if iv, ok := implicit[k]; !ok || iv != v {
			out[k] = v
		}
	}
	return out
}

// DefaultConfig is the heuristic default of l's template, with every
// parameter of the template's space set (to its implicit value where the
// default leaves it out): the default is then a point of the space, which
// kgen tune measures first as the baseline of its search.
func DefaultConfig(l *Launch) Config {
	c := l.Template.Default(l)
	for name := range l.Template.Space() {
		if _, ok := c[name]; !ok {
			if v, ok := implicit[name]; ok {
				c[name] = v
			}
		}
	}
	return c
}

// windowVec is the default VEC and UNROLL of a generic statement whose
// points each reduce over a window of an input, measured on the H100: m
// points a thread, one a step, where the last index modulo m (2, 4 or
// 8) picks a transposed convolution's taps, which its strided sums
// (stridesum.go) leave in the load's indices: a thread's points then take
// every residue, their loads of the input overlapping (convt1d_up2
// 253.95 us with VEC 4 and UNROLL 4, the default before, 243.36 with
// UNROLL 1, 204.86 with VEC 2, 177.22 with VEC 2 and UNROLL 1, 190.66
// with UNROLL 2; testsuite/results/2026-11-28-h100-s24-convt-vec/; before
// the strided sums the taps were guards, and VEC 4 made them diverge no
// more: 752.83 -> 289.76 us, -s18-generic-vec/); 2 (UNROLL 4) where an
// input's window runs along the last index at stride 1 (two points share
// all but one tap a row: dw_mobilenet 61.89 -> 54.02 us, 80.64 with 4,
// whose warps' loads span four times the lines;
// testsuite/results/2026-11-27-h100-s18-generic-vec/); else 1 (windows
// at stride 2 shared no more: dw_s2_5x5 16.58 -> 18.91,
// maxpool_3x3_s2_p1 the same).
func windowVec(s *ir.Stmt) (vec, unroll int64) {
	if len(s.Index) == 0 || len(ir.TopReductions(s.Value)) == 0 {
		return 1, 4
	}
	last := s.Index[len(s.Index)-1]
	reduced := func(e ir.Expr) bool {
		return ir.Any(e, func(x ir.Expr) bool {
			ref, ok := x.(*ir.IndexRef)
			return ok && !slices.Contains(s.Index, ref.Index)
		})
	}
	vec, modulus := int64(1), int64(0)
	ir.Walk(s.Value, func(x ir.Expr) bool {
		switch x := x.(type) {
		case *ir.Binary:
			if c, ok := x.Y.(*ir.Const); ok && x.Op == ir.Mod && Mentions(x.X, last) && (c.I == 2 || c.I == 4 || c.I == 8) {
				modulus = max(modulus, c.I)
			}
		case *ir.Load:
			if len(x.Index) == 0 || x.Tensor.Kind != ir.Input {
				return true
			}
			e := x.Index[len(x.Index)-1]
			if c, ok := Simplify(orZero(coefficient(e, last))).(*ir.Const); ok && c.I == 1 && reduced(e) {
				vec = max(vec, 2)
			}
		}
		return true
	})
	if modulus > 0 {
		return modulus, 1
	}
	return vec, 4
}

// Check: REUSE=1 only where a reuse order exists (checkReuse); HOIST=1
// only with steps of several vector groups (UNROLL and VEC above 1), whose
// loads it issues before their arithmetic.
func (t pointwise) Check(l *Launch) error {
	if !t.vector {
		return checkRows(l)
	}
	if err := checkOccupancy(l); err != nil {
		return err
	}
	if l.Config["HOIST"] == 1 && (l.Config["UNROLL"] < 2 || l.Config["VEC"] < 2) {
		return fmt.Errorf("HOIST=1 needs UNROLL and VEC above 1: it issues the loads of a step's vector groups before their arithmetic")
	}
	return checkReuse(l)
}

func (t pointwise) Grid(l *Launch) Grid {
	threads := l.Config["THREADS"]
	per := threads * l.Config["UNROLL"] * max(l.Config["VEC"], 1) * max(l.Config["ROWS"], 1)
	return occupancy(l, Grid{Blocks: capBlocks(cdiv(Points(l.Stmt), per)), Threads: threads})
}

// checkRows: ROWS above 1 (generic) only where a thread's VEC points of
// each of ROWS output rows read their window's rows as vectors (RowsFit),
// which the thread then loads once for all its rows: a 5 x 5 window at
// stride 2 reads 7 input rows for 2 output rows, where two threads read
// 5 each.
func checkRows(l *Launch) error {
	rows := l.Config["ROWS"]
	if rows <= 1 {
		return nil
	}
	vec := l.Config["VEC"]
	if vec < 2 {
		return fmt.Errorf("ROWS=%d reads a window's rows as vectors: VEC must be 2 or more", rows)
	}
	if _, err := RowsFit(l, vec, rows); err != nil {
		return fmt.Errorf("ROWS=%d at VEC=%d: %v", rows, vec, err)
	}
	return nil
}

// blocksPerSM is the space of BLOCKS_PER_SM, the blocks a launch asks the
// compiler to fit on a multiprocessor, in row-reduce, elementwise and
// col-group (the CUDA-core and mma products declare theirs, 1 and 2).
var blocksPerSM = []int64{1, 2, 4, 8, 16}

// occupancy sets g's MinBlocks from BLOCKS_PER_SM where it is above 1:
// the compiler then bounds each thread's registers (65536 / (threads x
// BLOCKS_PER_SM) on sm_90), spilling what does not fit, so that that many
// blocks fit on a multiprocessor. Launch.Check refuses more threads than
// a multiprocessor holds.
func occupancy(l *Launch, g Grid) Grid {
	if b := l.Config["BLOCKS_PER_SM"]; b > 1 {
		g.MinBlocks = b
	}
	return g
}

// checkOccupancy refuses BLOCKS_PER_SM above 1 on HIP targets (every
// target without mma.sync), whose launch bounds take no count of blocks:
// there it would change nothing, and a search would time the same kernel
// again.
func checkOccupancy(l *Launch) error {
	if l.Config["BLOCKS_PER_SM"] > 1 && l.Target.NoMMASync {
		return fmt.Errorf("BLOCKS_PER_SM=%d: HIP's launch bounds take no count of blocks, so it would change nothing", l.Config["BLOCKS_PER_SM"])
	}
	return nil
}

// capBlocks is min(blocks, MaxBlocks), simplified.
func capBlocks(blocks ir.Expr) ir.Expr { return minBlocks(blocks, MaxBlocks) }

// minBlocks is min(blocks, n), simplified.
func minBlocks(blocks ir.Expr, n int64) ir.Expr {
	b, _ := ir.LookupBuiltin("min")
	return Simplify(&ir.Call{Fn: b, T: ir.I64, Args: []ir.Expr{Simplify(blocks), ir.IntConst(n)}})
}
