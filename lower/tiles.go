package lower

import (
	"fmt"
	"maps"
	"slices"

	"kgen.dev/kgen/ir"
)

// Tile-level targets (Triton) program blocks of tensors, not threads: a
// launch is a grid of programs, each computing a block of outputs with
// num_warps warps that the compiler lays out. Their templates are the
// same concepts as the thread-level ones (elementwise, generic, row
// reductions, column reductions, transposes, matrix products, implicit
// GEMMs), with tuning spaces in the tile language's terms: BLOCK sizes,
// num_warps, num_stages, GROUP_M. Their Grid is Blocks = programs,
// Threads = 32 * num_warps and no dynamic shared memory (the compiler
// allocates it), so that plans, manifests, --config and the runner's
// launch protocol are the same for every backend.

// tileTemplates is the table choose consults for a tile-level target,
// most specific first; tileGeneric accepts every statement.
var tileTemplates = []Template{
	tileContraction{name: "matmul", match: func(s *ir.Stmt) *Contraction { return matmulContraction(MatchMatmul(s)) }},
	tileContraction{name: "igemm", match: func(s *ir.Stmt) *Contraction { return igemmContraction(MatchIGemm(s)) }},
	tileRowReduce{},
	tileColReduce{},
	tileColGroup{},
	tileTranspose{},
	tilePointwise{name: "elementwise", accepts: func(s *ir.Stmt) bool { return ir.Classify(s) == ir.Elementwise }},
	tileGeneric,
}

// tileGeneric computes any statement, a block of output points a program,
// reductions inside a point running serially over BLOCK points at once.
var tileGeneric Template = tilePointwise{name: "generic", accepts: func(*ir.Stmt) bool { return true }}

// templatesFor is the template table of a target.
func templatesFor(lim Limits) []Template {
	if lim.Tiles {
		return tileTemplates
	}
	return templates
}

// warpSpace is the num_warps of every tile template (row-reduce also
// takes 32: tileRowReduce.Default).
var warpSpace = []int64{1, 2, 4, 8, 16}

// stageSpace is the num_stages of the tile templates that stream a
// reduction through blocks in a loop: how many steps' loads the loop
// issues ahead. 1 (what a config without num_stages means) loads each
// step's block when the step begins.
var stageSpace = []int64{1, 2, 3, 4}

// tilePointwise computes BLOCK output points a program, one program per
// block of points (flat, the last index fastest), with masks on the last
// block. As "generic", reductions inside a point run as serial loops over
// the reduction's points, the block's points in parallel. With UNROLL > 1
// the program takes its points in UNROLL steps of BLOCK / UNROLL
// consecutive points (a static loop, whose steps' loads the compiler may
// issue together): where BLOCK / UNROLL is the program's 32 * num_warps
// threads, consecutive points fall on consecutive lanes, so that a load
// whose addresses are not consecutive (a window at stride 2, a row
// shifted by a padding) spans the fewest sectors an instruction, where
// Triton would otherwise give each thread several consecutive points for
// the 16-byte stores.
type tilePointwise struct {
	name    string
	accepts func(*ir.Stmt) bool
}

func (t tilePointwise) Name() string            { return t.name }
func (t tilePointwise) Accepts(s *ir.Stmt) bool { return t.accepts(s) }
func (t tilePointwise) Space() map[string][]int64 {
	s := map[string][]int64{"BLOCK": {32, 64, 128, 256, 512, 1024, 2048, 4096, 8192}, "num_warps": warpSpace, "UNROLL": {1, 2, 4, 8}}
	if t.name == "elementwise" {
		s["REUSE"] = []int64{0, 1}
	} else {
		s["VEC"] = []int64{1, 2, 4}
		s["ROWS"] = []int64{1, 2, 4}
	}
	return s
}

// Check: each step's BLOCK / UNROLL points at least the program's
// threads, and REUSE=1 only where a reuse order exists (checkReuse). With
// fewer points than threads Triton holds each point in several threads:
// in the tuning databases of the nineteenth to twenty-third sessions
// (testsuite/results/), 123 such evaluations on the H100, none within 10%
// of its launch's best; dw_mobilenet took 912.32 us in blocks of 64 points
// for 16 warps, two steps of 32, where its default took 65.89.
//
// With VEC > 1 (generic), a lane takes VEC consecutive points of a window
// whose rows it reads as vectors (RowVectorsFit), in one step: BLOCK /
// VEC groups at least the program's threads. With ROWS > 1, of each of
// ROWS output rows, as CUDA's generic template (checkRows): a program
// then takes BLOCK x ROWS points.
func (t tilePointwise) Check(l *Launch) error {
	if err := checkRows(l); err != nil {
		return err
	}
	if vec := l.Config["VEC"]; vec > 1 {
		if _, err := RowVectorsFit(l, vec); err != nil {
			return fmt.Errorf("VEC=%d reads a window's rows as vectors, and this launch has none: %v", vec, err)
		}
		if l.Config["UNROLL"] > 1 {
			return fmt.Errorf("VEC=%d takes one step: UNROLL must be 1", vec)
		}
		if groups, threads := l.Config["BLOCK"]/vec, 32*l.Config["num_warps"]; groups < threads {
			return fmt.Errorf("%d groups of %d points (BLOCK / VEC) for %d threads: fewer groups than threads; raise BLOCK, or lower VEC or num_warps", groups, vec, threads)
		}
	}
	step := l.Config["BLOCK"] / max(l.Config["UNROLL"], 1)
	if threads := 32 * l.Config["num_warps"]; step < threads {
		return fmt.Errorf("steps of %d points (BLOCK / UNROLL) for %d threads: fewer points than threads; raise BLOCK, or lower UNROLL or num_warps", step, threads)
	}
	return checkReuse(l)
}

