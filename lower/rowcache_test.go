package lower_test

import (
	"strings"
	"testing"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
	"kgen.dev/kgen/runtime"
)

// TestRowCacheSkipsEmptyRows: rows of length 0 are not cached (the CUDA
// emitted a register array of size 0, which nvcc rejects;
// testsuite/corpus/compile-s174.kg is the differential tester's
// reproducer), while rows of a few elements are.
func TestRowCacheSkipsEmptyRows(t *testing.T) {
	src := `
kernel rowmin<M, R>(X: f32[M, R]) -> (Y: f32[M, R]) {
  let t[i] = min[j](X[i, j])
  Y[i, j] = X[i, j] - t[i]
}
instance empty = rowmin<M = 1, R = 0>
instance short = rowmin<M = 1, R = 3>
`
	prog, diags := frontend.CheckSource("rowcache.kg", src)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, in := range prog.Instances {
		p, err := lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		l := p.Launches[0]
		if l.Template.Name() != "row-reduce" {
			t.Fatalf("%s: template %s, want row-reduce", in.Name, l.Template.Name())
		}
		n, _, ok := lower.RowCache(l)
		if want := in.Name == "short"; ok != want {
			t.Errorf("%s: RowCache = %d, %v; want cached: %v", in.Name, n, ok, want)
		}
	}
}

