package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
)

// missingTool skips t for want of a toolchain (why), unless
// KGEN_REQUIRE_TOOLCHAINS=1 (CI), where every toolchain must be there and
// a missing one fails the test.
func missingTool(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("KGEN_REQUIRE_TOOLCHAINS") == "1" {
		t.Fatalf("KGEN_REQUIRE_TOOLCHAINS=1 but: %s", why)
	}
	t.Skip(why)
}

// needNVCC skips a test without nvcc (see missingTool), and returns the
// nvcc it found.
func needNVCC(t *testing.T) *kgrt.NVCC {
	t.Helper()
	n, err := kgrt.FindNVCC("")
	if err != nil {
		missingTool(t, fmt.Sprintf("no nvcc: %v", err))
	}
	return n
}

// TestBuildExamples compiles every example for sm_80 and sm_90 and checks
// that each kernel and instance of the spec has its entry points in the
// manifest and a cubin next to it, and that nvcc warned of nothing in the
// generated CUDA (shown with -v; a user compiling kgen's .cu with nvcc's
// default warnings would see the same).
func TestBuildExamples(t *testing.T) {
	needNVCC(t)
	examples, _ := filepath.Glob("../../examples/*.kg")
	if len(examples) == 0 {
		t.Fatal("no examples")
	}
	for _, arch := range []string{"sm_80", "sm_90"} {
		out := t.TempDir()
		code, _, errText := kgen(t, append([]string{"build", "-v", "--target", "cuda:" + arch, "-o", out}, examples...)...)
		if code != exitOK {
			t.Fatalf("build for %s: exit %d\n%s", arch, code, errText)
		}
		for _, line := range strings.Split(errText, "\n") {
			if strings.Contains(line, "the compiler warns") {
				t.Errorf("%s: %s", arch, line)
			}
		}
		for _, ex := range examples {
			stem := strings.TrimSuffix(filepath.Base(ex), ".kg")
			data, err := os.ReadFile(filepath.Join(out, stem+".manifest.json"))
			if err != nil {
				t.Fatal(err)
			}
			var m lower.Manifest
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatalf("%s: manifest: %v", stem, err)
			}
			if m.Binary != stem+"."+arch+".cubin" {
				t.Errorf("%s: manifest binary %q", stem, m.Binary)
			}
			if _, err := os.Stat(filepath.Join(out, m.Binary)); err != nil {
				t.Errorf("%s: %v", stem, err)
			}
			text, _ := os.ReadFile(ex)
			prog, _ := frontend.CheckSource(ex, string(text))
			want := len(prog.Kernels) + len(prog.Instances)
			if len(m.Kernels) != want {
				t.Errorf("%s: manifest has %d kernels, the spec %d kernels and instances", stem, len(m.Kernels), want)
			}
			src, _ := os.ReadFile(filepath.Join(out, stem+".cu"))
			for _, mk := range m.Kernels {
				for _, l := range mk.Launches {
					if !strings.Contains(string(src), "void __launch_bounds__(") || !strings.Contains(string(src), " "+l.Function+"(") {
						t.Errorf("%s: entry point %s is not in the source", stem, l.Function)
					}
				}
			}
		}
	}
}

// TestBuildIGemmEdges compiles the backend's implicit GEMMs at the igemm
// templates' edges (testdata/igemm.kg: both operand layouts on tensor
// cores, groups, gathered filters, defaults other than 0; phases.kg:
// transposed convolutions split into phases, f16 on tensor cores), which
// the examples do not all reach, for sm_80 and sm_90.
func TestBuildIGemmEdges(t *testing.T) {
	needNVCC(t)
	for _, arch := range []string{"sm_80", "sm_90"} {
		out := t.TempDir()
		code, _, errText := kgen(t, "build", "--target", "cuda:"+arch, "-o", out, "../../backends/cuda/testdata/igemm.kg", "../../backends/cuda/testdata/phases.kg")
		if code != exitOK {
			t.Fatalf("build for %s: exit %d\n%s", arch, code, errText)
		}
		for _, stem := range []string{"igemm", "phases"} {
			if _, err := os.Stat(filepath.Join(out, stem+"."+arch+".cubin")); err != nil {
				t.Error(err)
			}
		}
	}
}

