package cuda

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kgen.dev/kgen/interp"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
	"kgen.dev/kgen/runtime"
	"kgen.dev/kgen/tensor"
)

// TestEmulatedExamples runs the CUDA kgen emits for every example on the
// CPU, through testdata/host/shim.h (a thread per CUDA thread, barriers for
// __syncthreads and shuffles), and compares every output with the
// reference interpreter: the emission's semantics (indexing, conversions,
// floor division, reductions, the row-reduce template's block reductions,
// col-reduce's combines) are checked without a GPU. Each kernel runs its
// optimized plan and its reference plan at small shapes (see emulateFile).
func TestEmulatedExamples(t *testing.T) {
	gxx := emulatorGxx(t)
	paths, _ := filepath.Glob("../../examples/*.kg")
	if len(paths) == 0 {
		t.Fatal("no examples")
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			emulateFile(t, gxx, path)
		})
	}
}

// TestEmulatedIGemm emulates testdata/igemm.kg, the implicit GEMMs at the
// igemm templates' edges, and checks that every launch of it took one of
// those templates.
func TestEmulatedIGemm(t *testing.T) {
	gxx := emulatorGxx(t)
	text, err := os.ReadFile("testdata/igemm.kg")
	if err != nil {
		t.Fatal(err)
	}
	// The NHWC inputs whose chunks are contiguous move as chunks, so
	// that the emulation checks their addresses and zero fills.
	chunked := map[string]bool{"grouped_nhwc_small": true, "conv_nhwc_chunks": true, "conv_nhwc_odd": false}
	for _, p := range plansOf(t, "igemm.kg", string(text)) {
		for _, l := range p.Launches {
			if !strings.HasPrefix(l.Template.Name(), "igemm-") {
				t.Errorf("%s: template %s, want igemm-mma or igemm-simt", l.Name, l.Template.Name())
			}
		}
		if want, ok := chunked[p.Name]; ok {
			if got := strings.Contains(Emit([]*lower.Plan{p}), "= kg_gather_vec<"); got != want {
				t.Errorf("%s: input in 16-byte chunks %t, want %t", p.Name, got, want)
			}
		}
	}
	emulateFile(t, gxx, "testdata/igemm.kg")
}

// TestEmulatedPhases emulates testdata/phases.kg, transposed convolutions
// split into their output's phases (lower's splitPhases), and checks that
// every launch of each instance took an igemm template: a phase that read
// the wrong taps or input, or stored to the wrong points, shows as a wrong
// output.
func TestEmulatedPhases(t *testing.T) {
	gxx := emulatorGxx(t)
	text, err := os.ReadFile("testdata/phases.kg")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plansOf(t, "phases.kg", string(text)) {
		if p.Env == nil {
			continue
		}
		for _, l := range p.Launches {
			if !strings.HasPrefix(l.Template.Name(), "igemm-") {
				t.Errorf("%s: template %s, want igemm-mma or igemm-simt", l.Name, l.Template.Name())
			}
		}
	}
	emulateFile(t, gxx, "testdata/phases.kg")
}

// TestEmulatedSimt emulates testdata/simt.kg, the CUDA-core tile's
// matrix products in every operand layout. Its *_chunks instances have
// contiguous extents of whole 16-byte chunks in 16-byte aligned buffers
// (the emulator's), so they take the vector path, with edge tiles, where a
// wrong chunk address or bounds test shows as a wrong output.
func TestEmulatedSimt(t *testing.T) {
	gxx := emulatorGxx(t)
	text, err := os.ReadFile("testdata/simt.kg")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plansOf(t, "simt.kg", string(text)) {
		for _, l := range p.Launches {
			if l.Template.Name() != "matmul-simt" {
				t.Errorf("%s: template %s, want matmul-simt", l.Name, l.Template.Name())
			}
		}
	}
	// The instances' few tiles take 64 x 64 by default; every tile shape
	// of the space, each with 64 or 128 threads along the other side.
	for _, tile := range [][2]int64{{64, 64}, {64, 128}, {128, 64}, {128, 128}} {
		t.Run(fmt.Sprintf("%dx%d", tile[0], tile[1]), func(t *testing.T) {
			emulateFileOn(t, gxx, "testdata/simt.kg", emuTarget{d: CUDA, shims: cudaEmu.shims, config: lower.Config{"matmul-simt.BM": tile[0], "matmul-simt.BN": tile[1]}})
		})
	}
}

