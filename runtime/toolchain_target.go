package runtime

import (
	"fmt"
	"kgen.dev/kgen/lower"
	"sort"
	"strconv"
	"strings"
)

// Target is a backend and a GPU architecture that kernels are generated
// and compiled for. The zero Target is invalid; make one with ParseTarget.
type Target struct {
	Backend string // "cuda", "hip"
	Arch    string // "sm_80", "sm_90", "sm_90a"; "gfx90a", "nvidia"
}

// String returns the target as written on the command line: "cuda:sm_90".
func (t Target) String() string { return t.Backend + ":" + t.Arch }

// Facts returns what is known about t's architecture without a device.
func (t Target) Facts() TargetFacts { return backendArchs[t.Backend][t.Arch] }

// Limits are t's bounds on a launch's configuration and the instructions
// its templates may use, as lowering takes them.
func (t Target) Limits() lower.Limits {
	f := t.Facts()
	return lower.Limits{
		MaxThreads: int64(f.MaxThreadsPerBlock), MaxSmem: int64(f.MaxSharedPerBlock),
		ThreadsPerSM: int64(f.MaxThreadsPerSM), SmemPerSM: int64(f.SharedPerSM),
		Wgmma: f.WGMMA, Clusters: f.Clusters, Tiles: f.Tiles,
		WarpSize: int64(f.WarpSize), NoMMASync: !f.MMASync, MFMA: f.MFMA,
	}
}

// TargetFacts are the per-architecture limits that templates are checked
// against. They hold for every GPU of the architecture; what varies by
// product (SM count, clocks, memory size, L2 size) is found on the device
// at run time (Devices) and is not here.
type TargetFacts struct {
	Arch               string
	CCMajor            int // compute capability
	CCMinor            int
	MinNVCC            [2]int // the oldest nvcc (major, minor) that compiles for it
	WarpSize           int
	MaxThreadsPerBlock int
	MaxThreadsPerSM    int
	MaxBlocksPerSM     int
	// Shared memory in bytes. A block gets StaticSharedPerBlock without
	// asking; up to MaxSharedPerBlock it must opt in with
	// cudaFuncSetAttribute(MaxDynamicSharedMemorySize).
	StaticSharedPerBlock  int
	MaxSharedPerBlock     int
	SharedPerSM           int
	RegistersPerSM        int // 32-bit registers
	MaxRegistersPerThread int
	// Matrix and copy instructions that templates may use.
	MMASync  bool // mma.sync (f16, bf16, tf32 tensor cores)
	CpAsync  bool // cp.async global-to-shared copies
	TMA      bool // cp.async.bulk.tensor (Tensor Memory Accelerator)
	WGMMA    bool // wgmma.mma_async: only in the arch-specific sm_90a
	Clusters bool // thread block clusters, distributed shared memory
	MFMA     bool // AMD matrix cores with f16 and bf16 (bf16_1k) operands
	// Tiles: the backend programs blocks of tensors (Triton), planned
	// with the tile-level templates (lower.Limits.Tiles).
	Tiles bool
}