// TestRowDefault pins row-reduce's default configuration (see Default and
// rowVecDefault, measured on the H100): rows of up to 4096 elements in
// whole 16-byte chunks take a block each and move in chunks, longer rows
// or rows of single elements are prefetched, and rows shared by clusters
// move in chunks.
func TestRowDefault(t *testing.T) {
	src := `
kernel norm_bf16<R, D>(X: bf16[R, D]) -> (Y: bf16[R, D]) {
  let s[r] = sum[d](X[r, d] * X[r, d])
  Y[r, d] = X[r, d] * rsqrt(s[r] / D + 1e-5)
}
kernel softmax<R, D>(X: f32[R, D]) -> (Y: f32[R, D]) {
  let mx[r] = max[d](X[r, d])
  let den[r] = sum[d](exp(X[r, d] - mx[r]))
  Y[r, d] = exp(X[r, d] - mx[r]) / den[r]
}
kernel lse<R, D>(X: f32[R, D]) -> (Y: f32[R]) {
  let mx[r] = max[d](X[r, d])
  Y[r] = mx[r] + log(sum[d](exp(X[r, d] - mx[r])))
}
kernel inorm<NC, H, W>(X: f32[NC, H, W]) -> (Y: f32[NC, H, W]) {
  let mu[c] = sum[h, w](X[c, h, w]) / (H * W)
  Y[c, h, w] = X[c, h, w] - mu[c]
}
instance bf16_4k = norm_bf16<R = 8192, D = 4096>
instance f32_3000 = softmax<R = 4096, D = 3000>
instance f32_3001 = softmax<R = 4096, D = 3001>
instance f32_16k = softmax<R = 4096, D = 16384>
instance f32_1k = softmax<R = 4096, D = 1024>
instance few_rows = softmax<R = 16, D = 16384>
instance f32_49 = softmax<R = 131072, D = 49>
instance f32_100 = softmax<R = 8192, D = 100>
instance f32_100_few = softmax<R = 4096, D = 100>
instance bf16_256 = norm_bf16<R = 4096, D = 256>
instance f32_32k = softmax<R = 512, D = 32000>
instance lse_32k = lse<R = 512, D = 32000>
instance lse_32k_few = lse<R = 128, D = 32000>
instance inorm_kb = inorm<NC = 1024, H = 256, W = 256>
instance f32_64k = softmax<R = 1024, D = 65536>
instance f32_vocab = softmax<R = 128, D = 50257>
`
	want := map[string]string{
		"bf16_4k":  "BLOCKS_PER_SM=1, BLOCK_ROWS=1, CLUSTER=1, PREFETCH=0, STAGE=0, THREADS=256, VEC=8",
		"f32_3000": "BLOCKS_PER_SM=1, BLOCK_ROWS=1, CLUSTER=1, PREFETCH=0, STAGE=0, THREADS=512, VEC=4",
		"f32_3001": "BLOCKS_PER_SM=1, BLOCK_ROWS=1, CLUSTER=1, PREFETCH=1, STAGE=0, THREADS=512, VEC=1",
		"f32_16k":  "BLOCKS_PER_SM=1, BLOCK_ROWS=1, CLUSTER=1, PREFETCH=0, STAGE=0, THREADS=512, VEC=4",
		"f32_1k":   "BLOCKS_PER_SM=1, BLOCK_ROWS=1, CLUSTER=1, PREFETCH=0, STAGE=0, THREADS=128, VEC=1",
		"few_rows": "BLOCKS_PER_SM=1, BLOCK_ROWS=1, CLUSTER=8, PREFETCH=0, STAGE=0, THREADS=256, VEC=4",
		// Short rows: groups of 8 threads for 49 elements (32 rows a
		// block of 256; 49 is no whole number of 4-element chunks), of
		// 16 for 100 (chunks of 4 f32), of 32 for 256 bf16 (chunks of 8:
		// one a thread); 4096 rows of 100 fill fewer than 2 blocks of 16
		// a multiprocessor (4224 rows): blocks of 128, 8 rows each.
		"f32_49":      "BLOCKS_PER_SM=1, BLOCK_ROWS=32, CLUSTER=1, PREFETCH=0, STAGE=0, THREADS=256, VEC=1",
		"f32_100":     "BLOCKS_PER_SM=1, BLOCK_ROWS=16, CLUSTER=1, PREFETCH=0, STAGE=0, THREADS=256, VEC=4",
		"f32_100_few": "BLOCKS_PER_SM=1, BLOCK_ROWS=8, CLUSTER=1, PREFETCH=0, STAGE=0, THREADS=128, VEC=4",
		"bf16_256":    "BLOCKS_PER_SM=1, BLOCK_ROWS=8, CLUSTER=1, PREFETCH=0, STAGE=0, THREADS=256, VEC=8",
		// Rows too long for a prefetching block's registers (32000 f32:
		// 32 a thread of 1024, twice that prefetching) take clusters of
		// 4 blocks of 256; rows no block keeps in registers (two axes;
		// 65536 f32), clusters of 8.
		"f32_32k": "BLOCKS_PER_SM=1, BLOCK_ROWS=1, CLUSTER=4, PREFETCH=0, STAGE=0, THREADS=256, VEC=4",
		// But a log-sum-exp of such rows, one online pass
		// (lower.OnlineSums), streams them by blocks of 512, where the
		// rows fill two blocks a multiprocessor; fewer rows take
		// clusters.
		"lse_32k":     "BLOCKS_PER_SM=1, BLOCK_ROWS=1, CLUSTER=1, PREFETCH=0, STAGE=0, THREADS=512, VEC=4",
		"lse_32k_few": "BLOCKS_PER_SM=1, BLOCK_ROWS=1, CLUSTER=4, PREFETCH=0, STAGE=0, THREADS=1024, VEC=4",
		"inorm_kb":    "BLOCKS_PER_SM=1, BLOCK_ROWS=1, CLUSTER=8, PREFETCH=0, STAGE=0, THREADS=256, VEC=4",
		"f32_64k":     "BLOCKS_PER_SM=1, BLOCK_ROWS=1, CLUSTER=8, PREFETCH=0, STAGE=0, THREADS=256, VEC=4",
		// No more rows than multiprocessors, each too long for a block's
		// registers but not for its shared memory (196 KiB): staged.
		"f32_vocab": "BLOCKS_PER_SM=1, BLOCK_ROWS=1, CLUSTER=1, PREFETCH=0, STAGE=1, THREADS=1024, VEC=1",
	}
	prog, sm90 := checkOnSm90(t, "rowdefault.kg", src)
	for _, in := range prog.Instances {
		p, err := lower.Build(in.Kernel, in.Env, in.Name, sm90)
		if err != nil {
			t.Fatal(err)
		}
		l := p.Launches[0]
		if got := l.Config.String(); l.Template.Name() != "row-reduce" || got != want[in.Name] {
			t.Errorf("%s: %s(%s), want row-reduce(%s)", in.Name, l.Template.Name(), got, want[in.Name])
		}
	}
	// Without clusters (sm_80), the prefetching block stays, whether the
	// prefetched rows fit in registers or not (a block a row without
	// prefetching was slower on hip:nvidia), but for rows that 512
	// threads keep in registers; sm_80's 163 KiB of shared memory do not
	// hold a row of 50257 f32.
	sm80, err := runtime.ParseTarget("cuda:sm_80")
	if err != nil {
		t.Fatal(err)
	}
	for name, w := range map[string]string{
		"f32_32k":   "BLOCKS_PER_SM=1, BLOCK_ROWS=1, CLUSTER=1, PREFETCH=1, STAGE=0, THREADS=1024, VEC=1",
		"lse_32k":   "BLOCKS_PER_SM=1, BLOCK_ROWS=1, CLUSTER=1, PREFETCH=0, STAGE=0, THREADS=512, VEC=4",
		"f32_16k":   "BLOCKS_PER_SM=1, BLOCK_ROWS=1, CLUSTER=1, PREFETCH=0, STAGE=0, THREADS=512, VEC=4",
		"f32_vocab": "BLOCKS_PER_SM=1, BLOCK_ROWS=1, CLUSTER=1, PREFETCH=1, STAGE=0, THREADS=1024, VEC=1",
	} {
		in := prog.Instance(name)
		p, err := lower.Build(in.Kernel, in.Env, in.Name, sm80.Limits())
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Launches[0].Config.String(); got != w {
			t.Errorf("%s on sm_80: %s, want %s", name, got, w)
		}
	}
}

