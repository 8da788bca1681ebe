package runtime

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ---- the protocol, without a runner ----

func TestRunnerArgFormat(t *testing.T) {
	cases := []struct {
		arg  Arg
		want string
	}{
		{I64(-5), "i64:-5"},
		{I64(math.MaxInt64), "i64:9223372036854775807"},
		{I32(-2147483648), "i32:-2147483648"},
		{U16(0x3c00), "u16:15360"},
		{F32(1.5), "f32:0x1.8p+00"},
		{F32(0.1), "f32:0x1.99999ap-04"},
		{F32(float32(math.Inf(-1))), "f32:-inf"},
		{F32(float32(math.NaN())), "f32:nan"},
		{F64(0.1), "f64:0x1.999999999999ap-04"},
		{F64(0), "f64:0x0p+00"},
	}
	for _, c := range cases {
		if c.arg.text != c.want {
			t.Errorf("got %q, want %q", c.arg.text, c.want)
		}
	}
	// Hex floats are exact: they parse back to the same bits.
	for _, v := range []float32{0.1, 3.4028235e38, 1e-45, -7.25} {
		s := strings.TrimPrefix(F32(v).text, "f32:")
		back, err := strconv.ParseFloat(s, 32)
		if err != nil || float32(back) != v {
			t.Errorf("%v: %q parses back as %v (%v)", v, s, back, err)
		}
	}
}

func TestRunnerLaunchText(t *testing.T) {
	r := &Runner{gen: 3}
	f := Function{id: 7, gen: 3, Name: "k", MaxThreads: 256}
	buf := Buffer{id: 9, gen: 3, Size: 64}
	s := LaunchSpec{Func: f, Grid: [3]int{10, 2, 1}, Block: [3]int{128, 2, 1}, Smem: 65536,
		Args: []Arg{BufArg(buf), I64(1000), F32(2)}}
	got, err := r.launchText("launch", s)
	if err != nil {
		t.Fatal(err)
	}
	if want := "7 10 2 1 128 2 1 65536 3 b9 i64:1000 f32:0x1p+01"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// Too many threads for the kernel: a ResourceLimit before anything is sent.
	s.Block = [3]int{512, 1, 1}
	_, err = r.launchText("launch", s)
	var fail *Failure
	if !errors.As(err, &fail) || fail.Kind != ResourceLimit {
		t.Errorf("512 threads: got %v, want a ResourceLimit failure", err)
	}
	s.Block = [3]int{0, 1, 1}
	if _, err := r.launchText("launch", s); err == nil {
		t.Error("a zero block size was accepted")
	}
	// A handle from before a restart.
	s.Block = [3]int{32, 1, 1}
	s.Args = []Arg{BufArg(Buffer{id: 9, gen: 2})}
	var rerr *RunnerError
	if _, err := r.launchText("launch", s); !errors.As(err, &rerr) || rerr.Code != "ESTALE" {
		t.Errorf("stale buffer: got %v, want ESTALE", err)
	}
}

