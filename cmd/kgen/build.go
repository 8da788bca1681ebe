package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
)

func init() {
	register(&command{
		name: "build", args: "--target cuda:sm_90 -o DIR [--nvcc PATH] [--kernel K,...] [--emit-only] [-j N] [-v] FILE...",
		short: "generate and compile kernels for a target",
		long: `
Build plans every kernel of each FILE (with symbolic sizes) and every
instance (specialized to its sizes), emits CUDA C++ to DIR/STEM.cu, compiles
it with nvcc to DIR/STEM.ARCH.cubin and DIR/STEM.ARCH.ptx, and writes
DIR/STEM.manifest.json, which describes each entry point's arguments and
launches (docs/abi.md). Files are written whole or not at all. Compile jobs
run in parallel (-j, default: the number of CPUs). ptxas's resource report
is shown with -v as notes at each kernel; register spills are always
reported as warnings. Compiles are cached: building a source again at
the same path with the same compiler copies its outputs and replays its
notes (KGEN_COMPILE_CACHE: the cache's directory, or "off"). Targets: cuda:sm_80, cuda:sm_90, cuda:sm_90a; the
Triton targets triton:sm_80, triton:sm_90 (a Triton module DIR/STEM.py,
every kernel compiled with Triton's compiler, no GPU needed; --python);
and the HIP targets hip:gfx90a, hip:gfx908, hip:gfx1030 (HIP C++ in
DIR/STEM.hip, compiled with hipcc, found with --hipcc, then PATH, then
/opt/rocm/bin, to the code object DIR/STEM.ARCH.hsaco; resource usage
from its remarks) and hip:nvidia (the same HIP compiled by nvcc for
sm_90).

--kernel builds only the instances and kernels it names (a kernel's
symbolic plan and all its instances); files with none of them are not
written, and a name in none of the files is an error. --config applies to
every plan built, so --kernel also narrows what it must fit.

Instances take the configurations that kgen tune recorded in the tuning
database (--db): those tuned at the instance's exact shape, else at the
nearest shape recorded for the same kernel, target and templates where the
heuristic defaults there are the instance's own and the sizes differ by no
more than a factor of 4 in all, else the heuristic defaults; --config overrides them. The GPU whose records count is
--device, else this machine's GPU 0, else (no GPU, as on a build machine)
any GPU of the target, the one with most records for the kernel. -v says
which each instance took; the manifest's "tuning" field records it.`,
		setup: func(fs *flag.FlagSet) func([]string) int {
			target := fs.String("target", "", "the target, e.g. cuda:sm_90 (required)")
			out := fs.String("o", "", "output directory (required)")
			var tools toolPaths
			tools.register(fs)
			emitOnly := fs.Bool("emit-only", false, "write sources and manifests without compiling")
			jobs := fs.Int("j", runtime.NumCPU(), "compile jobs to run at once")
			verbose := fs.Bool("v", false, "show each kernel's registers and shared memory")
			asJSON := fs.Bool("json", false, "print diagnostics as JSON lines")
			kernels := fs.String("kernel", "", "comma-separated instances or kernels to build (default: all)")
			var config configFlag
			fs.Var(&config, "config", "template parameters replacing the defaults, e.g. BM=128,BK=64 or matmul-simt.BK=8")
			var tf tunedFlags
			tf.register(fs)
			return func(args []string) int {
				if len(args) == 0 {
					return usageError("build", "no files given")
				}
				if *target == "" || *out == "" {
					return usageError("build", "--target and -o are required")
				}
				tgt, err := kgrt.ParseTarget(*target)
				if err != nil {
					return usageError("build", "%v", err)
				}
				be, err := openBackend(tgt, tools, !*emitOnly)
				if err != nil {
					fmt.Fprintf(stderr, "kgen build: %v\n(use --emit-only to write sources without compiling)\n", err)
					return exitUser
				}
				var notes io.Writer
				if *verbose {
					notes = stderr
				}
				tuned, err := tf.open(notes)
				if err != nil {
					fmt.Fprintf(stderr, "kgen build: %v\n", err)
					return exitUser
				}
				b := &builder{target: tgt, be: be, out: *out, verbose: *verbose, config: lower.Config(config), tuned: tuned}
				if *kernels != "" {
					b.only = strings.Split(*kernels, ",")
				}
				var diags diag.List
				files := loadFiles(args, &diags)
				if diags.HasErrors() {
					return report(&diags, *asJSON)
				}
				if err := checkOnly(b.only, files); err != nil {
					return usageError("build", "%v", err)
				}
				if err := os.MkdirAll(*out, 0o755); err != nil {
					fmt.Fprintf(stderr, "kgen build: %v\n", err)
					return exitUser
				}
				units, err := b.emit(files)
				if err != nil {
					fmt.Fprintf(stderr, "kgen build: %v\n", err)
					return exitUser
				}
				if !*emitOnly {
					b.be.compile(context.Background(), units, *jobs, b.verbose, &diags)
				}
				for _, u := range units {
					if err := writeJSON(filepath.Join(*out, u.stem+".manifest.json"), u.manifest); err != nil {
						fmt.Fprintf(stderr, "kgen build: %v\n", err)
						return exitUser
					}
				}
				return report(&diags, *asJSON)
			}
		},
	})
}

