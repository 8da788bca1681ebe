package cuda

import (
	"strings"
	"testing"

	"kgen.dev/kgen/lower"
)

// TestEmulatedStagedRows: row-reduce launches that stage their rows in
// shared memory (STAGE=1) compute what the interpreter does, on the CPU,
// at rows that start anywhere in a 16-byte chunk (lengths 203, 77, 131 and
// 45 put consecutive rows at every offset), rows shorter than a chunk, f32
// and bf16 rows (chunks of 4 and 8), two staged inputs of different types,
// and a layernorm whose weights, read along the row but not at it, stay
// loads from memory. The copy of a row takes the first let's reductions
// as it goes, and a softmax's sum keeps its exponentials in place of the
// row for the outputs, but not where the outputs read the row too.
func TestEmulatedStagedRows(t *testing.T) {
	const spec = `
kernel softmax<R, D>(X: f32[R, D]) -> (Y: f32[R, D]) {
  let mx[r] = max[d](X[r, d])
  let den[r] = sum[d](exp(X[r, d] - mx[r]))
  Y[r, d] = exp(X[r, d] - mx[r]) / den[r]
}

kernel layernorm_w<R, D>(X: f32[R, D], g: f32[D], b: f32[D]) -> (Y: f32[R, D]) {
  let mu[r] = sum[d](X[r, d]) / D
  let var[r] = sum[d]((X[r, d] - mu[r]) * (X[r, d] - mu[r])) / D
  Y[r, d] = (X[r, d] - mu[r]) * rsqrt(var[r] + 1e-5) * g[d] + b[d]
}

kernel lse_bf16<R, D>(X: bf16[R, D]) -> (Y: f32[R]) {
  let mx[r] = max[d](X[r, d])
  Y[r] = mx[r] + log(sum[d](exp(X[r, d] - mx[r])))
}

kernel two_inputs<R, D>(X: f32[R, D], Z: f16[R, D]) -> (Y: f32[R, D]) {
  let s[r] = sum[d](X[r, d] - Z[r, d] / 2)
  Y[r, d] = X[r, d] - s[r] + Z[r, d]
}

instance softmax_odd = softmax<R = 5, D = 203>
instance softmax_short = softmax<R = 3, D = 2>
instance ln_odd = layernorm_w<R = 4, D = 77>
instance lse_odd = lse_bf16<R = 6, D = 131>
instance two_odd = two_inputs<R = 5, D = 45>
// Rows long enough for several batches of 8 chunks a thread (of 64
// threads): whole batches, and a last one partly past the row.
instance softmax_long = softmax<R = 3, D = 4103>
instance ln_long = layernorm_w<R = 3, D = 4099>

kernel softmax_resid<R, D>(X: f32[R, D]) -> (Y: f32[R, D]) {
  let mx[r] = max[d](X[r, d])
  let den[r] = sum[d](exp(X[r, d] - mx[r]))
  Y[r, d] = exp(X[r, d] - mx[r]) / den[r] + X[r, d]
}
instance resid_odd = softmax_resid<R = 5, D = 203>

kernel pitched<R, D, E>(X: f32[R, E]) -> (Y: f32[R, D]) {
  let mx[r] = max[d in 0..D](X[r, d])
  Y[r, d] = X[r, d] - mx[r]
}
instance pitch_odd = pitched<R = 6, D = 203, E = 206>

// A sum whose points are weighted by a point's index (w[d]): the copy
// takes each chunk's points at their own d, whole batches as edges.
kernel weighted<R, D>(X: f32[R, D], w: f32[D]) -> (Y: f32[R, D]) {
  let s[r] = sum[d](X[r, d] * w[d])
  Y[r, d] = X[r, d] - s[r]
}
instance weighted_long = weighted<R = 3, D = 4103>
`
	var plans []*lower.Plan
	for _, p := range plansFor(t, "staged.kg", spec, sm80) {
		if p.Env == nil {
			continue
		}
		if _, err := lower.Override(p, lower.Config{"THREADS": 64, "STAGE": 1, "PREFETCH": 0, "CLUSTER": 1, "BLOCK_ROWS": 1}, sm80); err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		src := Emit([]*lower.Plan{p})
		staged := map[string]string{"softmax_long": "X", "ln_long": "X", "softmax_odd": "X", "softmax_short": "X", "resid_odd": "X", "ln_odd": "X", "lse_odd": "X", "two_odd": "X Z", "pitch_odd": "X", "weighted_long": "X"}[p.Name]
		// The output pass reads a chunk of a staged input of its element
		// size with one vector load where the row starts as far into its
		// chunk as the output's: X's rows of 206 f32 and Y's of 203 do
		// in some rows and not in others.
		lined := map[string]string{"softmax_long": "X", "ln_long": "X", "softmax_odd": "X", "resid_odd": "X", "ln_odd": "X", "two_odd": "X", "pitch_odd": "X", "weighted_long": "X"}[p.Name]
		for _, in := range strings.Fields(lined) {
			if !strings.Contains(src, "kg_sh_"+in+" == kg_shy") || !strings.Contains(src, "kg_sv_"+in+".v[kg_e]") {
				t.Errorf("%s: the output pass does not read %s's chunks as vectors:\n%s", p.Name, in, src)
			}
		}
		if strings.Contains(src, "kg_sv_Z") {
			t.Errorf("%s: Z (f16) is read as chunks of the f32 output's:\n%s", p.Name, src)
		}
		for _, in := range strings.Fields(staged) {
			if !strings.Contains(src, "*)(kg_s_"+in+" + kg_c * ") {
				t.Errorf("%s: %s is not staged:\n%s", p.Name, in, src)
			}
		}
		// The copy of the one staged row takes the first let's
		// reductions: the log-sum-exp's max and sum online (no pass
		// left), the softmax's max alone (its outputs' pass is left), the
		// layernorm's mean with its squared deviations, the max of
		// pitched; with two staged inputs, the passes do.
		first := map[string]string{"softmax_long": "kg_sp0", "ln_long": "kg_sp0", "softmax_odd": "kg_sp0", "softmax_short": "kg_sp0", "resid_odd": "kg_sp0", "ln_odd": "kg_sp0", "lse_odd": "kg_om0", "pitch_odd": "kg_sp0", "weighted_long": "kg_sp0"}[p.Name]
		if took := strings.Contains(src, "the chunk's first point"); took != (first != "") || (first != "" && !strings.Contains(src, first+" = ")) {
			t.Errorf("%s: the copy takes the row's points %v, want %v (in %s):\n%s", p.Name, took, first != "", first, src)
		}
		// The softmax's sum stores its exponentials over the staged row,
		// and the outputs divide them; none else keeps a value there,
		// nor resid's, whose outputs read the row itself too.
		inPlace := strings.Contains(src, "(kg_s_X[d + kg_sh_X] = kg_exp(kg_s_X[d + kg_sh_X] - kg_v_mx))")
		if want := p.Name == "softmax_odd" || p.Name == "softmax_short" || p.Name == "softmax_long"; inPlace != want || (want && strings.Count(src, "kg_exp(kg_s") != 1) {
			t.Errorf("%s: exponentials kept in place of the row %v, want %v (and computed once):\n%s", p.Name, inPlace, want, src)
		}
		if p.Name == "ln_odd" && (strings.Contains(src, "kg_s_g") || strings.Contains(src, "kg_s_b")) {
			t.Errorf("ln_odd: the weights g and b are staged:\n%s", src)
		}
		if got, want := p.Launches[0].Grid().Smem, lower.RowStageSmem(p.Launches[0]); got != want || got == 0 {
			t.Errorf("%s: grid's shared memory %d, want the staged rows' %d (> 0)", p.Name, got, want)
		}
		plans = append(plans, p)
	}
	emulatePlans(t, plans, nil)
}