// TestBuildIsDeterministic: two builds write byte-identical sources and
// manifests.
func TestBuildIsDeterministic(t *testing.T) {
	examples, _ := filepath.Glob("../../examples/*.kg")
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		if code, _, errText := kgen(t, append([]string{"build", "--emit-only", "--target", "cuda:sm_90", "-o", dir}, examples...)...); code != exitOK {
			t.Fatalf("exit %d: %s", code, errText)
		}
	}
	files, _ := filepath.Glob(filepath.Join(a, "*"))
	if len(files) == 0 {
		t.Fatal("nothing written")
	}
	for _, f := range files {
		x, _ := os.ReadFile(f)
		y, err := os.ReadFile(filepath.Join(b, filepath.Base(f)))
		if err != nil || string(x) != string(y) {
			t.Errorf("%s differs between two builds", filepath.Base(f))
		}
	}
}

// TestBuildHopper compiles for cuda:sm_90a every example whose plans there
// take matmul-wgmma, and checks that the PTX holds wgmma.mma_async and
// that ptxas made the cubin. It needs an nvcc of CUDA 12 or later, named
// by KGEN_NVCC_SM90A (CI installs one from PyPI: .ci/install-nvcc13) or
// found as nvcc; without one it skips, or fails where
// KGEN_REQUIRE_TOOLCHAINS=1.
func TestBuildHopper(t *testing.T) {
	nvcc, err := kgrt.FindNVCC(os.Getenv("KGEN_NVCC_SM90A"))
	if err == nil {
		err = nvcc.SupportsTarget(kgrt.Target{Backend: "cuda", Arch: "sm_90a"})
	}
	if err != nil {
		missingTool(t, fmt.Sprintf("no nvcc for sm_90a: %v (set KGEN_NVCC_SM90A)", err))
	}
	examples, _ := filepath.Glob("../../examples/*.kg")
	var hopper []string
	for _, ex := range examples {
		text, err := os.ReadFile(ex)
		if err != nil {
			t.Fatal(err)
		}
		prog, _ := frontend.CheckSource(ex, string(text))
		if usesWgmma(t, prog) {
			hopper = append(hopper, ex)
		}
	}
	if len(hopper) == 0 {
		t.Fatal("no example takes matmul-wgmma on sm_90a")
	}
	out := t.TempDir()
	code, _, errText := kgen(t, append([]string{"build", "--nvcc", nvcc.Path, "--target", "cuda:sm_90a", "-o", out}, hopper...)...)
	if code != exitOK {
		t.Fatalf("build for sm_90a: exit %d\n%s", code, errText)
	}
	for _, ex := range hopper {
		stem := strings.TrimSuffix(filepath.Base(ex), ".kg")
		ptx, err := os.ReadFile(filepath.Join(out, stem+".sm_90a.ptx"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(ptx), "wgmma.mma_async") {
			t.Errorf("%s: no wgmma.mma_async in the PTX", stem)
		}
		if fi, err := os.Stat(filepath.Join(out, stem+".sm_90a.cubin")); err != nil || fi.Size() == 0 {
			t.Errorf("%s: no cubin: %v", stem, err)
		}
	}
}

// usesWgmma reports whether any kernel or instance of prog plans a
// matmul-wgmma launch on sm_90a.
func usesWgmma(t *testing.T, prog *ir.Program) bool {
	t.Helper()
	lim := kgrt.Target{Backend: "cuda", Arch: "sm_90a"}.Limits()
	check := func(k *ir.Kernel, env *ir.Env, name string) bool {
		p, err := lower.Build(k, env, name, lim)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range p.Launches {
			if l.Template.Name() == "matmul-wgmma" {
				return true
			}
		}
		return false
	}
	for _, k := range prog.Kernels {
		if check(k, nil, k.Name) {
			return true
		}
	}
	for _, in := range prog.Instances {
		if check(in.Kernel, in.Env, in.Name) {
			return true
		}
	}
	return false
}

// TestBuildOnly checks that a build limited to some instances (kgen bench
// and kgen test --kernel) plans those alone, with the reference kernels of
// their kernels only, that a kernel's name brings its symbolic plan and
// its instances, and that a file left without plans still compiles.
func TestBuildOnly(t *testing.T) {
	needNVCC(t)
	tgt, err := kgrt.ParseTarget("cuda:sm_90")
	if err != nil {
		t.Fatal(err)
	}
	be, err := openBackend(tgt, toolPaths{}, true)
	if err != nil {
		t.Fatal(err)
	}
	var diags diag.List
	files := loadFiles([]string{"../../examples/softmax.kg", "../../examples/elementwise.kg"}, &diags)
	build := func(only ...string) (units, refs []*unit) {
		b := &builder{target: tgt, be: be, out: t.TempDir(), only: only}
		units, err := b.emit(files)
		if err != nil {
			t.Fatal(err)
		}
		refs, err = b.emitReference(files)
		if err != nil {
			t.Fatal(err)
		}
		return units, refs
	}
	names := func(us []*unit) string {
		var s []string
		for _, u := range us {
			for _, p := range u.plans {
				s = append(s, p.Name)
			}
		}
		return strings.Join(s, ",")
	}
	units, refs := build("softmax_vocab", "softmax_temp")
	if got, want := names(units), "softmax_vocab,softmax_temp"; got != want {
		t.Errorf("plans %s, want %s", got, want)
	}
	if got, want := names(refs), "softmax__ref,softmax"+lower.RoundingSuffix+",softmax_temp_f16__ref,softmax_temp_f16"+lower.RoundingSuffix; got != want {
		t.Errorf("reference plans %s, want %s", got, want)
	}
	// A kernel named: its own plan, then its instances.
	kunits, krefs := build("chain", "softmax_vocab")
	if got, want := names(kunits), "softmax_vocab,chain,chain_kb,chain_small"; got != want {
		t.Errorf("with a kernel named: plans %s, want %s", got, want)
	}
	if got, want := names(krefs), "softmax__ref,softmax"+lower.RoundingSuffix+",chain__ref,chain"+lower.RoundingSuffix; got != want {
		t.Errorf("with a kernel named: reference plans %s, want %s", got, want)
	}
	be.compile(context.Background(), append(units, refs...), 2, false, &diags)
	if diags.HasErrors() {
		var sb strings.Builder
		diags.Print(&sb)
		t.Fatal(sb.String())
	}
	for _, u := range append(units, refs...) {
		if u.binary == "" {
			t.Errorf("%s: no binary", u.stem)
		}
	}
}

// TestBuildKernelFlag runs kgen build --kernel as a build system would:
// only the named instances and kernels are planned and written, files
// with none of them are not written at all, --config then needs to fit
// only those (ROWS=2 is refused by depthwise_conv.kg's symbolic kernel,
// whose planes are no constant), and a name in no file is a usage error
// that writes nothing.
func TestBuildKernelFlag(t *testing.T) {
	files := []string{"../../examples/softmax.kg", "../../examples/elementwise.kg", "../../examples/depthwise_conv.kg"}
	manifest := func(dir, stem string) []string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(dir, stem+".manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m lower.Manifest
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, k := range m.Kernels {
			names = append(names, k.Name)
		}
		return names
	}
	listing := func(dir string) []string {
		t.Helper()
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return names
	}

	dir := t.TempDir()
	code, _, errText := kgen(t, append([]string{"build", "--emit-only", "--db", "off", "--target", "cuda:sm_90", "-o", dir, "--kernel", "softmax_vocab,depthwise3x3_relu6"}, files...)...)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errText)
	}
	if got, want := listing(dir), []string{"depthwise_conv.cu", "depthwise_conv.manifest.json", "softmax.cu", "softmax.manifest.json"}; !slices.Equal(got, want) {
		t.Errorf("wrote %q, want %q", got, want)
	}
	if got, want := manifest(dir, "softmax"), []string{"softmax_vocab"}; !slices.Equal(got, want) {
		t.Errorf("softmax.manifest.json has %q, want %q", got, want)
	}
	if got, want := manifest(dir, "depthwise_conv"), []string{"depthwise3x3_relu6", "dw_relu6_s2", "dw_relu6_tiny"}; !slices.Equal(got, want) {
		t.Errorf("depthwise_conv.manifest.json has %q, want the kernel and its instances %q", got, want)
	}

	// --config over the whole file is refused at the symbolic kernel;
	// narrowed to one instance it builds, and the launch takes it.
	if code, _, _ := kgen(t, "build", "--emit-only", "--db", "off", "--target", "cuda:sm_90", "-o", t.TempDir(), "--config", "ROWS=2", files[2]); code == exitOK {
		t.Errorf("--config ROWS=2 over all of depthwise_conv.kg: exit 0, want a refusal")
	}
	dir = t.TempDir()
	if code, _, errText := kgen(t, "build", "--emit-only", "--db", "off", "--target", "cuda:sm_90", "-o", dir, "--config", "ROWS=2", "--kernel", "dw_s2_5x5", files[2]); code != exitOK {
		t.Fatalf("--config ROWS=2 --kernel dw_s2_5x5: exit %d\n%s", code, errText)
	}
	src, err := os.ReadFile(filepath.Join(dir, "depthwise_conv.cu"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "ROWS=2") {
		t.Errorf("depthwise_conv.cu does not record ROWS=2 in its launch")
	}

	dir = t.TempDir()
	code, _, errText = kgen(t, append([]string{"build", "--emit-only", "--target", "cuda:sm_90", "-o", dir, "--kernel", "softmax_vocab,softmax_vocb"}, files...)...)
	if code != exitUsage || !strings.Contains(errText, `no instance or kernel "softmax_vocb"`) || !strings.Contains(errText, `did you mean "softmax_vocab"`) {
		t.Errorf("a misspelt name: exit %d, %q; want a usage error suggesting softmax_vocab", code, errText)
	}
	if got := listing(dir); len(got) != 0 {
		t.Errorf("a misspelt name wrote %q", got)
	}
}