// TestEmulatedRows emulates testdata/rows.kg, row reductions whose cached
// rows move in chunks of VEC elements (lower.RowVec): vector loads and
// stores in the emulator's aligned buffers, chunks past the row's end,
// prefetching, mixed element types; rows that are not whole chunks (the
// scalar path); and long rows. A wrong chunk address, register or bounds test shows
// as a wrong output.
func TestEmulatedRows(t *testing.T) {
	gxx := emulatorGxx(t)
	text, err := os.ReadFile("testdata/rows.kg")
	if err != nil {
		t.Fatal(err)
	}
	sm90, err := runtime.ParseTarget("cuda:sm_90")
	if err != nil {
		t.Fatal(err)
	}
	// Chunks of 16 bytes (bf16) and 32 (f32, two vector accesses each)
	// with VEC = 8; of 8 and 16 bytes with VEC = 4. softmax_odd's rows
	// (1001) are not whole chunks: single elements. gemv_chunks and
	// batch_chunks read their vector and weights in chunks too, and so do
	// the split sums frobenius_split and total_split, and gemv_shift
	// (its chunks never aligned).
	for _, vec := range []int64{8, 4} {
		t.Run(fmt.Sprintf("VEC=%d", vec), func(t *testing.T) {
			for _, p := range plansOf(t, "rows.kg", string(text)) {
				if p.Env == nil {
					continue
				}
				if _, err := lower.Override(p, lower.Config{"row-reduce.VEC": vec, "row-reduce.BLOCK_ROWS": 1}, sm90.Limits()); err != nil {
					t.Fatal(err)
				}
				l, want := p.Launches[0], vec
				if p.Name == "softmax_odd" {
					want = 1
				}
				if got := lower.RowVec(l); l.Template.Name() != "row-reduce" || got != want {
					t.Errorf("%s: %s with chunks of %d, want row-reduce with %d", p.Name, l.Template.Name(), got, want)
				}
				if p.Name == "ln_prefetch" && !lower.Prefetching(l) {
					t.Errorf("ln_prefetch does not prefetch")
				}
				if slices.Contains([]string{"gemv_chunks", "batch_chunks", "frobenius_split", "total_split", "gemv_shift"}, p.Name) && !strings.Contains(Emit([]*lower.Plan{p}), "kg_vk0 = *(const KgVec<") {
					t.Errorf("%s: the reduced input beside the cached row is not read in chunks", p.Name)
				}
			}
			emulateFileOn(t, gxx, "testdata/rows.kg", emuTarget{d: CUDA, shims: cudaEmu.shims, config: lower.Config{"row-reduce.VEC": vec, "row-reduce.BLOCK_ROWS": 1}})
		})
	}
}

// TestEmulatedRowGroups emulates testdata/groups.kg, short rows shared by
// groups of threads, every instance with groups of 8, 2 and 32 threads
// (where the long row is not cached), on CUDA, and of 16 on a wavefront
// of 64 (hip:gfx90a). (The instances have too few rows for groups by
// default, which lower's TestRowDefault checks.) A group that reads or
// stores the wrong row, or combines across groups, shows as a wrong
// output; one past the last row that reads past the buffers (rather than
// the last row again) fails AddressSanitizer.
func TestEmulatedRowGroups(t *testing.T) {
	gxx := emulatorGxx(t)
	gfx90a, err := runtime.ParseTarget("hip:gfx90a")
	if err != nil {
		t.Fatal(err)
	}
	groups := func(threads, rows int64) lower.Config {
		return lower.Config{"row-reduce.THREADS": threads, "row-reduce.BLOCK_ROWS": rows, "row-reduce.VEC": 1}
	}
	for _, c := range []struct {
		name string
		tg   emuTarget
	}{
		{"groups of 8", emuTarget{d: CUDA, shims: cudaEmu.shims, config: groups(256, 32)}},
		{"groups of 2", emuTarget{d: CUDA, shims: cudaEmu.shims, config: groups(64, 32)}},
		{"groups of 32, chunks", emuTarget{d: CUDA, shims: cudaEmu.shims, config: lower.Config{"row-reduce.THREADS": 256, "row-reduce.BLOCK_ROWS": 8, "row-reduce.VEC": 4}}},
		{"wavefront 64", emuTarget{d: hipDialect(t), lim: gfx90a.Limits(), shims: []string{"testdata/host/shim.h", "testdata/host/hip.h"}, config: groups(256, 16)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			emulateFileOn(t, gxx, "testdata/groups.kg", c.tg)
		})
	}
}

