// Package lower turns a checked kernel into a backend-neutral plan: which
// lets are inlined and which are materialized, how statements are grouped
// into launches, which template implements each launch, and the template's
// configuration. Nothing here knows a vendor's syntax; backends render
// plans.
package lower

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"kgen.dev/kgen/ir"
)

// Plan is how one kernel runs: launches in order, plus the global
// workspace that holds materialized lets between launches.
type Plan struct {
	// Source is the kernel as checked; Kernel is the plan's own rewritten
	// (and, for an instance, specialized) copy.
	Source *ir.Kernel
	Kernel *ir.Kernel
	// Env holds the sizes the plan is specialized to, for an instance, bound
	// to Source (Bind carries them to Kernel); nil when sizes are runtime
	// arguments.
	Env       *ir.Env
	Name      string // the entry point's base name: the kernel's or the instance's
	Launches  []*Launch
	Workspace []*Slot // materialized lets, in statement order
}

// Launch is one grid launch computing one statement, Stmt, and before it
// the lets in Fused, whose values stay on chip: a row-reduce launch
// computes a softmax's max, sum and output for a row in one block.
type Launch struct {
	Name  string // the entry point's symbol
	Stmt  *ir.Stmt
	Fused []*ir.Stmt
	// Also are statements computed at each point of Stmt after it, over
	// Stmt's indices: elementwise siblings that share its launch. In a
	// row-reduce launch they are statements over whole rows that it
	// stores along each row (RowOutputs) before Stmt, over Stmt's row
	// indices and their own columns (prologueGroup).
	Also     []*ir.Stmt
	Template Template
	Config   Config
	// RowDims is how many leading indices of Stmt select a row (for
	// row-reduce: one block per row).
	RowDims int
	// Target is the limits and instructions of the target the launch is
	// planned for, which a template's default may use.
	Target Limits
}

// Grid is the launch geometry under the launch's configuration.
func (l *Launch) Grid() Grid { return l.Template.Grid(l) }

// Slot is a let stored in the workspace at Offset bytes (an i64 expression
// of the kernel's sizes, aligned to SlotAlign).
type Slot struct {
	Tensor *ir.Tensor
	Offset ir.Expr
	Bytes  ir.Expr
}

// SlotAlign is the alignment of every workspace slot, enough for any
// vector load a template may use.
const SlotAlign = 256

// Config is a template's tuning parameters by name.
type Config map[string]int64

func (c Config) String() string {
	var parts []string
	for _, k := range sortedKeys(c) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, c[k]))
	}
	return strings.Join(parts, ", ")
}

// WorkspaceBytes is the total workspace size, an i64 expression (0 when
// no let is materialized and no launch needs scratch): the lets' slots,
// then the launches' scratch at ScratchOffset.
func (p *Plan) WorkspaceBytes() ir.Expr {
	if n := p.scratch(); n > 0 {
		return Simplify(add(p.ScratchOffset(), ir.IntConst(n)))
	}
	return p.letsEnd()
}

// letsEnd is where the last materialized let's slot ends (0 for none).
func (p *Plan) letsEnd() ir.Expr {
	if len(p.Workspace) == 0 {
		return ir.IntConst(0)
	}
	last := p.Workspace[len(p.Workspace)-1]
	return add(last.Offset, last.Bytes)
}

// HasWorkspace reports whether the plan's entry points take a workspace.
func (p *Plan) HasWorkspace() bool { return len(p.Workspace) > 0 || p.scratch() > 0 }

// ScratchOffset is where launch scratch starts in the workspace: after
// the lets, aligned. Launches run one after another and share it.
func (p *Plan) ScratchOffset() ir.Expr {
	if len(p.Workspace) == 0 {
		return ir.IntConst(0)
	}
	return Simplify(alignUp(p.letsEnd(), SlotAlign))
}

// scratcher is a template whose launches need workspace of their own
// while they run (not kept between launches), Scratch(l) bytes.
type scratcher interface {
	Scratch(l *Launch) int64
}

func (p *Plan) scratch() int64 {
	var n int64
	for _, l := range p.Launches {
		if s, ok := l.Template.(scratcher); ok {
			n = max(n, s.Scratch(l))
		}
	}
	return n
}

// Bind carries sizes bound for the source kernel over to the plan's
// kernel, to evaluate the plan's size expressions (grids, workspace).
func (p *Plan) Bind(env *ir.Env) *ir.Env { return rebind(env, p.Kernel) }