// countingNVCC writes a script that runs the machine's nvcc and logs
// each of its compiles (runs with -ptx or -cubin), and returns the
// script's path and a function that counts the compiles so far.
func countingNVCC(t *testing.T) (string, func() int) {
	t.Helper()
	real := needNVCC(t)
	tools := t.TempDir()
	wrapper, logPath := filepath.Join(tools, "nvcc"), filepath.Join(tools, "runs")
	script := "#!/bin/sh\ncase \"$*\" in *-ptx*|*-cubin*) echo \"$*\" >> '" + logPath + "';; esac\nexec '" + real.Path + "' \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return wrapper, func() int {
		b, _ := os.ReadFile(logPath)
		return strings.Count(string(b), "\n")
	}
}

// TestBuildCompileCache builds a file twice into one directory, as a
// build system does, with an nvcc that logs its compiles: the second
// build compiles nothing, leaves every output as it was (times too), and
// prints the same -v notes; KGEN_COMPILE_CACHE=off compiles again.
func TestBuildCompileCache(t *testing.T) {
	wrapper, compiles := countingNVCC(t)
	t.Setenv("KGEN_COMPILE_CACHE", t.TempDir())
	out := t.TempDir()
	build := func() (notes string, files map[string][]byte, ran int) {
		t.Helper()
		before := compiles()
		code, _, errText := kgen(t, "build", "-v", "--db", "off", "--nvcc", wrapper, "--target", "cuda:sm_80", "-o", out, "../../examples/softmax.kg", "../../examples/rmsnorm.kg")
		if code != exitOK {
			t.Fatalf("exit %d\n%s", code, errText)
		}
		files = map[string][]byte{}
		for _, name := range []string{"softmax.sm_80.cubin", "softmax.manifest.json", "rmsnorm.sm_80.cubin", "rmsnorm.sm_80.ptx"} {
			var err error
			if files[name], err = os.ReadFile(filepath.Join(out, name)); err != nil {
				t.Fatal(err)
			}
		}
		return errText, files, compiles() - before
	}
	notes1, files1, ran1 := build()
	if ran1 != 4 {
		t.Fatalf("first build: %d nvcc compiles, want 4 (PTX and cubin of two files)", ran1)
	}
	// Every output an hour old: the second build, which changes none of
	// them, must leave their times as they are (ninja's restat).
	outputs, _ := filepath.Glob(filepath.Join(out, "*"))
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, o := range outputs {
		if err := os.Chtimes(o, old, old); err != nil {
			t.Fatal(err)
		}
	}
	notes2, files2, ran2 := build()
	if ran2 != 0 {
		t.Errorf("the same build again: %d nvcc compiles, want none", ran2)
	}
	for _, o := range outputs {
		if st, err := os.Stat(o); err != nil || !st.ModTime().Equal(old) {
			t.Errorf("%s was written again by a build that did not change it", filepath.Base(o))
		}
	}
	if len(outputs) != 8 {
		t.Errorf("outputs %q, want the source, manifest, PTX and cubin of two files", outputs)
	}
	if notes1 != notes2 || !strings.Contains(notes1, "registers") {
		t.Errorf("-v notes differ or name no registers:\n%s\n----\n%s", notes1, notes2)
	}
	for name, b := range files1 {
		if !bytes.Equal(b, files2[name]) {
			t.Errorf("%s differs between the two builds", name)
		}
	}
	t.Setenv("KGEN_COMPILE_CACHE", "off")
	if _, _, ran := build(); ran != 4 {
		t.Errorf("KGEN_COMPILE_CACHE=off: %d nvcc compiles, want 4", ran)
	}
}