// Default: 1024 points of 4 warps (8 per thread, two 16-byte vectors of
// f32) for statements without reductions, so that each thread keeps
// several loads in flight; 128 points of 4 warps, one point a thread,
// when each point runs a serial reduction, so that short outputs still
// spread over the GPU and a warp's load of a tap takes 32 consecutive
// points (with 1 warp, Triton gave each thread 4 consecutive points, and
// a window at stride 2 spanned four times the sectors: maxpool_3x3_s2_p1
// took 72.38 us, 46.02 with 4 warps; results of the eighteenth session).
// Small outputs get one block rounded up to a power of two (at least 32).
// Statements that call f64 library functions (sin, pow, exp, ...), whose
// double-precision code Triton inlines for every point, take the 1024
// points in 4 steps, two points a thread a step: on the H100, in the
// twenty-third session's tuning database
// (testsuite/results/2026-11-27-h100-s23-tune-triton/), misc_math_f64_1m
// (pow, sin and cos of 1 M f64) took 30.08 us at 8 points a thread a step
// (200 registers a thread), 20.96 at 2. Outputs too small for two programs
// of 1024 a multiprocessor take 512 points a program, 4 a thread, as
// CUDA's elementwise default takes one vector a step there: on the H200
// (testsuite/results/2026-11-28-h200-s30-third/, kgen tune on
// triton:sm_90), the activations of 16 x 16384 f32 took 2.31-2.55 us
// with 1024 and 1.87-2.14 with 512 where they call exp or tanh (elu,
// mish, gelu's tanh form, tanh_sigmoid_relu), the others the same
// within the noise.
func (t tilePointwise) Default(l *Launch) Config {
	block := int64(1024)
	serial := len(ir.TopReductions(l.Stmt.Value)) > 0
	if serial {
		block = 128
	}
	points, known := Simplify(Points(l.Stmt)).(*ir.Const)
	if known {
		block = min(block, max(32, nextPow2(points.I)))
	}
	warps := min(4, max(1, block/256))
	if serial {
		warps = min(4, block/32)
		// A window whose rows a lane reads as vectors: VEC points a
		// lane, still 128 lanes a program where the output fills them
		// (serial reductions are generic's: elementwise has none). Of
		// each of ROWS rows (rowVectorShape), in programs of 512 points
		// a row, two groups a thread at VEC 2: so it was timed on the
		// H100 (testsuite/results/2026-12-07-h100-s41-rows/call2/
		// triton/), dw_s2_5x5 11.39 -> 8.91 us at ROWS 4 and VEC 2,
		// dw_mobilenet 41.95 -> 40.77.
		if v, r, ok := rowVectorShape(l); ok {
			block = 128 * v
			if r > 1 {
				block = 512
			}
			if known {
				block = min(block, max(32*v, nextPow2(points.I)))
			}
			c := Config{"BLOCK": block, "num_warps": min(4, block/v/32), "VEC": v}
			if r > 1 {
				c["ROWS"] = r
			}
			return c
		}
	}
	c := Config{"BLOCK": block, "num_warps": warps}
	if !serial && block == 1024 && callsF64Library(l) {
		c["UNROLL"] = 4
	} else if known && !serial && block == 1024 && points.I < 2*bigGPU*block {
		c["BLOCK"] = 512
	}
	if t.name == "elementwise" {
		return withReuse(l, c)
	}
	return c
}

// callsF64Library reports whether a statement of l calls a library
// function (ir.Builtin.Library) of f64 values.
func callsF64Library(l *Launch) bool {
	for _, s := range append([]*ir.Stmt{l.Stmt}, l.Also...) {
		if ir.Any(s.Value, func(x ir.Expr) bool {
			c, ok := x.(*ir.Call)
			return ok && c.T == ir.F64 && c.Fn.Library()
		}) {
			return true
		}
	}
	return false
}

func (t tilePointwise) Grid(l *Launch) Grid {
	return Grid{Blocks: Simplify(cdiv(Points(l.Stmt), l.Config["BLOCK"]*max(l.Config["ROWS"], 1))), Threads: 32 * l.Config["num_warps"]}
}

// nextPow2 is the least power of two >= n (1 for n <= 1).
func nextPow2(n int64) int64 {
	p := int64(1)
	for p < n {
		p *= 2
	}
	return p
}

// tileRowReduce computes a row-reduce group (fused lets, then the final
// statement) with one program per row: the row's reductions and outputs
// in blocks of BLOCK elements. When BLOCK covers every loop over the row
// (the row is known to fit), the row is read once and stays in registers
// for every reduction and output; otherwise each reduction loops over the
// row in blocks. With BLOCK_ROWS > 1 a program takes that many rows
// that fit, as a BLOCK_ROWS x BLOCK tile reduced along its rows.
type tileRowReduce struct{}