// Slot returns the workspace slot of let t, or nil if t is not
// materialized.
func (p *Plan) Slot(t *ir.Tensor) *Slot {
	for _, s := range p.Workspace {
		if s.Tensor == t {
			return s
		}
	}
	return nil
}

// Build plans kernel k for a target with limits lim (templates that need
// an instruction the target lacks are not chosen; the zero Limits choose
// only templates every target runs). With env set (an instance), the plan
// is specialized: sizes and params become constants, the entry points are
// named after name, and column and row reductions too narrow to fill the
// GPU are split in two launches (splitColumns, splitRows).
func Build(k *ir.Kernel, env *ir.Env, name string, lim Limits) (*Plan, error) {
	return build(k, env, name, lim, false, false)
}

// BuildReference plans k with runtime sizes using only the generic
// template, each statement its own launch: the simplest kernels kgen
// makes. Float sums and products accumulate in f64, as the interpreter's
// do, so that a serial sum of millions of terms stays accurate. Checked
// against the interpreter at small sizes, they are the oracle for sizes
// too large for the interpreter.
func BuildReference(k *ir.Kernel, name string) (*Plan, error) {
	return build(k, nil, name, Limits{}, true, true)
}

// BuildReferenceFor is BuildReference for a target with limits lim: a
// tile-level target's generic template.
func BuildReferenceFor(k *ir.Kernel, name string, lim Limits) (*Plan, error) {
	return build(k, nil, name, lim, true, true)
}

// BuildRounding is BuildReferenceFor with the sums in their declared
// accumulation types (f32, mostly), summed serially: not an oracle, but
// a measure of how much the computation itself amplifies rounding in its
// sums (a softmax of long dot products turns their absolute error into
// relative error). Checks at sizes too large for the interpreter allow a
// kernel at least that much error (runtime.Conditioned).
func BuildRounding(k *ir.Kernel, name string, lim Limits) (*Plan, error) {
	return build(k, nil, name, lim, true, false)
}

// RoundingSuffix ends the name of a BuildRounding plan.
const RoundingSuffix = "__round"

func build(k *ir.Kernel, env *ir.Env, name string, lim Limits, reference, widen bool) (*Plan, error) {
	source := k
	k = Clone(k)
	if env != nil {
		Specialize(k, rebind(env, k))
	}
	if !reference {
		oneHotSums(k) // before InlineLets: a let it leaves elementwise inlines
		strideSums(k)
	}
	InlineLets(k)
	if widen {
		widenAccumulators(k)
	}
	if err := ir.RunPasses(k, ""); err != nil {
		return nil, err
	}
	if env != nil && !reference {
		splitPhases(k)
		collapseAxes(k)
	}
	if !reference {
		hoistReductions(k)
	}
	// The statements become DAGs here: a reduction used twice (a GELU's
	// argument) is one node, which the splits below match and rewrite
	// once.
	ir.ShareReductions(k)
	if env != nil && !reference {
		splitK(k, lim)
		splitColumns(k)
		splitRows(k, lim)
	}
	if errs := ir.Verify(k); len(errs) > 0 {
		return nil, fmt.Errorf("lower: %s: %v", k.Name, errs[0])
	}
	ir.ShareReductions(k) // again: the splits' rewrites may copy a shared node
	p := &Plan{Source: source, Kernel: k, Env: env, Name: name}
	var groups []group
	if reference {
		for _, s := range k.Stmts {
			groups = append(groups, group{final: s})
		}
	} else {
		groups = siblings(groupRows(k, env != nil, lim), lim)
	}
	fused := map[*ir.Tensor]bool{}
	for _, g := range groups {
		for _, s := range g.fused {
			fused[s.Target] = !readAfter(k, s.Target, g.final)
		}
	}
	var offset ir.Expr = ir.IntConst(0)
	for _, t := range k.Lets {
		if fused[t] {
			continue // kept on chip by its launch, and read nowhere else
		}
		bytes := mul(ir.IntConst(int64(t.DType.Size())), product(t.Shape))
		p.Workspace = append(p.Workspace, &Slot{Tensor: t, Offset: offset, Bytes: bytes})
		offset = alignUp(add(offset, bytes), SlotAlign)
	}
	for i, g := range groups {
		l := &Launch{Name: name, Stmt: g.final, Fused: g.fused, RowDims: g.rowDims, Target: lim}
		dims := len(g.final.Index) // siblings: at every point of final
		if g.rowDims > 0 {
			dims = g.rowDims // stored along the row
		}
		l.Also = alsoAt(g.final, dims, g.also)
		switch {
		case reference && lim.Tiles:
			l.Template = tileGeneric
		case reference:
			l.Template = generic
		case g.cols && lim.Tiles:
			l.Template = tileColGroup{}
		case g.cols:
			l.Template = colGroup{}
		case len(g.fused) > 0 && lim.Tiles:
			l.Template = tileRowReduce{}
		case len(g.fused) > 0:
			l.Template = rowReduce{}
		default:
			l.Template = choose(g.final, lim)
			if l.Template.Name() == "row-reduce" {
				l.RowDims = len(g.final.Index) // a block per output point
			}
		}
		l.Config = DefaultConfig(l)
		if len(groups) > 1 {
			l.Name = fmt.Sprintf("%s_%d_%s", name, i, g.final.Target.Name)
		}
		p.Launches = append(p.Launches, l)
	}
	return p, nil
}