// targetFacts is the one table of per-target facts (CUDA C Programming
// Guide, "Technical Specifications per Compute Capability"; the shared
// memory figures are the opt-in maxima, 1 KiB per block below the per-SM
// carve-out, which the CUDA runtime reserves).
var targetFacts = map[string]TargetFacts{
	"sm_80": {
		Arch: "sm_80", CCMajor: 8, CCMinor: 0, MinNVCC: [2]int{11, 0},
		WarpSize: 32, MaxThreadsPerBlock: 1024, MaxThreadsPerSM: 2048, MaxBlocksPerSM: 32,
		StaticSharedPerBlock: 48 << 10, MaxSharedPerBlock: 163 << 10, SharedPerSM: 164 << 10,
		RegistersPerSM: 64 << 10, MaxRegistersPerThread: 255,
		MMASync: true, CpAsync: true,
	},
	"sm_90": {
		Arch: "sm_90", CCMajor: 9, CCMinor: 0, MinNVCC: [2]int{11, 8},
		WarpSize: 32, MaxThreadsPerBlock: 1024, MaxThreadsPerSM: 2048, MaxBlocksPerSM: 32,
		StaticSharedPerBlock: 48 << 10, MaxSharedPerBlock: 227 << 10, SharedPerSM: 228 << 10,
		RegistersPerSM: 64 << 10, MaxRegistersPerThread: 255,
		MMASync: true, CpAsync: true, TMA: true, Clusters: true,
	},
	"sm_90a": {
		Arch: "sm_90a", CCMajor: 9, CCMinor: 0, MinNVCC: [2]int{12, 3}, // tensormap.replace (PTX ISA 8.3), for matmul-wgmma's TMA
		WarpSize: 32, MaxThreadsPerBlock: 1024, MaxThreadsPerSM: 2048, MaxBlocksPerSM: 32,
		StaticSharedPerBlock: 48 << 10, MaxSharedPerBlock: 227 << 10, SharedPerSM: 228 << 10,
		RegistersPerSM: 64 << 10, MaxRegistersPerThread: 255,
		MMASync: true, CpAsync: true, TMA: true, Clusters: true, WGMMA: true,
	},
}

// backendArchs is, for each backend, the architectures it generates code
// for and their facts. A backend's file adds its entry.
var backendArchs = map[string]map[string]TargetFacts{"cuda": targetFacts}

// Targets returns every target kgen knows, by backend, then by
// architecture ("cuda:sm_80", ...).
func Targets() []Target {
	var ts []Target
	for _, b := range sortedKeys(backendArchs) {
		var archs []string
		for a := range backendArchs[b] {
			archs = append(archs, a)
		}
		sortArchs(archs)
		for _, a := range archs {
			ts = append(ts, Target{Backend: b, Arch: a})
		}
	}
	return ts
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func validTargets() string {
	var s []string
	for _, t := range Targets() {
		s = append(s, t.String())
	}
	return strings.Join(s, ", ")
}

// ParseTarget parses a target as written on the command line,
// "cuda:sm_90". Errors list the valid targets.
func ParseTarget(s string) (Target, error) {
	backend, arch, ok := strings.Cut(s, ":")
	if !ok {
		for _, b := range sortedKeys(backendArchs) {
			if _, known := backendArchs[b][s]; known {
				return Target{}, fmt.Errorf("target %q needs its backend: write %q", s, b+":"+s)
			}
		}
		return Target{}, fmt.Errorf("invalid target %q: write BACKEND:ARCH; valid targets: %s", s, validTargets())
	}
	archs, known := backendArchs[backend]
	if !known {
		return Target{}, fmt.Errorf("unsupported backend %q in target %q; valid targets: %s", backend, s, validTargets())
	}
	if _, known := archs[arch]; !known {
		msg := fmt.Sprintf("unknown %s architecture %q in target %q", backend, arch, s)
		if strings.HasPrefix(arch, "compute_") {
			msg += " (name the real architecture, sm_XX, not the virtual one)"
		}
		return Target{}, fmt.Errorf("%s; valid targets: %s", msg, validTargets())
	}
	return Target{Backend: backend, Arch: arch}, nil
}

// sortArchs orders architecture names by number, then suffix:
// sm_80 < sm_90 < sm_90a < sm_100.
func sortArchs(archs []string) {
	key := func(a string) (int, string) {
		_, num, _ := strings.Cut(a, "_")
		i := 0
		for i < len(num) && num[i] >= '0' && num[i] <= '9' {
			i++
		}
		n, _ := strconv.Atoi(num[:i])
		return n, a[len(a)-len(num)+i:]
	}
	sort.Slice(archs, func(i, j int) bool {
		ni, si := key(archs[i])
		nj, sj := key(archs[j])
		if ni != nj {
			return ni < nj
		}
		if si != sj {
			return si < sj
		}
		return archs[i] < archs[j]
	})
}
