package lower

import "kgen.dev/kgen/ir"

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
	// a thread block cluster (Blocks is a multiple of it).
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
// flight together. As "generic" it is the fallback that makes every spec
// run; as "elementwise" it is the template of statements without
// reductions, and takes VEC consecutive points at a time with vector loads
// and stores where sizes and alignment allow, and with REUSE=1 visits its
// points in the reuse order (Reuse).
type pointwise struct {
	name    string
	accepts func(*ir.Stmt) bool
	vector  bool
}

func (t pointwise) Name() string            { return t.name }
func (t pointwise) Accepts(s *ir.Stmt) bool { return t.accepts(s) }
func (t pointwise) Space() map[string][]int64 {
	s := map[string][]int64{"THREADS": {64, 128, 256, 512, 1024}, "UNROLL": {1, 2, 4, 8}}
	if t.vector {
		s["VEC"] = []int64{1, 2, 4, 8}
		s["REUSE"] = []int64{0, 1}
	}
	return s
}

// Default takes 16 bytes of output per vector (at most 8 points), and
// with vectors, two of them per thread and step.
func (t pointwise) Default(l *Launch) Config {
	if !t.vector || len(l.Stmt.Index) == 0 {
		return Config{"THREADS": 256, "UNROLL": 4}
	}
	size := int64(l.Stmt.Target.DType.Size())
	for _, s := range l.Also {
		size = max(size, int64(s.Target.DType.Size()))
	}
	vec := min(max(16/size, 1), 8)
	return withReuse(l, Config{"THREADS": 256, "UNROLL": 2, "VEC": vec})
}

// Check: REUSE=1 only where a reuse order exists (checkReuse).
func (t pointwise) Check(l *Launch) error {
	if !t.vector {
		return nil
	}
	return checkReuse(l)
}

func (t pointwise) Grid(l *Launch) Grid {
	threads := l.Config["THREADS"]
	per := threads * l.Config["UNROLL"] * max(l.Config["VEC"], 1)
	return Grid{Blocks: capBlocks(cdiv(Points(l.Stmt), per)), Threads: threads}
}

// capBlocks is min(blocks, MaxBlocks), simplified.
func capBlocks(blocks ir.Expr) ir.Expr { return minBlocks(blocks, MaxBlocks) }

// minBlocks is min(blocks, n), simplified.
func minBlocks(blocks ir.Expr, n int64) ir.Expr {
	b, _ := ir.LookupBuiltin("min")
	return Simplify(&ir.Call{Fn: b, T: ir.I64, Args: []ir.Expr{Simplify(blocks), ir.IntConst(n)}})
}