// TestRowGroupsCheck: a block may share its threads among BLOCK_ROWS rows in
// groups of 2 to 32 threads, neither prefetching nor in clusters; the grid
// then has a block per BLOCK_ROWS rows, rounded up.
func TestRowGroupsCheck(t *testing.T) {
	prog, sm90 := checkOnSm90(t, "groups.kg", `
kernel rowsum<R, D>(X: f32[R, D]) -> (Y: f32[R]) {
  Y[r] = sum[d](X[r, d])
}
instance short = rowsum<R = 1000, D = 49>
`)
	in := prog.Instances[0]
	for _, c := range []struct {
		cfg    lower.Config
		blocks string // "" when refused
	}{
		{lower.Config{"THREADS": 256, "BLOCK_ROWS": 8}, "125"},  // 32 threads a row
		{lower.Config{"THREADS": 64, "BLOCK_ROWS": 32}, "32"},   // 2 threads a row; 1000 / 32 rounded up
		{lower.Config{"THREADS": 1024, "BLOCK_ROWS": 32}, "32"}, // a warp a row
		{lower.Config{"THREADS": 1024, "BLOCK_ROWS": 16}, ""},   // 64 threads a row
		{lower.Config{"THREADS": 256, "BLOCK_ROWS": 8, "PREFETCH": 1}, ""},
		{lower.Config{"THREADS": 256, "BLOCK_ROWS": 8, "CLUSTER": 2}, ""},
		{lower.Config{"THREADS": 256, "BLOCK_ROWS": 1, "PREFETCH": 0}, "1000"}, // a block a row
	} {
		p, err := lower.Build(in.Kernel, in.Env, in.Name, sm90)
		if err != nil {
			t.Fatal(err)
		}
		cfg := lower.Config{"CLUSTER": 1, "PREFETCH": 0, "VEC": 1}
		for k, v := range c.cfg {
			cfg[k] = v
		}
		_, err = lower.Override(p, cfg, sm90)
		switch {
		case c.blocks == "" && err == nil:
			t.Errorf("%s: accepted, want refused", cfg)
		case c.blocks != "" && err != nil:
			t.Errorf("%s: %v", cfg, err)
		case c.blocks != "":
			if got := lower.SizeText(p.Launches[0].Grid().Blocks); got != c.blocks {
				t.Errorf("%s: %s blocks, want %s", cfg, got, c.blocks)
			}
		}
	}
}

// TestRowBlocksPerSM: BLOCKS_PER_SM asks for that many blocks a
// multiprocessor (the launch's MinBlocks, which bounds registers), and
// is refused where so many blocks would exceed the multiprocessor's 2048
// threads; at its implicit value 1 the launch asks nothing.
func TestRowBlocksPerSM(t *testing.T) {
	prog, sm90 := checkOnSm90(t, "occupancy.kg", `
kernel rowsum<R, D>(X: f32[R, D]) -> (Y: f32[R]) {
  Y[r] = sum[d](X[r, d])
}
instance rows = rowsum<R = 4096, D = 4096>
`)
	in := prog.Instances[0]
	for _, c := range []struct {
		threads, per int64
		min          int64 // -1 when refused
	}{
		{256, 8, 8},
		{512, 4, 4},
		{1024, 2, 2},
		{256, 1, 0},
		{512, 8, -1},
		{1024, 4, -1},
	} {
		p, err := lower.Build(in.Kernel, in.Env, in.Name, sm90)
		if err != nil {
			t.Fatal(err)
		}
		cfg := lower.Config{"THREADS": c.threads, "BLOCKS_PER_SM": c.per, "CLUSTER": 1, "PREFETCH": 0, "VEC": 4, "BLOCK_ROWS": 1}
		_, err = lower.Override(p, cfg, sm90)
		switch {
		case c.min < 0 && err == nil:
			t.Errorf("%s: accepted, want refused", cfg)
		case c.min >= 0 && err != nil:
			t.Errorf("%s: %v", cfg, err)
		case c.min >= 0:
			if got := p.Launches[0].Grid().MinBlocks; got != c.min {
				t.Errorf("%s: MinBlocks %d, want %d", cfg, got, c.min)
			}
		}
	}
	// HIP's launch bounds take no count of blocks: refused there.
	tgt, err := runtime.ParseTarget("hip:nvidia")
	if err != nil {
		t.Fatal(err)
	}
	hip := tgt.Limits()
	p, err := lower.Build(in.Kernel, in.Env, in.Name, hip)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lower.Override(p, lower.Config{"THREADS": 256, "BLOCKS_PER_SM": 8, "CLUSTER": 1, "PREFETCH": 0, "VEC": 4, "BLOCK_ROWS": 1}, hip); err == nil || !strings.Contains(err.Error(), "HIP") {
		t.Errorf("BLOCKS_PER_SM=8 on hip:nvidia: %v, want refused", err)
	}
}