func TestRunnerTimeText(t *testing.T) {
	if got, want := (TimeSpec{}).timeText(50<<20), "25 10 100 write:104857600 0"; got != want {
		t.Errorf("defaults: got %q, want %q", got, want)
	}
	if got, want := (TimeSpec{Flush: FlushRead, FlushBytes: 4096}).timeText(50<<20), "25 10 100 read:4096 0"; got != want {
		t.Errorf("read flush: got %q, want %q", got, want)
	}
	if got, want := (TimeSpec{Flush: FlushClean}).timeText(50<<20), "25 10 100 clean:104857600 0"; got != want {
		t.Errorf("clean flush: got %q, want %q", got, want)
	}
	if err := CheckFlush("dirty"); err == nil {
		t.Error("CheckFlush accepts an unknown kind")
	}
	s := TimeSpec{WarmupMS: 5.5, MinReps: 3, MinMS: 1, FlushBytes: -1, Graph: true}
	if got, want := s.timeText(50<<20), "5.5 3 1 0 1"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestRunnerParseReplies(t *testing.T) {
	tm, err := parseTimeReply("12.5000 11.0000 14.2500 812 1980 4")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Timing{MedianUS: 12.5, P20US: 11, P80US: 14.25, Reps: 812, ClockMHz: 1980, Batch: 4}); tm != want {
		t.Errorf("got %+v, want %+v", tm, want)
	}
	if got := tm.GBps(12.5e-6 * 3e12); math.Abs(got-3000) > 1e-9 {
		t.Errorf("GBps: got %v", got)
	}
	if _, err := parseTimeReply("1 2 x 4 5"); err == nil {
		t.Error("a bad time reply parsed")
	}
	info, err := parseInfoReply("NVIDIA H100 80GB HBM3|9|0|132|52428800|84929347584|13000|232448|1024")
	if err != nil {
		t.Fatal(err)
	}
	if want := (RunnerInfo{Name: "NVIDIA H100 80GB HBM3", CCMajor: 9, SMs: 132, L2Bytes: 52428800, MemBytes: 84929347584,
		DriverVersion: 13000, SmemOptin: 232448, MaxThreads: 1024}); info != want {
		t.Errorf("got %+v, want %+v", info, want)
	}
	f, err := parseFuncReply("4 40 1024 768")
	if err != nil || f.id != 4 || f.Regs != 40 || f.StaticSmem != 1024 || f.MaxThreads != 768 {
		t.Errorf("func reply: %+v %v", f, err)
	}
	code, msg, ok := parseErrReply("err CUDA_ERROR_ILLEGAL_ADDRESS: cuCtxSynchronize: an illegal memory access was encountered (700)")
	if !ok || code != "CUDA_ERROR_ILLEGAL_ADDRESS" || !strings.HasPrefix(msg, "cuCtxSynchronize") {
		t.Errorf("err reply: %q %q %v", code, msg, ok)
	}
	kinds := []struct {
		op, code, msg string
		want          FailureKind // 0: a RunnerError
	}{
		{"sync", "CUDA_ERROR_ILLEGAL_ADDRESS", "", Crash},
		{"read", "CUDA_ERROR_LAUNCH_FAILED", "", Crash},
		{"launch", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "", ResourceLimit},
		{"launch", "CUDA_ERROR_INVALID_VALUE", "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES): x", ResourceLimit},
		{"launch", "CUDA_ERROR_INVALID_VALUE", "cuLaunchKernel: x", LaunchFailure},
		{"alloc", "CUDA_ERROR_OUT_OF_MEMORY", "", ResourceLimit},
		{"load", "CUDA_ERROR_NO_BINARY_FOR_GPU", "", CompileError},
		{"func", "CUDA_ERROR_NOT_FOUND", "", CompileError},
		{"write", "ESIZE", "", 0},
		{"launch", "EPROTO", "", 0},
	}
	for _, k := range kinds {
		err := classify(k.op, k.code, k.msg)
		var f *Failure
		switch {
		case k.want == 0 && errors.As(err, &f):
			t.Errorf("%s %s: got failure %v, want a RunnerError", k.op, k.code, err)
		case k.want != 0 && (!errors.As(err, &f) || f.Kind != k.want):
			t.Errorf("%s %s: got %v, want %v", k.op, k.code, err, k.want)
		}
	}
}

// The Go side must know which CUDA errors make the runner exit.
func TestRunnerStickyCodesMatchSource(t *testing.T) {
	src := string(runnerSource)
	start := strings.Index(src, "bool sticky(CUresult r)")
	end := strings.Index(src[start:], "default:")
	if start < 0 || end < 0 {
		t.Fatal("sticky() not found in runner.cpp")
	}
	got := regexp.MustCompile(`case (CUDA_ERROR_\w+):`).FindAllStringSubmatch(src[start:start+end], -1)
	seen := map[string]bool{}
	for _, m := range got {
		seen[m[1]] = true
		if !stickyCodes[m[1]] {
			t.Errorf("runner.cpp treats %s as sticky; stickyCodes does not", m[1])
		}
	}
	for c := range stickyCodes {
		if !seen[c] {
			t.Errorf("stickyCodes has %s; runner.cpp's sticky() does not", c)
		}
	}
}

// ---- a fake runner: this test binary speaking the protocol ----

// TestFakeRunnerProcess is not a test: it is the fake runner's main when
// the binary is started with KGEN_FAKE_RUNNER=1.
func TestFakeRunnerProcess(t *testing.T) {
	if os.Getenv("KGEN_FAKE_RUNNER") != "1" {
		t.Skip("the fake runner's entry point")
	}
	fakeRunnerMain(os.Getenv("KGEN_FAKE_MODE"))
	os.Exit(0)
}