func (tileRowReduce) Name() string            { return "row-reduce" }
func (tileRowReduce) Accepts(s *ir.Stmt) bool { return rowWise(s) }
func (tileRowReduce) Space() map[string][]int64 {
	return map[string][]int64{"BLOCK": {32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}, "num_warps": append(slices.Clone(warpSpace), 32), "BLOCK_ROWS": {1, 2, 4, 8, 16, 32, 64}, "num_stages": stageSpace, "EVICT": {0, 1}, "CACHE": {0, 64, 256, 1024, 4096, 8192, 16384, 32768}}
}

// Check: a block of at most maxTileThread elements a thread; EVICT and
// CACHE only where rows are read again (rereads, checkCache); several
// rows a program (BLOCK_ROWS > 1) need rows that fit one block, at most
// MaxRowBlock elements a program, and rows to count (a statement with row
// indices).
func (tileRowReduce) Check(l *Launch) error {
	r := RowsPerBlock(l)
	if err := checkTileThreads(l, r*l.Config["BLOCK"]); err != nil {
		return err
	}
	if l.Config["EVICT"] == 1 && !rereads(l) {
		return fmt.Errorf("EVICT hints passes that read a row again: this launch reads its rows once")
	}
	if err := checkCache(l); err != nil {
		return err
	}
	if r == 1 {
		return nil
	}
	n := RowLength(l)
	switch {
	case n < 1 || n > l.Config["BLOCK"]:
		return fmt.Errorf("%d rows a program need rows of 1 to %d elements (BLOCK), known when building", r, l.Config["BLOCK"])
	case r*l.Config["BLOCK"] > MaxRowBlock:
		return fmt.Errorf("%d rows of a block of %d: more than %d elements a program", r, l.Config["BLOCK"], MaxRowBlock)
	case l.RowDims == 0:
		return fmt.Errorf("one row: BLOCK_ROWS must be 1")
	}
	return nil
}

// rereads reports whether a tile-level row-reduce launch reads its rows
// more than once: rows streamed through blocks (not known to fit BLOCK)
// in more than one pass.
func rereads(l *Launch) bool {
	n := RowLength(l)
	return RowsPerBlock(l) == 1 && (n < 1 || n > l.Config["BLOCK"]) && streamedPasses(l) > 1
}

// checkCache checks CACHE, the first points of a streamed row that a
// program keeps in registers from its first pass to the last (0: none):
// only for rows it reads again, known longer than CACHE, CACHE a whole
// number of blocks, and at most maxCacheBytes a thread of the inputs it
// reads along the row.
func checkCache(l *Launch) error {
	c := l.Config["CACHE"]
	switch {
	case c == 0:
		return nil
	case !rereads(l):
		return fmt.Errorf("CACHE keeps a row for the passes that read it again: this launch reads its rows once")
	case RowLength(l) <= c:
		return fmt.Errorf("CACHE=%d needs rows known to be longer", c)
	case c%l.Config["BLOCK"] != 0:
		return fmt.Errorf("CACHE=%d is no whole number of blocks of %d", c, l.Config["BLOCK"])
	case c*streamBytes(l) > maxCacheBytes*32*l.Config["num_warps"]:
		return fmt.Errorf("CACHE=%d keeps more than %d bytes a thread over %d warps", c, maxCacheBytes, l.Config["num_warps"])
	}
	return nil
}

// maxCacheBytes is the most a thread of a tile-level row-reduce keeps of
// its row between passes (CACHE): 32 registers of 4 bytes.
const maxCacheBytes = 128

// MaxRowBlock is the longest row a tile-level row-reduce keeps in
// registers by default: 16384 elements over 16 warps is 32 a thread.
const MaxRowBlock = 16384

// Default: the whole row in one block when its length is known and at
// most MaxRowBlock, else blocks of 4096; a warp per 512 elements of the
// block (16 elements a thread), from 1 to 16 warps. Rows of up to
// shortRow elements go several to a program, where there are rows for two
// such programs a multiprocessor: blocks of at least 32 elements, 4096
// elements a program, or for rows of 4-byte elements (as measured; not
// bf16 rows, slower so) that are not whole 16-byte chunks, one warp and
// 1024 elements a program; where there are fewer rows, 8 a program.
// Measured
// on the H100 (testsuite/results/2026-11-26-h100-s10-rows/): ResNet's
// global average pool (64 x 2048 rows of 49 f32) took 83.1 us with a
// program a row and 21.8 us with 64 rows of 64 and 8 warps; 32 rows with
// 4 warps 21.4, 16 rows with 2 warps 20.4. On the H200
// (testsuite/results/2026-11-28-h200-s27-short-rows/) it took 14.35 us
// with 64 rows and 8 warps, 13.98 with 16 rows and 2 warps, 9.18 with 16
// rows and 1 warp; sums over rows of 147 f32 23.58 -> 13.32 us, a
// centering over rows of 49 28.70 -> 20.30; rows of 9 and 25 f32 the
// same, rows of 100 bf16 slower (10.89 -> 12.74); rows in whole chunks,
// left as they were, the same (65536 rows of 100 f32), slower (200 bf16,
// 8.48 -> 11.95) or faster (4096 rows of 100 f32, 3.97 -> 2.24, a launch
// of a few microseconds). Rows read again keep their first points in
// registers (defaultCache); no eviction hints.
func (tileRowReduce) Default(l *Launch) Config {
	c := rowShapeDefault(l)
	c["CACHE"] = defaultCache(l.with(c))
	// EVICT (L2 eviction hints on rows read again) is left to kgen tune:
	// on the H100 (testsuite/results/2026-11-26-h100-s10-evict/, Triton
	// 3.6, kgen's code of then) the hints made softmax over 128 rows of
	// 50257 f32 10% faster (62.4 -> 56.6 us) and cross entropy's over 512
	// rows of 32000 as much, instancenorm over 1024 rows of 65536 and a
	// layer norm over 16 rows of 4M 2-3% slower; no rule that tells the
	// two apart has been measured. With the online max and sum and 32
	// warps (testsuite/results/2026-12-07-h100-s46-evict/, both orders),
	// the softmax was 6% slower with them and the instancenorm the same.
	c["EVICT"] = 0
	return c
}