// TestScratchCompileCache runs kgen test's portability run twice
// (compile only where there is no GPU): each run builds in a directory
// of its own that goes away, and the second compiles nothing, its
// sources' text met before through the cache's copies.
func TestScratchCompileCache(t *testing.T) {
	wrapper, compiles := countingNVCC(t)
	t.Setenv("KGEN_COMPILE_CACHE", t.TempDir())
	spec := writeFile(t, t.TempDir(), "rowsum.kg", "kernel rowsum<M, N>(X: f32[M, N]) -> (Y: f32[M]) {\n  Y[i] = sum[j](X[i, j])\n}\ninstance rowsum_small = rowsum<M = 3, N = 5>\n")
	for i, want := range []int{8, 0} { // PTX and cubin of the file and its references, for two targets
		before := compiles()
		if code, _, errText := kgen(t, "test", "--nvcc", wrapper, "--target", "cuda:sm_80,cuda:sm_90", spec); code != exitOK {
			t.Fatalf("run %d: exit %d\n%s", i, code, errText)
		}
		if got := compiles() - before; got != want {
			t.Errorf("run %d: %d nvcc compiles, want %d", i, got, want)
		}
	}
}

// TestBuildDeclaresNothingUnused compiles the CUDA of two examples whose
// templates declare loop indices that some statements do not read
// (norms.kg, softmax.kg: 15 and 34 such declarations before they were
// dropped) with nvcc's default warnings, as a user compiling kgen's
// output would: nvcc must not warn of a variable declared and never
// referenced (#177).
func TestBuildDeclaresNothingUnused(t *testing.T) {
	for stem, c := range compilePTX(t, "../../examples/norms.kg", "../../examples/softmax.kg") {
		if strings.Contains(c.log, "#177") {
			t.Errorf("%s.cu: nvcc warns of unused variables:\n%s", stem, c.log)
		}
	}
}