// readAfter reports whether a statement of k after final reads t: a
// let fused into final's launch is then stored by that launch as well
// (a group's members may be read after it, rowGroupOK).
func readAfter(k *ir.Kernel, t *ir.Tensor, final *ir.Stmt) bool {
	i := slices.Index(k.Stmts, final)
	return slices.ContainsFunc(k.Stmts[i+1:], func(s *ir.Stmt) bool { return uses(s, t) })
}

// Limits are the target's bounds on a launch, which every configuration
// must respect, and the instructions it has beyond those of every target.
type Limits struct {
	MaxThreads   int64 // threads per block
	MaxSmem      int64 // dynamic shared memory per block, bytes
	ThreadsPerSM int64
	SmemPerSM    int64
	Wgmma        bool // warpgroup matrix products from shared memory (sm_90a)
	Clusters     bool // thread block clusters with distributed shared memory (sm_90)
	// WarpSize is the number of threads that run in lockstep and exchange
	// values by shuffles: a CUDA warp (32) or an AMD wavefront (64 on
	// CDNA, 32 on RDNA); 0 means 32. Block sizes are multiples of it.
	WarpSize int64
	// NoMMASync marks a target without NVIDIA's mma.sync, ldmatrix and
	// cp.async (every HIP target). It is a negative so that the zero
	// Limits keep the baseline every CUDA target (sm_80 on) has.
	NoMMASync bool
	// MFMA: AMD's matrix fused multiply-add builtins with f16 and bf16
	// operands (__builtin_amdgcn_mfma_*_bf16_1k: gfx90a).
	MFMA bool
	// Tiles: a tile-level backend (Triton), whose launches are programs
	// over blocks of tensors; its templates come from their own table
	// (tileTemplates), with configurations in BLOCK sizes and warps.
	Tiles bool
}

// Warp is the target's warp (wavefront) size: WarpSize, or 32 when unset.
func (lim Limits) Warp() int64 {
	if lim.WarpSize > 0 {
		return lim.WarpSize
	}
	return 32
}

// targeted is a template that only some targets can run.
type targeted interface {
	Available(lim Limits) bool
}

// constrained is a template with constraints of its own between its
// parameters, beyond the target's limits.
type constrained interface {
	Check(l *Launch) error
}

// derived is a template whose default computes some parameters from the
// others: Derive sets them again for l's configuration, less those that
// given sets. An override of the others (Override) then keeps the
// derived ones consistent with it, as the default would have made them.
type derived interface {
	Derive(l *Launch, given Config)
}

// Check reports why l's configuration cannot run within lim, or nil.
func (l *Launch) Check(lim Limits) error {
	if t, ok := l.Template.(constrained); ok {
		if err := t.Check(l); err != nil {
			return fmt.Errorf("%s: %v (template %s, %s)", l.Name, err, l.Template.Name(), l.Config)
		}
	}
	g := l.Grid()
	per := max(g.MinBlocks, 1)
	switch {
	case g.Threads > lim.MaxThreads:
		return fmt.Errorf("%s: %d threads a block; the target allows %d (%s)", l.Name, g.Threads, lim.MaxThreads, l.Config)
	case g.Smem > lim.MaxSmem:
		return fmt.Errorf("%s: %d bytes of shared memory a block; the target allows %d (%s)", l.Name, g.Smem, lim.MaxSmem, l.Config)
	case per*g.Threads > lim.ThreadsPerSM || per*g.Smem > lim.SmemPerSM:
		return fmt.Errorf("%s: %d blocks of %d threads and %d bytes of shared memory do not fit on one multiprocessor (%s)", l.Name, per, g.Threads, g.Smem, l.Config)
	case g.Threads%lim.Warp() != 0:
		return fmt.Errorf("%s: %d threads a block is not a whole number of the target's %d-thread warps (%s)", l.Name, g.Threads, lim.Warp(), l.Config)
	case g.Cluster > 1 && !lim.Clusters:
		return fmt.Errorf("%s: clusters of %d blocks need a target with thread block clusters (sm_90) (%s)", l.Name, g.Cluster, l.Config)
	}
	return nil
}