// Derive sets CACHE, where given sets what it depends on (num_warps,
// BLOCK, BLOCK_ROWS) but not CACHE itself, to the default's for l's
// parameters (defaultCache): a --config of num_warps or BLOCK takes the
// CACHE that fits them, and one of EVICT alone leaves CACHE as it was.
func (tileRowReduce) Derive(l *Launch, given Config) {
	if _, ok := given["CACHE"]; ok {
		return
	}
	for _, k := range []string{"num_warps", "BLOCK", "BLOCK_ROWS"} {
		if _, ok := given[k]; ok {
			l.Config["CACHE"] = defaultCache(l)
			return
		}
	}
}

// defaultCache is the CACHE of a row-reduce default: where the launch
// reads its rows again, the most that checkCache takes whose kept points
// fill at most a quarter of the multiprocessor's 65536 registers and 32 a
// thread, a register a point of each input read along the row (Triton
// keeps a bf16 point in one: on sm_90, a centering over rows of 65536
// bf16 in 16 warps has 64 registers a thread without CACHE, 98 with
// 16384, 127 with 32768), the rest left to the passes' loads and sums. On
// the H100 (testsuite/results/2026-12-07-h100-s46-evict/, both orders in
// one call), instancenorm over 1024 rows of 65536 f32 (16 warps: 32
// registers a thread) took 240.8 us without and 219.4 with CACHE=16384,
// and 240.6 after 219.3; softmax over 128 rows of 50257 f32 (32 warps: 16
// a thread, 16384) 33.7 -> 32.5 and 34.2 after 32.2, within the noise,
// and 34.7 -> 34.0 with 32768.
func defaultCache(l *Launch) int64 {
	if !rereads(l) {
		return 0
	}
	regs := min(65536/4, 32*32*l.Config["num_warps"])
	inputs := int64(len(streamInputs(l)))
	trial := l.with(maps.Clone(l.Config))
	for _, c := range slices.Backward(tileRowReduce{}.Space()["CACHE"]) {
		trial.Config["CACHE"] = c
		if c > 0 && c*inputs <= regs && checkCache(trial) == nil {
			return c
		}
	}
	return 0
}

// rowShapeDefault is tileRowReduce's default less EVICT and CACHE.
func rowShapeDefault(l *Launch) Config {
	n := RowLength(l)
	if n >= 1 && n <= shortRow && l.RowDims > 0 {
		block := max(32, nextPow2(n))
		if size := widestElement(l); size == 4 && n*size%16 != 0 {
			// Rows of 4-byte elements not in whole 16-byte chunks load
			// an element at a time: one warp takes 1024 elements, 32
			// loads a thread in flight.
			if rows := min(64, max(1, 1024/block)); manyRows(l, rows) {
				return Config{"BLOCK": block, "num_warps": 1, "BLOCK_ROWS": rows}
			}
		}
		if rows := min(64, 4096/block); manyRows(l, rows) {
			return Config{"BLOCK": block, "num_warps": min(16, max(1, rows*block/512)), "BLOCK_ROWS": rows}
		}
		// Fewer rows than that: 8 rows a program all the same (a
		// program a row is a launch of mostly masked lanes). On the H200
		// (testsuite/results/2026-11-28-h200-s30-third/, kgen tune on
		// triton:sm_90), cross entropy over 4096 rows of 10 f32 took
		// 8.03 us with a program a row in blocks of 128 and 6.43 with 8
		// such rows a program of one warp; l2 normalization of 2 rows of
		// 3, 1.54 and 1.16 (8 rows of 32 and 16 warps). This default's
		// blocks of 32 for those rows are not yet timed.
		rows := min(8, max(1, 4096/block))
		return Config{"BLOCK": block, "num_warps": min(16, max(1, rows*block/512)), "BLOCK_ROWS": rows}
	}
	block := int64(4096)
	if n > 0 && n <= MaxRowBlock {
		block = max(128, nextPow2(n))
	}
	warps := min(16, max(1, block/512))
	rows, ok := Simplify(Rows(l)).(*ir.Const)
	switch {
	case ok && block < n && rows.I <= bigGPU:
		// Rows streamed through blocks, no more than a program a
		// multiprocessor: 32 warps each (1024 threads, the most a
		// program has), for loads enough in flight. On the H100
		// (testsuite/results/2026-11-26-h100-s15-triton-rows/), softmax
		// over 128 rows of 50257 f32 took 62.05 us with 8 warps and 39.87
		// with 16 (blocks of 4096); cross entropy's log-sum-exp over 512
		// rows of 32000, four programs a multiprocessor, 28.51 with 8 and
		// 30.91 with 16. With the max and sum in one pass
		// (testsuite/results/2026-12-07-h100-s44-online/4-correct-warps/),
		// the softmax took 35.14 us with 16 warps and 32.35 with 32 (in
		// blocks of 8192, 36.50).
		warps = 32
	case ok && n > 2*streamBlock && rows.I >= 2*bigGPU && len(l.Stmt.Index) > l.RowDims && streamBytes(l) <= 4:
		// Long rows streamed, then written (an output pass after the
		// reductions'), programs enough for two rounds of the GPU, and a
		// row's loads in a block staged 3 steps ahead within 96 KiB (4
		// bytes an element over every input read): blocks of 8192 of 16
		// warps and 4 stages. On the H100
		// (testsuite/results/2026-11-27-h100-s22-streamed/configs/),
		// instancenorm over 1024 rows of 65536 f32 took 264.35 us with
		// the blocks of 4096 and 8 warps above, 258.75 with 4 stages,
		// and 244.35 in blocks of 8192 with 4 stages (softmax over 128
		// rows of 50257, the case above, 39.84 as it is and 57.86 so).
		return Config{"BLOCK": streamBlock, "num_warps": 16, "BLOCK_ROWS": 1, "num_stages": 4}
	}
	return Config{"BLOCK": block, "num_warps": warps, "BLOCK_ROWS": 1}
}