// ptxOf is what nvcc made of one file of kgen's CUDA: the PTX, and what
// nvcc printed.
type ptxOf struct{ ptx, log string }

// compilePTX emits the CUDA of each of files for cuda:sm_90 with kgen
// build and compiles it to PTX with nvcc as kgen does (-O3 -std=c++17),
// with nvcc's default warnings; the results by file stem. It skips the
// test without nvcc (see missingTool).
func compilePTX(t *testing.T, files ...string) map[string]ptxOf {
	t.Helper()
	nvcc := needNVCC(t)
	out := t.TempDir()
	code, _, errText := kgen(t, append([]string{"build", "--emit-only", "--db", "off", "--target", "cuda:sm_90", "-o", out}, files...)...)
	if code != exitOK {
		t.Fatalf("build: exit %d\n%s", code, errText)
	}
	res := map[string]ptxOf{}
	for _, f := range files {
		stem := strings.TrimSuffix(filepath.Base(f), ".kg")
		ptx := filepath.Join(out, stem+".ptx")
		text, err := exec.Command(nvcc.Path, "-arch=sm_90", "-O3", "-std=c++17", "-ptx", "-o", ptx, filepath.Join(out, stem+".cu")).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: nvcc: %v\n%s", stem, err, text)
		}
		data, err := os.ReadFile(ptx)
		if err != nil {
			t.Fatal(err)
		}
		res[stem] = ptxOf{string(data), string(text)}
	}
	return res
}

