package testsuite

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestInstanceLists: memory-bound.txt and other-instances.txt, which the
// GPU scripts take as KERNELS, split the examples' instances between them,
// each instance in exactly one, so that a run over both covers every
// example and a renamed instance is noticed here, not on the GPU.
func TestInstanceLists(t *testing.T) {
	paths, _ := filepath.Glob("../examples/*.kg")
	re := regexp.MustCompile(`(?m)^instance ([A-Za-z0-9_]+)`)
	var all []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			all = append(all, m[1])
		}
	}
	if len(all) == 0 {
		t.Fatal("no instances in examples/")
	}
	seen := map[string]string{}
	for _, list := range []string{"memory-bound.txt", "other-instances.txt"} {
		b, err := os.ReadFile(list)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			for _, name := range strings.Split(line, ",") {
				if !slices.Contains(all, name) {
					t.Errorf("%s names %q, no instance of examples/", list, name)
				}
				if prev, ok := seen[name]; ok {
					t.Errorf("%q is in %s and %s", name, prev, list)
				}
				seen[name] = list
			}
		}
	}
	for _, name := range all {
		if _, ok := seen[name]; !ok {
			t.Errorf("instance %s is in neither list", name)
		}
	}
}