// TestEmulatedWindows emulates testdata/windows.kg, windows of an input
// reduced at each point (the generic template), with VEC consecutive
// points a thread: depthwise convolutions at strides 1 and 2, a pooling,
// two outputs of one window (f32 and f16), a transposed convolution's
// guarded taps; at sizes whose last output extent is a multiple of VEC
// (the vector path, one vector store a group of points) and at sizes that
// are not (the scalar path), one output row a thread (ROWS 1; the rows
// are TestEmulatedWindowRows'). A group whose points read the wrong taps,
// or a vector stored at the wrong point, shows as a wrong output.
func TestEmulatedWindows(t *testing.T) {
	gxx := emulatorGxx(t)
	for _, vec := range []int64{2, 4} {
		t.Run(fmt.Sprintf("VEC=%d", vec), func(t *testing.T) {
			t.Parallel()
			emulateFileOn(t, gxx, "testdata/windows.kg", emuTarget{d: CUDA, shims: cudaEmu.shims, config: lower.Config{"generic.VEC": vec, "generic.ROWS": 1, "generic.THREADS": 64}})
		})
	}
}

// TestEmulatedWindowTiles emulates testdata/windows.kg's window launches
// in tiles of 2 to 8 rows and 32 or 64 columns, of 64 and 128 threads:
// several tiles a plane, partial at the bottom and right edges (dw_wide's
// rows of 69, pool_s1's of 37), where a tile that stages the wrong rows,
// misses a halo or reads its neighbour's shows as a wrong output.
func TestEmulatedWindowTiles(t *testing.T) {
	gxx := emulatorGxx(t)
	for _, c := range []lower.Config{
		{"window.TH": 2, "window.TW": 32, "window.THREADS": 64},
		{"window.TH": 8, "window.TW": 64, "window.THREADS": 128},
	} {
		t.Run(fmt.Sprintf("TH=%d,TW=%d", c["window.TH"], c["window.TW"]), func(t *testing.T) {
			t.Parallel()
			emulateFileOn(t, gxx, "testdata/windows.kg", emuTarget{d: CUDA, shims: cudaEmu.shims, config: c})
		})
	}
}

// TestEmulatedWindowRows emulates testdata/windows.kg with each thread
// taking VEC 2 points of each of ROWS 2 or 4 output rows, their input rows
// loaded once for all (the instances ROWS does not fit keep their
// defaults): a group that read another row's taps, or stored a row at the
// wrong place, shows as a wrong output. The instances named take the
// rows: planes of 4, 6 and 8 output rows (ROWS 4 only the multiples of
// 4), several planes a launch, strides 1, 2 and 3, f32 and bf16; and with
// two groups a thread a step (UNROLL 2: dw_vec's 72 groups of 64 threads
// take a second step in 8 of them).
func TestEmulatedWindowRows(t *testing.T) {
	gxx := emulatorGxx(t)
	text, err := os.ReadFile("testdata/windows.kg")
	if err != nil {
		t.Fatal(err)
	}
	sm90, err := runtime.ParseTarget("cuda:sm_90a")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rows, unroll int64
		take         []string
	}{
		{2, 1, []string{"dw_vec", "pool_vec", "valid3_rows", "dw3_bf16_rows", "pool3_s3_rows", "dw_rows_s2", "dw_rows4"}},
		{4, 1, []string{"pool_vec", "valid3_rows", "dw3_bf16_rows", "dw_rows4"}},
		// Two groups a thread a step, a block apart.
		{2, 2, []string{"dw_vec", "pool_vec", "dw_rows_s2", "dw_rows4"}},
	} {
		t.Run(fmt.Sprintf("ROWS=%d,UNROLL=%d", c.rows, c.unroll), func(t *testing.T) {
			t.Parallel()
			config := lower.Config{"generic.VEC": 2, "generic.ROWS": c.rows, "generic.UNROLL": c.unroll, "generic.THREADS": 64}
			var took []string
			for _, p := range plansOf(t, "windows.kg", string(text)) {
				if p.Env == nil {
					continue
				}
				if ok, err := lower.Override(p, config, sm90.Limits()); ok && err == nil {
					took = append(took, p.Name)
				}
			}
			for _, name := range c.take {
				if !slices.Contains(took, name) {
					t.Errorf("%s does not take ROWS=%d (those that do: %v)", name, c.rows, took)
				}
			}
			emulateFileOn(t, gxx, "testdata/windows.kg", emuTarget{d: CUDA, shims: cudaEmu.shims, config: config, optional: true})
		})
	}
}