// TestBuildStoresVectors compiles launches whose outputs are written a
// chunk at a time, with nvcc, and checks the PTX: each stores its chunks
// with st.global.v2 or .v4 (one instruction a chunk). Written as a cast of
// each point's address, nvcc split them into one store a point: softmax
// over rows of a size known at run time (a grid-stride pass over the
// row), center_2m (a row too long for registers, streamed), softmax_256k
// (staged in shared memory by clusters), dw_s2_5x5 (the elementwise
// template, two points a thread), the tensor-core matmul's epilogue
// (matmul_bf16_4k, gemm_bias_relu_4k: 256 scalar stores, no vector one)
// and transpose_last2_bf16 had no vector store at all.
func TestBuildStoresVectors(t *testing.T) {
	files := map[string][]string{
		"softmax":        {"softmax"},
		"cluster_rows":   {"center_2m", "softmax_256k"},
		"depthwise_conv": {"dw_s2_5x5"},
		"matmul_lowp":    {"matmul_bf16_4k"},
		"fused_gemm":     {"gemm_bias_relu_4k"},
		"transpose":      {"transpose_last2_bf16"},
	}
	ptx := compilePTX(t, "../../examples/softmax.kg", "../../testsuite/cluster_rows.kg", "../../examples/depthwise_conv.kg",
		"../../examples/matmul_lowp.kg", "../../examples/fused_gemm.kg", "../../examples/transpose.kg")
	everyEntryHas(t, ptx, files, regexp.MustCompile(`st\.global\.v[248]\.`), "no vector store of its outputs in the PTX")
}

// everyEntryHas checks that the PTX of each entry of entries (by file
// stem) matches re, and reports each one that does not with what.
func everyEntryHas(t *testing.T, ptx map[string]ptxOf, entries map[string][]string, re *regexp.Regexp, what string) {
	t.Helper()
	for stem, names := range entries {
		for _, entry := range names {
			body := ptxEntry(ptx[stem].ptx, entry)
			if body == "" {
				t.Errorf("%s.ptx: no entry %s", stem, entry)
				continue
			}
			if !re.MatchString(body) {
				t.Errorf("%s: %s", entry, what)
			}
		}
	}
}

// TestBuildLoadsSplitRowsVectors compiles the split sums of whole
// tensors, whose first launch sums rows X[chunk * CH + d] that no block
// keeps, and checks that nvcc's PTX reads them with ld.global.v2 or .v4:
// read a point at a time, frobenius_kb_0_fro_part had 32 scalar loads and
// no vector load, and so had dot_1m's and sum_all_1k's.
func TestBuildLoadsSplitRowsVectors(t *testing.T) {
	ptx := compilePTX(t, "../../examples/l2norm.kg", "../../examples/matvec.kg", "../../examples/reductions.kg")
	everyEntryHas(t, ptx, map[string][]string{"l2norm": {"frobenius_kb_0_fro_part"}, "matvec": {"dot_1m_0_out_part"}, "reductions": {"sum_all_1k_0_total_part"}},
		regexp.MustCompile(`ld\.global\.(?:nc\.)?v[248]\.`), "no vector load of its rows in the PTX")
}

// ptxEntry returns the text of PTX function name, from its .entry line to
// the closing brace at the start of a line.
func ptxEntry(ptx, name string) string {
	start := strings.Index(ptx, ".entry "+name+"(")
	if start < 0 {
		return ""
	}
	end := strings.Index(ptx[start:], "\n}")
	if end < 0 {
		return ptx[start:]
	}
	return ptx[start : start+end]
}
