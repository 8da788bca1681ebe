package lower_test

import (
	"os"
	"path/filepath"
	"testing"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/lower"
	"kgen.dev/kgen/runtime"
)

// TestDefaultsSpanSpace: every launch's heuristic default gives a value
// for every parameter of its template's space, on every kind of target,
// for the examples and the benchmark suite. kgen tune measures the
// default first, as the baseline its winner is compared with, and finds
// it in the space by its values: a default that leaves a parameter to
// the template's implicit value is no point of the space, and the tuner
// would report no default at all.
func TestDefaultsSpanSpace(t *testing.T) {
	paths, _ := filepath.Glob("../examples/*.kg")
	suite, _ := filepath.Glob("../testsuite/kernelbench/*.kg")
	paths = append(paths, suite...)
	for _, target := range []string{"cuda:sm_80", "cuda:sm_90", "cuda:sm_90a", "triton:sm_90", "hip:gfx90a", "hip:gfx1030"} {
		tg, err := runtime.ParseTarget(target)
		if err != nil {
			t.Fatal(err)
		}
		lim := tg.Limits()
		missing := map[string]bool{}
		for _, path := range paths {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			prog, diags := frontend.CheckSource(path, string(src))
			if diags.HasErrors() {
				t.Fatalf("%s: %s", path, diags.Diags[0].Msg)
			}
			for _, in := range prog.Instances {
				p, err := lower.Build(in.Kernel, in.Env, in.Name, lim)
				if err != nil {
					t.Fatalf("%s: %v", in.Name, err)
				}
				for _, l := range p.Launches {
					for name := range l.Template.Space() {
						if _, ok := l.Config[name]; !ok {
							key := target + " " + l.Template.Name() + "." + name
							if !missing[key] {
								missing[key] = true
								t.Errorf("%s: %s's default %v has no %s (first at %s)", target, l.Template.Name(), l.Config, name, in.Name)
							}
						}
					}
				}
			}
		}
	}
}
