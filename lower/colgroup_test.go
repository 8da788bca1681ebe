package lower_test

import (
	"testing"

	"kgen.dev/kgen/lower"
	"kgen.dev/kgen/runtime"
)

// TestColGroups: column reductions and the elementwise statement that
// reads them at its own outer point and column become one col-group
// launch in an instance's plan on CUDA (but not in a kernel's symbolic
// plan), and on Triton where one program's tile holds the reduced axis
// (1024 points, not 2048); a let read at another
// column (the neighbour's maximum) or an output not indexed [outer...,
// reduced, column] keeps its launches; the default configurations are
// the measured ones (see colGroup.Default).
func TestColGroups(t *testing.T) {
	src := `
kernel softmax_dim1<NB, D, T>(X: f32[NB, D, T]) -> (Y: f32[NB, D, T]) {
  let mx[b, t] = max[d](X[b, d, t])
  let den[b, t] = sum[d](exp(X[b, d, t] - mx[b, t]))
  Y[b, d, t] = exp(X[b, d, t] - mx[b, t]) / den[b, t]
}
kernel neighbour<NB, D, T>(X: f32[NB, D, T]) -> (Y: f32[NB, D, T]) {
  let mx[b, t] = max[d](X[b, d, t])
  Y[b, d, t] = X[b, d, t] - mx[b, T - 1 - t]
}
kernel transposed<NB, D, T>(X: f32[NB, D, T]) -> (Y: f32[NB, T, D]) {
  let mx[b, t] = max[d](X[b, d, t])
  Y[b, t, d] = X[b, d, t] - mx[b, t]
}
kernel rms_features<NB, F, H, W>(X: f32[NB, F, H, W]) -> (Y: f32[NB, F, H, W]) {
  let rms[b, i, j] = sqrt(sum[f](X[b, f, i, j] * X[b, f, i, j]) / F + 1e-5)
  Y[b, f, i, j] = X[b, f, i, j] / rms[b, i, j]
}
instance softmax_big = softmax_dim1<NB = 64, D = 1024, T = 256>
instance softmax_long = softmax_dim1<NB = 64, D = 2048, T = 256>
instance neighbour_big = neighbour<NB = 64, D = 1024, T = 256>
instance transposed_big = transposed<NB = 64, D = 1024, T = 256>
instance rms_big = rms_features<NB = 16, F = 64, H = 256, W = 256>
`
	prog, sm90 := checkOnSm90(t, "colgroups.kg", src)
	want := map[string]string{
		"softmax_big":  "BLOCKS_PER_SM=1, TX=8, TY=64, VEC=2",
		"softmax_long": "BLOCKS_PER_SM=1, TX=4, TY=128, VEC=2",
		"rms_big":      "BLOCKS_PER_SM=1, TX=32, TY=8, VEC=2",
	}
	for _, in := range prog.Instances {
		p, err := lower.Build(in.Kernel, in.Env, in.Name, sm90)
		if err != nil {
			t.Fatal(err)
		}
		w, grouped := want[in.Name]
		l := p.Launches[0]
		if got := len(p.Launches) == 1 && l.Template.Name() == "col-group"; got != grouped {
			t.Errorf("%s: %d launches, the first %s(%s); one col-group: %t, want %t", in.Name, len(p.Launches), l.Template.Name(), l.Config, got, grouped)
			continue
		}
		if grouped && l.Config.String() != w {
			t.Errorf("%s: col-group(%s), want col-group(%s)", in.Name, l.Config, w)
		}
	}
	triton, err := runtime.ParseTarget("triton:sm_90")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		inst, what string
		lim        lower.Limits
		sym        bool
		want       string // the col-group's configuration, "" for none
	}{
		{"softmax_big", "triton:sm_90", triton.Limits(), false, "BLOCK_K=1024, BLOCK_N=16, num_warps=16"},
		{"softmax_long", "triton:sm_90", triton.Limits(), false, ""},
		{"softmax_big", "the symbolic plan", sm90, true, ""},
	} {
		in := prog.Instance(c.inst)
		env := in.Env
		if c.sym {
			env = nil
		}
		p, err := lower.Build(in.Kernel, env, in.Name, c.lim)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, l := range p.Launches {
			if l.Template.Name() == "col-group" {
				got = l.Config.String()
			}
		}
		if got != c.want {
			t.Errorf("%s on %s: col-group(%s), want col-group(%s)", c.inst, c.what, got, c.want)
		}
	}
}