// TestEmulatedGuardedLoads emulates testdata/guarded.kg, selects on
// conditions of indices whose one branch reads an input, with VEC 2, 4
// and 8: a group loads that input only where one of its points takes the
// branch. A guard that skipped a load a point needs shows as a wrong
// output.
func TestEmulatedGuardedLoads(t *testing.T) {
	gxx := emulatorGxx(t)
	for _, vec := range []int64{2, 4, 8} {
		t.Run(fmt.Sprintf("VEC=%d", vec), func(t *testing.T) {
			t.Parallel()
			emulateFileOn(t, gxx, "testdata/guarded.kg", emuTarget{d: CUDA, shims: cudaEmu.shims, config: lower.Config{"elementwise.VEC": vec, "elementwise.THREADS": 64}})
		})
	}
}

// TestEmulatedSharedRowValues runs testdata/shared.kg, whose cached rows'
// loops share costly values (rowshare.go), with a thread's registers
// holding one and several points of a row, one at a time and in chunks,
// rows of whole chunks and not.
func TestEmulatedSharedRowValues(t *testing.T) {
	gxx := emulatorGxx(t)
	for _, c := range []struct{ threads, vec int64 }{{64, 1}, {64, 2}, {64, 4}} {
		t.Run(fmt.Sprintf("THREADS=%d,VEC=%d", c.threads, c.vec), func(t *testing.T) {
			t.Parallel()
			emulateFileOn(t, gxx, "testdata/shared.kg", emuTarget{d: CUDA, shims: cudaEmu.shims, config: lower.Config{"row-reduce.THREADS": c.threads, "row-reduce.BLOCK_ROWS": 1, "row-reduce.VEC": c.vec}})
		})
	}
}

// emulatorGxx is the g++ that builds the emulator. A test skips in -short
// mode, and without g++ unless KGEN_REQUIRE_TOOLCHAINS=1 (CI), where that
// fails it.
func emulatorGxx(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("compiles with g++")
	}
	gxx, err := exec.LookPath("g++")
	if err != nil {
		if os.Getenv("KGEN_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatal("no g++ and KGEN_REQUIRE_TOOLCHAINS=1")
		}
		t.Skip("no g++")
	}
	return gxx
}

// emulateFile runs the kernels of the spec at path in the emulator, each
// with its reference plan, at the kernel's last (odd) test shape, and
// every instance small enough at its own sizes, and kernels that sm_90a
// plans differently (matmul-wgmma) also with that plan; it compares every
// output with the interpreter's. Kernels on the elementwise and col-reduce
// templates also run at their first shape (an instance's or a round one,
// where the vector paths run), and on an igemm template at every test
// shape.
func emulateFile(t *testing.T, gxx, path string) { emulateFileOn(t, gxx, path, cudaEmu) }

// emuTarget is a dialect and a target's limits that the emulator runs
// plans for, with the headers that stand in for the dialect's platform.
type emuTarget struct {
	d   *Dialect
	lim lower.Limits
	// shims are included, in order, before the source (paths relative
	// to this package).
	shims []string
	// config, when set, replaces template parameters of the instances'
	// plans (lower.Override); with optional, a plan the configuration
	// does not fit (too much shared memory) keeps its defaults.
	config   lower.Config
	optional bool
}

// cudaEmu plans with the templates every CUDA target runs.
var cudaEmu = emuTarget{d: CUDA, shims: []string{"testdata/host/shim.h"}}

