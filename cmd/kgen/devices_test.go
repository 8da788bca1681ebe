package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	kgrt "kgen.dev/kgen/runtime"
)

// devicesJSON runs kgen devices --json and reads its report.
func devicesJSON(t *testing.T) machineReport {
	t.Helper()
	code, out, errText := kgen(t, "devices", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errText)
	}
	var r machineReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	return r
}

func TestDevicesCommand(t *testing.T) {
	r := devicesJSON(t)
	if len(r.GPUs) == 0 && r.GPUError == "" {
		t.Errorf("no GPUs and no reason: %+v", r)
	}
	names := map[string]toolReport{}
	for _, tr := range r.Toolchains {
		names[tr.Name] = tr
		if tr.Found == (tr.Error != "") {
			t.Errorf("%s: found=%v with error %q: each entry is found or says why not", tr.Name, tr.Found, tr.Error)
		}
	}
	for _, n := range []string{"nvcc", "python3", "hipcc"} {
		if _, ok := names[n]; !ok {
			t.Errorf("no %s entry in %+v", n, r.Toolchains)
		}
	}
	if nv := names["nvcc"]; nv.Found && (nv.Version == "" || len(nv.Targets) == 0) {
		t.Errorf("nvcc found without version or targets: %+v", nv)
	}

	// The text form says the same.
	code, text, _ := kgen(t, "devices")
	if code != exitOK || !strings.Contains(text, "GPUs\n") || !strings.Contains(text, "Toolchains\n") || !strings.Contains(text, "  nvcc") {
		t.Errorf("exit %d, text:\n%s", code, text)
	}
	if r.GPUError != "" && !strings.Contains(text, r.GPUError) {
		t.Errorf("text does not say why there are no GPUs:\n%s", text)
	}
}

func TestDevicesCommandNVCCFlag(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "cuda-99", "bin", "nvcc")
	code, out, _ := kgen(t, "devices", "--json", "--nvcc", missing)
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var r machineReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Toolchains) == 0 || r.Toolchains[0].Name != "nvcc" || r.Toolchains[0].Found || !strings.Contains(r.Toolchains[0].Error, "--nvcc "+missing) {
		t.Errorf("a bad --nvcc must be reported, not replaced: %+v", r.Toolchains)
	}
	// A fake nvcc named by the flag is the one reported.
	fake := filepath.Join(t.TempDir(), "nvcc")
	os.WriteFile(fake, []byte("#!/bin/sh\n[ \"$1\" = --version ] && echo 'Cuda compilation tools, release 12.6, V12.6.77' && exit 0\necho compute_80 compute_90 compute_90a\n"), 0o755)
	_, out, _ = kgen(t, "devices", "--json", "--nvcc", fake)
	json.Unmarshal([]byte(out), &r)
	if nv := r.Toolchains[0]; nv.Path != fake || nv.Version != "12.6.77" || strings.Join(nv.Targets, " ") != "cuda:sm_80 cuda:sm_90 cuda:sm_90a" {
		t.Errorf("--nvcc %s: %+v", fake, nv)
	}
	if code, _, errText := kgen(t, "devices", "extra"); code != exitUsage || !strings.Contains(errText, "takes no arguments") {
		t.Errorf("extra argument: exit %d, %s", code, errText)
	}
}

// TestDevicesMeasure: --measure reports GPU 0's ceilings, or, where there
// is no GPU or no nvcc, says why, still with exit status 0. With a GPU,
// each unit's peak is a positive rate and f32's (multiply-adds) is below
// every tensor-core unit's.
func TestDevicesMeasure(t *testing.T) {
	code, out, errText := kgen(t, "devices", "--json", "--measure")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errText)
	}
	var r machineReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	c := r.Ceilings
	if c == nil {
		t.Fatalf("no ceilings in %s", out)
	}
	if len(r.GPUs) == 0 {
		if c.Error == "" || len(c.Peaks) > 0 || c.CopyGBps != 0 {
			t.Errorf("no GPU, but ceilings %+v: want an error and nothing measured", c)
		}
		return
	}
	if c.Error != "" {
		t.Fatalf("a GPU, but: %s", c.Error)
	}
	f32 := 0.0
	for _, p := range c.Peaks {
		if p.Unit == "f32" {
			f32 = p.TFLOPs
		}
	}
	for _, p := range c.Peaks {
		if p.TFLOPs <= 0 || (p.Unit != "f32" && p.TFLOPs <= f32) {
			t.Errorf("peak %s: want a positive rate above f32's %g", p, f32)
		}
	}
}

// TestDevicesCompileCache: kgen devices says where the compile cache is
// and what it holds: nothing in a new one, one compile after a build of
// one spec (where nvcc is here), and off where KGEN_COMPILE_CACHE says so.
func TestDevicesCompileCache(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("KGEN_COMPILE_CACHE", cache)
	report := func() cacheReport { t.Helper(); return devicesJSON(t).CompileCache }
	if c := report(); c.Dir != cache || c.Off || c.Compiles != 0 || c.Bytes != 0 {
		t.Errorf("a new cache: %+v, want %s holding nothing", c, cache)
	}
	if _, err := kgrt.FindNVCC(""); err == nil {
		spec := writeFile(t, t.TempDir(), "scale.kg", "kernel scale<N>(X: f32[N]) -> (Y: f32[N]) {\n  Y[i] = 2.0 * X[i]\n}\n")
		if code, _, errText := kgen(t, "build", "--target", "cuda:sm_80", "-o", t.TempDir(), spec); code != exitOK {
			t.Fatalf("build: exit %d\n%s", code, errText)
		}
		if c := report(); c.Compiles != 1 || c.Bytes <= 0 {
			t.Errorf("after one build: %+v, want one compile of some bytes", c)
		}
	}
	t.Setenv("KGEN_COMPILE_CACHE", "off")
	if c := report(); !c.Off || c.Dir != "" {
		t.Errorf("KGEN_COMPILE_CACHE=off: %+v, want off", c)
	}
	if code, text, _ := kgen(t, "devices"); code != exitOK || !strings.Contains(text, "Caches\n  compile  off") {
		t.Errorf("the text form does not say the cache is off:\n%s", text)
	}
}
