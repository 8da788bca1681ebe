package lower

import (
	"strconv"
	"strings"

	"kgen.dev/kgen/ir"
)

// Manifest describes a built source file for build systems and runners:
// every entry point, its arguments in ABI order, and how to launch it.
// Size expressions are written in the spec language's integer syntax (`/`
// is floor division, min(a, b)), over the names in Sizes and Params.
// docs/abi.md specifies it.
type Manifest struct {
	Kgen    string           `json:"kgen"`
	Target  string           `json:"target"`
	Source  string           `json:"source"`
	Binary  string           `json:"binary,omitempty"`
	Kernels []ManifestKernel `json:"kernels"`
}

// ManifestKernel is one planned kernel or instance.
type ManifestKernel struct {
	Name        string            `json:"name"`
	Kernel      string            `json:"kernel"`
	Hash        string            `json:"hash"`
	Specialized bool              `json:"specialized"`
	Inputs      []ManifestTensor  `json:"inputs"`
	Outputs     []ManifestTensor  `json:"outputs"`
	Sizes       []string          `json:"sizes"`
	Params      []ManifestParam   `json:"params"`
	Derived     map[string]string `json:"derived,omitempty"`
	Workspace   string            `json:"workspace_bytes"`
	Launches    []ManifestLaunch  `json:"launches"`
	// Tuning says where an instance's configurations come from: the
	// tuning database (at this shape or the nearest) or the heuristic
	// defaults.
	Tuning string `json:"tuning,omitempty"`
}

// ManifestTensor is an argument tensor: dtype and shape expressions.
type ManifestTensor struct {
	Name  string   `json:"name"`
	DType string   `json:"dtype"`
	Shape []string `json:"shape"`
}

// ManifestParam is a runtime scalar argument.
type ManifestParam struct {
	Name  string `json:"name"`
	DType string `json:"dtype"`
}

// ManifestLaunch is one launch, in order: its grid is Blocks x 1 x 1
// blocks of Threads x 1 x 1 threads; a launch whose Blocks is 0 is
// skipped.
type ManifestLaunch struct {
	Function    string `json:"function"`
	Template    string `json:"template"`
	Config      Config `json:"config"`
	Blocks      string `json:"blocks"`
	Threads     int64  `json:"threads"`
	SharedBytes int64  `json:"shared_bytes"`
	// Cluster, above 1, is the blocks of the launch's thread block
	// clusters; its rows stride by the grid (Grid's Cluster).
	Cluster  int64  `json:"cluster,omitempty"`
	Computes string `json:"computes"`
}

// Describe renders a plan's manifest entry. hash is the canonical hash of
// the kernel as the user wrote it.
func Describe(p *Plan, hash string) ManifestKernel {
	k := p.Kernel
	m := ManifestKernel{
		Name: p.Name, Kernel: k.Name, Hash: hash, Specialized: p.Env != nil,
		Sizes: []string{}, Params: []ManifestParam{},
		Workspace: SizeText(Simplify(p.WorkspaceBytes())),
	}
	// The tensors as declared: a specialized plan's own kernel may have
	// merged dimensions (collapseAxes) of the same memory.
	tensors := func(ts []*ir.Tensor) []ManifestTensor {
		out := []ManifestTensor{}
		for _, t := range ts {
			mt := ManifestTensor{Name: t.Name, DType: t.DType.String(), Shape: []string{}}
			if p.Env != nil {
				shape, err := p.Env.Shape(t)
				if err == nil {
					for _, n := range shape {
						mt.Shape = append(mt.Shape, strconv.FormatInt(n, 10))
					}
					out = append(out, mt)
					continue
				}
			}
			for _, e := range t.Shape {
				mt.Shape = append(mt.Shape, SizeText(e))
			}
			out = append(out, mt)
		}
		return out
	}
	src := k
	if p.Env != nil {
		src = p.Source
	}
	m.Inputs, m.Outputs = tensors(src.Inputs), tensors(src.Outputs)
	if p.Env == nil {
		for _, d := range k.DeclaredDims() {
			m.Sizes = append(m.Sizes, d.Name)
		}
		for _, prm := range k.Params {
			m.Params = append(m.Params, ManifestParam{Name: prm.Name, DType: prm.Type.String()})
		}
		for _, d := range k.Dims {
			if d.Def != nil {
				if m.Derived == nil {
					m.Derived = map[string]string{}
				}
				m.Derived[d.Name] = SizeText(d.Def)
			}
		}
	}
	for _, l := range p.Launches {
		g := l.Grid()
		ml := ManifestLaunch{
			Function: l.Name, Template: l.Template.Name(), Config: l.Config,
			Blocks: SizeText(g.Blocks), Threads: g.Threads, SharedBytes: g.Smem, Computes: computes(l),
		}
		if g.Cluster > 1 {
			ml.Cluster = g.Cluster
		}
		m.Launches = append(m.Launches, ml)
	}
	return m
}

// SizeText renders a size expression without the integer widenings the
// checker inserts (i64(stride)): every value in a size expression is an
// integer.
func SizeText(e ir.Expr) string {
	e = ir.Rewrite(ir.Substitute(e, nil), func(x ir.Expr) ir.Expr {
		if c, ok := x.(*ir.Cast); ok && c.T.IsInt() && c.X.Type().IsInt() {
			return c.X
		}
		return nil
	})
	return strings.TrimSpace(ir.Format(Simplify(e)))
}

// computes names the tensors a launch writes, its statement's, then its
// siblings', then the fused outputs' (a row's statistics it also stores),
// comma-separated.
func computes(l *Launch) string {
	names := []string{l.Stmt.Target.Name}
	for _, s := range l.Also {
		names = append(names, s.Target.Name)
	}
	for _, s := range l.Fused {
		if s.Target.Kind == ir.Output {
			names = append(names, s.Target.Name)
		}
	}
	return strings.Join(names, ",")
}