type builder struct {
	target  kgrt.Target
	be      backend
	out     string
	verbose bool
	config  lower.Config // --config: overrides of template defaults
	// tuned, when set, gives instances the tuning database's
	// configurations (before --config's overrides).
	tuned *tunedConfigs
	// only, when set, limits the build to these instances and kernels (a
	// kernel's symbolic plan and its instances), and the reference
	// kernels of their kernels: kgen bench and kgen test --kernel.
	only []string
	// scratch: out is a directory that goes away (unit.scratch).
	scratch bool
}

// unit is one source file's output.
type unit struct {
	file     *loaded
	stem     string
	source   string // path of the emitted source
	plans    []*lower.Plan
	manifest *lower.Manifest
	binary   string // what the runner loads, set once compiled
	// scratch: source is in a directory that goes away (kgen test's,
	// bench's, tune's), so its compile goes through the compile cache's
	// copy of it (kgrt.CompileJob.Scratch).
	scratch bool
}

// emit plans and writes the source of every file.
func (b *builder) emit(files []*loaded) ([]*unit, error) {
	var units []*unit
	stems := map[string]string{}
	for _, l := range files {
		if !wantsFile(b.only, l) {
			continue
		}
		stem := strings.TrimSuffix(filepath.Base(l.path), filepath.Ext(l.path))
		if prev, ok := stems[stem]; ok {
			return nil, fmt.Errorf("%s and %s would both write %s%s; build them into different directories", prev, l.path, stem, b.be.ext())
		}
		stems[stem] = l.path
		u := &unit{file: l, stem: stem, source: filepath.Join(b.out, stem+b.be.ext()), scratch: b.scratch}
		u.manifest = &lower.Manifest{Kgen: Version, Target: b.target.String(), Source: stem + b.be.ext(), Kernels: []lower.ManifestKernel{}}
		symbols := map[string]string{}
		add := func(k *ir.Kernel, env *ir.Env, name string) error {
			p, err := lower.Build(k, env, name, b.target.Limits())
			if err != nil {
				return err
			}
			tuning := ""
			if b.tuned != nil && env != nil {
				tuning = b.tuned.apply(p, k, env, b.target)
			}
			if b.config != nil {
				if _, err := lower.Override(p, b.config, b.target.Limits()); err != nil {
					return err
				}
			}
			for _, launch := range p.Launches {
				if other, dup := symbols[launch.Name]; dup {
					return fmt.Errorf("%s: entry point %s of %s clashes with one of %s; rename one of them", l.path, launch.Name, name, other)
				}
				symbols[launch.Name] = name
			}
			u.plans = append(u.plans, p)
			mk := lower.Describe(p, ir.Hash(k))
			mk.Tuning = tuning
			u.manifest.Kernels = append(u.manifest.Kernels, mk)
			return nil
		}
		for _, k := range l.prog.Kernels {
			if b.only != nil && !slices.Contains(b.only, k.Name) {
				continue
			}
			if err := add(k, nil, k.Name); err != nil {
				return nil, err
			}
		}
		for _, in := range l.prog.Instances {
			if !b.wants(in) {
				continue
			}
			if err := add(in.Kernel, in.Env, in.Name); err != nil {
				return nil, err
			}
		}
		if err := writeFileAtomic(u.source, b.be.emit(u.plans), 0o644); err != nil {
			return nil, err
		}
		units = append(units, u)
	}
	return units, nil
}

