package runtime

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// countingTool writes a script at dir/name that appends a line to
// dir/NAME.count for every run and then runs real with the same
// arguments, and returns the script's path and a function that reads the
// count.
func countingTool(t *testing.T, dir, name, real string) (string, func() int) {
	t.Helper()
	p := filepath.Join(dir, name)
	count := p + ".count"
	script := "#!/bin/sh\necho run >> '" + count + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p, func() int {
		b, _ := os.ReadFile(count)
		return bytes.Count(b, []byte("\n"))
	}
}

// cachedNVCC is the machine's nvcc run through countingTool, with a new
// cache, and the target the tests compile for (nvcc already asked
// whether it can, so that the counts are compiles alone).
func cachedNVCC(t *testing.T) (*NVCC, func() int, Target) {
	t.Helper()
	real := requireNVCC(t)
	path, runs := countingTool(t, t.TempDir(), "nvcc", real.Path)
	n, err := FindNVCC(path)
	if err != nil {
		t.Fatal(err)
	}
	n.Cache = &CompileCache{Dir: filepath.Join(t.TempDir(), "cache"), MaxBytes: 1 << 30, TrimEvery: time.Hour}
	tg := Target{Backend: "cuda", Arch: "sm_80"}
	if err := n.SupportsTarget(tg); err != nil {
		t.Fatal(err)
	}
	return n, runs, tg
}

// TestCompileCacheNVCC compiles through a cache with an nvcc that counts
// its runs: a second compile of the same source at the same path runs
// no nvcc and writes the same bytes, resources and warnings; a change of
// the source's bytes, of a define, or of its directory (whose path the
// PTX carries) compiles again; a damaged entry is compiled and stored
// again; and a failed compile is not kept.
func TestCompileCacheNVCC(t *testing.T) {
	n, runs, tg := cachedNVCC(t)
	ctx := context.Background()
	dirA, dirB := t.TempDir(), t.TempDir()
	// A variable declared and never used: nvcc's front end warns of it,
	// so that the warnings are replayed too.
	text := strings.Replace(axpySource, "int i =", "int unused_var = 3; int i =", 1)
	srcA := writeSource(t, dirA, "axpy.cu", text)
	compile := func(src string, defines ...string) (*CompileResult, int, []byte, []byte) {
		t.Helper()
		before := runs()
		res, err := n.Compile(ctx, CompileJob{Source: src, Target: tg, OutDir: filepath.Dir(src), Defines: defines})
		if err != nil {
			t.Fatal(err)
		}
		ptx, err := os.ReadFile(res.PTX)
		if err != nil {
			t.Fatal(err)
		}
		cubin, err := os.ReadFile(res.Cubin)
		if err != nil {
			t.Fatal(err)
		}
		return res, runs() - before, ptx, cubin
	}

	first, ran, ptx, cubin := compile(srcA, "SCALE_TILE=64")
	if ran != 2 || first.Cached {
		t.Fatalf("first compile: nvcc ran %d times, cached %v; want 2 runs (PTX, cubin), not cached", ran, first.Cached)
	}
	if len(first.Warnings) == 0 || len(first.Resources) != 1 {
		t.Fatalf("first compile: warnings %v, resources %v; want the unused variable's warning and one report", first.Warnings, first.Resources)
	}
	os.Remove(first.PTX)
	os.Remove(first.Cubin)
	again, ran, ptx2, cubin2 := compile(srcA, "SCALE_TILE=64")
	if ran != 0 || !again.Cached {
		t.Errorf("the same compile again: nvcc ran %d times, cached %v; want none, cached", ran, again.Cached)
	}
	if !bytes.Equal(ptx, ptx2) || !bytes.Equal(cubin, cubin2) {
		t.Errorf("the cached PTX or cubin differs from the compiled one")
	}
	if !reflect.DeepEqual(first.Resources, again.Resources) || !reflect.DeepEqual(first.Warnings, again.Warnings) || first.Log != again.Log {
		t.Errorf("cached resources %v, warnings %v; compiled %v, %v", again.Resources, again.Warnings, first.Resources, first.Warnings)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dirA, ".*")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}

	if _, ran, _, _ := compile(srcA, "SCALE_TILE=32"); ran != 2 {
		t.Errorf("another define: nvcc ran %d times, want 2", ran)
	}
	srcB := writeSource(t, dirB, "axpy.cu", text)
	if _, ran, ptxB, _ := compile(srcB, "SCALE_TILE=64"); ran != 2 || !bytes.Contains(ptxB, []byte(srcB)) {
		t.Errorf("the same source in another directory: nvcc ran %d times (want 2), its PTX names %s: %v", ran, srcB, bytes.Contains(ptxB, []byte(srcB)))
	}
	writeSource(t, dirA, "axpy.cu", text+"\n// changed\n")
	if _, ran, _, _ := compile(srcA, "SCALE_TILE=64"); ran != 2 {
		t.Errorf("changed bytes: nvcc ran %d times, want 2", ran)
	}

	// Damage every entry: each loses its cubin.
	cubins, _ := filepath.Glob(filepath.Join(n.Cache.Dir, "*", "*", "out1"))
	if len(cubins) != 4 {
		t.Fatalf("%d entries hold a cubin, want 4: %v", len(cubins), cubins)
	}
	for _, c := range cubins {
		os.Remove(c)
	}
	writeSource(t, dirA, "axpy.cu", text)
	// (Not the cubin's bytes: ptxas writes the source's modification
	// time into its line table, and the source was written again.)
	if res, ran, ptx3, _ := compile(srcA, "SCALE_TILE=64"); ran != 2 || res.Cached || !bytes.Equal(ptx3, ptx) {
		t.Errorf("a damaged entry: nvcc ran %d times, cached %v, same PTX %v; want 2, not cached, the same", ran, res.Cached, bytes.Equal(ptx3, ptx))
	}
	if _, ran, _, _ := compile(srcA, "SCALE_TILE=64"); ran != 0 {
		t.Errorf("after a damaged entry was compiled again: nvcc ran %d times, want 0 (stored again)", ran)
	}

	bad := writeSource(t, dirA, "bad.cu", "__global__ void k() { undeclared(); }\n")
	for i := range 2 {
		before := runs()
		_, err := n.Compile(ctx, CompileJob{Source: bad, Target: tg, OutDir: dirA})
		var nerr *NVCCError
		if !errors.As(err, &nerr) || runs()-before != 1 {
			t.Errorf("failed compile %d: %v, nvcc ran %d times; want an NVCCError from one run", i, err, runs()-before)
		}
	}
}

