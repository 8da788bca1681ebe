package main

import (
	"flag"
	"fmt"

	"kgen.dev/kgen/backends/torch"
	"kgen.dev/kgen/diag"
)

func init() {
	register(&command{
		name: "torch", args: "[-o FILE.py] FILE", short: "write the PyTorch program equal to each kernel",
		long: `
Torch writes a Python module with, for each kernel of FILE, a function that
computes the same outputs with PyTorch: inputs in declaration order, dims
and params as keyword arguments, the outputs returned as a tuple. Sums of
products become torch.einsum, reads at computed indices (convolutions,
padding) index tensors with index tensors, everything else is elementwise
torch operations broadcast over the statement's indices. kgen bench times
these programs as the PyTorch baselines and checks kgen's kernels against
them at full size on the GPU.`,
		setup: func(fs *flag.FlagSet) func([]string) int {
			out := fs.String("o", "", "write the module to this file (default: standard output)")
			return func(args []string) int {
				if len(args) != 1 {
					return usageError("torch", "want exactly one FILE")
				}
				var diags diag.List
				files := loadFiles(args, &diags)
				if code := report(&diags, false); code != exitOK {
					return code
				}
				src := torch.Emit(files[0].prog.Kernels)
				if *out == "" {
					fmt.Fprint(stdout, src)
					return exitOK
				}
				if err := writeFileAtomic(*out, []byte(src), 0o644); err != nil {
					fmt.Fprintf(stderr, "kgen torch: %v\n", err)
					return exitUser
				}
				return exitOK
			}
		},
	})
}
