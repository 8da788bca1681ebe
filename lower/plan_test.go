package lower_test

import (
	"strings"
	"testing"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/interp"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
	"kgen.dev/kgen/tensor"
)

const spec = `
kernel softmax<R, D>(X: f32[R, D]) -> (Y: f32[R, D]) {
  let mx[r] = max[d](X[r, d])
  let e[r, d] = exp(X[r, d] - mx[r])
  let den[r] = sum[d](e[r, d])
  Y[r, d] = e[r, d] / den[r]
}

kernel shifted<N>(X: f32[N]) -> (Y: f32[N]) {
  let t[i] = X[i] * 2
  Y[i] = (t[i - 1] ?? -1) + t[i]
}

instance sm = softmax<R = 3, D = 5>
`

func check(t *testing.T) *ir.Program {
	t.Helper()
	prog, diags := frontend.CheckSource("spec.kg", spec)
	if diags.HasErrors() {
		t.Fatalf("%v", diags.Diags[0].Msg)
	}
	return prog
}

// TestPlanSoftmax: the elementwise let e is inlined into both of its
// readers; the reductions mx and den are materialized in the workspace,
// 256-byte aligned; four statements become three launches.
func TestPlanSoftmax(t *testing.T) {
	prog := check(t)
	p, err := lower.Build(prog.Kernel("softmax"), nil, "softmax")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range p.Launches {
		names = append(names, l.Name+":"+l.Template.Name())
	}
	if got, want := strings.Join(names, " "), "softmax_0_mx:generic softmax_1_den:generic softmax_2_Y:elementwise"; got != want {
		t.Errorf("launches %s, want %s", got, want)
	}
	if len(p.Workspace) != 2 || p.Workspace[0].Tensor.Name != "mx" || p.Workspace[1].Tensor.Name != "den" {
		t.Fatalf("workspace %v", p.Workspace)
	}
	env, _ := ir.Bind(p.Kernel, map[string]int64{"R": 100, "D": 7}, nil)
	off, _ := env.Int(p.Workspace[1].Offset)
	total, _ := env.Int(p.WorkspaceBytes())
	// mx takes 400 bytes, rounded up to 512; den 400 more.
	if off != 512 || total != 912 {
		t.Errorf("den at %d, total %d; want 512 and 912", off, total)
	}
	// The original kernel is untouched.
	if len(prog.Kernel("softmax").Lets) != 3 {
		t.Errorf("planning changed the checked kernel")
	}
}

// TestInlinedKernelComputesTheSame runs the planned (inlined, folded)
// kernel and the checked one through the interpreter: inlining a let
// read through ?? must keep the default where the read is out of range.
func TestInlinedKernelComputesTheSame(t *testing.T) {
	prog := check(t)
	for _, name := range []string{"softmax", "shifted"} {
		k := prog.Kernel(name)
		p, err := lower.Build(k, nil, name)
		if err != nil {
			t.Fatal(err)
		}
		sizes := map[string]int64{"R": 4, "D": 6, "N": 9}
		dims := map[string]int64{}
		for _, d := range k.DeclaredDims() {
			dims[d.Name] = sizes[d.Name]
		}
		env, err := ir.Bind(k, dims, nil)
		if err != nil {
			t.Fatal(err)
		}
		in, _ := interp.RandomInputs(k, env, tensor.Normal, 7)
		want, err := interp.Run(k, env, in, interp.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := interp.Run(p.Kernel, p.Bind(env), in, interp.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			for j := int64(0); j < want[i].Len(); j++ {
				if g, w := got[i].Float(j), want[i].Float(j); g != w {
					t.Errorf("%s: output %d element %d: planned %v, checked %v", name, i, j, g, w)
				}
			}
		}
	}
	// shifted at i = 0 reads t[-1]: the default -1, so Y[0] = -1 + 2 X[0].
}

// TestSpecializedPlanHasNoSizes: an instance's plan refers to no dim or
// param; its grid is a constant.
func TestSpecializedPlanHasNoSizes(t *testing.T) {
	prog := check(t)
	in := prog.Instance("sm")
	p, err := lower.Build(in.Kernel, in.Env, in.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range p.Launches {
		ir.Walk(l.Stmt.Value, func(e ir.Expr) bool {
			switch e.(type) {
			case *ir.DimRef, *ir.ParamRef:
				t.Errorf("%s still reads %s", l.Name, ir.Format(e))
			}
			return true
		})
		g := l.Template.Grid(l.Stmt, l.Config)
		if got := lower.SizeText(g.Blocks); got != "1" {
			t.Errorf("%s: blocks %s, want 1 (15 points at most, 256 threads)", l.Name, got)
		}
	}
	if p.Launches[2].Name != "sm_2_Y" {
		t.Errorf("entry point %s, want sm_2_Y", p.Launches[2].Name)
	}
}
