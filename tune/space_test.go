package tune

import (
	"testing"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/lower"
)

// plan checks src and plans its instance name.
func plan(t *testing.T, src, name string, lim lower.Limits) *lower.Plan {
	t.Helper()
	var diags diag.List
	f := frontend.Parse(diag.NewSource("t.kg", src), &diags)
	prog := frontend.Check(f, &diags)
	if diags.HasErrors() {
		t.Fatalf("%v", diags.Diags)
	}
	in := prog.Instance(name)
	p, err := lower.Build(in.Kernel, in.Env, in.Name, lim)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var h100 = lower.Limits{MaxThreads: 1024, MaxSmem: 227 << 10, ThreadsPerSM: 2048, SmemPerSM: 228 << 10}

const scaleSrc = `
kernel scale<N>(X: f32[N]) -> (Y: f32[N]) {
  Y[i] = X[i] * 2.0
}
instance scale_1m = scale<N = 1048576>
`

func TestMixedRadix(t *testing.T) {
	s := &Space{Params: []Param{{"A", []int64{1, 2, 3}}, {"B", []int64{10, 20}}}}
	if s.Size() != 6 {
		t.Fatalf("size %d, want 6", s.Size())
	}
	// The last parameter varies fastest: 0 A1B10, 1 A1B20, 2 A2B10, 3 A2B20.
	if got := Key(s.Config(3)); got != "A=2, B=20" {
		t.Errorf("point 3 is %s, want A=2, B=20", got)
	}
	if got := Key(s.Config(4)); got != "A=3, B=10" {
		t.Errorf("point 4 is %s, want A=3, B=10", got)
	}
	for i := range s.Size() {
		if j, ok := s.IndexOf(s.Config(i)); !ok || j != i {
			t.Errorf("IndexOf(Config(%d)) = %d, %v", i, j, ok)
		}
	}
	if _, ok := s.IndexOf(lower.Config{"A": 4, "B": 10}); ok {
		t.Error("A=4 is not in the space")
	}
}

func TestLaunchSpaceCounts(t *testing.T) {
	p := plan(t, scaleSrc, "scale_1m", h100)
	l := p.Launches[0]
	if l.Template.Name() != "elementwise" {
		t.Fatalf("template %s, want elementwise", l.Template.Name())
	}
	// THREADS {64..1024} x UNROLL {1,2,4,8} x VEC {1,2,4,8} x REUSE
	// {0,1} x HOIST {0,1} x BLOCKS_PER_SM {1,2,4,8,16}: 5*4*4*2*2*5, of
	// which REUSE=1's half is invalid (one index: no outer one to reuse
	// inputs across), HOIST=1 holds with UNROLL and VEC above 1 only
	// (16 + 9 of each THREADS and BLOCKS_PER_SM), and BLOCKS_PER_SM blocks
	// of THREADS must fit in 2048 threads: 5 + 5 + 4 + 3 + 2 pairs, each
	// with 25 valid.
	s := LaunchSpace(l, h100, nil)
	if s.Size() != 1600 || s.Count() != 19*25 {
		t.Errorf("size %d, valid %d; want 1600, 475", s.Size(), s.Count())
	}
	// A target of at most 256 threads a block: THREADS 64, 128, 256.
	small := h100
	small.MaxThreads = 256
	if n := LaunchSpace(l, small, nil).Count(); n != 14*25 {
		t.Errorf("with 256 threads at most: %d valid, want 350", n)
	}
	// @tune narrows THREADS to two values and extends UNROLL with 16.
	s = LaunchSpace(l, h100, map[string][]int64{"THREADS": {256, 128}, "UNROLL": {16, 1}, "BM": {64}})
	if s.Size() != 2*2*4*2*2*5 {
		t.Errorf("narrowed size %d, want 320", s.Size())
	}
	if s.Params[3].Name != "THREADS" || s.Params[3].Values[0] != 128 {
		t.Errorf("params %+v: want sorted names and values", s.Params)
	}
}

func TestLaunchSpaceTemplateConstraints(t *testing.T) {
	src := `
kernel mm<M, N, K>(A: bf16[M, K], B: bf16[K, N]) -> (C: bf16[M, N]) @acc(f32) {
  C[m, n] = sum[k](A[m, k] * B[k, n])
}
instance mm_4k = mm<M = 4096, N = 4096, K = 4096>
`
	lim := h100
	lim.Wgmma, lim.Clusters = true, true
	p := plan(t, src, "mm_4k", lim)
	l := p.Launches[0]
	if l.Template.Name() != "matmul-wgmma" {
		t.Skipf("template %s", l.Template.Name())
	}
	s := LaunchSpace(l, lim, nil)
	// Every point Count accepts passes Launch.Check, every other fails it.
	valid := 0
	for i := range s.Size() {
		probe := *l
		probe.Config = s.Config(i)
		if err := probe.Check(lim); (err == nil) != (s.Check(i) == nil) {
			t.Fatalf("point %d: Check %v, space %v", i, err, s.Check(i))
		} else if err == nil {
			valid++
		}
	}
	if valid == 0 || int64(valid) == s.Size() {
		t.Errorf("%d of %d valid: the constraints should remove some, not all", valid, s.Size())
	}
	// WGS=2 with BM=64 leaves 32 rows a warpgroup: never valid.
	if s.Valid(lower.Config{"BM": 64, "BN": 128, "WGS": 2, "STAGES": 4}) == nil {
		t.Error("BM=64, WGS=2 accepted")
	}
}

// TestCanonicalConfig: parameters at their implicit values drop out of a
// configuration's text; others, and text that is no configuration, stay.
func TestCanonicalConfig(t *testing.T) {
	for in, want := range map[string]string{
		"BLOCKS_PER_SM=1, BLOCK_ROWS=1, CLUSTER=1, PREFETCH=0, STAGE=0, THREADS=512, VEC=4": "BLOCK_ROWS=1, CLUSTER=1, PREFETCH=0, THREADS=512, VEC=4",
		"BLOCKS_PER_SM=2, THREADS=256, VEC=1":                                               "BLOCKS_PER_SM=2, THREADS=256",
		"HOIST=0, REUSE=0, THREADS=256, UNROLL=2, VEC=4":                                    "THREADS=256, UNROLL=2, VEC=4",
		"BLOCK=1024, REUSE=0, UNROLL=1, num_warps=4":                                        "BLOCK=1024, num_warps=4",
		"":             "",
		"not a config": "not a config",
	} {
		if got := CanonicalConfig(in); got != want {
			t.Errorf("CanonicalConfig(%q) = %q, want %q", in, got, want)
		}
	}
}
