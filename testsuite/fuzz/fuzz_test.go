// Package fuzz fuzzes kgen past its checker: every kernel and instance
// the checker accepts is planned for every target and emitted by every
// backend, as kgen build would.
package fuzz

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"kgen.dev/kgen/backends/cuda"
	"kgen.dev/kgen/backends/hip"
	"kgen.dev/kgen/backends/triton"
	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
	"kgen.dev/kgen/runtime"
)

// targets are those whose limits differ: warps of 32 and of 64, thread
// and tile templates, sm_80 without clusters.
var targets = []string{"cuda:sm_80", "cuda:sm_90", "cuda:sm_90a", "triton:sm_90", "hip:gfx90a", "hip:gfx1030", "hip:nvidia"}

// FuzzLower: for any text the checker accepts, planning each kernel (at
// symbolic sizes) and instance for every target either gives a plan or an
// error with a message, never a panic or a hang; the reference plans
// (the generic template, one statement per launch) always build; and each
// backend emits the plans twice alike.
func FuzzLower(f *testing.F) {
	for _, pattern := range []string{"../../examples/*.kg", "../kernelbench/*.kg", "../corpus/*.kg", "../../backends/cuda/testdata/*.kg"} {
		paths, _ := filepath.Glob(pattern)
		for _, p := range paths {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(string(b))
			}
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				panic(fmt.Sprintf("planning took over 20s: %q", text))
			}
		}()
		prog, diags := frontend.CheckSource("fuzz.kg", text)
		if diags.HasErrors() {
			return
		}
		type unit struct {
			k    *ir.Kernel
			env  *ir.Env
			name string
		}
		var units []unit
		for _, k := range prog.Kernels {
			units = append(units, unit{k, nil, k.Name})
		}
		for _, in := range prog.Instances {
			units = append(units, unit{in.Kernel, in.Env, in.Name})
		}
		for _, u := range units {
			if _, err := lower.BuildReference(u.k, u.name); err != nil {
				t.Fatalf("%s: the reference plan: %v", u.name, err)
			}
		}
		for _, name := range targets {
			tgt, err := runtime.ParseTarget(name)
			if err != nil {
				t.Fatal(err)
			}
			lim := tgt.Limits()
			var plans []*lower.Plan
			for _, u := range units {
				p, err := lower.Build(u.k, u.env, u.name, lim)
				if err != nil {
					if err.Error() == "" {
						t.Fatalf("%s on %s: an error without a message", u.name, name)
					}
					continue
				}
				plans = append(plans, p)
			}
			emit := func() string {
				switch tgt.Backend {
				case "triton":
					return triton.Emit(plans)
				case "hip":
					return hip.Emit(plans, lim.Warp())
				}
				return cuda.Emit(plans)
			}
			if a, b := emit(), emit(); a != b {
				t.Fatalf("%s: the backend emitted the same plans differently", name)
			}
		}
	})
}
