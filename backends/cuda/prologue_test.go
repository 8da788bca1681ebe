package cuda

import (
	"os"
	"testing"

	"kgen.dev/kgen/lower"
	"kgen.dev/kgen/runtime"
)

// TestEmulatedPrologue runs testdata/prologue.kg, statements over whole
// rows that the row group after them reads, stored by the group's launch
// (lower's prologueGroup), under the configurations whose passes over a
// row differ: registers one element and one chunk at a time, a row staged
// in shared memory, rows shared by groups of threads (also on a wavefront
// of 64, hip:gfx90a), prefetched rows, and the default (the kernels at
// run-time sizes stream their rows). A
// prologue stored at the wrong place, or a reduction that read the stored
// tensor rather than its value, shows as a wrong output (the outputs are
// poisoned with NaN before each launch). Each instance's group must also
// be one launch.
func TestEmulatedPrologue(t *testing.T) {
	gxx := emulatorGxx(t)
	text, err := os.ReadFile("testdata/prologue.kg")
	if err != nil {
		t.Fatal(err)
	}
	launches := map[string]int{"mask_odd": 1, "mask_chunks": 1, "add_rms_odd": 1, "add_rms_chunks": 1, "chain_odd": 1, "after_odd": 2, "probs_odd": 2}
	for _, p := range plansOf(t, "prologue.kg", string(text)) {
		if p.Env == nil {
			continue
		}
		l := p.Launches[0]
		if len(p.Launches) != launches[p.Name] || l.Template.Name() != "row-reduce" || len(l.Also) == 0 {
			t.Errorf("%s: %d launches, the first %s storing %d statements beside its own; want %d, row-reduce storing its prologue", p.Name, len(p.Launches), l.Template.Name(), len(l.Also), launches[p.Name])
		}
	}
	gfx90a, err := runtime.ParseTarget("hip:gfx90a")
	if err != nil {
		t.Fatal(err)
	}
	cuda := func(c lower.Config) emuTarget { return emuTarget{d: CUDA, shims: cudaEmu.shims, config: c} }
	for _, c := range []struct {
		name string
		tg   emuTarget
	}{
		{"default", cuda(nil)},
		{"registers", cuda(lower.Config{"row-reduce.THREADS": 64, "row-reduce.BLOCK_ROWS": 1, "row-reduce.VEC": 1})},
		{"chunks", cuda(lower.Config{"row-reduce.THREADS": 64, "row-reduce.BLOCK_ROWS": 1, "row-reduce.VEC": 4})},
		{"staged", cuda(lower.Config{"row-reduce.THREADS": 64, "row-reduce.BLOCK_ROWS": 1, "row-reduce.STAGE": 1, "row-reduce.VEC": 1})},
		{"groups", cuda(lower.Config{"row-reduce.THREADS": 64, "row-reduce.BLOCK_ROWS": 8, "row-reduce.VEC": 1})},
		{"prefetch", cuda(lower.Config{"row-reduce.THREADS": 64, "row-reduce.BLOCK_ROWS": 1, "row-reduce.PREFETCH": 1, "row-reduce.VEC": 1})},
		{"wavefront 64, groups", emuTarget{d: hipDialect(t), lim: gfx90a.Limits(), shims: []string{"testdata/host/shim.h", "testdata/host/hip.h"},
			config: lower.Config{"row-reduce.THREADS": 256, "row-reduce.BLOCK_ROWS": 16, "row-reduce.VEC": 1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			emulateFileOn(t, gxx, "testdata/prologue.kg", c.tg)
		})
	}
}