// TestCompileCacheScratch: sources in scratch directories compile
// through the cache's copy of their text, so that the same text written
// elsewhere under another name (kgen test's next run, a tuning
// candidate met again) is a hit; the outputs keep their own names, and
// the line tables name the copy.
func TestCompileCacheScratch(t *testing.T) {
	n, runs, tg := cachedNVCC(t)
	var ptxs [2][]byte
	for i, name := range []string{"first.cu", "second.cu"} {
		src := writeSource(t, t.TempDir(), name, axpySource)
		before := runs()
		res, err := n.Compile(context.Background(), CompileJob{Source: src, Target: tg, OutDir: filepath.Dir(src), Defines: []string{"SCALE_TILE=64"}, Scratch: true})
		if err != nil {
			t.Fatal(err)
		}
		if want := 2 - 2*i; runs()-before != want || res.Cached != (i == 1) {
			t.Errorf("%s: nvcc ran %d times, cached %v; want %d", name, runs()-before, res.Cached, want)
		}
		base := strings.TrimSuffix(src, ".cu")
		if res.PTX != base+".sm_80.ptx" || res.Cubin != base+".sm_80.cubin" {
			t.Errorf("%s: outputs %s and %s, want them named after it", name, res.PTX, res.Cubin)
		}
		if ptxs[i], err = os.ReadFile(res.PTX); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(ptxs[i], []byte(src)) || !bytes.Contains(ptxs[i], []byte(n.Cache.Dir)) {
			t.Errorf("%s: the PTX's line table names the scratch source, or not the cache's copy", name)
		}
	}
	if !bytes.Equal(ptxs[0], ptxs[1]) {
		t.Errorf("the two PTX differ")
	}
	// The same text compiled where it is (kgen build) is a compile of its own.
	src := writeSource(t, t.TempDir(), "third.cu", axpySource)
	before := runs()
	if _, err := n.Compile(context.Background(), CompileJob{Source: src, Target: tg, OutDir: filepath.Dir(src), Defines: []string{"SCALE_TILE=64"}}); err != nil || runs()-before != 2 {
		t.Errorf("not scratch: %v, nvcc ran %d times; want 2", err, runs()-before)
	}
}

