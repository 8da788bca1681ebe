package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
)

// needHIPCC skips a test without hipcc (see missingTool).
func needHIPCC(t *testing.T) {
	t.Helper()
	if _, err := kgrt.FindHIPCC(""); err != nil {
		missingTool(t, fmt.Sprintf("no hipcc: %v", err))
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

// TestBuildHIP builds two examples (row reductions, and 16-bit matrix
// products on gfx90a's matrix cores) through kgen build for each HIP
// target, hipcc's and nvcc's, and checks the manifests and binaries.
// backends/hip's tests compile every example for every HIP target.
func TestBuildHIP(t *testing.T) {
	examples := []string{"../../examples/softmax.kg", "../../examples/matmul_lowp.kg"}
	for _, arch := range []string{"gfx90a", "gfx908", "gfx1030", "nvidia"} {
		t.Run(arch, func(t *testing.T) {
			suffix, symbol := "."+arch+".hsaco", ".kd"
			if arch == "nvidia" {
				needNVCC(t)
				suffix, symbol = "."+kgrt.HIPNvidiaArch+".cubin", ""
			} else {
				needHIPCC(t)
			}
			out := t.TempDir()
			code, _, errText := kgen(t, append([]string{"build", "--target", "hip:" + arch, "-o", out}, examples...)...)
			if code != exitOK {
				t.Fatalf("build for hip:%s: exit %d\n%s", arch, code, errText)
			}
			checkBinaries(t, out, examples, suffix, ".hip", symbol)
		})
	}
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
