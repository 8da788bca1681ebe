package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"

	"kgen.dev/kgen/runtime"
)

func init() {
	register(&command{
		name: "devices", args: "[--json] [--nvcc PATH] [--measure]", short: "list the GPUs and toolchains found",
		long: `
Devices lists the NVIDIA GPUs that the driver reports (name, compute
capability, SMs, memory, clocks, driver) and the toolchains kgen can use:
nvcc (path, version and the targets it can compile for), python3 with the
versions of torch and triton if they import, and hipcc. Whatever is missing
is listed too, with the reason.

--measure also measures GPU 0's ceilings, as kgen bench does in each
run: the device-to-device copy bandwidth, and the dense rate of each of
its matrix units (f32 multiply-adds; bf16, f16 and tf32 tensor cores by
mma.sync, and by wgmma on sm_90) with kgen's probe kernels
(runtime/peak/peak.cu). It needs nvcc.

Nothing found is not an error: the exit status is 0 unless the command line
is wrong.`,
		setup: func(fs *flag.FlagSet) func([]string) int {
			asJSON := fs.Bool("json", false, "print the report as JSON")
			nvccFlag := fs.String("nvcc", "", "the nvcc to use (a file, or a CUDA install directory)")
			measure := fs.Bool("measure", false, "measure GPU 0's copy bandwidth and matrix peaks")
			return func(args []string) int {
				if len(args) > 0 {
					return usageError("devices", "takes no arguments")
				}
				ctx := context.Background()
				r := probeMachine(ctx, *nvccFlag)
				if *measure {
					r.Ceilings = measureCeilings(ctx, *nvccFlag)
				}
				if *asJSON {
					data, err := json.MarshalIndent(r, "", "  ")
					if err != nil {
						panic(err)
					}
					fmt.Fprintf(stdout, "%s\n", data)
					return exitOK
				}
				r.print(stdout)
				return exitOK
			}
		},
	})
}

// machineReport is what `kgen devices` found.
type machineReport struct {
	GPUs       []runtime.Device `json:"gpus"`
	GPUError   string           `json:"gpu_error,omitempty"`
	Toolchains []toolReport     `json:"toolchains"`
	Ceilings   *ceilings        `json:"ceilings,omitempty"` // with --measure
	Warnings   []string         `json:"warnings,omitempty"`
	// CompileCache is where nvcc's and hipcc's outputs are kept
	// (runtime.DefaultCompileCache) and what it holds.
	CompileCache cacheReport `json:"compile_cache"`
}

// cacheReport is the compile cache: its directory and what it holds, or
// off (KGEN_COMPILE_CACHE=off, or no cache directory on this machine).
type cacheReport struct {
	Off      bool   `json:"off,omitempty"`
	Dir      string `json:"dir,omitempty"`
	Compiles int    `json:"compiles"`
	Bytes    int64  `json:"bytes"`
	Error    string `json:"error,omitempty"`
}

func compileCacheReport() cacheReport {
	c := runtime.DefaultCompileCache()
	if c == nil {
		return cacheReport{Off: true}
	}
	r := cacheReport{Dir: c.Dir}
	var err error
	if r.Compiles, r.Bytes, err = c.Usage(); err != nil {
		r.Error = err.Error()
	}
	return r
}

// toolReport is one tool or Python module: found with a version, or not
// found with the reason.
type toolReport struct {
	Name    string   `json:"name"`
	Module  bool     `json:"python_module,omitempty"` // a module imported by python3, not a program
	Found   bool     `json:"found"`
	Path    string   `json:"path,omitempty"`
	Version string   `json:"version,omitempty"`
	Detail  string   `json:"detail,omitempty"`  // targets for nvcc, the CUDA build of torch
	Error   string   `json:"error,omitempty"`   // why it was not found
	Targets []string `json:"targets,omitempty"` // nvcc: the targets it compiles for
}

