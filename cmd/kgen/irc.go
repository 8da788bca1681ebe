package main

import (
	"flag"
	"fmt"
	"strings"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
)

func init() {
	register(&command{
		name: "ir", args: "[--kernel K] [--after PASS] [--target T] [--config C] [--hash] [--canonical] FILE", short: "print the typed IR of specs",
		long: `
Ir prints the typed IR of each kernel of FILE after the checker and the
passes up to --after (passes: ` + strings.Join(passNames(), ", ") + `); --after lower
prints the backend-neutral plan instead: launches, templates, workspace (for --target,
with the templates that target adds, such as matmul-wgmma on cuda:sm_90a;
--config, with --target, replaces template parameters as kgen build's does, and the plan
shows what that build would run). Every conversion the
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
			target := fs.String("target", "", "plan for this target, e.g. cuda:sm_90a (default: templates every target runs)")
			var config configFlag
			fs.Var(&config, "config", "with --after lower: template parameters replacing the defaults, e.g. row-reduce.STAGE=1,row-reduce.CLUSTER=4")
			return func(args []string) int {
				if len(args) != 1 {
					return usageError("ir", "want exactly one FILE")
				}
				if config != nil && *after != "lower" {
					return usageError("ir", "--config changes plans: use it with --after lower")
				}
				if config != nil && *target == "" {
					// Parameters are checked against a target's limits
					// (threads, shared memory), as kgen build checks them.
					return usageError("ir", "--config needs --target: its parameters are checked against the target's limits")
				}
				var lim lower.Limits
				if *target != "" {
					tgt, err := kgrt.ParseTarget(*target)
					if err != nil {
						return usageError("ir", "%v", err)
					}
					lim = tgt.Limits()
				}
				if *after != "" && !ir.IsPass(*after) && *after != "lower" {
					return usageError("ir", "unknown pass %q (passes: %s)", *after, strings.Join(passNames(), ", "))
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
				if *after == "lower" {
					return printPlans(files, prog, *kernel, lim, lower.Config(config))
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

func passNames() []string { return append(ir.PassNames(), "lower") }

// printPlans prints the plan of each kernel (symbolic) and instance
// (specialized), or of the one --kernel names, with config's parameters
// in place of the defaults where set.
func printPlans(files []*loaded, prog *ir.Program, only string, lim lower.Limits, config lower.Config) int {
	type target struct {
		k    *ir.Kernel
		env  *ir.Env
		name string
	}
	var targets []target
	if only != "" {
		k, in, err := findKernel(files, only)
		if err != nil {
			fmt.Fprintf(stderr, "kgen ir: %v\n", err)
			return exitUser
		}
		if in != nil {
			targets = append(targets, target{k, in.Env, in.Name})
		} else {
			targets = append(targets, target{k, nil, k.Name})
		}
	} else {
		for _, k := range prog.Kernels {
			targets = append(targets, target{k, nil, k.Name})
		}
		for _, in := range prog.Instances {
			targets = append(targets, target{in.Kernel, in.Env, in.Name})
		}
	}
	for i, t := range targets {
		p, err := lower.Build(t.k, t.env, t.name, lim)
		if err != nil {
			panic(err)
		}
		if config != nil {
			if _, err := lower.Override(p, config, lim); err != nil {
				fmt.Fprintf(stderr, "kgen ir: %v\n", err)
				return exitUser
			}
		}
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		fmt.Fprint(stdout, lower.Print(p))
	}
	return exitOK
}
