package lower_test

import (
	"strings"
	"testing"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/interp"
	"kgen.dev/kgen/lower"
	"kgen.dev/kgen/tensor"
)

// TestOneHotSums: a sum over an axis that picks the one term where the
// axis equals a value independent of the sum's axes becomes that term,
// guarded by the value's range and read with a default; the plans compute
// what the kernels do (the interpreter runs both) with targets in range,
// negative and past the end. Sums whose comparison depends on their own
// axes, whose other branch is not zero, or that take the maximum, stay.
func TestOneHotSums(t *testing.T) {
	prog, diags := frontend.CheckSource("o.kg", `
kernel pick<NB, NC>(X: f32[NB, NC], target: i64[NB]) -> (P: f32[NB]) {
  P[b] = sum[c](c == target[b] ? X[b, c] * 2.0 + 1.0 : 0)
}
kernel pick2<NB, NC, K>(X: f32[NB, K, NC], target: i64[NB]) -> (P: f32[NB]) {
  P[b] = sum[k, c](target[b] == c ? X[b, k, c] : 0)
}
kernel xent<NB, NC>(X: f32[NB, NC], target: i64[NB]) -> (loss: f32) {
  let mx[b] = max[c](X[b, c])
  let lse[b] = mx[b] + log(sum[c](exp(X[b, c] - mx[b])))
  let picked[b] = sum[c](c == target[b] ? X[b, c] : 0)
  loss = sum[b](lse[b] - picked[b]) / NB
}
kernel diag<N>(X: f32[N, N]) -> (Y: f32[N]) {
  Y[i] = sum[j](j == i ? X[i, j] : 0)
}
kernel tri<N>(X: f32[N, N]) -> (Y: f32[N]) {
  Y[i] = sum[j](j == (i + j) % N ? X[i, j] : 0)
}
kernel notzero<NB, NC>(X: f32[NB, NC], target: i64[NB]) -> (P: f32[NB]) {
  P[b] = sum[c](c == target[b] ? X[b, c] : 1)
}
kernel maxpick<NB, NC>(X: f32[NB, NC], target: i64[NB]) -> (P: f32[NB]) {
  P[b] = max[c](c == target[b] ? X[b, c] : 0)
}
instance pick_a = pick<NB = 9, NC = 300>
instance pick2_a = pick2<NB = 7, NC = 40, K = 3>
instance xent_a = xent<NB = 33, NC = 1000>
instance diag_a = diag<N = 17>
instance tri_a = tri<N = 17>
instance notzero_a = notzero<NB = 9, NC = 300>
instance maxpick_a = maxpick<NB = 9, NC = 300>
`)
	if diags.HasErrors() {
		t.Fatal(diags.Diags[0].Msg)
	}
	for name, picked := range map[string]bool{
		"pick_a": true, "pick2_a": true, "xent_a": true, "diag_a": true,
		"tri_a": false, "notzero_a": false, "maxpick_a": false,
	} {
		in := prog.Instance(name)
		p, err := lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		text := lower.Print(p)
		if got := strings.Contains(text, "?? 0.0"); got != picked {
			t.Errorf("%s: picked %v, want %v:\n%s", name, got, picked, text)
		}
		if picked && strings.Contains(text, "[c in 0..") && name != "xent_a" {
			t.Errorf("%s: still sums over c:\n%s", name, text)
		}
		inputs, err := interp.RandomInputs(in.Kernel, in.Env, tensor.Normal, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(inputs) > 1 {
			// Targets in range, at both ends, before and past them.
			nc := inputs[0].Shape[len(inputs[0].Shape)-1]
			tg := inputs[1]
			for j := int64(0); j < tg.Len(); j++ {
				tg.SetInt(j, []int64{0, nc - 1, -1, nc, 5, nc + 7, 2}[j%7])
			}
		}
		samePlanOn(t, in, p, inputs, 1e-6)
	}
}
