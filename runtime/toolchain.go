// Package runtime is where kgen meets the machine: it finds and runs the
// external toolchains (nvcc, python, hipcc), detects GPUs, and runs compiled
// kernels. Every invocation of an external tool goes through this package,
// so that tools are found one way, fingerprinted for cache keys, run with
// bounded parallelism and have their output parsed into positioned messages.
package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// NVCC is a CUDA compiler found on this machine.
type NVCC struct {
	Path    string // absolute path of the nvcc that is run
	Version string // full version, e.g. "11.8.89"
	Major   int
	Minor   int
	// Cache, when set, keeps compiles' outputs for the next compile of
	// the same source (see CompileCache).
	Cache *CompileCache

	build    string // the "Build cuda_11.8.r11.8/compiler.31833905_0" line
	archOnce sync.Once
	archs    map[string]bool // virtual architectures from --list-gpu-arch ("compute_90a")
	archErr  error
}

// nvccFallbacks are the places nvcc is looked for after the flag, PATH and
// the CUDA_HOME/CUDA_PATH environment variables: NVIDIA's installer default
// and Debian's nvidia-cuda-toolkit package. Tests replace it.
var nvccFallbacks = []string{
	"/usr/local/cuda/bin/nvcc",
	"/usr/lib/nvidia-cuda-toolkit/bin/nvcc",
}

// nvccInstallHint says how to get nvcc; it ends every "not found" error.
const nvccInstallHint = `install the CUDA toolkit (Debian: add "non-free" to the Components of the Debian apt source, then apt-get install nvidia-cuda-toolkit; others: https://developer.nvidia.com/cuda-downloads), or point kgen at an nvcc with --nvcc PATH`

// toolTimeout bounds the quick queries of a tool (--version, --list-gpu-arch),
// so that a wedged tool cannot hang kgen.
const toolTimeout = 30 * time.Second

// FindNVCC finds nvcc and records its version. flagPath, the value of
// --nvcc, wins when it is set: it may name nvcc itself or a CUDA install
// directory (nvcc is then DIR/bin/nvcc), and it is an error if it holds no
// nvcc (kgen does not silently use another one). Otherwise nvcc is looked
// for on PATH, then in $CUDA_HOME/bin and $CUDA_PATH/bin, then in
// /usr/local/cuda/bin, then in /usr/lib/nvidia-cuda-toolkit/bin.
func FindNVCC(flagPath string) (*NVCC, error) {
	if flagPath != "" {
		path, err := nvccAt(flagPath)
		if err != nil {
			return nil, fmt.Errorf("--nvcc %s: %v", flagPath, err)
		}
		return probeNVCC(path)
	}
	var looked []string
	if p, err := exec.LookPath("nvcc"); err == nil {
		return probeNVCC(p)
	}
	looked = append(looked, "PATH")
	var candidates []string
	for _, env := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if dir := os.Getenv(env); dir != "" {
			candidates = append(candidates, filepath.Join(dir, "bin", "nvcc"))
		}
	}
	candidates = append(candidates, nvccFallbacks...)
	for _, c := range candidates {
		if isExecutable(c) {
			return probeNVCC(c)
		}
		looked = append(looked, c)
	}
	return nil, fmt.Errorf("nvcc not found (looked in %s); %s", strings.Join(looked, ", "), nvccInstallHint)
}

// nvccAt resolves the --nvcc flag: nvcc itself, or a directory holding
// bin/nvcc or nvcc.
func nvccAt(p string) (string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("no such file; %s", nvccInstallHint)
	}
	if st.IsDir() {
		for _, c := range []string{filepath.Join(p, "bin", "nvcc"), filepath.Join(p, "nvcc")} {
			if isExecutable(c) {
				return c, nil
			}
		}
		return "", fmt.Errorf("directory holds neither bin/nvcc nor nvcc")
	}
	if !isExecutable(p) {
		return "", fmt.Errorf("not an executable file")
	}
	return p, nil
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

var (
	nvccBuildRE   = regexp.MustCompile(`(?m)^Build (\S+)`)
	nvccVersionRE = regexp.MustCompile(`\bV(\d+)\.(\d+)\.(\d+)\b`)
	nvccReleaseRE = regexp.MustCompile(`release (\d+)\.(\d+)`)
)

// probeNVCC runs `nvcc --version` and parses it.
func probeNVCC(path string) (*NVCC, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	out, err := runTool(ctx, path, "--version")
	if err != nil {
		return nil, fmt.Errorf("%s --version: %v", path, err)
	}
	n := &NVCC{Path: path}
	if err := n.parseVersion(out.Stdout + out.Stderr); err != nil {
		return nil, fmt.Errorf("%s --version: %v", path, err)
	}
	return n, nil
}

