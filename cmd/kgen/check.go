package main

import (
	"flag"
	"strings"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/frontend"
)

func init() {
	register(&command{
		name: "check", args: "[--shape NAME=V,...] [--json] FILE...", short: "check specs and report diagnostics",
		long: `
Check parses and type-checks each FILE and reports every error and warning,
sorted by position, as file:line:col: severity: message with the source line
and a marker under the problem. Instances are checked at their sizes: reads
without '??' that can fall out of range are errors.

With --shape, every kernel that has all the named dims is also checked at
those sizes (params may be given too: --shape M=64,N=32,stride=2).`,
		setup: func(fs *flag.FlagSet) func([]string) int {
			asJSON := fs.Bool("json", false, "print diagnostics as JSON lines")
			var shape shapeFlag
			fs.Var(&shape, "shape", "check kernels at these sizes: NAME=V,...")
			return func(args []string) int {
				if len(args) == 0 {
					return usageError("check", "no files given")
				}
				var diags diag.List
				files := loadFiles(args, &diags)
				if len(shape) > 0 {
					if code := checkShape(files, shape, &diags); code != exitOK {
						return code
					}
				}
				return report(&diags, *asJSON)
			}
		},
	})
}

// checkShape checks every kernel whose declared dims are all in shape at
// those sizes.
func checkShape(files []*loaded, shape shapeFlag, diags *diag.List) int {
	used := map[string]bool{}
	matched := false
	for _, l := range files {
		for _, k := range l.prog.Kernels {
			sub := shapeFlag{}
			covered := true
			for _, d := range k.DeclaredDims() {
				v, ok := shape[d.Name]
				covered = covered && ok
				sub[d.Name] = v
			}
			for _, p := range k.Params {
				if v, ok := shape[p.Name]; ok {
					sub[p.Name] = v
				}
			}
			if !covered {
				continue
			}
			matched = true
			for n := range sub {
				used[n] = true
			}
			env, err := bindShape(k, sub)
			if err != nil {
				return usageError("check", "--shape for kernel %s: %v", k.Name, err)
			}
			frontend.CheckBounds(k, env, diags, "--shape")
		}
	}
	if !matched {
		return usageError("check", "--shape %s gives all the dims of no kernel", shape.String())
	}
	var unused []string
	for n := range shape {
		if !used[n] {
			unused = append(unused, n)
		}
	}
	if len(unused) > 0 {
		return usageError("check", "--shape names %s, which no checked kernel has", strings.Join(unused, ", "))
	}
	return exitOK
}
