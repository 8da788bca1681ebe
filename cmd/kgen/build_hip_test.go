package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
)

// needHIPCC skips a test without hipcc, unless KGEN_REQUIRE_TOOLCHAINS=1
// (CI), where a missing toolchain fails it.
func needHIPCC(t *testing.T) {
	t.Helper()
	if _, err := kgrt.FindHIPCC(""); err != nil {
		if os.Getenv("KGEN_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatalf("KGEN_REQUIRE_TOOLCHAINS=1 but: %v", err)
		}
		t.Skipf("no hipcc: %v", err)
	}
}

// checkBinaries checks, for every example built into out, that its
// manifest names the binary stem.SUFFIX, which exists and holds every
// entry point's symbol (for a code object, the kernel descriptor
// NAME.kd), and that the source defines every entry point.
func checkBinaries(t *testing.T, out string, examples []string, suffix, ext, symbolSuffix string) {
	t.Helper()
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
		if m.Binary != stem+suffix {
			t.Errorf("%s: manifest binary %q, want %q", stem, m.Binary, stem+suffix)
			continue
		}
		bin, err := os.ReadFile(filepath.Join(out, m.Binary))
		if err != nil || len(bin) == 0 {
			t.Errorf("%s: binary %s missing or empty (%v)", stem, m.Binary, err)
			continue
		}
		src, _ := os.ReadFile(filepath.Join(out, stem+ext))
		if len(m.Kernels) == 0 {
			t.Errorf("%s: no kernels in the manifest", stem)
		}
		for _, mk := range m.Kernels {
			for _, l := range mk.Launches {
				if !strings.Contains(string(bin), l.Function+symbolSuffix) {
					t.Errorf("%s: %s has no symbol %s", stem, m.Binary, l.Function+symbolSuffix)
				}
				if !strings.Contains(string(src), " "+l.Function+"(") {
					t.Errorf("%s: entry point %s is not in the source", stem, l.Function)
				}
			}
		}
	}
}

// TestBuildHIPExamples compiles every example with hipcc for hip:gfx90a,
// hip:gfx908 and hip:gfx1030 through kgen build and checks the code
// objects hold every kernel.
func TestBuildHIPExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles every example three times")
	}
	needHIPCC(t)
	examples, _ := filepath.Glob("../../examples/*.kg")
	if len(examples) == 0 {
		t.Fatal("no examples")
	}
	for _, arch := range []string{"gfx90a", "gfx908", "gfx1030"} {
		t.Run(arch, func(t *testing.T) {
			out := t.TempDir()
			code, _, errText := kgen(t, append([]string{"build", "--target", "hip:" + arch, "-o", out}, examples...)...)
			if code != exitOK {
				t.Fatalf("build for hip:%s: exit %d\n%s", arch, code, errText)
			}
			checkBinaries(t, out, examples, "."+arch+".hsaco", ".hip", ".kd")
		})
	}
}

// TestBuildHIPNvidia compiles every example's HIP with nvcc, behind the
// prelude's compatibility layer, for hip:nvidia (sm_90 cubins).
func TestBuildHIPNvidia(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles every example")
	}
	needNVCC(t)
	examples, _ := filepath.Glob("../../examples/*.kg")
	out := t.TempDir()
	code, _, errText := kgen(t, append([]string{"build", "--target", "hip:nvidia", "-o", out}, examples...)...)
	if code != exitOK {
		t.Fatalf("build for hip:nvidia: exit %d\n%s", code, errText)
	}
	checkBinaries(t, out, examples, "."+kgrt.HIPNvidiaArch+".cubin", ".hip", "")
}

// TestHIPCompileOnly: an AMD target builds but does not run here, and
// says so.
func TestHIPCompileOnly(t *testing.T) {
	needHIPCC(t)
	code, _, errText := kgen(t, "test", "--target", "hip:gfx90a", "../../examples/elementwise.kg")
	if code == exitOK || !strings.Contains(errText, "compile-only") {
		t.Errorf("kgen test --target hip:gfx90a: exit %d, stderr %q; want a failure saying the target is compile-only", code, errText)
	}
}
