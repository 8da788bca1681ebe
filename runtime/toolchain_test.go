package runtime

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// requireNVCC returns the machine's nvcc. Without one the test is skipped
// on a developer's machine and fails where KGEN_REQUIRE_TOOLCHAINS=1 (CI),
// so that a broken toolchain install cannot pass as a skip.
func requireNVCC(t *testing.T) *NVCC {
	t.Helper()
	n, err := FindNVCC(os.Getenv("KGEN_NVCC"))
	if err != nil {
		if os.Getenv("KGEN_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatalf("KGEN_REQUIRE_TOOLCHAINS=1 but: %v", err)
		}
		t.Skipf("no nvcc (set KGEN_REQUIRE_TOOLCHAINS=1 to make this a failure): %v", err)
	}
	return n
}

// fakeNVCC writes an executable shell script at dir/rel that answers
// --version as nvcc `version` ("12.4.131") would and --list-gpu-arch with
// archs; other invocations run body.
func fakeNVCC(t *testing.T, dir, rel, version, archs, body string) string {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	mm := version[:strings.LastIndex(version, ".")]
	script := `#!/bin/sh
case "$1" in
--version)
	echo "nvcc: NVIDIA (R) Cuda compiler driver"
	echo "Cuda compilation tools, release ` + mm + `, V` + version + `"
	echo "Build cuda_` + mm + `.r` + mm + `/compiler.0_0"
	exit 0;;
--list-gpu-arch)
	` + archs + `
	exit $?;;
esac
` + body + "\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// isolate points PATH at a directory holding only the utilities the fake
// scripts use, clears CUDA_HOME/CUDA_PATH and replaces the fixed
// fallbacks, so that the machine's own nvcc is not found.
func isolate(t *testing.T, fallbacks ...string) {
	t.Helper()
	tools := t.TempDir()
	for _, u := range []string{"cat", "ls", "wc", "mkdir", "touch", "sleep", "rm"} {
		p, err := exec.LookPath(u)
		if err != nil {
			t.Fatalf("the fake nvcc scripts need %s: %v", u, err)
		}
		if err := os.Symlink(p, filepath.Join(tools, u)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", tools)
	t.Setenv("CUDA_HOME", "")
	t.Setenv("CUDA_PATH", "")
	old := nvccFallbacks
	nvccFallbacks = fallbacks
	t.Cleanup(func() { nvccFallbacks = old })
}

func TestFindNVCCOrder(t *testing.T) {
	const archs = `echo compute_80; echo compute_90`
	dir := t.TempDir()
	flagNVCC := fakeNVCC(t, dir, "flag/nvcc", "12.1.1", archs, "")
	fakeNVCC(t, dir, "install/bin/nvcc", "12.2.2", archs, "")
	fakeNVCC(t, dir, "path/nvcc", "12.3.3", archs, "")
	fakeNVCC(t, dir, "cudahome/bin/nvcc", "12.4.4", archs, "")
	local := fakeNVCC(t, dir, "local/bin/nvcc", "12.5.5", archs, "")
	debian := fakeNVCC(t, dir, "debian/bin/nvcc", "11.8.89", archs, "")
	missing := filepath.Join(dir, "nowhere/bin/nvcc")
	notExec := filepath.Join(dir, "plain/nvcc")
	os.MkdirAll(filepath.Dir(notExec), 0o755)
	os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644)

	cases := []struct {
		name      string
		flag      string
		path      string // PATH's one directory
		cudaHome  string
		fallbacks []string
		want      string // the version found
		wantErr   []string
	}{
		{name: "flag beats PATH", flag: flagNVCC, path: dir + "/path", want: "12.1.1"},
		{name: "flag names an install dir", flag: dir + "/install", path: dir + "/path", want: "12.2.2"},
		{name: "PATH beats CUDA_HOME and fallbacks", path: dir + "/path", cudaHome: dir + "/cudahome", fallbacks: []string{local}, want: "12.3.3"},
		{name: "CUDA_HOME beats fallbacks", cudaHome: dir + "/cudahome", fallbacks: []string{local, debian}, want: "12.4.4"},
		{name: "first fallback", fallbacks: []string{local, debian}, want: "12.5.5"},
		{name: "second fallback when the first is missing", fallbacks: []string{missing, debian}, want: "11.8.89"},
		{name: "not-executable file is skipped", fallbacks: []string{notExec, debian}, want: "11.8.89"},
		{name: "a missing flag does not fall back", flag: missing, path: dir + "/path",
			wantErr: []string{"--nvcc " + missing, "no such file", "--nvcc PATH"}},
		{name: "flag dir without nvcc", flag: dir + "/nowhere-dir-" + "x", wantErr: []string{"no such file"}},
		{name: "nothing anywhere", fallbacks: []string{missing, notExec},
			wantErr: []string{"nvcc not found", "PATH", missing, notExec, "nvidia-cuda-toolkit", "non-free", "--nvcc PATH"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			isolate(t, c.fallbacks...)
			if c.path != "" {
				t.Setenv("PATH", c.path+string(os.PathListSeparator)+os.Getenv("PATH"))
			}
			t.Setenv("CUDA_HOME", c.cudaHome)
			n, err := FindNVCC(c.flag)
			if c.wantErr != nil {
				if err == nil {
					t.Fatalf("found %s %s, want an error", n.Path, n.Version)
				}
				for _, w := range c.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not mention %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n.Version != c.want {
				t.Errorf("found %s version %s, want version %s", n.Path, n.Version, c.want)
			}
			if !filepath.IsAbs(n.Path) {
				t.Errorf("path %q is not absolute", n.Path)
			}
		})
	}
}

func TestFindNVCCNotNVCC(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "nvcc")
	os.WriteFile(p, []byte("#!/bin/sh\necho 'gcc (Debian 12.2.0-14) 12.2.0'\n"), 0o755)
	isolate(t)
	_, err := FindNVCC(p)
	if err == nil || !strings.Contains(err.Error(), "no CUDA version") {
		t.Fatalf("got %v, want a 'no CUDA version' error", err)
	}
	os.WriteFile(p, []byte("#!/bin/sh\necho broken >&2\nexit 3\n"), 0o755)
	_, err = FindNVCC(p)
	if err == nil || !strings.Contains(err.Error(), "broken") {
		t.Fatalf("got %v, want the tool's stderr in the error", err)
	}
}

func TestParseNVCCVersion(t *testing.T) {
	real118, err := os.ReadFile("testdata/nvcc-11.8-version.txt")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		text         string
		version      string
		major, minor int
	}{
		{string(real118), "11.8.89", 11, 8},
		{"Cuda compilation tools, release 13.0, V13.0.48\nBuild cuda_13.0.r13.0/compiler.36260728_0\n", "13.0.48", 13, 0},
		{"Cuda compilation tools, release 10.2\n", "10.2", 10, 2},
	}
	for _, c := range cases {
		var n NVCC
		if err := n.parseVersion(c.text); err != nil {
			t.Errorf("%q: %v", c.text, err)
			continue
		}
		if n.Version != c.version || n.Major != c.major || n.Minor != c.minor {
			t.Errorf("%q: got %s (%d.%d), want %s (%d.%d)", c.text, n.Version, n.Major, n.Minor, c.version, c.major, c.minor)
		}
	}
}

func TestFingerprint(t *testing.T) {
	dir := t.TempDir()
	isolate(t)
	p := fakeNVCC(t, dir, "nvcc", "12.4.131", "", "")
	a, err := FindNVCC(p)
	if err != nil {
		t.Fatal(err)
	}
	fa := a.Fingerprint()
	for _, w := range []string{p, "12.4.131", "cuda_12.4.r12.4/compiler.0_0"} {
		if !strings.Contains(fa, w) {
			t.Errorf("fingerprint %q lacks %q", fa, w)
		}
	}
	if again, _ := FindNVCC(p); again.Fingerprint() != fa {
		t.Errorf("fingerprint not stable: %q then %q", fa, again.Fingerprint())
	}
	// Reinstalled in place with the same version: a different file.
	fakeNVCC(t, dir, "nvcc", "12.4.131", "", "# rebuilt")
	os.Chtimes(p, time.Now().Add(time.Hour), time.Now().Add(time.Hour))
	b, _ := FindNVCC(p)
	if b.Fingerprint() == fa {
		t.Errorf("fingerprint unchanged after the file changed: %q", fa)
	}
}

func TestSupportsTarget(t *testing.T) {
	dir := t.TempDir()
	isolate(t)
	list118, err := os.ReadFile("testdata/nvcc-11.8-list-gpu-arch.txt")
	if err != nil {
		t.Fatal(err)
	}
	listFile := filepath.Join(dir, "list118.txt")
	os.WriteFile(listFile, list118, 0o644)
	cases := []struct {
		name, version, archs string
		ok                   map[string]bool
	}{
		{"11.8 (real list)", "11.8.89", "cat " + listFile, map[string]bool{"sm_80": true, "sm_90": true, "sm_90a": false}},
		{"12.4", "12.4.131", "echo compute_80 compute_90 compute_90a", map[string]bool{"sm_80": true, "sm_90": true, "sm_90a": true}},
		// nvcc's list wins over the version table for base architectures.
		{"12.6 listing no compute_80", "12.6.20", "echo compute_90", map[string]bool{"sm_80": false, "sm_90": true}},
		// nvcc 13.0 lists no arch-specific variants (seen on the H100
		// machine): sm_90a is there with compute_90 and a new enough nvcc.
		{"13.0 listing base archs only", "13.0.88", "echo compute_80 compute_90 compute_100", map[string]bool{"sm_80": true, "sm_90": true, "sm_90a": true}},
		// nvcc before 11 has no --list-gpu-arch: the version decides.
		{"10.2 without the flag", "10.2.89", "echo 'nvcc fatal   : Unknown option' >&2; exit 1", map[string]bool{"sm_80": false, "sm_90": false, "sm_90a": false}},
		{"11.4 without the flag", "11.4.48", "exit 1", map[string]bool{"sm_80": true, "sm_90": false, "sm_90a": false}},
	}
	for _, c := range cases {
		p := fakeNVCC(t, dir, c.version+"/nvcc", c.version, c.archs, "")
		n, err := FindNVCC(p)
		if err != nil {
			t.Fatal(err)
		}
		for arch, ok := range c.ok {
			err := n.SupportsTarget(Target{Backend: "cuda", Arch: arch})
			if (err == nil) != ok {
				t.Errorf("%s: SupportsTarget(%s) = %v, want ok=%v", c.name, arch, err, ok)
			}
			if err != nil && (!strings.Contains(err.Error(), arch) || !strings.Contains(err.Error(), c.version)) {
				t.Errorf("%s: error %q should name %s and nvcc %s", c.name, err, arch, c.version)
			}
		}
	}
	n := &NVCC{Path: "/x", Version: "12.4.1", Major: 12, Minor: 4}
	if err := n.SupportsTarget(Target{Backend: "cuda", Arch: "sm_75"}); err == nil || !strings.Contains(err.Error(), "cuda:sm_80, cuda:sm_90, cuda:sm_90a") {
		t.Errorf("unknown arch: %v", err)
	}
}

func TestParseTarget(t *testing.T) {
	for _, s := range []string{"cuda:sm_80", "cuda:sm_90", "cuda:sm_90a"} {
		tg, err := ParseTarget(s)
		if err != nil || tg.String() != s {
			t.Errorf("ParseTarget(%q) = %v, %v", s, tg, err)
		}
	}
	const valid = "valid targets: cuda:sm_80, cuda:sm_90, cuda:sm_90a, hip:gfx1030, hip:gfx908, hip:gfx90a, hip:nvidia, triton:sm_80, triton:sm_90"
	errs := []struct{ in, want string }{
		{"sm_90", `target "sm_90" needs its backend: write "cuda:sm_90"`},
		{"cuda:sm_75", `unknown cuda architecture "sm_75" in target "cuda:sm_75"; ` + valid},
		{"cuda:compute_90", `not the virtual one`},
		{"hip:gfx942", `unknown hip architecture "gfx942" in target "hip:gfx942"; ` + valid},
		{"rocm:gfx90a", `unsupported backend "rocm" in target "rocm:gfx90a"; ` + valid},
		{"gfx90a", `target "gfx90a" needs its backend: write "hip:gfx90a"`},
		{"", valid},
		{"cuda:", valid},
	}
	for _, e := range errs {
		_, err := ParseTarget(e.in)
		if err == nil || !strings.Contains(err.Error(), e.want) {
			t.Errorf("ParseTarget(%q) = %v, want an error containing %q", e.in, err, e.want)
		}
	}
}

func TestTargetFacts(t *testing.T) {
	// The opt-in shared memory maxima from the CUDA C Programming Guide,
	// in bytes as cudaDevAttrMaxSharedMemoryPerBlockOptin reports them.
	want := map[string]struct{ smem, minMajor, minMinor int }{
		"sm_80":  {166912, 11, 0},
		"sm_90":  {232448, 11, 8},
		"sm_90a": {232448, 12, 3},
	}
	var cuda []Target
	for _, tg := range Targets() {
		if tg.Backend == "cuda" {
			cuda = append(cuda, tg)
		}
	}
	if len(cuda) != len(want) {
		t.Errorf("Targets() = %v", Targets())
	}
	for _, tg := range cuda {
		f := tg.Facts()
		w, ok := want[tg.Arch]
		if !ok {
			t.Errorf("unexpected target %s", tg)
			continue
		}
		if f.Arch != tg.Arch || f.MaxSharedPerBlock != w.smem || f.MinNVCC != [2]int{w.minMajor, w.minMinor} {
			t.Errorf("%s: arch %s, smem %d, min nvcc %v; want smem %d, nvcc %d.%d", tg, f.Arch, f.MaxSharedPerBlock, f.MinNVCC, w.smem, w.minMajor, w.minMinor)
		}
		if f.WarpSize != 32 || f.MaxThreadsPerBlock != 1024 || f.RegistersPerSM != 65536 || f.MaxRegistersPerThread != 255 {
			t.Errorf("%s: %+v", tg, f)
		}
		if f.StaticSharedPerBlock != 49152 || f.MaxSharedPerBlock+1024 != f.SharedPerSM {
			t.Errorf("%s: shared memory static %d, per block %d, per SM %d", tg, f.StaticSharedPerBlock, f.MaxSharedPerBlock, f.SharedPerSM)
		}
	}
	if !(Target{Backend: "cuda", Arch: "sm_90a"}).Facts().WGMMA || (Target{Backend: "cuda", Arch: "sm_90"}).Facts().WGMMA {
		t.Error("wgmma is sm_90a only")
	}
}