// emulateFileOn is emulateFile for target tg: plans for tg's limits, in
// its dialect, with warps of tg's size in the emulator.
func emulateFileOn(t *testing.T, gxx, path string, tg emuTarget) {
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sm90a, err := runtime.ParseTarget("cuda:sm_90a")
	if err != nil {
		t.Fatal(err)
	}
	uses := func(p *lower.Plan, prefix string) bool {
		return slices.ContainsFunc(p.Launches, func(l *lower.Launch) bool { return strings.HasPrefix(l.Template.Name(), prefix) })
	}
	all := plansFor(t, path, string(text), tg.lim)
	for _, p := range all {
		if p.Env != nil && tg.config != nil {
			// Checked against sm_90a's limits (the emulator has none).
			saved := make([]lower.Config, len(p.Launches))
			for i, l := range p.Launches {
				saved[i] = maps.Clone(l.Config)
			}
			if _, err := lower.Override(p, tg.config, sm90a.Limits()); err != nil {
				if !tg.optional {
					t.Fatal(err)
				}
				for i, l := range p.Launches {
					l.Config = saved[i]
				}
			}
		}
	}
	// Kernels at runtime sizes with their reference twins, and
	// the instances small enough to emulate at their own sizes
	// (constant extents take other paths: cached and prefetched
	// rows, vector loops, proven bounds).
	var plans, small []*lower.Plan
	for _, p := range all {
		if p.Env != nil {
			if ir.Work(p.Source, p.Env) <= 2e6 {
				small = append(small, p)
			}
			continue
		}
		ref, err := lower.BuildReference(p.Source, p.Name+"__ref")
		if err != nil {
			t.Fatal(err)
		}
		plans = append(plans, p, ref)
		// A kernel that Hopper plans with a template of its own
		// (matmul-wgmma, igemm-wgmma) runs that plan too.
		if tg.d != CUDA {
			continue
		}
		hop, err := lower.Build(p.Source, nil, p.Name+"__sm90a", sm90a.Limits())
		if err != nil {
			t.Fatal(err)
		}
		if uses(hop, "matmul-wgmma") || uses(hop, "igemm-wgmma") {
			plans = append(plans, hop)
		}
	}
	bin, dir := buildEmulatorOn(t, gxx, append(slices.Clone(plans), small...), tg)
	var instances []*ir.Instance
	for _, p := range all {
		if p.Env != nil {
			instances = append(instances, &ir.Instance{Name: p.Name, Kernel: p.Source, Env: p.Env})
		}
	}
	for _, p := range plans {
		shapes := runtime.TestShapes(p.Source, instances, 2e6)
		if len(shapes) == 0 {
			t.Errorf("%s: no small shape to test", p.Name)
			continue
		}
		// The last shape has odd sizes (scalar paths, edge tiles);
		// the first is an instance's or a round one, where the
		// elementwise and col-reduce templates take their vector paths.
		picks := []runtime.Shape{shapes[len(shapes)-1]}
		switch {
		case uses(p, "igemm-"):
			picks = shapes
		case len(shapes) > 1 && (uses(p, "elementwise") || uses(p, "col-reduce")):
			picks = append(picks, shapes[0])
		}
		for _, sh := range picks {
			if err := emulate(t, bin, p, sh.Env, dir); err != nil {
				t.Errorf("%s at %s: %v", p.Name, sh.Env, err)
			}
		}
	}
	for _, p := range small {
		if err := emulate(t, bin, p, p.Env, dir); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
	}
}

// buildEmulator compiles the plans' CUDA with the harness and the shim
// into an emulator binary in a new temporary directory, which it returns
// with the binary.
func buildEmulator(t *testing.T, gxx string, plans []*lower.Plan) (bin, dir string) {
	return buildEmulatorOn(t, gxx, plans, cudaEmu)
}

// buildEmulatorOn is buildEmulator for target tg.
func buildEmulatorOn(t *testing.T, gxx string, plans []*lower.Plan, tg emuTarget) (bin, dir string) {
	t.Helper()
	dir = t.TempDir()
	src := filepath.Join(dir, "k.cpp")
	warp := tg.lim.Warp()
	if err := os.WriteFile(src, []byte(tg.d.Emit(plans, warp)+harness(plans, tg.d)), 0o644); err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(dir, "k")
	// With AddressSanitizer: a kernel that reads or writes outside its
	// buffers (each allocated to its size by the harness) fails, even
	// where the stray value never reaches an output.
	args := []string{"-std=c++20", "-O1", "-w", "-pthread", "-fsanitize=address", "-fno-omit-frame-pointer", fmt.Sprintf("-DKG_EMU_WARP=%d", warp)}
	for _, s := range tg.shims {
		abs, _ := filepath.Abs(s)
		args = append(args, "-include", abs)
	}
	out, err := exec.Command(gxx, append(args, "-o", bin, src)...).CombinedOutput()
	if err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	return bin, dir
}