// Override sets the parameters in c on the launches of p, checking each
// value against the template's space and the configuration against lim.
// A key TEMPLATE.NAME (matmul-simt.BK) is for the launches of that
// template only; a plain NAME goes to every launch whose template declares
// all the plain names. Parameters that a template's default derives from
// others, and that c leaves out, follow the new values (derived). It
// reports whether any launch took a parameter.
func Override(p *Plan, c Config, lim Limits) (bool, error) {
	plain := Config{}
	for k, v := range c {
		t, _, scoped := strings.Cut(k, ".")
		if !scoped {
			plain[k] = v
		} else if !slices.ContainsFunc(templatesFor(lim), func(x Template) bool { return x.Name() == t }) {
			return false, fmt.Errorf("%s: no template %q (have: %s)", k, t, templateNames(lim))
		}
	}
	took := false
	for _, l := range p.Launches {
		space := l.Template.Space()
		set := Config{}
		for k, v := range c {
			if name, ok := strings.CutPrefix(k, l.Template.Name()+"."); ok {
				set[name] = v
			}
		}
		declared := true
		for k := range plain {
			if _, ok := space[k]; !ok {
				declared = false
			}
		}
		if declared {
			maps.Copy(set, plain)
		}
		if len(set) == 0 {
			continue
		}
		for _, k := range sortedKeys(set) {
			if !slices.Contains(space[k], set[k]) {
				return false, fmt.Errorf("%s: %s=%d is not in template %s's space %v", l.Name, k, set[k], l.Template.Name(), space[k])
			}
			l.Config[k] = set[k]
		}
		if d, ok := l.Template.(derived); ok {
			d.Derive(l, set)
		}
		if err := l.Check(lim); err != nil {
			return false, err
		}
		took = true
	}
	return took, nil
}

// templateNames lists the templates' names, in table order.
func templateNames(lim Limits) string {
	var names []string
	for _, t := range templatesFor(lim) {
		names = append(names, t.Name())
	}
	return strings.Join(names, ", ")
}

// choose picks the template for a statement: the first in the table that
// the target can run and that accepts it. The generic template accepts
// everything, so every kernel the checker accepts lowers.
func choose(s *ir.Stmt, lim Limits) Template {
	for _, t := range templatesFor(lim) {
		if tt, ok := t.(targeted); ok && !tt.Available(lim) {
			continue
		}
		if t.Accepts(s) {
			return t
		}
	}
	panic("lower: no template accepts " + ir.Format(s.Value)) // generic accepts all
}

// PrintStmt renders statement s of one of p's launches as ir.PrintStmt
// does, a let's comment saying where the plan keeps its values: "in the
// workspace" (a launch stores them there for later launches, whether or
// not it also keeps them on chip) or "on chip" (a launch's fused let, in
// registers or shared memory, never stored).
func (p *Plan) PrintStmt(s *ir.Stmt) string {
	where := "on chip"
	if p.Slot(s.Target) != nil {
		where = "in the workspace"
	}
	return ir.PrintStmtWhere(p.Kernel, s, where)
}

// Print renders a plan for `kgen ir --after lower`.
func Print(p *Plan) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "plan %s", p.Name)
	if p.Env != nil {
		fmt.Fprintf(&sb, " at %s", p.Env)
	}
	sb.WriteString("\n")
	for _, s := range p.Workspace {
		fmt.Fprintf(&sb, "  workspace %s: %s%s at byte %s\n", s.Tensor.Name, s.Tensor.DType, formatShape(s.Tensor.Shape), ir.Format(Simplify(s.Offset)))
	}
	for _, l := range p.Launches {
		fmt.Fprintf(&sb, "  launch %s: %s(%s) grid %s\n", l.Name, l.Template.Name(), l.Config, formatGrid(l.Grid()))
		for _, s := range l.Stmts() {
			fmt.Fprintf(&sb, "    %s\n", p.PrintStmt(s))
		}
	}
	return sb.String()
}

func formatShape(shape []ir.Expr) string {
	var parts []string
	for _, e := range shape {
		parts = append(parts, ir.Format(e))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func formatGrid(g Grid) string {
	return fmt.Sprintf("(%s) x block %d", ir.Format(g.Blocks), g.Threads)
}