// checkOnSm90 checks the spec src and returns it with cuda:sm_90's limits.
func checkOnSm90(t *testing.T, name, src string) (*ir.Program, lower.Limits) {
	t.Helper()
	prog, diags := frontend.CheckSource(name, src)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	tgt, err := runtime.ParseTarget("cuda:sm_90")
	if err != nil {
		t.Fatal(err)
	}
	return prog, tgt.Limits()
}

// TestTileRowDefault: Triton's row-reduce takes short rows several to a
// program (blocks of at least 32, 4096 elements a program, a warp per 512;
// rows of f32 not in whole 16-byte chunks 1024 elements and one warp)
// where the rows fill two programs a multiprocessor, else 8 rows a program;
// rows streamed through blocks of 4096, no more than a program a
// multiprocessor, take 32 warps.
func TestTileRowDefault(t *testing.T) {
	prog, _ := checkOnSm90(t, "tilerows.kg", `
kernel rowsum<R, D>(X: f32[R, D]) -> (Y: f32[R]) {
  Y[r] = sum[d](X[r, d])
}
instance pool = rowsum<R = 131072, D = 49>
instance tiny = rowsum<R = 1000, D = 7>
instance few = rowsum<R = 4096, D = 100>
instance aligned = rowsum<R = 131072, D = 100>
instance long = rowsum<R = 4096, D = 1000>
instance empty = rowsum<R = 40000, D = 0>
instance vocab = rowsum<R = 128, D = 50257>
instance vocab_many = rowsum<R = 512, D = 50257>
kernel center<R, D>(X: f32[R, D]) -> (Y: f32[R, D]) {
  let m[r] = sum[d](X[r, d]) / D
  Y[r, d] = X[r, d] - m[r]
}
kernel center_bf16<R, D>(X: bf16[R, D]) -> (Y: bf16[R, D]) @acc(f32) {
  let m[r] = sum[d](X[r, d]) / D
  Y[r, d] = X[r, d] - m[r]
}
kernel scale<R, D>(X: f32[R, D], g: f32[D]) -> (Y: f32[R, D]) {
  let m[r] = sum[d](X[r, d]) / D
  Y[r, d] = (X[r, d] - m[r]) * g[d]
}
instance inorm = center<R = 1024, D = 65536>
instance inorm_bf16 = center_bf16<R = 1024, D = 65536>
instance inorm_few = center<R = 128, D = 65536>
instance inorm_short = center<R = 1024, D = 16384>
instance inorm_gamma = scale<R = 1024, D = 65536>
instance short_bf16 = center_bf16<R = 131072, D = 100>
`)
	tgt, err := runtime.ParseTarget("triton:sm_90")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"pool":    "BLOCK=64, BLOCK_ROWS=16, CACHE=0, EVICT=0, num_stages=1, num_warps=1",  // rows of 196 bytes: 16 x 64 = 1024 a warp
		"tiny":    "BLOCK=32, BLOCK_ROWS=8, CACHE=0, EVICT=0, num_stages=1, num_warps=1",   // 64 rows of 32 would make 16 programs: 8 rows
		"few":     "BLOCK=128, BLOCK_ROWS=8, CACHE=0, EVICT=0, num_stages=1, num_warps=2",  // 32 rows of 128: 128 programs, fewer than 264: 8 rows
		"aligned": "BLOCK=128, BLOCK_ROWS=32, CACHE=0, EVICT=0, num_stages=1, num_warps=8", // rows of 400 bytes: 32 x 128 = 4096
		"long":    "BLOCK=1024, BLOCK_ROWS=1, CACHE=0, EVICT=0, num_stages=1, num_warps=2", // longer than 256
		"empty":   "BLOCK=32, BLOCK_ROWS=32, CACHE=0, EVICT=0, num_stages=1, num_warps=1",  // sums of nothing, one output a row
		// Streamed: 128 rows, a program of 32 warps a multiprocessor; 512, four.
		"vocab":      "BLOCK=4096, BLOCK_ROWS=1, CACHE=0, EVICT=0, num_stages=1, num_warps=32",
		"vocab_many": "BLOCK=4096, BLOCK_ROWS=1, CACHE=0, EVICT=0, num_stages=1, num_warps=8",
		// Streamed and then written, rows for two rounds of 132
		// programs, 4 bytes an element of input: blocks of 8192 staged.
		// Rows read again: kept points of 32 registers a thread.
		"inorm":      "BLOCK=8192, BLOCK_ROWS=1, CACHE=16384, EVICT=0, num_stages=4, num_warps=16",
		"inorm_bf16": "BLOCK=8192, BLOCK_ROWS=1, CACHE=16384, EVICT=0, num_stages=4, num_warps=16",
		// A program a multiprocessor (16 registers a thread of 1024
		// kept); rows that fit a block (read once); 8 bytes an element
		// (X and g: two registers a point kept, 4096 points of 256
		// threads).
		"inorm_few":   "BLOCK=4096, BLOCK_ROWS=1, CACHE=16384, EVICT=0, num_stages=1, num_warps=32",
		"inorm_short": "BLOCK=16384, BLOCK_ROWS=1, CACHE=0, EVICT=0, num_stages=1, num_warps=16",
		"inorm_gamma": "BLOCK=4096, BLOCK_ROWS=1, CACHE=4096, EVICT=0, num_stages=1, num_warps=8",
		// Rows of 200 bytes, but of bf16: 4096 elements a program.
		"short_bf16": "BLOCK=128, BLOCK_ROWS=32, CACHE=0, EVICT=0, num_stages=1, num_warps=8",
	}
	for _, in := range prog.Instances {
		p, err := lower.Build(in.Kernel, in.Env, in.Name, tgt.Limits())
		if err != nil {
			t.Fatal(err)
		}
		l := p.Launches[0]
		if got := l.Config.String(); got != want[in.Name] {
			t.Errorf("%s: %s(%s), want row-reduce(%s)", in.Name, l.Template.Name(), got, want[in.Name])
		}
	}
}