// parseVersion reads the version from nvcc --version, whose last lines are
//
//	Cuda compilation tools, release 11.8, V11.8.89
//	Build cuda_11.8.r11.8/compiler.31833905_0
func (n *NVCC) parseVersion(text string) error {
	if m := nvccBuildRE.FindStringSubmatch(text); m != nil {
		n.build = m[1]
	}
	if m := nvccVersionRE.FindStringSubmatch(text); m != nil {
		n.Version = m[1] + "." + m[2] + "." + m[3]
		n.Major, _ = strconv.Atoi(m[1])
		n.Minor, _ = strconv.Atoi(m[2])
		return nil
	}
	if m := nvccReleaseRE.FindStringSubmatch(text); m != nil {
		n.Version = m[1] + "." + m[2]
		n.Major, _ = strconv.Atoi(m[1])
		n.Minor, _ = strconv.Atoi(m[2])
		return nil
	}
	return fmt.Errorf("no CUDA version in its output (is it nvcc?): %q", firstLine(text))
}

// AtLeast reports whether n's version is major.minor or newer.
func (n *NVCC) AtLeast(major, minor int) bool {
	return n.Major > major || n.Major == major && n.Minor >= minor
}

// Fingerprint identifies this nvcc for cache keys: its path, version,
// build, and the size and modification time of the file that is run, so
// that an upgrade in place still changes the key. (Debian's /usr/bin/nvcc
// is a wrapper script that never changes; the build line does.)
func (n *NVCC) Fingerprint() string {
	return fmt.Sprintf("nvcc %s build=%s %s", n.Version, n.build, fileIdentity(n.Path))
}

// fileIdentity is the file that path runs (symbolic links followed),
// with its size and modification time.
func fileIdentity(path string) string {
	real := path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		real = r
	}
	size, mtime := int64(-1), int64(-1)
	if st, err := os.Stat(real); err == nil {
		size, mtime = st.Size(), st.ModTime().UnixNano()
	}
	return fmt.Sprintf("%s size=%d mtime=%d", real, size, mtime)
}

// SupportsTarget reports, as a nil error, whether this nvcc can compile for
// t. It asks nvcc (--list-gpu-arch, once per NVCC) and falls back to the
// minimum version in the target table when nvcc is too old to answer.
func (n *NVCC) SupportsTarget(t Target) error {
	f, ok := targetFacts[t.Arch]
	if !ok || t.Backend != "cuda" {
		return fmt.Errorf("unknown target %q; valid targets: %s", t.Arch, validTargets())
	}
	n.archOnce.Do(n.listArchs)
	if n.archErr == nil {
		arch := strings.TrimPrefix(t.Arch, "sm_")
		if n.archs["compute_"+arch] {
			return nil
		}
		// --list-gpu-arch names only the base architectures (nvcc 13 lists
		// compute_90, not compute_90a): an arch-specific variant is there
		// when its base is and nvcc is new enough for it.
		if base, ok := strings.CutSuffix(arch, "a"); ok && n.archs["compute_"+base] && n.AtLeast(f.MinNVCC[0], f.MinNVCC[1]) {
			return nil
		}
		return fmt.Errorf("nvcc %s (%s) cannot compile for %s (%s needs nvcc %d.%d or newer; `nvcc --list-gpu-arch` lists %s)",
			n.Version, n.Path, t, t.Arch, f.MinNVCC[0], f.MinNVCC[1], n.archList())
	}
	if n.AtLeast(f.MinNVCC[0], f.MinNVCC[1]) {
		return nil
	}
	return fmt.Errorf("nvcc %s (%s) cannot compile for %s: it needs nvcc %d.%d or newer", n.Version, n.Path, t, f.MinNVCC[0], f.MinNVCC[1])
}

func (n *NVCC) listArchs() {
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	out, err := runTool(ctx, n.Path, "--list-gpu-arch")
	if err != nil {
		n.archErr = err
		return
	}
	n.archs = map[string]bool{}
	for _, f := range strings.Fields(out.Stdout) {
		if strings.HasPrefix(f, "compute_") {
			n.archs[f] = true
		}
	}
	if len(n.archs) == 0 {
		n.archErr = errors.New("--list-gpu-arch printed no architectures")
	}
}

func (n *NVCC) archList() string {
	var s []string
	for a := range n.archs {
		s = append(s, a)
	}
	sortArchs(s)
	return strings.Join(s, " ")
}

// toolOutput is what a tool printed.
type toolOutput struct {
	Stdout, Stderr string
}

// runTool runs a tool to completion and returns what it printed. The error
// says how it failed and carries the tail of its stderr.
func runTool(ctx context.Context, path string, args ...string) (toolOutput, error) {
	return runToolEnv(ctx, nil, path, args...)
}

// runToolEnv is runTool with env added to the environment.
func runToolEnv(ctx context.Context, env []string, path string, args ...string) (toolOutput, error) {
	cmd := exec.CommandContext(ctx, path, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second // grandchildren holding the pipes must not hang us
	err := cmd.Run()
	out := toolOutput{stdout.String(), stderr.String()}
	if err != nil {
		if ctx.Err() != nil {
			return out, fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		if tail := lastLines(out.Stderr, 5); tail != "" {
			return out, fmt.Errorf("%v: %s", err, tail)
		}
		return out, err
	}
	return out, nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