// streamBlock is the block of a tile-level row-reduce default that
// streams long rows from many programs.
const streamBlock = 8192

// streamBytes is the bytes a row element costs a streaming loop's loads:
// the sum of the element sizes of every input the launch reads.
func streamBytes(l *Launch) int64 {
	var bytes int64
	for _, t := range streamInputs(l) {
		bytes += int64(t.DType.Size())
	}
	return bytes
}

// streamInputs is every input that a launch's statements read, once
// each, in the order they are first read.
func streamInputs(l *Launch) []*ir.Tensor {
	var ins []*ir.Tensor
	for _, s := range l.Stmts() {
		ir.Walk(s.Value, func(x ir.Expr) bool {
			if ld, ok := x.(*ir.Load); ok && ld.Tensor.Kind == ir.Input && !slices.Contains(ins, ld.Tensor) {
				ins = append(ins, ld.Tensor)
			}
			return true
		})
	}
	return ins
}

func (tileRowReduce) Grid(l *Launch) Grid {
	if r := RowsPerBlock(l); r > 1 {
		return Grid{Blocks: Simplify(cdiv(Rows(l), r)), Threads: 32 * l.Config["num_warps"]}
	}
	return Grid{Blocks: Rows(l), Threads: 32 * l.Config["num_warps"]}
}

// RowLength is the longest loop over a row of a row-reduce launch (its top
// reductions' points and the output's columns) when every one is known,
// or -1.
func RowLength(l *Launch) int64 {
	n := int64(0)
	for _, s := range l.Stmts() {
		for _, r := range ir.TopReductions(s.Value) {
			c, ok := constExtent(r.Axes)
			if !ok {
				return -1
			}
			n = max(n, c)
		}
	}
	outs := RowOutputs(l)
	if len(outs) == 0 {
		return max(n, 1) // the one result of the row
	}
	for _, s := range outs {
		c, ok := constExtent(s.Index[l.RowDims:])
		if !ok {
			return -1
		}
		n = max(n, c)
	}
	return n
}

// tileColReduce computes a column reduction (MatchColumns) with a
// program per outer point and BLOCK_N consecutive columns, stepping
// through the reduction BLOCK_R points at a time in a BLOCK_R x BLOCK_N
// tile, so that each step reads BLOCK_R rows of contiguous columns.
type tileColReduce struct{}

func (tileColReduce) Name() string            { return "col-reduce" }
func (tileColReduce) Accepts(s *ir.Stmt) bool { return MatchColumns(s) != nil }
func (tileColReduce) Space() map[string][]int64 {
	return map[string][]int64{"BLOCK_R": {8, 16, 32, 64, 128, 256, 512}, "BLOCK_N": {32, 64, 128, 256, 512}, "num_warps": warpSpace, "num_stages": stageSpace}
}