// TestTilePointwiseF64Library: Triton's elementwise default takes two
// points a thread a step (UNROLL 4 of 1024 points for 4 warps) where a
// statement calls an f64 library function, else eight in one step.
func TestTilePointwiseF64Library(t *testing.T) {
	prog, _ := checkOnSm90(t, "f64.kg", `
kernel sin64<N>(X: f64[N]) -> (Y: f64[N]) {
  Y[i] = sin(X[i]) + 1.0
}
kernel sin32<N>(X: f32[N]) -> (Y: f32[N]) {
  Y[i] = sin(X[i]) + 1.0
}
kernel add64<N>(X: f64[N]) -> (Y: f64[N]) {
  Y[i] = X[i] * X[i] + 1.0
}
kernel pair64<N>(X: f64[N]) -> (Y: f64[N], Z: f64[N]) {
  Y[i] = X[i] + 1.0
  Z[i] = pow(X[i], 1.5)
}
instance sin64_1m = sin64<N = 1048576>
instance sin32_1m = sin32<N = 1048576>
instance add64_1m = add64<N = 1048576>
instance pair64_1m = pair64<N = 1048576>
`)
	tgt, err := runtime.ParseTarget("triton:sm_90")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"sin64_1m":  "BLOCK=1024, REUSE=0, UNROLL=4, num_warps=4",
		"sin32_1m":  "BLOCK=1024, REUSE=0, UNROLL=1, num_warps=4",
		"add64_1m":  "BLOCK=1024, REUSE=0, UNROLL=1, num_warps=4",
		"pair64_1m": "BLOCK=1024, REUSE=0, UNROLL=4, num_warps=4", // the sibling's pow
	}
	for _, in := range prog.Instances {
		p, err := lower.Build(in.Kernel, in.Env, in.Name, tgt.Limits())
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Launches[0].Config.String(); got != want[in.Name] {
			t.Errorf("%s: %s(%s), want (%s)", in.Name, p.Launches[0].Template.Name(), got, want[in.Name])
		}
	}
}

// TestRowInputsOfMembers: the inputs a row-reduce launch keeps in
// registers include those that only its fused lets read along the row (a
// cosine loss's norms read X and Y, its output neither), and leave out
// what is read elsewhere than along the row (w[r]).
func TestRowInputsOfMembers(t *testing.T) {
	src := `
kernel cosine<NB, D>(X: f32[NB, D], Y: f32[NB, D], w: f32[NB]) -> (L: f32[NB]) {
  let nx[b] = sqrt(sum[d](X[b, d] * X[b, d]))
  let ny[b] = sqrt(sum[d](Y[b, d] * Y[b, d]))
  L[b] = w[b] - nx[b] * ny[b]
}
instance cosine_kb = cosine<NB = 128, D = 4096>
`
	prog, sm90 := checkOnSm90(t, "cosine.kg", src)
	if got := keptRows(t, prog.Instance("cosine_kb"), sm90); got != "X Y" {
		t.Errorf("cosine_kb: kept rows of %q, want X Y", got)
	}
}

// keptRows names the tensors whose rows the last launch of in's plan
// keeps in registers (lower.RowInputs), which must keep rows.
func keptRows(t *testing.T, in *ir.Instance, lim lower.Limits) string {
	t.Helper()
	p, err := lower.Build(in.Kernel, in.Env, in.Name, lim)
	if err != nil {
		t.Fatal(err)
	}
	l := p.Launches[len(p.Launches)-1]
	_, loops, ok := lower.RowCache(l)
	if !ok {
		t.Fatalf("%s (%s, %s): rows not cached", l.Name, l.Template.Name(), l.Config)
	}
	var got []string
	for _, x := range lower.RowInputs(l, loops) {
		got = append(got, x.Name)
	}
	return strings.Join(got, " ")
}