// TestStageChecks: STAGE=1 with groups of rows or prefetching is refused
// with the reason, and with clusters on a target without them; on a kernel's symbolic plan (a row length
// known only at run time) it stages nothing and the rows are read from
// memory, as without it.
func TestStageChecks(t *testing.T) {
	const spec = `
kernel softmax<R, D>(X: f32[R, D]) -> (Y: f32[R, D]) {
  let mx[r] = max[d](X[r, d])
  Y[r, d] = exp(X[r, d] - mx[r])
}
instance wide = softmax<R = 4, D = 1000>
`
	for _, p := range plansFor(t, "stage.kg", spec, sm80) {
		if p.Env == nil {
			if _, err := lower.Override(p, lower.Config{"STAGE": 1, "PREFETCH": 0}, sm80); err != nil {
				t.Fatalf("symbolic plan: %v", err)
			}
			if l := p.Launches[0]; lower.RowStageSmem(l) != 0 || l.Grid().Smem != 0 || strings.Contains(Emit([]*lower.Plan{p}), "kg_s_X") {
				t.Errorf("the symbolic plan stages its rows")
			}
			continue
		}
		for _, c := range []lower.Config{{"STAGE": 1, "PREFETCH": 1}, {"STAGE": 1, "BLOCK_ROWS": 2, "THREADS": 64}} {
			wantOverride(t, p, c, sm80, "a row staged in shared memory takes one block or one cluster")
		}
		wantOverride(t, p, lower.Config{"STAGE": 1, "CLUSTER": 2, "PREFETCH": 0, "BLOCK_ROWS": 1, "THREADS": 64}, sm80, "thread block clusters")
	}
}

// TestEmulatedExamplesStaged emulates the examples whose statements
// reduce rows with every row-reduce launch of their instances staged
// (STAGE=1, a block of 64 threads a row) where their rows fit shared
// memory, on the CPU against the interpreter: the copy's reductions and the values kept over the row
// (keepStagedShare) on every softmax, norm, loss and attention of the
// examples rather than on the few specs written for them.
func TestEmulatedExamplesStaged(t *testing.T) {
	gxx := emulatorGxx(t)
	staged := lower.Config{"row-reduce.STAGE": 1, "row-reduce.THREADS": 64, "row-reduce.CLUSTER": 1, "row-reduce.PREFETCH": 0, "row-reduce.BLOCK_ROWS": 1, "row-reduce.VEC": 1}
	for _, f := range []string{"softmax", "log_softmax", "layernorm", "rmsnorm", "norms", "losses", "l2norm", "reductions", "attention"} {
		t.Run(f, func(t *testing.T) {
			t.Parallel()
			emulateFileOn(t, gxx, "../../examples/"+f+".kg", emuTarget{d: CUDA, shims: cudaEmu.shims, config: staged, optional: true})
		})
	}
}