// probeMachine looks for GPUs and tools concurrently: importing torch can
// take seconds and should not wait for the rest.
func probeMachine(ctx context.Context, nvccFlag string) *machineReport {
	r := &machineReport{GPUs: []runtime.Device{}}
	var (
		wg      sync.WaitGroup
		nvcc    *runtime.NVCC
		nvccErr error
		nvccRep toolReport
		pyReps  []toolReport
		hipRep  toolReport
	)
	wg.Add(4)
	go func() {
		defer wg.Done()
		devs, err := runtime.Devices()
		r.GPUs = append(r.GPUs, devs...)
		if err != nil {
			r.GPUError = err.Error()
		}
	}()
	go func() {
		defer wg.Done()
		nvcc, nvccErr = runtime.FindNVCC(nvccFlag)
		nvccRep = nvccReport(nvcc, nvccErr)
	}()
	go func() {
		defer wg.Done()
		pyReps = pythonReports(ctx)
	}()
	go func() {
		defer wg.Done()
		h, err := runtime.FindHIPCC("")
		hipRep = toolReport{Name: "hipcc"}
		if err != nil {
			hipRep.Error = err.Error()
		} else {
			hipRep.Found, hipRep.Path, hipRep.Version = true, h.Path, h.Version
		}
	}()
	wg.Wait()
	r.Toolchains = append(append([]toolReport{nvccRep}, pyReps...), hipRep)
	r.CompileCache = compileCacheReport()
	if nvcc != nil {
		r.Warnings = compatibility(nvcc, r.GPUs)
	}
	return r
}

func nvccReport(n *runtime.NVCC, err error) toolReport {
	rep := toolReport{Name: "nvcc"}
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	rep.Found, rep.Path, rep.Version = true, n.Path, n.Version
	var not []string
	for _, t := range runtime.Targets() {
		if t.Backend != "cuda" {
			continue // nvcc's own targets only
		}
		if err := n.SupportsTarget(t); err != nil {
			f := t.Facts()
			not = append(not, fmt.Sprintf("%s (needs nvcc %d.%d)", t, f.MinNVCC[0], f.MinNVCC[1]))
			continue
		}
		rep.Targets = append(rep.Targets, t.String())
	}
	rep.Detail = "targets " + strings.Join(rep.Targets, " ")
	if len(rep.Targets) == 0 {
		rep.Detail = "no kgen target"
	}
	if len(not) > 0 {
		rep.Detail += "; not " + strings.Join(not, ", ")
	}
	return rep
}

func pythonReports(ctx context.Context) []toolReport {
	py, err := runtime.FindPython(ctx, "torch", "triton")
	if err != nil {
		return []toolReport{{Name: "python3", Error: err.Error()}}
	}
	reps := []toolReport{{Name: "python3", Found: true, Path: py.Path, Version: py.Version}}
	for _, m := range py.Modules {
		rep := toolReport{Name: m.Name, Module: true, Found: m.Error == "", Version: m.Version}
		if m.Error != "" {
			rep.Error = m.Error + " (python3 is " + py.Path + ")"
		}
		if m.CUDA != "" {
			rep.Detail = "built for CUDA " + m.CUDA
		}
		reps = append(reps, rep)
	}
	return reps
}

// compatibility warns about GPUs that the found nvcc cannot serve.
func compatibility(n *runtime.NVCC, gpus []runtime.Device) []string {
	var warns []string
	for _, d := range gpus {
		var major, minor int
		if _, err := fmt.Sscanf(d.CUDAVersion, "%d.%d", &major, &minor); err == nil && n.Major > major {
			warns = append(warns, fmt.Sprintf("GPU %d: its driver supports CUDA %s, older than nvcc %s: kernels built with this nvcc will not load; update the driver or use an older nvcc (--nvcc)",
				d.Index, d.CUDAVersion, n.Version))
		}
		if err := n.SupportsTarget(runtime.Target{Backend: "cuda", Arch: d.Arch()}); err != nil {
			if _, perr := runtime.ParseTarget("cuda:" + d.Arch()); perr != nil {
				warns = append(warns, fmt.Sprintf("GPU %d (%s) is %s, which kgen has no target for; valid targets: %s",
					d.Index, d.Name, d.Arch(), targetList()))
			} else {
				warns = append(warns, fmt.Sprintf("GPU %d (%s): %v", d.Index, d.Name, err))
			}
		}
	}
	return warns
}