// wants reports whether the build includes instance in: every instance
// without only, else those it names and those of the kernels it names.
func (b *builder) wants(in *ir.Instance) bool {
	return b.only == nil || slices.Contains(b.only, in.Name) || slices.Contains(b.only, in.Kernel.Name)
}

// wantsFile reports whether a build limited to the names in only (all
// where it is nil) writes anything for file l: whether l declares one of
// them. (emit and emitReference skip the same files, so that their units
// pair up.)
func wantsFile(only []string, l *loaded) bool {
	return only == nil || slices.ContainsFunc(only, l.declares)
}

// checkOnly returns an error for the first name in only that no file of
// files declares, before anything is written.
func checkOnly(only []string, files []*loaded) error {
	for _, w := range only {
		if slices.ContainsFunc(files, func(l *loaded) bool { return l.declares(w) }) {
			continue
		}
		var names []string
		for _, l := range files {
			for _, k := range l.prog.Kernels {
				names = append(names, k.Name)
			}
			for _, in := range l.prog.Instances {
				names = append(names, in.Name)
			}
		}
		return fmt.Errorf("--kernel: no instance or kernel %q in the files given%s", w, closest(w, names))
	}
	return nil
}

// emitReference writes, for each file, STEM__ref with the reference
// plan of every kernel (generic template only, runtime sizes), the oracle
// kgen test uses at sizes too large for the interpreter, and its rounding
// plan (lower.BuildRounding), which sizes the tolerances there.
func (b *builder) emitReference(files []*loaded) ([]*unit, error) {
	var units []*unit
	for _, l := range files {
		if !wantsFile(b.only, l) {
			continue
		}
		stem := strings.TrimSuffix(filepath.Base(l.path), filepath.Ext(l.path)) + "__ref"
		u := &unit{file: l, stem: stem, source: filepath.Join(b.out, stem+b.be.ext()), scratch: b.scratch}
		u.manifest = &lower.Manifest{Kgen: Version, Target: b.target.String(), Source: stem + b.be.ext(), Kernels: []lower.ManifestKernel{}}
		for _, k := range l.prog.Kernels {
			if b.only != nil && !slices.Contains(b.only, k.Name) && !slices.ContainsFunc(l.prog.Instances, func(in *ir.Instance) bool {
				return in.Kernel == k && b.wants(in)
			}) {
				continue
			}
			p, err := lower.BuildReferenceFor(k, k.Name+"__ref", b.target.Limits())
			if err != nil {
				return nil, err
			}
			r, err := lower.BuildRounding(k, k.Name+lower.RoundingSuffix, b.target.Limits())
			if err != nil {
				return nil, err
			}
			u.plans = append(u.plans, p, r)
		}
		if err := writeFileAtomic(u.source, b.be.emit(u.plans), 0o644); err != nil {
			return nil, err
		}
		units = append(units, u)
	}
	return units, nil
}

// references finds kernel k's reference plan and its rounding plan among
// plans (a reference unit's).
func references(plans []*lower.Plan, k *ir.Kernel) (ref, rounding *lower.Plan) {
	for _, p := range plans {
		switch {
		case p.Source != k:
		case strings.HasSuffix(p.Name, lower.RoundingSuffix):
			rounding = p
		default:
			ref = p
		}
	}
	return ref, rounding
}

// spanOf finds the kernel or instance an entry point belongs to.
func (u *unit) spanOf(symbol string) diag.Span {
	for _, p := range u.plans {
		for _, l := range p.Launches {
			if l.Name == symbol {
				if in := u.file.prog.Instance(p.Name); in != nil {
					return in.Span
				}
				return l.Stmt.Span
			}
		}
	}
	return diag.Span{}
}