// TestRowInputsOfEarlierLaunches: a row-reduce launch keeps in registers
// the rows of an earlier launch's result that two of its passes read (a
// softmax's scores after their matrix product: the max, the sum and the
// outputs), not those one pass reads (a sum of an earlier transpose's
// rows), and never what it writes itself.
func TestRowInputsOfEarlierLaunches(t *testing.T) {
	src := `
kernel scores<M, N, K>(A: f32[M, K], B: f32[N, K]) -> (P: f32[M, N]) {
  let s[m, n] = sum[k](A[m, k] * B[n, k])
  let mx[m] = max[n](s[m, n])
  let den[m] = sum[n](exp(s[m, n] - mx[m]))
  P[m, n] = exp(s[m, n] - mx[m]) / den[m]
}
kernel tsum<R, D>(X: f32[D, R]) -> (T: f32[R, D], S: f32[R]) {
  T[r, d] = X[d, r] * 2.0
  S[r] = sum[d](T[r, d])
}
instance scores_a = scores<M = 256, N = 512, K = 64>
instance tsum_a = tsum<R = 512, D = 512>
`
	prog, sm90 := checkOnSm90(t, "earlier.kg", src)
	for name, want := range map[string]string{"scores_a": "s", "tsum_a": ""} {
		if got := keptRows(t, prog.Instance(name), sm90); got != want {
			t.Errorf("%s: kept rows of %q, want %q", name, got, want)
		}
	}
}

// configCase is a configuration of an instance's first launch and
// whether the target's and the template's checks let it run.
type configCase struct {
	config lower.Config
	ok     bool
}

// checkTileConfigs plans each instance of src for triton:sm_90 and checks
// that its first launch takes the template want names, that its default
// passes the checks, and that each of its cases passes or is refused as
// the case says, a refusal's message containing refusal.
func checkTileConfigs(t *testing.T, src string, want map[string]string, cases map[string][]configCase, refusal string) {
	t.Helper()
	prog, _ := checkOnSm90(t, "tiles.kg", src)
	tgt, err := runtime.ParseTarget("triton:sm_90")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range prog.Instances {
		p, err := lower.Build(in.Kernel, in.Env, in.Name, tgt.Limits())
		if err != nil {
			t.Fatal(err)
		}
		l := p.Launches[0]
		if l.Template.Name() != want[in.Name] {
			t.Fatalf("%s: template %s, want %s", in.Name, l.Template.Name(), want[in.Name])
		}
		if err := l.Check(tgt.Limits()); err != nil {
			t.Errorf("%s's default: %v", in.Name, err)
		}
		for _, c := range cases[in.Name] {
			l.Config = c.config
			err := l.Check(tgt.Limits())
			if (err == nil) != c.ok {
				t.Errorf("%s at %s: got %v, want ok %v", in.Name, l.Config, err, c.ok)
			}
			if err != nil && !strings.Contains(err.Error(), refusal) {
				t.Errorf("%s at %s: %v, want %q", in.Name, l.Config, err, refusal)
			}
		}
	}
}

// TestTileThreads: Triton's tile-level reductions hold at most 128
// elements of a block a thread (a column reduction's step, a column
// group's tile, a row-reduce's rows); their defaults hold no more than 32.
func TestTileThreads(t *testing.T) {
	src := `
kernel vecmat<M, K>(x: f32[K], A: f32[K, M]) -> (y: f32[M]) {
  y[m] = sum[k](x[k] * A[k, m])
}
instance vecmat_4k = vecmat<M = 4096, K = 4096>
kernel softmax_dim1<NB, D, T>(X: f32[NB, D, T]) -> (Y: f32[NB, D, T]) {
  let m[b, t] = max[d](X[b, d, t])
  let s[b, t] = sum[d](exp(X[b, d, t] - m[b, t]))
  Y[b, d, t] = exp(X[b, d, t] - m[b, t]) / s[b, t]
}
instance softmax_dim1_big = softmax_dim1<NB = 64, D = 1024, T = 256>
kernel rowsum<R, D>(X: f32[R, D]) -> (Y: f32[R]) {
  Y[r] = sum[d](X[r, d])
}
instance rows_4kx16k = rowsum<R = 4096, D = 16384>
instance pool = rowsum<R = 131072, D = 49>
`
	cases := map[string][]configCase{
		"vecmat_4k": {
			{lower.Config{"BLOCK_R": 128, "BLOCK_N": 32, "num_warps": 1, "num_stages": 3}, true},    // 128 a thread
			{lower.Config{"BLOCK_R": 256, "BLOCK_N": 32, "num_warps": 1, "num_stages": 3}, false},   // 256
			{lower.Config{"BLOCK_R": 128, "BLOCK_N": 512, "num_warps": 1, "num_stages": 1}, false},  // 2048: past the minute to compile
			{lower.Config{"BLOCK_R": 512, "BLOCK_N": 512, "num_warps": 16, "num_stages": 3}, false}, // 512
			{lower.Config{"BLOCK_R": 512, "BLOCK_N": 128, "num_warps": 16, "num_stages": 3}, true},  // 128
		},
		"softmax_dim1_big": {
			{lower.Config{"BLOCK_K": 1024, "BLOCK_N": 16, "num_warps": 4}, true},   // 128: its tuned winner
			{lower.Config{"BLOCK_K": 1024, "BLOCK_N": 256, "num_warps": 4}, false}, // 2048: past the minute to compile
		},
		"rows_4kx16k": {
			{lower.Config{"BLOCK": 16384, "BLOCK_ROWS": 1, "num_warps": 4, "num_stages": 1}, true},  // 128
			{lower.Config{"BLOCK": 16384, "BLOCK_ROWS": 1, "num_warps": 2, "num_stages": 1}, false}, // 256
		},
		"pool": {
			{lower.Config{"BLOCK": 64, "BLOCK_ROWS": 64, "num_warps": 1, "num_stages": 1}, true},   // 128
			{lower.Config{"BLOCK": 64, "BLOCK_ROWS": 64, "num_warps": 2, "num_stages": 1}, true},   // 64
			{lower.Config{"BLOCK": 128, "BLOCK_ROWS": 64, "num_warps": 1, "num_stages": 1}, false}, // 256
		},
	}
	want := map[string]string{"vecmat_4k": "col-reduce", "softmax_dim1_big": "col-group", "rows_4kx16k": "row-reduce", "pool": "row-reduce"}
	checkTileConfigs(t, src, want, cases, "elements a thread")
}