func targetList() string {
	var s []string
	for _, t := range runtime.Targets() {
		s = append(s, t.String())
	}
	return strings.Join(s, ", ")
}

func (r *machineReport) print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "GPUs\n")
	for _, d := range r.GPUs {
		sms := "SMs unknown"
		if d.SMs > 0 {
			sms = fmt.Sprintf("%d SMs", d.SMs)
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s, %.1f GiB, SM clock %d MHz (max %d), memory clock %d MHz, driver %s (CUDA %s)\t%s\n",
			d.Index, d.Name, d.Arch(), sms, float64(d.MemoryBytes)/(1<<30), d.SMClockMHz, d.MaxSMClockMHz, d.MemClockMHz, d.Driver, d.CUDAVersion, d.UUID)
	}
	if r.GPUError != "" {
		what := "none"
		if len(r.GPUs) > 0 {
			what = "error"
		}
		fmt.Fprintf(tw, "  %s\t%s\n", what, r.GPUError)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nToolchains\n")
	for _, t := range r.Toolchains {
		if !t.Found {
			status := "not found"
			if t.Module {
				status = "not importable"
			}
			why := strings.TrimPrefix(t.Error, t.Name+" not found ")
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", t.Name, status, why)
			continue
		}
		line := "  " + t.Name + "\t" + t.Version + "\t" + t.Path
		if t.Detail != "" {
			if t.Path != "" {
				line += ", "
			}
			line += t.Detail
		}
		fmt.Fprintf(tw, "%s\n", line)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nCaches\n")
	switch c := r.CompileCache; {
	case c.Off:
		fmt.Fprintf(tw, "  compile\toff\t(%s=off, or no cache directory here)\n", runtime.CompileCacheEnv)
	case c.Error != "":
		fmt.Fprintf(tw, "  compile\t%s\t%s\n", c.Dir, c.Error)
	default:
		fmt.Fprintf(tw, "  compile\t%s\t%d compiles, %.1f MiB (%s sets the directory, or off)\n", c.Dir, c.Compiles, float64(c.Bytes)/(1<<20), runtime.CompileCacheEnv)
	}
	tw.Flush()
	if c := r.Ceilings; c != nil {
		fmt.Fprintf(w, "\nCeilings of GPU 0\n")
		if c.Error != "" {
			fmt.Fprintf(tw, "  error\t%s\n", c.Error)
		}
		if c.Note != "" {
			fmt.Fprintf(tw, "  note\t%s\n", c.Note)
		}
		if c.CopyGBps > 0 {
			fmt.Fprintf(tw, "  copy\t%.0f GB/s\tdevice-to-device, read + write\n", c.CopyGBps)
		}
		for _, p := range c.Peaks {
			fmt.Fprintf(tw, "  %s\t%.1f TFLOP/s\t%s, p20-p80 %.1f-%.1f, SM clock %d MHz\n", p.Unit, p.TFLOPs, p.Instr, p.Flops/p.Time.P80US/1e6, p.Flops/p.Time.P20US/1e6, p.Time.ClockMHz)
		}
		tw.Flush()
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "\nwarning: %s\n", warn)
	}
}

// ceilings are GPU 0's measured limits (kgen devices --measure).
type ceilings struct {
	CopyGBps float64        `json:"copy_gbps,omitempty"`
	Peaks    []runtime.Peak `json:"matrix_peaks,omitempty"`
	Note     string         `json:"note,omitempty"` // what the peaks lack
	Error    string         `json:"error,omitempty"`
}

// measureCeilings measures GPU 0's copy bandwidth and matrix peaks.
func measureCeilings(ctx context.Context, nvccFlag string) *ceilings {
	c := &ceilings{}
	var err error
	if c.CopyGBps, c.Peaks, c.Note, err = matrixPeaks(ctx, nvccFlag, true); err != nil {
		c.Error = err.Error()
	}
	return c
}