// emulate runs plan p at env on seeded inputs in the emulator and compares
// the outputs with the interpreter's. The inputs are uniform, or drawn
// from the distribution KGEN_EMULATE_DIST names (the differential tester's
// -dist: specials puts NaN, infinities and signed zeros among them).
func emulate(t *testing.T, bin string, p *lower.Plan, env *ir.Env, dir string) error {
	k := p.Source
	dist := tensor.Uniform
	if name := os.Getenv("KGEN_EMULATE_DIST"); name != "" {
		d, err := tensor.ParseDist(name)
		if err != nil {
			return fmt.Errorf("KGEN_EMULATE_DIST: %v", err)
		}
		dist = d
	}
	inputs, err := interp.RandomInputs(k, env, dist, 1)
	if err != nil {
		return err
	}
	want, err := interp.Run(k, env, inputs, interp.Options{Workers: 1})
	if err != nil {
		return err
	}
	var job strings.Builder
	for i, in := range inputs {
		f := filepath.Join(dir, fmt.Sprintf("in%d.bin", i))
		if err := os.WriteFile(f, in.Data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(&job, "buf %d %s\n", len(in.Data), f)
	}
	var outs []*tensor.Tensor
	for _, o := range k.Outputs {
		shape, _ := env.Shape(o)
		ot := tensor.New(o.DType, shape)
		outs = append(outs, ot)
		fmt.Fprintf(&job, "buf %d -\n", len(ot.Data))
	}
	penv := p.Bind(env)
	if p.HasWorkspace() {
		n, err := penv.Int(p.WorkspaceBytes())
		if err != nil {
			return err
		}
		fmt.Fprintf(&job, "buf %d -\n", n)
	}
	for _, d := range k.DeclaredDims() {
		fmt.Fprintf(&job, "i64 %d\n", env.Dims[d])
	}
	for _, prm := range k.Params {
		c := env.Params[prm]
		switch {
		case c.T.IsFloat():
			fmt.Fprintf(&job, "%s %s\n", c.T, strings.ReplaceAll(fmt.Sprint(c.F), "+Inf", "inf"))
		default:
			fmt.Fprintf(&job, "%s %d\n", c.T, c.I)
		}
	}
	for _, l := range p.Launches {
		g := l.Grid()
		blocks, err := penv.Int(g.Blocks)
		if err != nil {
			return err
		}
		// A few blocks: the grid-stride loops cover the rest. Pointwise
		// templates run with one warp a block; the others divide work by
		// thread number (matmul tiles, cached rows) and get the block
		// they declare.
		threads := g.Threads
		if name := l.Template.Name(); name == "elementwise" || name == "generic" {
			threads = 32
		}
		fmt.Fprintf(&job, "launch %s %d %d\n", l.Name, min(blocks, 3), threads)
	}
	for i := range outs {
		fmt.Fprintf(&job, "dump %d %s\n", len(inputs)+i, filepath.Join(dir, fmt.Sprintf("out%d.bin", i)))
	}
	cmd := exec.Command(bin)
	cmd.Stdin = strings.NewReader(job.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("emulator: %v\n%s\njob:\n%s", err, out, job.String())
	}
	for i, o := range outs {
		data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("out%d.bin", i)))
		if err != nil {
			return err
		}
		copy(o.Data, data)
	}
	// As kgen test checks (runtime.Executor.Check): outputs out of their
	// tolerances are compared again against the interpreter's evaluation
	// rounded to the declared types too.
	_, bad, m, err := runtime.CompareOutputs(outs, want, runtime.Tolerances(k, env), func() ([]runtime.Tolerance, []*tensor.Tensor, error) {
		return runtime.RoundedReference(k, env, inputs, want)
	})
	if err != nil {
		return err
	}
	if m != nil {
		return fmt.Errorf("output %s: %v", k.Outputs[bad].Name, m)
	}
	return nil
}

