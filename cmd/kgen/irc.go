package main

import (
	"flag"
	"fmt"
	"strings"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/ir"
)

func init() {
	register(&command{
		name: "ir", args: "[--kernel K] [--after PASS] [--hash] [--canonical] FILE", short: "print the typed IR of specs",
		long: `
Ir prints the typed IR of each kernel of FILE after the checker and the
passes up to --after (passes: ` + strings.Join(ir.PassNames(), ", ") + `). Every conversion the
language implies is shown as a cast, every index with its range, every
reduction with its accumulation type, and each statement's classification as
a comment. --hash prints each kernel's canonical content hash instead, and
--canonical the text that the hash digests.`,
		setup: func(fs *flag.FlagSet) func([]string) int {
			kernel := fs.String("kernel", "", "print only this kernel (or the kernel of this instance)")
			after := fs.String("after", "", "stop after this pass (default: all passes)")
			hash := fs.Bool("hash", false, "print the canonical content hash of each kernel")
			canonical := fs.Bool("canonical", false, "print the canonical text that --hash digests")
			asJSON := fs.Bool("json", false, "print diagnostics as JSON lines")
			return func(args []string) int {
				if len(args) != 1 {
					return usageError("ir", "want exactly one FILE")
				}
				if *after != "" && !ir.IsPass(*after) {
					return usageError("ir", "unknown pass %q (passes: %s)", *after, strings.Join(ir.PassNames(), ", "))
				}
				var diags diag.List
				files := loadFiles(args, &diags)
				if code := report(&diags, *asJSON); code != exitOK {
					return code
				}
				prog := files[0].prog
				kernels := prog.Kernels
				if *kernel != "" {
					k, _, err := findKernel(files, *kernel)
					if err != nil {
						fmt.Fprintf(stderr, "kgen ir: %v\n", err)
						return exitUser
					}
					kernels = []*ir.Kernel{k}
				}
				for i, k := range kernels {
					if err := ir.RunPasses(k, *after); err != nil {
						panic(err)
					}
					switch {
					case *hash:
						fmt.Fprintf(stdout, "%s  %s\n", ir.Hash(k), k.Name)
					case *canonical:
						fmt.Fprint(stdout, ir.CanonicalText(k))
					default:
						if i > 0 {
							fmt.Fprintln(stdout)
						}
						fmt.Fprint(stdout, ir.Print(k))
					}
				}
				if *kernel == "" && !*hash && !*canonical && len(prog.Instances) > 0 {
					fmt.Fprintln(stdout)
					for _, in := range prog.Instances {
						fmt.Fprintf(stdout, "instance %s = %s<%s>\n", in.Name, in.Kernel.Name, in.Env)
					}
				}
				return exitOK
			}
		},
	})
}