// TestCompileCacheHIP: hipcc's code objects come from the cache the
// second time, the same bytes and resource usage, without running hipcc.
func TestCompileCacheHIP(t *testing.T) {
	real := requireHIPCC(t)
	path, runs := countingTool(t, t.TempDir(), "hipcc", real.Path)
	h, err := FindHIPCC(path)
	if err != nil {
		t.Fatal(err)
	}
	h.Cache = &CompileCache{Dir: t.TempDir(), MaxBytes: 1 << 30, TrimEvery: time.Hour}
	dir := t.TempDir()
	src := writeSource(t, dir, "k.hip", "#include <hip/hip_runtime.h>\n"+
		"extern \"C\" __global__ void __launch_bounds__(256) kg_twice(float* x) {\n"+
		"  x[threadIdx.x] = __shfl_xor(x[threadIdx.x], 1, warpSize) * 2.0f;\n}\n")
	job := HIPCompileJob{Source: src, Target: Target{"hip", "gfx90a"}, OutDir: dir}
	var objs [2][]byte
	var results [2]*HIPCompileResult
	for i := range 2 {
		before := runs()
		res, err := h.Compile(context.Background(), job)
		if err != nil {
			t.Fatal(err)
		}
		if want := 1 - i; runs()-before != want || res.Cached != (i == 1) {
			t.Errorf("compile %d: hipcc ran %d times, cached %v; want %d", i, runs()-before, res.Cached, want)
		}
		if objs[i], err = os.ReadFile(res.CodeObject); err != nil {
			t.Fatal(err)
		}
		os.Remove(res.CodeObject)
		results[i] = res
	}
	if !bytes.Equal(objs[0], objs[1]) || !reflect.DeepEqual(results[0].Resources, results[1].Resources) || len(results[0].Resources) != 1 {
		t.Errorf("cached code object the same: %v; resources %v and %v", bytes.Equal(objs[0], objs[1]), results[0].Resources, results[1].Resources)
	}
}

// TestCompileCacheTrim: past MaxBytes, the entries used longest ago go
// until three quarters of it are left; a hit counts as a use.
func TestCompileCacheTrim(t *testing.T) {
	c := &CompileCache{Dir: t.TempDir(), MaxBytes: 4000, TrimEvery: time.Hour}
	src := filepath.Join(t.TempDir(), "out")
	if err := os.WriteFile(src, bytes.Repeat([]byte("x"), 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	keys := []string{"aa01", "aa02", "bb03", "cc04", "dd05"}
	old := time.Now().Add(-time.Hour)
	for i, k := range keys {
		c.store(k, []string{src}, []string{""})
		// Entries used in the order stored, a minute apart.
		at := old.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(c.entry(k), at, at); err != nil {
			t.Fatal(err)
		}
	}
	// The oldest is used now.
	dst := filepath.Join(t.TempDir(), "got")
	if _, ok := c.fetch("aa01", []string{dst}, 1); !ok {
		t.Fatal("aa01 missing")
	}
	if err := c.Trim(); err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, k := range keys {
		if _, err := os.Stat(c.entry(k)); err == nil {
			left = append(left, k)
		}
	}
	if want := []string{"aa01", "cc04", "dd05"}; !reflect.DeepEqual(left, want) {
		t.Errorf("after trimming 5000 bytes to 3000: %v left, want %v", left, want)
	}
}