// TestTilePointwiseSteps: Triton's elementwise and generic launches take
// at least as many points a step (BLOCK / UNROLL) as the program has
// threads; their defaults do.
func TestTilePointwiseSteps(t *testing.T) {
	src := `
kernel dw<N, C, H, W>(X: f32[N, C, H, W], Wt: f32[C, 3, 3]) -> (Y: f32[N, C, H, W]) {
  Y[n, c, h, w] = sum[kh in 0..3, kw in 0..3]((X[n, c, h + kh - 1, w + kw - 1] ?? 0) * Wt[c, kh, kw])
}
instance dw_mobilenet = dw<N = 16, C = 64, H = 112, W = 112>
instance dw_tiny = dw<N = 1, C = 1, H = 1, W = 5>
kernel relu<N>(X: f32[N]) -> (Y: f32[N]) {
  Y[i] = max(X[i], 0.0)
}
instance relu_16m = relu<N = 16777216>
instance relu_tiny = relu<N = 3>
`
	steps := []struct {
		block, unroll, warps int64
		ok                   bool
	}{
		{128, 1, 4, true},   // a point a thread
		{256, 2, 4, true},   // two steps of 128
		{512, 4, 16, false}, // steps of 128 for 512 threads: 286.13 us for dw_mobilenet
		{64, 2, 16, false},  // steps of 32 for 512 threads: 912.32
		{32, 1, 1, true},
		{32, 2, 1, false},
	}
	want := map[string]string{"dw_mobilenet": "generic", "dw_tiny": "generic", "relu_16m": "elementwise", "relu_tiny": "elementwise"}
	cases := map[string][]configCase{}
	for name, template := range want {
		for _, c := range steps {
			config := lower.Config{"BLOCK": c.block, "UNROLL": c.unroll, "num_warps": c.warps}
			if template == "elementwise" {
				config["REUSE"] = 0
			}
			cases[name] = append(cases[name], configCase{config, c.ok})
		}
	}
	checkTileConfigs(t, src, want, cases, "fewer points than threads")
}

