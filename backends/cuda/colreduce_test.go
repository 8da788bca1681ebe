package cuda

import (
	"testing"

	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
)

// colSpec holds column reductions of every operation, several dtypes and
// accumulation types, NaNs, fused epilogues, reads with defaults, two
// reduction axes and a let; the instances are long enough over few
// columns to be split in chunks.
const colSpec = `
kernel nan_max<R, D>(X: f32[R, D]) -> (Y: f32[D]) {
  Y[d] = max[r](d % 2 == 0 && r == (d * 613 + 5) % max(R, 1) ? sqrt(X[r, d] - 2) : X[r, d])
}

kernel nan_min<R, D>(X: f32[R, D]) -> (Y: f32[D]) {
  Y[d] = min[r](d % 2 == 0 && r == (d * 613 + 5) % max(R, 1) ? sqrt(X[r, d] - 2) : X[r, d])
}

kernel prod_cols<R, D>(X: f32[R, D]) -> (Y: f32[D]) {
  Y[d] = prod[r](X[r, d] / 4 + 1)
}

kernel count_f16<R, D>(X: f16[R, D]) -> (Y: f16[D]) @acc(f16) {
  Y[d] = sum[r](X[r, d] > 0 ? 1 : 0)
}

kernel count_bf16<NB, R, D>(X: bf16[NB, R, D]) -> (Y: f32[NB, D]) @acc(bf16) {
  Y[b, d] = sum[r](X[b, r, d] > 0 ? 1 : 0)
}

kernel count_pos<R, D>(X: f32[R, D]) -> (C: i32[D]) {
  C[d] = sum[r](X[r, d] > 0 ? 1 : 0)
}

kernel imax<R, D>(X: i32[R, D]) -> (Y: i32[D]) {
  Y[d] = max[r](X[r, d])
}

kernel i8sum<NB, R, D>(X: i8[NB, R, D]) -> (Y: i32[NB, D]) @acc(i32) {
  Y[b, d] = sum[r](X[b, r, d])
}

kernel sq_f64<R, D>(X: f64[R, D]) -> (Y: f64[D]) {
  Y[d] = sum[r](X[r, d] * X[r, d])
}

kernel fused<R, D; eps: f32 = 0.001>(X: f32[R, D], w: f32[R], b: f32[D]) -> (Y: f16[D]) {
  Y[d] = relu(sqrt(sum[r](w[r] * X[r, d] * X[r, d]) / R + eps) + b[d])
}

kernel two_axes<A, B, D>(X: f32[A, B, D]) -> (Y: f32[D]) {
  Y[d] = sum[a, b](X[a, b, d])
}

kernel shifted<R, D>(X: f32[R, D]) -> (Y: f32[D]) {
  Y[d] = max[r in 0..R](X[r - 1, d] ?? -inf)
}

kernel centered<R, D>(X: f32[R, D]) -> (Y: f32[D]) {
  let mean[d] = sum[r](X[r, d]) / R
  Y[d] = sum[r]((X[r, d] - mean[d]) * (X[r, d] - mean[d]))
}

instance nan_max_tall = nan_max<R = 3001, D = 5>
instance nan_min_tall = nan_min<R = 3001, D = 6>
instance prod_tall = prod_cols<R = 2050, D = 3>
instance imax_tall = imax<R = 1500, D = 7>
instance i8sum_tall = i8sum<NB = 2, R = 2000, D = 3>
instance count_pos_tall = count_pos<R = 4099, D = 2>
instance two_axes_tall = two_axes<A = 40, B = 30, D = 2>
instance fused_tall = fused<R = 1030, D = 9>
instance centered_tall = centered<R = 2048, D = 4>
`

// colShapes are the sizes each kernel of colSpec runs at: an empty
// reduction, ones, no columns, odd sizes, round ones (vector loads), and
// more rows than a block has rows of threads.
var colShapes = []map[string]int64{
	{"R": 0, "D": 5, "NB": 2},
	{"R": 1, "D": 1, "NB": 1},
	{"R": 5, "D": 0, "NB": 2},
	{"R": 37, "D": 9, "NB": 3},
	{"R": 64, "D": 64, "NB": 2},
	{"R": 300, "D": 7, "NB": 1},
}

// TestEmulatedColReduce runs every kernel of colSpec, each statement a
// col-reduce launch, at colShapes, and its split instances, on the CPU,
// and compares the outputs with the interpreter's.
func TestEmulatedColReduce(t *testing.T) {
	plans := plansOf(t, "cols.kg", colSpec)
	for _, p := range plans {
		for _, l := range p.Launches {
			if l.Template.Name() != "col-reduce" {
				t.Errorf("%s: template %s, want col-reduce", l.Name, l.Template.Name())
			}
		}
		// Each statement of an instance is split: partial results, then
		// their combination.
		if p.Env != nil && len(p.Launches) != 2*len(p.Source.Stmts) {
			t.Errorf("%s: %d launches for %d statements, want each split in two", p.Name, len(p.Launches), len(p.Source.Stmts))
		}
	}
	emulatePlans(t, plans, colShapes)
}

// TestEmulatedReductionBodies: every template accumulates a reduction's
// whole body: prod[d](x / 4 + 1) multiplies by x / 4 + 1 (row-reduce, and
// generic for a statement with two reductions).
func TestEmulatedReductionBodies(t *testing.T) {
	const spec = `
kernel prod_rows<R, D>(X: f32[R, D]) -> (Y: f32[R]) {
  Y[r] = prod[d](X[r, d] / 4 + 1)
}

kernel prod_twice<R, D>(X: f32[R, D]) -> (Y: f32[R]) {
  Y[r] = prod[d](X[r, d] / 4 + 1) - prod[d](X[r, d] / 2 + 1)
}
`
	plans := plansOf(t, "prods.kg", spec)
	for _, p := range plans {
		want := map[string]string{"prod_rows": "row-reduce", "prod_twice": "generic"}[p.Name]
		if got := p.Launches[0].Template.Name(); got != want {
			t.Errorf("%s: template %s, want %s", p.Name, got, want)
		}
	}
	emulatePlans(t, plans, []map[string]int64{{"R": 3, "D": 600}})
}

// emulatePlans runs plans on the CPU and compares their outputs with the
// interpreter's: each instance at its sizes, each kernel at every shape
// of shapes (dims by name; A takes R's value, B is 3).
func emulatePlans(t *testing.T, plans []*lower.Plan, shapes []map[string]int64) {
	t.Helper()
	gxx := emulatorGxx(t)
	bin, dir := buildEmulator(t, gxx, plans)
	for _, p := range plans {
		envs := []*ir.Env{p.Env}
		if p.Env == nil {
			envs = nil
			for _, shape := range shapes {
				dims := map[string]int64{}
				for _, d := range p.Source.DeclaredDims() {
					switch d.Name {
					case "A":
						dims[d.Name] = shape["R"]
					case "B":
						dims[d.Name] = 3
					default:
						dims[d.Name] = shape[d.Name]
					}
				}
				env, err := ir.Bind(p.Source, dims, nil)
				if err != nil {
					t.Fatal(err)
				}
				envs = append(envs, env)
			}
		}
		for _, env := range envs {
			if err := emulate(t, bin, p, env, dir); err != nil {
				t.Errorf("%s at %s: %v", p.Name, env, err)
			}
		}
	}
}