// Default: strips of 128 columns, narrowed (to 32, at least 32 bytes of
// each row, a sector) while there are fewer programs than a large GPU's
// multiprocessors, since each program walks its strip's rows alone; and
// BLOCK_R rows a step so that a step's tile holds 8192 elements (32 loads
// a thread of 8 warps in flight), no more rows than the reduction has. A
// 4096 x 4096 f32 column sum so runs 128 programs of 256 x 32 tiles where
// 32 x 128 tiles gave 32 programs (16% of copy bandwidth on the H100,
// 2026-11-25); narrowed strips not yet measured.
func (tileColReduce) Default(l *Launch) Config {
	m := MatchColumns(l.Stmt)
	size := int64(1)
	for _, ld := range m.Loads {
		size = max(size, int64(ld.Tensor.DType.Size()))
	}
	bn := int64(128)
	cols, colsKnown := constExtent([]*ir.Index{m.C})
	if colsKnown {
		bn = min(bn, max(32, nextPow2(cols)))
	}
	if outer, ok := constExtent(m.Outer); ok && colsKnown {
		programs := func(bn int64) int64 { return outer * ((cols + bn - 1) / bn) }
		for bn > 32 && programs(bn) < bigGPU && (bn/2)*size >= 32 {
			bn /= 2
		}
	}
	br := min(512, max(8, 8192/bn))
	if n, ok := boundedExtent(m.Reduce.Axes); ok {
		br = min(br, max(8, nextPow2(n)))
	}
	warps := int64(4)
	if br*bn >= 8192 {
		warps = 8
	}
	c := Config{"BLOCK_R": br, "BLOCK_N": bn, "num_warps": warps}
	if n, ok := boundedExtent(m.Reduce.Axes); !ok || n > br {
		// Steps enough to pipeline: 3 stages, each step's loads issued two
		// steps ahead. On the H100 (testsuite/results/2026-11-27-h100-s17-triton3/stages/):
		// a column sum of 4096 x 4096 f32 took 28.38 us with 1 stage and
		// 24.10 with 3; a vector-matrix product 24.90 and 24.38 (29.28 with 2).
		c["num_stages"] = 3
	}
	return c
}

// Check: a step's tile is at most maxTileThread elements a thread.
func (tileColReduce) Check(l *Launch) error {
	return checkTileThreads(l, l.Config["BLOCK_R"]*l.Config["BLOCK_N"])
}

// maxTileThread is the most elements of a block a thread of a tile-level
// reduction (row-reduce, col-reduce, col-group) holds. Every default holds
// 32 or fewer, and no tuning record's winner more than 128. On the H100
// (testsuite/results/2026-11-27-h100-s23-tune-triton/), tuning vecmat_4k
// (default 34.88 us) measured 174.82 us at 128 elements a thread and
// 2531.04 at 512, and two tiles of vecmat_4k and two of softmax_dim1_big,
// 2048 elements a thread each, ran past the minute allowed to compile.
const maxTileThread = 128

// checkTileThreads reports a block of elems elements that is more than
// maxTileThread elements a thread of l's warps.
func checkTileThreads(l *Launch, elems int64) error {
	threads := 32 * l.Config["num_warps"]
	if elems > maxTileThread*threads {
		return fmt.Errorf("a block of %d elements over %d threads is %d elements a thread, more than %d; lower the block or raise num_warps", elems, threads, elems/threads, maxTileThread)
	}
	return nil
}

func (tileColReduce) Grid(l *Launch) Grid {
	m := MatchColumns(l.Stmt)
	blocks := mul(Extent(m.Outer), cdiv(Extent([]*ir.Index{m.C}), l.Config["BLOCK_N"]))
	return Grid{Blocks: Simplify(blocks), Threads: 32 * l.Config["num_warps"]}
}

// tileTranspose computes a transposing elementwise statement in TILE x
// TILE tiles of (Q, P) (MatchTranspose): the program loads the
// transposed input along its own rows and the compiler moves the tile
// through shared memory, so that reads and writes both run along rows.
type tileTranspose struct{}

func (tileTranspose) Name() string            { return "transpose" }
func (tileTranspose) Accepts(s *ir.Stmt) bool { return transposeTemplate{}.Accepts(s) }
func (tileTranspose) Space() map[string][]int64 {
	return map[string][]int64{"TILE": {16, 32, 64, 128}, "num_warps": warpSpace}
}
func (tileTranspose) Default(l *Launch) Config { return Config{"TILE": 64, "num_warps": 4} }

// Grid is a program per TILE x TILE tile of (Q, P), times the batch's
// points.
func (tileTranspose) Grid(l *Launch) Grid {
	t := MatchTranspose(l.Stmt)
	tile := l.Config["TILE"]
	tiles := mul(Extent(t.Batch), mul(cdiv(Extent([]*ir.Index{t.Q}), tile), cdiv(Extent([]*ir.Index{t.P}), tile)))
	return Grid{Blocks: Simplify(tiles), Threads: 32 * l.Config["num_warps"]}
}

// Contraction is a matrix product (MatchMatmul) or an implicit GEMM
// (MatchIGemm) as a tile-level backend sees it: C[batch, m, n] = epilogue
// of sum over k of Body(A, B), where A is read at (batch, m, k) and B at
// (batch, k, n) through their own index expressions. M, N and K flatten
// their indices, the last fastest.
type Contraction struct {
	Reduce   *ir.Reduce
	A, B     *ir.Load
	M, N, K  []*ir.Index
	Batch    []*ir.Index
	Dot      bool     // tensor cores: f16/bf16 widened, or f32 rounded to tf32
	Elem     ir.DType // the operands' dtype when Dot
	TF32     bool     // f32 operands through tf32()
	IEEEDot  bool     // f32 operands multiplied exactly: a dot with ieee precision
	Implicit bool     // from MatchIGemm: operands read through index expressions
}

func matmulContraction(m *Matmul) *Contraction {
	if m == nil {
		return nil
	}
	c := &Contraction{Reduce: m.Reduce, A: m.A, B: m.B, M: m.M, N: m.N, K: []*ir.Index{m.K}, Batch: m.Batch, Dot: m.TensorCores, Elem: m.Elem}
	c.classify()
	return c
}