// harness is a main program that runs a job from stdin: "buf BYTES PATH|-"
// allocates an argument buffer (0xFF-poisoned, or read from PATH), "i64 V"
// and friends add scalar arguments, "launch NAME BLOCKS THREADS" runs an
// entry point with all the arguments so far, "dump INDEX PATH" writes a
// buffer out.
func harness(plans []*lower.Plan, d *Dialect) string {
	var sb strings.Builder
	sb.WriteString("\n#include <cstdio>\n#include <cstdlib>\n#include <string>\n#include <map>\n\n")
	fns := map[string]bool{}
	var names []string
	for _, p := range plans {
		types := d.ArgTypes(p)
		for _, l := range p.Launches {
			if fns[l.Name] {
				continue
			}
			fns[l.Name] = true
			names = append(names, l.Name)
			var args []string
			for i, ty := range types {
				ty = strings.TrimSuffix(ty, " __restrict__")
				if strings.HasSuffix(ty, "*") {
					args = append(args, fmt.Sprintf("(%s)a[%d]", ty, i))
				} else {
					args = append(args, fmt.Sprintf("*(%s*)a[%d]", ty, i))
				}
			}
			fmt.Fprintf(&sb, "static void kgcall_%s(void** a) { %s(%s); }\n", l.Name, l.Name, strings.Join(args, ", "))
		}
	}
	sb.WriteString("\nint main() {\n  std::map<std::string, void (*)(void**)> fns = {\n")
	for _, n := range names {
		fmt.Fprintf(&sb, "    {%q, kgcall_%s},\n", n, n)
	}
	sb.WriteString(`  };
  std::vector<std::vector<unsigned char>> store;
  store.reserve(4096);
  std::vector<void*> args;
  char kind[32], text[4096];
  while (std::scanf("%31s", kind) == 1) {
    std::string k = kind;
    if (k == "buf") {
      long long n; std::scanf("%lld %4095s", &n, text);
      store.emplace_back(n > 0 ? n : 1, 0xFF);
      if (std::string(text) != "-") {
        FILE* f = std::fopen(text, "rb");
        if (!f || std::fread(store.back().data(), 1, n, f) != (size_t)n) { std::fprintf(stderr, "cannot read %s\n", text); return 2; }
        std::fclose(f);
      }
      args.push_back(store.back().data());
    } else if (k == "launch") {
      unsigned blocks, threads; std::scanf("%4095s %u %u", text, &blocks, &threads);
      auto it = fns.find(text);
      if (it == fns.end()) { std::fprintf(stderr, "no entry point %s\n", text); return 2; }
      if (blocks > 0) kg_emulate(blocks, threads, [&] { it->second(args.data()); });
    } else if (k == "dump") {
      int i; std::scanf("%d %4095s", &i, text);
      FILE* f = std::fopen(text, "wb");
      std::fwrite(args[i], 1, store[i].size(), f);
      std::fclose(f);
    } else {
      std::scanf("%4095s", text);
      store.emplace_back(8, 0);
      void* p = store.back().data();
      if (k == "i64") *(int64_t*)p = std::strtoll(text, nullptr, 10);
      else if (k == "i32" || k == "i8" || k == "u8" || k == "bool") *(int32_t*)p = (int32_t)std::strtoll(text, nullptr, 10);
      else if (k == "f64") *(double*)p = std::strtod(text, nullptr);
      else if (k == "f32") *(float*)p = std::strtof(text, nullptr);
      else if (k == "f16") *(__half*)p = __double2half(std::strtod(text, nullptr));
      else if (k == "bf16") *(__nv_bfloat16*)p = __double2bfloat16(std::strtod(text, nullptr));
      else { std::fprintf(stderr, "unknown job line %s\n", kind); return 2; }
      args.push_back(p);
    }
  }
  return 0;
}
`)
	return sb.String()
}

// TestEmulatedStrideSums runs testdata/strides.kg, sums whose terms a
// divisibility test picks (lower/stridesum.go sums every stride-th point
// of the axis instead): transposed convolutions with and without a range
// test left, the axis added, first in the difference, or starting at 1.
// A start or count that missed or repeated a tap shows as a wrong output.
func TestEmulatedStrideSums(t *testing.T) {
	gxx := emulatorGxx(t)
	emulateFile(t, gxx, "testdata/strides.kg")
}