// fakeRunnerMain speaks the protocol with host memory. Kernels by name:
// "copy" copies its first buffer argument to its second; "crash" makes the
// next sync fail with an illegal address (and exit 3); "hang" makes the
// next sync hang; "die" exits at once without a reply; "oor" is refused
// for lack of resources. func "missing" is not found.
func fakeRunnerMain(mode string) {
	out := bufio.NewWriter(os.Stdout)
	reply := func(s string) {
		out.WriteString(s + "\n")
		out.Flush()
	}
	switch mode {
	case "nodevice":
		reply("err CUDA_ERROR_NO_DEVICE: cuInit: no CUDA-capable device is detected (100)")
		os.Exit(2)
	case "exit":
		fmt.Fprintln(os.Stderr, "error while loading shared libraries: libcuda.so.1")
		os.Exit(127)
	}
	reply("ok kgen-runner 1")
	next := 1
	mods := map[int]bool{}
	funcs := map[int]string{}
	bufs := map[int][]byte{}
	pending := ""
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	id := func(s string) int { n, _ := strconv.Atoi(s); return n }
	for in.Scan() {
		line := in.Text()
		f := strings.Fields(line)
		if len(f) == 0 {
			reply("err EPROTO: empty command")
			continue
		}
		switch f[0] {
		case "quit":
			return
		case "load":
			mods[next] = true
			reply(fmt.Sprintf("ok %d", next))
			next++
		case "func":
			if !mods[id(f[1])] {
				reply("err EPROTO: unknown module " + f[1])
			} else if f[2] == "missing" {
				reply("err CUDA_ERROR_NOT_FOUND: cuModuleGetFunction: named symbol not found (500)")
			} else {
				funcs[next] = f[2]
				reply(fmt.Sprintf("ok %d 32 0 1024", next))
				next++
			}
		case "clusters":
			// As many clusters as 112 multiprocessors hold, one block
			// each: 7 of 16 (the H100's figure for 16 blocks of 1024).
			c, _ := strconv.Atoi(f[4])
			if funcs[id(f[1])] == "" || c < 1 {
				reply("err EPROTO: clusters FN BX SMEM C")
			} else {
				reply(fmt.Sprintf("ok %d", 112/c))
			}
		case "alloc":
			n, _ := strconv.Atoi(f[1])
			bufs[next] = make([]byte, n)
			reply(fmt.Sprintf("ok %d", next))
			next++
		case "free":
			delete(bufs, id(f[1]))
			reply("ok")
		case "write":
			b, ok := bufs[id(f[1])]
			path := strings.SplitN(line, " ", 3)[2]
			data, err := os.ReadFile(path)
			switch {
			case !ok:
				reply("err EPROTO: unknown buffer " + f[1])
			case err != nil:
				reply("err EIO: " + err.Error())
			case len(data) != len(b):
				reply("err ESIZE: size mismatch")
			default:
				copy(b, data)
				reply("ok")
			}
		case "read":
			b, ok := bufs[id(f[1])]
			path := strings.SplitN(line, " ", 3)[2]
			if !ok {
				reply("err EPROTO: unknown buffer " + f[1])
				continue
			}
			if pending == "crash" {
				reply("err CUDA_ERROR_ILLEGAL_ADDRESS: cuMemcpyDtoHAsync: an illegal memory access was encountered (700)")
				os.Exit(3)
			}
			os.WriteFile(path+".tmp", b, 0o600)
			os.Rename(path+".tmp", path)
			reply("ok")
		case "fill":
			v, _ := strconv.Atoi(f[2])
			for i := range bufs[id(f[1])] {
				bufs[id(f[1])][i] = byte(v)
			}
			reply("ok")
		case "launch", "time":
			spec := f[1:]
			if f[0] == "time" {
				spec = f[6:]
			}
			name := funcs[id(spec[0])]
			nargs, _ := strconv.Atoi(spec[8])
			args := spec[9:]
			if nargs != len(args) {
				reply("err EPROTO: argument count")
				continue
			}
			switch name {
			case "copy":
				src, dst := bufs[id(args[0][1:])], bufs[id(args[1][1:])]
				copy(dst, src)
			case "crash", "hang":
				pending = name
			case "die":
				os.Exit(77)
			case "oor":
				reply("err CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: cuLaunchKernel: too many resources requested for launch (701)")
				continue
			}
			if f[0] == "time" {
				// Echo what kgen sent, so that the test can check it:
				// the flush must be a write.
				kind, size, _ := strings.Cut(f[4], ":")
				if kind != "write" {
					reply("err EPROTO: flush " + f[4])
					continue
				}
				reply(fmt.Sprintf("ok 12.5000 12.0000 13.5000 %s %d %s", f[2], id(size)>>20, f[5]))
			} else {
				reply("ok")
			}
		case "sync":
			switch pending {
			case "crash":
				reply("err CUDA_ERROR_ILLEGAL_ADDRESS: cuCtxSynchronize: an illegal memory access was encountered (700)")
				os.Exit(3)
			case "hang":
				select {}
			}
			reply("ok")
		case "info":
			reply("ok Fake GPU|9|0|132|52428800|85000000000|13000|232448|1024")
		case "copybw":
			reply("ok 3000.00 715.8")
		case "copytime":
			// As time: the median is the bytes in MB, then MIN_REPS,
			// the flush's bytes in MiB and GRAPH echoed.
			kind, size, _ := strings.Cut(f[5], ":")
			if len(f) != 7 || kind != "write" {
				reply("err EPROTO: copytime " + strings.Join(f[1:], " "))
				continue
			}
			n, _ := strconv.Atoi(f[1])
			reply(fmt.Sprintf("ok %.4f 1.0000 2.0000 %s %d %s", float64(n)/1e6, f[3], id(size)>>20, f[6]))
		default:
			reply("err EPROTO: unknown command '" + f[0] + "'")
		}
	}
}