func igemmContraction(g *IGemm) *Contraction {
	if g == nil {
		return nil
	}
	c := &Contraction{Reduce: g.Reduce, A: g.A.Load, B: g.B.Load, M: g.M, N: g.N, K: g.K, Batch: g.Batch, Dot: g.TensorCores, Implicit: true}
	c.Elem = c.A.Tensor.DType
	c.classify()
	return c
}

// classify sets TF32 and IEEEDot: tf32() operands, or, off the tensor
// cores, a plain f32 product summed in f32 of two operands that are each
// an f32 load or a load widened to f32 exactly (exactF32), which a dot
// computes exactly with input_precision="ieee" once the operands are f32.
// Attention's probabilities times its f16 values are one: on the H100,
// causal_gpt2 on Triton took 1714.91 us with that product in 32 x 32 x 8
// register blocks, 684.90 as a dot
// (testsuite/results/2026-11-27-h100-s21-attention-pv/).
func (c *Contraction) classify() {
	if c.Dot && c.Elem == ir.F32 {
		c.TF32 = true
	}
	if b, ok := c.Reduce.Body.(*ir.Binary); ok && !c.Dot && b.Op == ir.Mul && c.Reduce.T == ir.F32 && c.Reduce.Op == ir.Sum {
		if exactF32(b.X) && exactF32(b.Y) {
			c.IEEEDot, c.Elem = true, ir.F32
		}
	}
}

// exactF32 reports whether e is an f32 load or a load whose every value
// f32 represents exactly, converted to f32: a 16-bit float (the widening
// casts that product2 lets into a contraction).
func exactF32(e ir.Expr) bool {
	if l, ok := e.(*ir.Load); ok {
		return l.Type() == ir.F32
	}
	c, ok := e.(*ir.Cast)
	if !ok || c.T != ir.F32 {
		return false
	}
	l, ok := c.X.(*ir.Load)
	if !ok {
		return false
	}
	return l.Type() == ir.F16 || l.Type() == ir.BF16
}

// MatchContraction returns the contraction of a matmul or igemm tile
// launch.
func MatchContraction(l *Launch) *Contraction {
	if t, ok := l.Template.(tileContraction); ok {
		return t.match(l.Stmt)
	}
	return nil
}

// tileContraction computes a matrix product or implicit GEMM in
// BLOCK_M x BLOCK_N output tiles, a program per tile (grouped GROUP_M
// tile rows at a time for L2 reuse), stepping through K by BLOCK_K with
// num_stages of software pipelining; the statement's epilogue is applied
// to the tile before the masked store.
type tileContraction struct {
	name  string
	match func(*ir.Stmt) *Contraction
}

func (t tileContraction) Name() string { return t.name }

// Version: 2 since products of f32 and exactly widened operands multiply
// in an ieee dot (classify), not in blocks of registers.
func (t tileContraction) Version() int            { return 2 }
func (t tileContraction) Accepts(s *ir.Stmt) bool { return t.match(s) != nil }
func (t tileContraction) Space() map[string][]int64 {
	return map[string][]int64{
		"BLOCK_M": {16, 32, 64, 128, 256}, "BLOCK_N": {16, 32, 64, 128, 256}, "BLOCK_K": {8, 16, 32, 64, 128},
		"num_warps": warpSpace, "num_stages": {1, 2, 3, 4, 5}, "GROUP_M": {1, 4, 8, 16},
	}
}