// TestTileRowRereads: Triton's row-reduce takes EVICT=1 (L2 hints) and
// CACHE (the first points of a row kept in registers) only where a
// program streams its row through more than one pass: a softmax's (an
// online max and sum, then the outputs) and a centering's (the sum, then
// the outputs) in blocks shorter than their rows; not a sum alone (one
// pass), nor rows that a block holds (read once). EVICT takes rows whose
// length is known only at run time too; CACHE needs them known longer
// than CACHE, CACHE whole blocks, and at most 128 bytes of it a thread.
// EVICT is off by default; CACHE is on where rows are read again and
// known longer than the points it keeps.
func TestTileRowRereads(t *testing.T) {
	prog, _ := checkOnSm90(t, "rereads.kg", `
kernel softmax<R, D>(X: f32[R, D]) -> (Y: f32[R, D]) {
  let mx[r] = max[d](X[r, d])
  let den[r] = sum[d](exp(X[r, d] - mx[r]))
  Y[r, d] = exp(X[r, d] - mx[r]) / den[r]
}
kernel center<R, D>(X: f32[R, D]) -> (Y: f32[R, D]) {
  let m[r] = sum[d](X[r, d]) / D
  Y[r, d] = X[r, d] - m[r]
}
kernel rowsum<R, D>(X: f32[R, D]) -> (Y: f32[R]) {
  Y[r] = sum[d](X[r, d])
}
instance vocab = softmax<R = 128, D = 50257>
instance inorm = center<R = 1024, D = 65536>
instance vocab_sum = rowsum<R = 128, D = 50257>
instance short = softmax<R = 4096, D = 1000>
`)
	tgt, err := runtime.ParseTarget("triton:sm_90")
	if err != nil {
		t.Fatal(err)
	}
	lim := tgt.Limits()
	plan := func(name string) *lower.Plan {
		for _, in := range prog.Instances {
			if in.Name == name {
				p, err := lower.Build(in.Kernel, in.Env, in.Name, lim)
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
		}
		for _, k := range prog.Kernels {
			if k.Name == name {
				p, err := lower.Build(k, nil, k.Name, lim)
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
		}
		t.Fatalf("no %s", name)
		return nil
	}
	for _, c := range []struct {
		name string
		cfg  lower.Config
		ok   bool
	}{
		{"vocab", lower.Config{"row-reduce.EVICT": 1}, true},
		{"vocab", lower.Config{"row-reduce.CACHE": 0}, true},
		{"inorm", lower.Config{"row-reduce.EVICT": 1}, true},
		{"softmax", lower.Config{"row-reduce.EVICT": 1}, true}, // length unknown, streamed
		{"vocab_sum", lower.Config{"row-reduce.EVICT": 1}, false},
		{"short", lower.Config{"row-reduce.EVICT": 1}, false},                                 // the row fits a block (1024)
		{"vocab", lower.Config{"row-reduce.CACHE": 32768}, true},                              // 32 f32 a thread of 1024
		{"vocab", lower.Config{"row-reduce.CACHE": 8192}, true},                               // 2 blocks of 4096
		{"vocab", lower.Config{"row-reduce.CACHE": 1024}, false},                              // a part of a block
		{"vocab", lower.Config{"row-reduce.CACHE": 32768, "row-reduce.num_warps": 16}, false}, // 64 a thread
		{"vocab_sum", lower.Config{"row-reduce.CACHE": 8192}, false},
		{"short", lower.Config{"row-reduce.CACHE": 256, "row-reduce.BLOCK": 128}, true},
		{"short", lower.Config{"row-reduce.CACHE": 1024, "row-reduce.BLOCK": 128}, false}, // not shorter than the row
		{"short", lower.Config{"row-reduce.CACHE": 256}, false},
		{"softmax", lower.Config{"row-reduce.CACHE": 8192}, false}, // length unknown
	} {
		p := plan(c.name)
		// The default keeps 16384 points, 16 registers a thread of 1024
		// (32 warps, 128 streamed rows) or 32 of 512 (16 warps).
		cache := map[string]int64{"vocab": 16384, "inorm": 16384}[c.name]
		if l := p.Launches[0]; l.Config["EVICT"] != 0 || l.Config["CACHE"] != cache {
			t.Errorf("%s: default %s, want EVICT=0 and CACHE=%d", c.name, l.Config, cache)
		}
		if _, err := lower.Override(p, c.cfg, lim); (err == nil) != c.ok {
			t.Errorf("%s with %s: error %v, want accepted %v", c.name, c.cfg, err, c.ok)
		}
	}
	// An override of num_warps or BLOCK that leaves CACHE out takes the
	// CACHE the default would have given its configuration: 8 warps keep
	// 8192 points (32 registers a thread of 256), where 16384 would keep
	// 64; a CACHE given with them is checked as given; an override of
	// EVICT alone keeps the CACHE the launch had.
	for _, c := range []struct {
		cfg   lower.Config
		cache int64
		ok    bool
	}{
		{lower.Config{"row-reduce.num_warps": 8}, 8192, true},
		{lower.Config{"row-reduce.num_warps": 8, "row-reduce.CACHE": 16384}, 0, false},
		{lower.Config{"row-reduce.num_warps": 8, "row-reduce.CACHE": 0}, 0, true},
		{lower.Config{"row-reduce.BLOCK": 16384}, 16384, true},
		{lower.Config{"row-reduce.BLOCK": 16384, "row-reduce.num_warps": 4}, 0, true}, // 16384 would be 128 registers a thread
		{lower.Config{"row-reduce.EVICT": 1}, 8192, true},                             // CACHE as it was (set below)
	} {
		p := plan("vocab")
		p.Launches[0].Config["CACHE"] = 8192 // as a tuning record may have set it
		_, err := lower.Override(p, c.cfg, lim)
		if (err == nil) != c.ok {
			t.Errorf("vocab with %s: error %v, want accepted %v", c.cfg, err, c.ok)
		} else if err == nil && p.Launches[0].Config["CACHE"] != c.cache {
			t.Errorf("vocab with %s: %s, want CACHE=%d", c.cfg, p.Launches[0].Config, c.cache)
		}
	}
}