func startFake(t *testing.T, mode string) (*Runner, error) {
	t.Helper()
	env := append(os.Environ(), "KGEN_FAKE_RUNNER=1", "KGEN_FAKE_MODE="+mode)
	r, err := startRunner(context.Background(), []string{os.Args[0], "-test.run=^TestFakeRunnerProcess$"}, env)
	if err == nil {
		t.Cleanup(func() { r.Close() })
	}
	return r, err
}

func wantFailure(t *testing.T, err error, kind FailureKind, code string) *Failure {
	t.Helper()
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("got %v, want a %v failure", err, kind)
	}
	if f.Kind != kind || (code != "" && f.Code != code) {
		t.Fatalf("got %v (kind %v, code %q), want kind %v code %q", err, f.Kind, f.Code, kind, code)
	}
	return f
}

func TestFakeRunnerRoundTrip(t *testing.T) {
	r, err := startFake(t, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m, err := r.Load(ctx, "kernels.cubin")
	if err != nil {
		t.Fatal(err)
	}
	cp, err := r.Func(ctx, m, "copy")
	if err != nil {
		t.Fatal(err)
	}
	if cp.MaxThreads != 1024 || cp.Regs != 32 {
		t.Errorf("func attributes: %+v", cp)
	}
	_, err = r.Func(ctx, m, "missing")
	wantFailure(t, err, CompileError, "CUDA_ERROR_NOT_FOUND")
	if n, err := r.MaxActiveClusters(ctx, cp, 1024, 131072, 16); n != 7 || err != nil {
		t.Errorf("clusters of 16 at once: %d, %v; want 7", n, err)
	}

	data := []byte("0123456789abcdef")
	src, _ := r.Alloc(ctx, int64(len(data)))
	dst, err := r.Alloc(ctx, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Write(ctx, src, data); err != nil {
		t.Fatal(err)
	}
	if err := r.Write(ctx, src, data[:3]); err == nil {
		t.Error("a short write was accepted")
	}
	if err := r.Fill(ctx, dst, 0xFF); err != nil {
		t.Fatal(err)
	}
	got, err := r.Read(ctx, dst)
	if err != nil || !bytes.Equal(got, bytes.Repeat([]byte{0xFF}, len(data))) {
		t.Fatalf("after fill: %x %v", got, err)
	}
	spec := LaunchSpec{Func: cp, Grid: [3]int{1, 1, 1}, Block: [3]int{32, 1, 1}, Args: []Arg{BufArg(src), BufArg(dst), I64(16)}}
	if err := r.Launch(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if err := r.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Read(ctx, dst); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("after copy: %q %v", got, err)
	}
	info, err := r.Info(ctx)
	if err != nil || info.SMs != 132 || info.L2Bytes != 50<<20 {
		t.Fatalf("info: %+v %v", info, err)
	}
	// The fake echoes MIN_REPS, the flush's bytes in MiB and GRAPH: the
	// default flush is a write of twice the L2.
	tm, err := r.Time(ctx, TimeSpec{Launches: []LaunchSpec{spec}, Graph: true})
	if err != nil {
		t.Fatal(err)
	}
	if tm.MedianUS != 12.5 || tm.Reps != 10 || tm.ClockMHz != 100 || tm.Batch != 1 {
		t.Errorf("timing: %+v", tm)
	}
	if bw, err := r.CopyBandwidth(ctx, 0); err != nil || bw != 3000 {
		t.Errorf("copy bandwidth: %v %v", bw, err)
	}
	// A copy under a kernel's protocol: its bytes, the default flush and
	// the graph flag reach the runner.
	if tm, err := r.TimeCopy(ctx, 3_000_000, TimeSpec{Graph: true}); err != nil || tm.MedianUS != 3 || tm.Reps != 10 || tm.ClockMHz != 100 || tm.Batch != 1 {
		t.Errorf("copy timing: %+v %v", tm, err)
	}
	if _, err := r.TimeCopy(ctx, 0, TimeSpec{}); err == nil {
		t.Error("a copy of 0 bytes was timed")
	}
	oor, _ := r.Func(ctx, m, "oor")
	spec.Func = oor
	wantFailure(t, r.Launch(ctx, spec), ResourceLimit, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES")
	if err := r.Free(ctx, src); err != nil {
		t.Fatal(err)
	}
	// Nothing is left in the transfer directory.
	if ents, _ := os.ReadDir(r.dir); len(ents) != 0 {
		t.Errorf("transfer files left: %v", ents)
	}
}

func TestFakeRunnerCrashAndRestart(t *testing.T) {
	r, err := startFake(t, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m, _ := r.Load(ctx, "k.cubin")
	crash, _ := r.Func(ctx, m, "crash")
	buf, _ := r.Alloc(ctx, 8)
	if err := r.Launch(ctx, LaunchSpec{Func: crash, Grid: [3]int{1, 1, 1}, Block: [3]int{1, 1, 1}, Args: []Arg{BufArg(buf)}}); err != nil {
		t.Fatal(err)
	}
	wantFailure(t, r.Sync(ctx), Crash, "CUDA_ERROR_ILLEGAL_ADDRESS")
	if r.Alive() {
		t.Error("the runner is alive after a sticky error")
	}
	if err := r.Sync(ctx); !errors.Is(err, ErrRunnerStopped) {
		t.Errorf("after the crash: got %v, want ErrRunnerStopped", err)
	}
	if err := r.Restart(); err != nil {
		t.Fatal(err)
	}
	var rerr *RunnerError
	if err := r.Fill(ctx, buf, 0); !errors.As(err, &rerr) || rerr.Code != "ESTALE" {
		t.Errorf("old buffer after restart: got %v, want ESTALE", err)
	}
	buf2, err := r.Alloc(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Write(ctx, buf2, []byte{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Read(ctx, buf2); err != nil || !bytes.Equal(got, []byte{1, 2, 3, 4}) {
		t.Fatalf("after restart: %v %v", got, err)
	}
}

func TestFakeRunnerTimeout(t *testing.T) {
	r, err := startFake(t, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m, _ := r.Load(ctx, "k.cubin")
	hang, _ := r.Func(ctx, m, "hang")
	if err := r.Launch(ctx, LaunchSpec{Func: hang, Grid: [3]int{1, 1, 1}, Block: [3]int{1, 1, 1}}); err != nil {
		t.Fatal(err)
	}
	// A context deadline...
	dctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	start := time.Now()
	err = r.Sync(dctx)
	cancel()
	wantFailure(t, err, Timeout, "")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the timeout took %v", d)
	}
	if r.Alive() {
		t.Error("the runner is alive after a timeout")
	}
	// ...and the runner's own OpTimeout.
	if err := r.Restart(); err != nil {
		t.Fatal(err)
	}
	m, _ = r.Load(ctx, "k.cubin")
	hang, _ = r.Func(ctx, m, "hang")
	r.Launch(ctx, LaunchSpec{Func: hang, Grid: [3]int{1, 1, 1}, Block: [3]int{1, 1, 1}})
	r.OpTimeout = 200 * time.Millisecond
	wantFailure(t, r.Sync(ctx), Timeout, "")
	r.OpTimeout = 0
	if err := r.Restart(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Info(ctx); err != nil {
		t.Fatal(err)
	}
	// A cancelled context stops the runner but is no candidate's failure.
	cctx, cancel := context.WithCancel(ctx)
	m, _ = r.Load(ctx, "k.cubin")
	hang, _ = r.Func(ctx, m, "hang")
	r.Launch(ctx, LaunchSpec{Func: hang, Grid: [3]int{1, 1, 1}, Block: [3]int{1, 1, 1}})
	time.AfterFunc(100*time.Millisecond, cancel)
	if err := r.Sync(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: got %v", err)
	}
}

func TestFakeRunnerDies(t *testing.T) {
	r, err := startFake(t, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m, _ := r.Load(ctx, "k.cubin")
	die, _ := r.Func(ctx, m, "die")
	f := wantFailure(t, r.Launch(ctx, LaunchSpec{Func: die, Grid: [3]int{1, 1, 1}, Block: [3]int{1, 1, 1}}), Crash, "")
	if !strings.Contains(f.Msg, "exit status 77") {
		t.Errorf("the failure does not give the exit status: %v", f)
	}
	if err := r.Restart(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Alloc(ctx, 16); err != nil {
		t.Fatal(err)
	}
}

func TestFakeRunnerStartFailures(t *testing.T) {
	_, err := startFake(t, "nodevice")
	if err == nil || !strings.Contains(err.Error(), "CUDA_ERROR_NO_DEVICE") {
		t.Errorf("no device: got %v", err)
	}
	_, err = startFake(t, "exit")
	if err == nil || !strings.Contains(err.Error(), "exit status 127") || !strings.Contains(err.Error(), "libcuda.so.1") {
		t.Errorf("a runner that cannot start: got %v", err)
	}
}

// ---- with nvcc and a GPU ----

// runnerTestNVCC finds nvcc for the tests, or "".
func runnerTestNVCC() string {
	if p, err := exec.LookPath("nvcc"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/local/cuda/bin/nvcc", "/usr/lib/nvidia-cuda-toolkit/bin/nvcc"} {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}

func needNVCC(t *testing.T) string {
	t.Helper()
	nvcc := runnerTestNVCC()
	if nvcc == "" {
		if os.Getenv("KGEN_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatal("nvcc not found and KGEN_REQUIRE_TOOLCHAINS=1")
		}
		t.Skip("nvcc not found")
	}
	return nvcc
}

// The runner compiles with the machine's nvcc, and a second build is a
// cache hit.
func TestRunnerBuild(t *testing.T) {
	nvcc := needNVCC(t)
	dir := t.TempDir()
	ctx := context.Background()
	exe, err := BuildRunner(ctx, nvcc, dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(exe)
	if err != nil || st.Mode()&0o111 == 0 {
		t.Fatalf("runner %s: %v %v", exe, st, err)
	}
	start := time.Now()
	exe2, err := BuildRunner(ctx, nvcc, dir)
	if err != nil || exe2 != exe {
		t.Fatalf("second build: %s %v", exe2, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the cached build took %v", d)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("cache dir holds %d entries, want 1 (no build leftovers)", len(ents))
	}
}

const gpuTestKernels = `
extern "C" __global__ void axpy(const float* x, const float* y, float* out, float a, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}
extern "C" __global__ void oob(float* p, long long off) { p[off + threadIdx.x] = 1.0f; }
extern "C" __global__ void spin(volatile int* flag) { while (*flag == 0) { } }
extern "C" __global__ void reverse_smem(float* p) {
  extern __shared__ float s[];
  s[threadIdx.x] = p[threadIdx.x];
  __syncthreads();
  p[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}
`

func f32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func bytesF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

type gpuKernels struct {
	mod                      Module
	axpy, oob, spin, reverse Function
}

func loadGPUKernels(t *testing.T, r *Runner, cubin string) gpuKernels {
	t.Helper()
	ctx := context.Background()
	var k gpuKernels
	var err error
	if k.mod, err = r.Load(ctx, cubin); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]*Function{"axpy": &k.axpy, "oob": &k.oob, "spin": &k.spin, "reverse_smem": &k.reverse} {
		if *f, err = r.Func(ctx, k.mod, name); err != nil {
			t.Fatal(err)
		}
	}
	return k
}

// runAxpy runs out = a*x + y on n elements and checks it against Go.
func runAxpy(t *testing.T, r *Runner, k gpuKernels, n int, seed int64) (x, y, out Buffer, spec LaunchSpec) {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewSource(seed))
	xs, ys := make([]float32, n), make([]float32, n)
	for i := range xs {
		xs[i] = float32(rng.NormFloat64())
		ys[i] = float32(rng.NormFloat64())
	}
	const a = float32(0.3)
	var err error
	for _, b := range []*Buffer{&x, &y, &out} {
		if *b, err = r.Alloc(ctx, int64(4*n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Write(ctx, x, f32Bytes(xs)); err != nil {
		t.Fatal(err)
	}
	if err := r.Write(ctx, y, f32Bytes(ys)); err != nil {
		t.Fatal(err)
	}
	if err := r.Fill(ctx, out, 0xFF); err != nil { // NaN
		t.Fatal(err)
	}
	spec = LaunchSpec{Func: k.axpy, Grid: [3]int{(n + 255) / 256, 1, 1}, Block: [3]int{256, 1, 1},
		Args: []Arg{BufArg(x), BufArg(y), BufArg(out), F32(a), I64(int64(n))}}
	if err := r.Launch(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if err := r.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	raw, err := r.Read(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	got := bytesF32(raw)
	bad := 0
	for i := range got {
		// With or without a fused multiply-add: within two roundings of the
		// terms' size (a*x and y may cancel).
		ax, yi := float64(a)*float64(xs[i]), float64(ys[i])
		want := float32(ax + yi)
		tol := 0x1p-23 * 2 * (math.Abs(ax) + math.Abs(yi))
		if !(math.Abs(float64(got[i])-(ax+yi)) <= tol) {
			if bad < 5 {
				t.Errorf("axpy[%d] = %v, want %v", i, got[i], want)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d elements wrong", bad, n)
	}
	return x, y, out, spec
}

// TestGPURunner runs on a machine with an NVIDIA GPU and nvcc (skipped
// elsewhere; KGEN_REQUIRE_GPU=1 makes it fail instead).
func TestGPURunner(t *testing.T) {
	nvcc := needNVCC(t)
	if _, err := os.Stat("/dev/nvidiactl"); err != nil && os.Getenv("KGEN_REQUIRE_GPU") != "1" {
		t.Skip("no NVIDIA GPU (/dev/nvidiactl)")
	}
	ctx := context.Background()
	dir := t.TempDir()
	start := time.Now()
	r, err := StartRunner(ctx, nvcc, filepath.Join(dir, "cache"), 0)
	var rerr *RunnerError
	if errors.As(err, &rerr) && rerr.Op == "start" && os.Getenv("KGEN_REQUIRE_GPU") != "1" {
		t.Skipf("no usable GPU: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	t.Logf("runner built and started in %v", time.Since(start).Round(time.Millisecond))
	info, err := r.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("device: %+v", info)

	arch := fmt.Sprintf("sm_%d%d", info.CCMajor, info.CCMinor)
	cu := filepath.Join(dir, "k.cu")
	cubin := filepath.Join(dir, "k.cubin")
	os.WriteFile(cu, []byte(gpuTestKernels), 0o644)
	if out, err := exec.Command(nvcc, "-cubin", "-arch="+arch, "-o", cubin, cu).CombinedOutput(); err != nil {
		t.Fatalf("nvcc: %v\n%s", err, out)
	}
	k := loadGPUKernels(t, r, cubin)
	t.Logf("axpy: %d registers, max %d threads", k.axpy.Regs, k.axpy.MaxThreads)
	_, err = r.Func(ctx, k.mod, "no_such_kernel")
	wantFailure(t, err, CompileError, "CUDA_ERROR_NOT_FOUND")

	// Correctness at a size that is no multiple of the block.
	const n = 1<<20 + 3
	x, y, out, _ := runAxpy(t, r, k, n, 1)
	for _, b := range []Buffer{x, y, out} {
		if err := r.Free(ctx, b); err != nil {
			t.Fatal(err)
		}
	}

	// More than 48 KiB of dynamic shared memory, and more than the device has.
	p, _ := r.Alloc(ctx, 4*256)
	vals := make([]float32, 256)
	for i := range vals {
		vals[i] = float32(i)
	}
	r.Write(ctx, p, f32Bytes(vals))
	rev := LaunchSpec{Func: k.reverse, Grid: [3]int{1, 1, 1}, Block: [3]int{256, 1, 1}, Smem: 100 << 10, Args: []Arg{BufArg(p)}}
	if err := r.Launch(ctx, rev); err != nil {
		t.Fatal(err)
	}
	raw, err := r.Read(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := bytesF32(raw); got[0] != 255 || got[255] != 0 {
		t.Errorf("reverse with 100 KiB of shared memory: %v ... %v", got[0], got[255])
	}
	rev.Smem = 1 << 20
	f := wantFailure(t, r.Launch(ctx, rev), ResourceLimit, "")
	t.Logf("1 MiB of shared memory: %v", f)
	rev.Smem, rev.Block = 0, [3]int{2048, 1, 1}
	wantFailure(t, r.Launch(ctx, rev), ResourceLimit, "")
	if err := r.Sync(ctx); err != nil {
		t.Fatalf("the runner is not usable after refused launches: %v", err)
	}

	// Timing: a large axpy without graphs (L2 flushed), a small one with.
	for _, c := range []struct {
		n     int
		graph bool
	}{{1 << 24, false}, {1 << 24, true}, {1 << 14, true}, {1 << 14, false}} {
		x, y, out, spec := runAxpy(t, r, k, c.n, 2)
		tm, err := r.Time(ctx, TimeSpec{Launches: []LaunchSpec{spec}, Graph: c.graph})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("axpy n=%d graph=%v: %v; %.0f GB/s", c.n, c.graph, tm, tm.GBps(float64(12*c.n)))
		if !(tm.MedianUS > 0 && tm.P20US <= tm.MedianUS && tm.MedianUS <= tm.P80US) {
			t.Errorf("timing out of order: %+v", tm)
		}
		if tm.Reps < DefaultMinReps {
			t.Errorf("%d samples, want at least %d", tm.Reps, DefaultMinReps)
		}
		if c.graph != (tm.Batch > 0) {
			t.Errorf("graph %v but batch %d", c.graph, tm.Batch)
		}
		for _, b := range []Buffer{x, y, out} {
			r.Free(ctx, b)
		}
	}
	bw, err := r.CopyBandwidth(ctx, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("device-to-device copy: %.0f GB/s (read + write)", bw)
	if bw <= 0 {
		t.Errorf("copy bandwidth %v", bw)
	}
	// A small copy under the kernels' protocol, in graphs: slower per byte
	// than the large one, and timed in batches.
	ct, err := r.TimeCopy(ctx, 1<<20, TimeSpec{Flush: FlushClean})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("1 MiB copy, clean flush: %v; %.0f GB/s", ct, ct.GBps(2<<20))
	if !(ct.MedianUS > 0 && ct.P20US <= ct.MedianUS && ct.MedianUS <= ct.P80US) || ct.Batch == 0 || ct.GBps(2<<20) >= bw {
		t.Errorf("1 MiB copy: %+v, want graphs and under %.0f GB/s", ct, bw)
	}

	// An illegal address kills the runner: a Crash, then a working restart.
	buf, _ := r.Alloc(ctx, 1024)
	if err := r.Launch(ctx, LaunchSpec{Func: k.oob, Grid: [3]int{1, 1, 1}, Block: [3]int{32, 1, 1}, Args: []Arg{BufArg(buf), I64(1 << 40)}}); err != nil {
		t.Fatal(err)
	}
	f = wantFailure(t, r.Sync(ctx), Crash, "")
	t.Logf("illegal address: %v", f)
	if r.Alive() {
		t.Error("the runner is alive after an illegal address")
	}
	start = time.Now()
	if err := r.Restart(); err != nil {
		t.Fatal(err)
	}
	t.Logf("restarted in %v", time.Since(start).Round(time.Millisecond))
	k = loadGPUKernels(t, r, cubin)
	runAxpy(t, r, k, 1000, 3)

	// A hung kernel: a Timeout, then a working restart.
	flag, _ := r.Alloc(ctx, 4)
	r.Fill(ctx, flag, 0)
	if err := r.Launch(ctx, LaunchSpec{Func: k.spin, Grid: [3]int{1, 1, 1}, Block: [3]int{1, 1, 1}, Args: []Arg{BufArg(flag)}}); err != nil {
		t.Fatal(err)
	}
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	start = time.Now()
	err = r.Sync(dctx)
	cancel()
	wantFailure(t, err, Timeout, "")
	t.Logf("hung kernel: timeout and kill in %v", time.Since(start).Round(time.Millisecond))
	start = time.Now()
	if err := r.Restart(); err != nil {
		t.Fatal(err)
	}
	t.Logf("restarted in %v", time.Since(start).Round(time.Millisecond))
	k = loadGPUKernels(t, r, cubin)
	runAxpy(t, r, k, 4097, 4)
}
