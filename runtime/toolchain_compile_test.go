package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// axpySource is a tiny kernel with a known static shared memory size.
const axpySource = `extern "C" __global__ void kgen_axpy(const float* __restrict__ x, float* __restrict__ y, float a, int n) {
  __shared__ float tile[SCALE_TILE];  // 64 floats: 256 bytes of static shared memory
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x % SCALE_TILE] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (i < n) y[i] = a * tile[(threadIdx.x + 1) % SCALE_TILE] + y[i];
}
`

func writeSource(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCompileReal(t *testing.T) {
	n := requireNVCC(t)
	t.Logf("nvcc %s at %s", n.Version, n.Path)
	dir := t.TempDir()
	src := writeSource(t, dir, "axpy.cu", axpySource)
	for _, arch := range []string{"sm_80", "sm_90", "sm_90a"} {
		t.Run(arch, func(t *testing.T) {
			tg := Target{Backend: "cuda", Arch: arch}
			if err := n.SupportsTarget(tg); err != nil {
				if arch != "sm_90a" {
					t.Fatalf("nvcc %s cannot compile for %s: %v", n.Version, arch, err)
				}
				// nvcc 11.8 (CI's) predates what kgen's sm_90a code needs
				// (12.3, tensormap.replace): the error must say so.
				if n.AtLeast(12, 3) || !strings.Contains(err.Error(), "12.3") {
					t.Fatalf("nvcc %s: unexpected: %v", n.Version, err)
				}
				_, cerr := n.Compile(context.Background(), CompileJob{Source: src, Target: tg, OutDir: dir, Defines: []string{"SCALE_TILE=64"}})
				if cerr == nil || !strings.Contains(cerr.Error(), "sm_90a") {
					t.Fatalf("Compile for sm_90a with nvcc %s: %v", n.Version, cerr)
				}
				return
			}
			out := filepath.Join(dir, "out")
			res, err := n.Compile(context.Background(), CompileJob{Source: src, Target: tg, OutDir: out, Defines: []string{"SCALE_TILE=64"}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Cubin != filepath.Join(out, "axpy."+arch+".cubin") || res.PTX != filepath.Join(out, "axpy."+arch+".ptx") {
				t.Errorf("outputs %s, %s", res.Cubin, res.PTX)
			}
			cubin, err := os.ReadFile(res.Cubin)
			if err != nil || !bytes.HasPrefix(cubin, []byte("\x7fELF")) {
				t.Errorf("cubin %s is not an ELF file (%v)", res.Cubin, err)
			}
			ptx, err := os.ReadFile(res.PTX)
			if err != nil || !bytes.Contains(ptx, []byte(".target "+arch)) || !bytes.Contains(ptx, []byte(".entry kgen_axpy")) || !bytes.Contains(ptx, []byte(".loc")) {
				t.Errorf("PTX %s lacks the target, the entry or line info (%v)", res.PTX, err)
			}
			if len(res.Resources) != 1 || res.Resources[0].Name != "kgen_axpy" {
				t.Fatalf("resources %+v, want one report for kgen_axpy; log:\n%s", res.Resources, res.Log)
			}
			r := res.Resources[0]
			if r.Registers <= 0 || r.Registers > 255 || r.SharedBytes != 64*4 || r.SpillStores != 0 {
				t.Errorf("resources %+v: want 1..255 registers, 256 bytes of shared memory, no spills", r)
			}
			leftovers, _ := filepath.Glob(filepath.Join(out, ".*"))
			if len(leftovers) > 0 {
				t.Errorf("temporary files left: %v", leftovers)
			}
		})
	}
}

func TestCompileErrorReal(t *testing.T) {
	n := requireNVCC(t)
	dir := t.TempDir()
	src := writeSource(t, dir, "bad.cu", "extern \"C\" __global__ void k(float* y) {\n  int unused;\n  y[0] = undefined_x;\n}\n")
	out := filepath.Join(dir, "out")
	res, err := n.Compile(context.Background(), CompileJob{Source: src, Target: Target{Backend: "cuda", Arch: "sm_80"}, OutDir: out})
	var ce *NVCCError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, %v; want an *NVCCError", res, err)
	}
	if len(ce.Messages) == 0 {
		t.Fatalf("no messages parsed from:\n%s", ce.Log)
	}
	m := ce.Messages[0]
	if filepath.Base(m.File) != "bad.cu" || m.Line != 3 || m.Severity != "error" || !strings.Contains(m.Text, `identifier "undefined_x" is undefined`) {
		t.Errorf("first message %+v", m)
	}
	if !strings.Contains(err.Error(), "bad.cu:3: error: identifier \"undefined_x\" is undefined") {
		t.Errorf("error text:\n%v", err)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 0 {
		t.Errorf("a failed compile left %v in the output directory", entries)
	}
}

// fakeCompiler is a shell nvcc for CompileAll: it writes its -o output,
// prints a one-kernel ptxas report for -cubin, and records how many
// copies of it run at once in dir/max.
func fakeCompiler(t *testing.T, dir string) *NVCC {
	t.Helper()
	body := `
out=""; prev=""
for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
case " $* " in *FAILME*) echo "bad.cu(7): error: planted" >&2; exit 2;; esac
running="` + dir + `/running"; mkdir -p "$running"
touch "$running/$$"
n=$(ls "$running" | wc -l)
echo "$n" >> "` + dir + `/counts"
sleep 0.2
rm "$running/$$"
case " $* " in
*" -cubin "*) printf '\177ELF' > "$out"
	echo "ptxas info    : Compiling entry function 'k' for 'sm_80'" >&2
	echo "ptxas info    : Used 7 registers, 360 bytes cmem[0]" >&2;;
*) echo ".target sm_80" > "$out";;
esac
`
	p := fakeNVCC(t, dir, "bin/nvcc", "12.4.131", "echo compute_80 compute_90 compute_90a", body)
	isolate(t)
	n, err := FindNVCC(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func maxCount(t *testing.T, dir string) int {
	data, _ := os.ReadFile(filepath.Join(dir, "counts"))
	m := 0
	for _, f := range strings.Fields(string(data)) {
		v, _ := strconv.Atoi(f)
		m = max(m, v)
	}
	return m
}

func TestCompileAllParallelism(t *testing.T) {
	dir := t.TempDir()
	n := fakeCompiler(t, dir)
	var jobs []CompileJob
	for i := range 8 {
		src := writeSource(t, dir, fmt.Sprintf("k%d.cu", i), "// kernel\n")
		job := CompileJob{Source: src, Target: Target{Backend: "cuda", Arch: "sm_80"}, OutDir: filepath.Join(dir, "out")}
		if i == 5 {
			job.Defines = []string{"FAILME"}
		}
		jobs = append(jobs, job)
	}
	start := time.Now()
	results, errs := n.CompileAll(context.Background(), jobs, 3)
	elapsed := time.Since(start)
	// Exactly 3 is expected; 2 is tolerated on a loaded machine where a
	// process can finish its 0.2 s before the third has started.
	if got := maxCount(t, dir); got > 3 || got < 2 {
		t.Errorf("at most %d compiles ran at once, want 3 (the semaphore's size)", got)
	}
	// 8 jobs of two 0.2 s steps, 3 at a time: at least 3 rounds.
	if elapsed < 1100*time.Millisecond {
		t.Errorf("took %v: the jobs cannot have been limited to 3 at a time", elapsed)
	}
	for i := range jobs {
		if i == 5 {
			var ce *NVCCError
			if results[i] != nil || !errors.As(errs[i], &ce) || len(ce.Messages) != 1 || ce.Messages[0].Line != 7 {
				t.Errorf("job 5: %v, %v", results[i], errs[i])
			}
			continue
		}
		if errs[i] != nil || results[i] == nil {
			t.Errorf("job %d: %v", i, errs[i])
			continue
		}
		want := fmt.Sprintf("k%d.sm_80.cubin", i)
		if filepath.Base(results[i].Cubin) != want || len(results[i].Resources) != 1 || results[i].Resources[0].Registers != 7 {
			t.Errorf("job %d: result %+v does not belong to it", i, results[i])
		}
	}
}

func TestCompileAllDefaultAndCancel(t *testing.T) {
	dir := t.TempDir()
	n := fakeCompiler(t, dir)
	src := writeSource(t, dir, "k.cu", "// kernel\n")
	jobs := []CompileJob{
		{Source: src, Target: Target{Backend: "cuda", Arch: "sm_80"}, OutDir: filepath.Join(dir, "a")},
		{Source: src, Target: Target{Backend: "cuda", Arch: "sm_90"}, OutDir: filepath.Join(dir, "a")},
	}
	if _, errs := n.CompileAll(context.Background(), jobs, 0); errs[0] != nil || errs[1] != nil {
		t.Fatalf("parallel 0 (NumCPU): %v", errs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	results, errs := n.CompileAll(ctx, jobs, 1)
	for i := range jobs {
		if results[i] != nil || !errors.Is(errs[i], context.Canceled) {
			t.Errorf("cancelled job %d: %v, %v", i, results[i], errs[i])
		}
	}
}

// An exit status of 0 does not make a compile successful.
func TestCompileNoOutput(t *testing.T) {
	dir := t.TempDir()
	p := fakeNVCC(t, dir, "bin/nvcc", "12.4.131", "echo compute_80", "exit 0")
	isolate(t)
	n, err := FindNVCC(p)
	if err != nil {
		t.Fatal(err)
	}
	src := writeSource(t, dir, "k.cu", "// kernel\n")
	res, err := n.Compile(context.Background(), CompileJob{Source: src, Target: Target{Backend: "cuda", Arch: "sm_80"}, OutDir: filepath.Join(dir, "out")})
	if err == nil || !strings.Contains(err.Error(), "wrote no .ptx") {
		t.Fatalf("got %v, %v; want a 'wrote no .ptx' error", res, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "k.sm_80.ptx")); !os.IsNotExist(err) {
		t.Errorf("an empty output was renamed into place: %v", err)
	}
}

func TestCompileBadJob(t *testing.T) {
	n := &NVCC{Path: "/nonexistent/nvcc", Version: "12.4.131", Major: 12, Minor: 4}
	_, err := n.Compile(context.Background(), CompileJob{Source: "x.cu", Target: Target{Backend: "cuda", Arch: "sm_75"}, OutDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "valid targets") {
		t.Errorf("bad target: %v", err)
	}
}