// Default: for 16-bit operands, 128 x 256 x 64 tiles of 8 warps, 3
// stages, GROUP_M 8 (Triton's tutorial configuration for bf16 on the
// H100) when the product has enough such tiles to fill a large GPU
// twice, else 128 x 128 x 64 with 4 stages; f32 dots take 128 x 128 x 32;
// other products (f64, integers, arbitrary bodies), which multiply in
// registers, 32 x 32 x 8 tiles. Dimensions of at most 64 take a tile of
// their size (at least 16).
func (t tileContraction) Default(l *Launch) Config {
	c := t.match(l.Stmt)
	cfg := Config{"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 8, "num_warps": 4, "num_stages": 1, "GROUP_M": 8}
	switch {
	case (c.Dot || c.IEEEDot) && c.Elem.Size() == 2:
		cfg = Config{"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 8, "num_stages": 4, "GROUP_M": 8}
		rows, rok := Simplify(mul(Extent(c.Batch), Extent(c.M))).(*ir.Const)
		cols, cok := Simplify(Extent(c.N)).(*ir.Const)
		if rok && cok && (rows.I/128)*(cols.I/256) >= 2*bigGPU {
			cfg["BLOCK_N"], cfg["num_stages"] = 256, 3
		}
	case c.Dot || c.IEEEDot:
		cfg = Config{"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "num_warps": 8, "num_stages": 3, "GROUP_M": 8}
	}
	if c.Dot || c.IEEEDot {
		for _, d := range []struct {
			key string
			ix  []*ir.Index
		}{{"BLOCK_M", c.M}, {"BLOCK_N", c.N}, {"BLOCK_K", c.K}} {
			if n, ok := Simplify(Extent(d.ix)).(*ir.Const); ok && n.I <= 64 {
				cfg[d.key] = min(cfg[d.key], max(16, nextPow2(n.I)))
			}
		}
		fillGPU(c, cfg)
	}
	return cfg
}

// fillGPU halves a dot's tile, its rows down to 32 and then its columns
// down to 16, while the product (every extent known) has fewer tiles than
// half of bigGPU's multiprocessors (as simtTile) and halving gives it
// more; a tile under 128 x 64 takes 4 warps. On the H100, a stride-3 1-D
// convolution of 1332 x 32 outputs, 11 tiles of 128 x 32, took 35.01 us,
// and tuning's best, 84 tiles of 32 x 16 with 4 warps, 13.74
// (testsuite/results/2026-11-27-h100-s21-tune-triton/); as the default,
// 12 products were all faster (-s21-triton-fill/: conv1d_strided 32.03
// -> 11.19 us, conv_s2 202.05 -> 130.56).
func fillGPU(c *Contraction, cfg Config) {
	b, bok := constExtent(c.Batch)
	m, mok := constExtent(c.M)
	n, nok := constExtent(c.N)
	if !bok || !mok || !nok {
		return
	}
	tiles := func(bm, bn int64) int64 { return b * ((m + bm - 1) / bm) * ((n + bn - 1) / bn) }
	for tiles(cfg["BLOCK_M"], cfg["BLOCK_N"]) < bigGPU/2 {
		bm, bn := cfg["BLOCK_M"], cfg["BLOCK_N"]
		switch t := tiles(bm, bn); {
		case bm > 32 && tiles(bm/2, bn) > t:
			cfg["BLOCK_M"] = bm / 2
		case bn > 16 && tiles(bm, bn/2) > t:
			cfg["BLOCK_N"] = bn / 2
		default:
			return
		}
		if cfg["BLOCK_M"]*cfg["BLOCK_N"] < 128*64 {
			cfg["num_warps"] = 4
		}
	}
}

// Check: dots need every block dimension at least 16; a dot's f32
// accumulator takes at most maxDotAcc registers a thread; and its operand
// tiles' pipeline buffers (TileDotSmem) fit the target's shared memory.
// Without the last two, a third of a Triton search's first evaluations
// were compile errors and resource limits, and one took 56.8 ms where the
// default took 1.2 (testsuite/results/2026-11-27-h100-s21-tune-triton/).
func (t tileContraction) Check(l *Launch) error {
	c := t.match(l.Stmt)
	if !c.Dot && !c.IEEEDot {
		return nil
	}
	cfg := l.Config
	if min(cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]) < 16 {
		return fmt.Errorf("tl.dot needs BLOCK_M, BLOCK_N and BLOCK_K of at least 16")
	}
	if acc := cfg["BLOCK_M"] * cfg["BLOCK_N"] / (32 * max(cfg["num_warps"], 1)); acc > maxDotAcc {
		return fmt.Errorf("the %d x %d accumulator takes %d registers a thread of %d warps; at most %d", cfg["BLOCK_M"], cfg["BLOCK_N"], acc, cfg["num_warps"], maxDotAcc)
	}
	if smem := tileDotSmem(c, cfg); l.Target.MaxSmem > 0 && smem > l.Target.MaxSmem {
		return fmt.Errorf("the operand tiles' pipeline takes at least %d bytes of shared memory; the target has %d", smem, l.Target.MaxSmem)
	}
	return nil
}

// maxDotAcc is the most accumulator elements a thread of a Triton dot
// keeps: 128 x 256 tiles of 8 warps, the best bf16 GEMM configuration on
// the H100, hold 128; a thread has 255 registers in all.
const maxDotAcc = 128

// TileDotSmem is a lower bound on the shared memory of a Triton dot
// launch: num_stages - 1 buffers (at least one) of a BLOCK_M x BLOCK_K
// tile of A and a BLOCK_K x BLOCK_N tile of B, each of its tensor's type.
// Triton 3.6 allocates exactly that for f32 dots and for 16-bit dots off
// sm_90's warpgroup path, num_stages buffers on it, and stages a widened
// operand in f32: 128 x 256 x 64 tiles of f32 at 3 and 4 stages took
// 196608 and 294912 bytes, of bf16 147456 and 196608
// (TestTritonDotSmem checks the bound against Triton's compiler).
func TileDotSmem(l *Launch) int64 {
	c := MatchContraction(l)
	if c == nil || (!c.Dot && !c.IEEEDot) {
		return 0
	}
	return tileDotSmem(c, l.Config)
}

func tileDotSmem(c *Contraction, cfg Config) int64 {
	bufs := max(cfg["num_stages"]-1, 1)
	return bufs * (cfg["BLOCK_M"]*cfg["BLOCK_K"]*int64(c.A.Tensor.DType.Size()) + cfg["BLOCK_K"]*cfg["BLOCK_N"]*int64(c.B.Tensor.DType.Size()))
}

func (t tileContraction) Grid(l *Launch) Grid {
	c := t.match(l.Stmt)
	tiles := mul(Extent(c.Batch), mul(cdiv(Extent(c.M), l.Config["BLOCK_M"]), cdiv(Extent(c.N), l.Config["BLOCK_N"])))
	return Grid{Blocks: Simplify(tiles), Threads: 32 * l.Config["num_warps"]}
}
