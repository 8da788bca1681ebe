package runtime

// The runner: an out-of-process program (runner/runner.cpp, compiled by
// nvcc on the machine where it runs) that loads compiled kernels, moves
// data, launches and times kernels on one GPU through the CUDA driver API.
// A kernel that crashes (illegal address), hangs or fails to launch kills
// only the runner: kgen records a typed Failure, calls Restart and goes on.
//
// kgen talks to it over stdin/stdout, one command a line and one reply a
// line ("ok ..." or "err CODE: message"); runner.cpp documents the protocol.
// The runner is dumb: kgen evaluates grids, sizes and arguments and sends
// concrete numbers. Data goes through files in a per-runner temp directory;
// the runner writes its output files to PATH.tmp and renames them, so a
// file that exists is complete.

import (
	"bufio"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed runner/runner.cpp
var runnerSource []byte

// runnerProtocol is the version in the runner's greeting, "ok kgen-runner 1".
const runnerProtocol = "1"

// FailureKind says how a candidate kernel failed.
type FailureKind int

const (
	// CompileError: the kernel did not compile, or its binary could not be
	// loaded (no code for this GPU, missing entry point).
	CompileError FailureKind = iota + 1
	// ResourceLimit: the launch asks for more than the device or the kernel
	// allows (threads per block, shared memory, registers, memory).
	ResourceLimit
	// LaunchFailure: the driver refused the launch for another reason.
	LaunchFailure
	// Crash: the runner died (illegal address, trap, misaligned access, a
	// signal). The runner is stopped; Restart brings a fresh one.
	Crash
	// Timeout: no reply within the deadline (a hung kernel). The runner was
	// killed; Restart brings a fresh one.
	Timeout
	// WrongResult: the kernel ran but its output is wrong. The runner never
	// reports it; callers that compare outputs do.
	WrongResult
)

func (k FailureKind) String() string {
	switch k {
	case CompileError:
		return "compile error"
	case ResourceLimit:
		return "resource limit"
	case LaunchFailure:
		return "launch failure"
	case Crash:
		return "crash"
	case Timeout:
		return "timeout"
	case WrongResult:
		return "wrong result"
	}
	return fmt.Sprintf("FailureKind(%d)", int(k))
}

// Failure is a candidate kernel's failure, as the runner saw it.
type Failure struct {
	Kind FailureKind
	Op   string // the runner command that failed: "launch", "sync", "time", ...
	Code string // the CUDA error name (CUDA_ERROR_ILLEGAL_ADDRESS), or "" when there was no reply
	Msg  string
}

func (f *Failure) Error() string {
	var b strings.Builder
	b.WriteString(f.Kind.String())
	if f.Op != "" {
		b.WriteString(" in " + f.Op)
	}
	if f.Code != "" {
		b.WriteString(": " + f.Code)
	}
	if f.Msg != "" {
		b.WriteString(": " + f.Msg)
	}
	return b.String()
}

// RunnerError is an error reply that is no candidate's failure: a malformed
// command, an unknown or stale handle, a file error, a size mismatch, or an
// unexpected driver error outside launches. It points at a bug in kgen or
// at the machine.
type RunnerError struct {
	Op   string
	Code string // EPROTO, EIO, ESIZE, ESTALE, or a CUDA error name
	Msg  string
}

func (e *RunnerError) Error() string {
	return "runner " + e.Op + ": " + e.Code + ": " + e.Msg
}

// ErrRunnerStopped is returned by a Runner whose process is gone (after a
// Crash or Timeout, or after Close). Restart brings a fresh one.
var ErrRunnerStopped = errors.New("runner is not running (restart it after a crash or timeout)")

// stickyCodes are the CUDA errors after which the context is dead; the
// runner replies with one of them and exits with status 3. It must match
// sticky() in runner.cpp (a test checks).
var stickyCodes = map[string]bool{
	"CUDA_ERROR_ILLEGAL_ADDRESS":       true,
	"CUDA_ERROR_LAUNCH_FAILED":         true,
	"CUDA_ERROR_HARDWARE_STACK_ERROR":  true,
	"CUDA_ERROR_ILLEGAL_INSTRUCTION":   true,
	"CUDA_ERROR_MISALIGNED_ADDRESS":    true,
	"CUDA_ERROR_INVALID_ADDRESS_SPACE": true,
	"CUDA_ERROR_INVALID_PC":            true,
	"CUDA_ERROR_ASSERT":                true,
	"CUDA_ERROR_LAUNCH_TIMEOUT":        true,
	"CUDA_ERROR_ECC_UNCORRECTABLE":     true,
	"CUDA_ERROR_CONTEXT_IS_DESTROYED":  true,
	"CUDA_ERROR_DEINITIALIZED":         true,
	"CUDA_ERROR_UNKNOWN":               true,
}

// Module is a loaded cubin. Handles die with the runner process that made
// them: after Restart they are stale and using one is an error.
type Module struct {
	id, gen int
	Path    string
}

// Function is a kernel entry point with the attributes the driver reports.
type Function struct {
	id, gen    int
	Name       string
	Regs       int // registers per thread
	StaticSmem int // static shared memory per block, bytes
	MaxThreads int // the most threads per block this kernel can be launched with
}

// Buffer is device memory.
type Buffer struct {
	id, gen int
	Size    int64
}

// Arg is one kernel argument; make them with BufArg, I64, I32, U16, F32, F64.
type Arg struct {
	text string // the protocol form, or "" with buf set
	buf  *Buffer
}

// BufArg passes a buffer's device pointer.
func BufArg(b Buffer) Arg { return Arg{buf: &b} }

// I64 passes a 64-bit integer.
func I64(v int64) Arg { return Arg{text: "i64:" + strconv.FormatInt(v, 10)} }

// I32 passes a 32-bit integer.
func I32(v int32) Arg { return Arg{text: "i32:" + strconv.FormatInt(int64(v), 10)} }

// U16 passes 16 raw bits (an f16 or bf16 scalar).
func U16(v uint16) Arg { return Arg{text: "u16:" + strconv.FormatUint(uint64(v), 10)} }

// F32 passes a float, exactly (hex float).
func F32(v float32) Arg { return Arg{text: "f32:" + formatHexFloat(float64(v), 32)} }

// F64 passes a double, exactly (hex float).
func F64(v float64) Arg { return Arg{text: "f64:" + formatHexFloat(v, 64)} }

func formatHexFloat(v float64, bits int) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'x', -1, bits)
}

// LaunchSpec is one kernel launch with concrete sizes.
type LaunchSpec struct {
	Func  Function
	Grid  [3]int
	Block [3]int
	Smem  int // dynamic shared memory, bytes
	Args  []Arg
}

// RunnerInfo describes the runner's GPU, as the driver reports it.
type RunnerInfo struct {
	Name          string
	CCMajor       int
	CCMinor       int
	SMs           int
	L2Bytes       int64
	MemBytes      int64
	DriverVersion int   // e.g. 13000 for CUDA 13.0
	SmemOptin     int64 // the most shared memory a block may opt in to
	MaxThreads    int   // threads per block
}

// Default deadlines.
const (
	// DefaultOpTimeout bounds each command whose context has no earlier
	// deadline, a Sync after a launch included.
	DefaultOpTimeout = 60 * time.Second
	// runnerStartTimeout bounds the runner's start (driver initialization).
	runnerStartTimeout = 60 * time.Second
	// runnerQuitTimeout is how long Close waits for a clean exit.
	runnerQuitTimeout = 5 * time.Second
)

// Runner is one runner process on one GPU. Its methods are safe for
// concurrent use; commands run one at a time.
type Runner struct {
	// OpTimeout bounds each command (default DefaultOpTimeout); a context's
	// earlier deadline wins. Time uses TimeSpec.Timeout.
	OpTimeout time.Duration

	argv []string // the runner program and its arguments
	env  []string // nil: inherit

	mu     sync.Mutex
	proc   *runnerProc
	gen    int // incremented at every (re)start; handles carry it
	nextID int // file names in dir
	dir    string
	info   *RunnerInfo // cached Info
}

// runnerProc is one running runner process.
type runnerProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string   // reply lines; closed at EOF
	exited chan struct{} // closed once the process has been waited for
	done   chan struct{} // closed by stop: nobody reads lines any more
	once   sync.Once
	state  *os.ProcessState
	stderr *tailBuffer
}

// StartRunner compiles the runner if needed (see BuildRunner) and starts it
// on the given CUDA device (an index as the driver counts them, after
// CUDA_VISIBLE_DEVICES). ctx bounds the build and the start; the process
// lives until Close.
func StartRunner(ctx context.Context, nvccPath string, cacheDir string, device int) (*Runner, error) {
	exe, err := BuildRunner(ctx, nvccPath, cacheDir)
	if err != nil {
		return nil, err
	}
	return startRunner(ctx, append(RunnerWrapper(), exe, strconv.Itoa(device)), nil)
}

// RunnerWrapper is the command that $KGEN_RUNNER_WRAPPER names, split at
// spaces, which the runner is started under: a profiler or checker such as
// "ncu --log-file ncu.txt -k softmax" or "compute-sanitizer --log-file
// cs.txt". Tools that follow child processes through libc's exec do not
// follow kgen's (Go starts processes without libc), so they must start the
// runner themselves. The wrapper must keep the runner's standard output to
// the runner (its protocol): send the tool's own report to a file.
func RunnerWrapper() []string {
	return strings.Fields(os.Getenv("KGEN_RUNNER_WRAPPER"))
}

// startRunner starts the runner program argv (with env, nil to inherit).
func startRunner(ctx context.Context, argv []string, env []string) (*Runner, error) {
	dir, err := os.MkdirTemp("", "kgen-runner-")
	if err != nil {
		return nil, err
	}
	r := &Runner{OpTimeout: DefaultOpTimeout, argv: argv, env: env, dir: dir}
	if err := r.spawn(ctx); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return r, nil
}

// runnerLinkFlagSets are tried in order: the driver library from the system
// (the GPU machine), then the toolkit's stub library (a build machine
// without a driver; the stub's soname resolves to the real driver at run
// time).
func runnerLinkFlagSets(nvccPath string) [][]string {
	sets := [][]string{{"-lcuda"}}
	seen := map[string]bool{}
	for _, d := range []string{
		filepath.Join(filepath.Dir(filepath.Dir(nvccPath)), "lib64", "stubs"),
		"/usr/local/cuda/lib64/stubs",
		"/usr/lib/x86_64-linux-gnu/stubs",
	} {
		if seen[d] {
			continue
		}
		seen[d] = true
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			sets = append(sets, []string{"-L" + d, "-lcuda"})
		}
	}
	return sets
}

// runnerCompileFlags are nvcc's flags before the output and the link flags.
var runnerCompileFlags = []string{"-O2", "-std=c++17"}

// DefaultRunnerCacheDir is where BuildRunner keeps runners when cacheDir is
// "": the user's cache directory, kgen/runner.
func DefaultRunnerCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "kgen", "runner"), nil
}

// runnerCache is cacheDir, or DefaultRunnerCacheDir where it is empty.
func runnerCache(cacheDir string) (string, error) {
	if cacheDir != "" {
		return cacheDir, nil
	}
	d, err := DefaultRunnerCacheDir()
	if err != nil {
		return "", fmt.Errorf("runner cache directory: %v", err)
	}
	return d, nil
}

// stageBuild makes a build directory in cacheDir (created where needed)
// holding source as name, and returns it with the source's path: a build
// there is renamed into the cache once it succeeds, and the caller
// removes the directory.
func stageBuild(cacheDir, prefix, name string, source []byte) (dir, src string, err error) {
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", "", err
	}
	if dir, err = os.MkdirTemp(cacheDir, prefix); err != nil {
		return "", "", err
	}
	src = filepath.Join(dir, name)
	if err := os.WriteFile(src, source, 0o644); err != nil {
		os.RemoveAll(dir)
		return "", "", err
	}
	return dir, src, nil
}

// BuildRunner compiles runner.cpp with nvcc into cacheDir, unless a runner
// built from the same source by the same nvcc is there already, and
// returns its path. The cache key is the hash of the source, the flags and
// `nvcc --version`; the binary is built in a temp dir and renamed into
// place, so concurrent builds are safe.
func BuildRunner(ctx context.Context, nvccPath, cacheDir string) (string, error) {
	cacheDir, err := runnerCache(cacheDir)
	if err != nil {
		return "", err
	}
	vctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	version, err := exec.CommandContext(vctx, nvccPath, "--version").CombinedOutput()
	cancel()
	if err != nil {
		return "", fmt.Errorf("%s --version: %v: %s", nvccPath, err, strings.TrimSpace(string(version)))
	}
	h := sha256.New()
	h.Write(runnerSource)
	h.Write([]byte{0})
	h.Write(version)
	h.Write([]byte{0})
	h.Write([]byte(strings.Join(runnerCompileFlags, " ")))
	exe := filepath.Join(cacheDir, "kgen-runner-"+hex.EncodeToString(h.Sum(nil))[:20])
	if st, err := os.Stat(exe); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
		return exe, nil
	}
	tmp, src, err := stageBuild(cacheDir, "build-", "runner.cpp", runnerSource)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "runner")
	var logs []string
	for _, link := range runnerLinkFlagSets(nvccPath) {
		args := append(append(append([]string{}, runnerCompileFlags...), "-o", out, src), link...)
		cmd := exec.CommandContext(ctx, nvccPath, args...)
		cmd.Dir = tmp
		msg, err := cmd.CombinedOutput()
		if err == nil {
			if err := os.Rename(out, exe); err != nil {
				return "", err
			}
			return exe, nil
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("compiling the runner: %v", ctx.Err())
		}
		logs = append(logs, fmt.Sprintf("$ nvcc %s\n%s(%v)", strings.Join(args, " "), msg, err))
	}
	return "", fmt.Errorf("compiling the runner with %s failed:\n%s", nvccPath, strings.Join(logs, "\n"))
}

// spawn starts a runner process and waits for its greeting. r.mu is held
// or r is not shared yet.
func (r *Runner) spawn(ctx context.Context) error {
	cmd := exec.Command(r.argv[0], r.argv[1:]...)
	cmd.Env = r.env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	// Our own pipe for stdout, so that reading it does not race with Wait.
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd.Stdout = pw
	p := &runnerProc{cmd: cmd, stdin: stdin, lines: make(chan string, 1), exited: make(chan struct{}), done: make(chan struct{}), stderr: &tailBuffer{max: 8 << 10}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return fmt.Errorf("starting the runner: %v", err)
	}
	pw.Close()
	go func() {
		defer close(p.lines)
		defer pr.Close()
		br := bufio.NewReaderSize(pr, 64<<10)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			select {
			case p.lines <- strings.TrimRight(line, "\r\n"):
			case <-p.done:
				return
			}
		}
	}()
	go func() {
		cmd.Wait()
		p.state = cmd.ProcessState
		close(p.exited)
	}()
	r.gen++
	r.proc = p
	r.info = nil

	ctx, cancel := context.WithTimeout(ctx, runnerStartTimeout)
	defer cancel()
	select {
	case line, ok := <-p.lines:
		if !ok {
			r.stop(p)
			return fmt.Errorf("the runner exited at start (%s)%s", p.exitStatus(), p.stderrText())
		}
		if line == "ok kgen-runner "+runnerProtocol {
			return nil
		}
		r.stop(p)
		if code, msg, ok := parseErrReply(line); ok {
			// No driver, no device: callers may tell this apart.
			return &RunnerError{Op: "start", Code: code, Msg: "the runner could not open the GPU: " + msg}
		}
		return fmt.Errorf("the runner's greeting is %q, want protocol %s", line, runnerProtocol)
	case <-ctx.Done():
		r.stop(p)
		return fmt.Errorf("the runner did not start: %v%s", ctx.Err(), p.stderrText())
	}
}

// stop kills p if it still runs and waits (boundedly) for it to go.
func (r *Runner) stop(p *runnerProc) {
	if p == nil {
		return
	}
	p.once.Do(func() { close(p.done) })
	p.stdin.Close()
	select {
	case <-p.exited:
	default:
		p.cmd.Process.Kill()
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second): // a process stuck in the driver; leave it
		}
	}
	if r.proc == p {
		r.proc = nil
	}
}

func (p *runnerProc) exitStatus() string {
	select {
	case <-p.exited:
		if p.state != nil {
			return p.state.String()
		}
	case <-time.After(2 * time.Second):
	}
	return "still running"
}

func (p *runnerProc) stderrText() string {
	s := strings.TrimSpace(p.stderr.String())
	if s == "" {
		return ""
	}
	return "; stderr: " + s
}

// Restart kills the runner if it still runs and starts a fresh one on the
// same device. Every module, function and buffer of the old one is gone
// (their handles are stale); callers load and allocate again.
func (r *Runner) Restart() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stop(r.proc)
	r.cleanDir()
	if err := os.MkdirAll(r.dir, 0o700); err != nil { // gone after Close
		return err
	}
	return r.spawn(context.Background())
}

// RestartAfter restarts r when err is a failure that stopped it (a crash
// or a timeout), so that the next candidate finds a runner; other errors
// leave it as it is. It returns the restart's error.
func (r *Runner) RestartAfter(err error) error {
	var f *Failure
	if errors.As(err, &f) && (f.Kind == Crash || f.Kind == Timeout) {
		return r.Restart()
	}
	return nil
}

// Close stops the runner and removes its temp directory.
func (r *Runner) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.proc; p != nil {
		io.WriteString(p.stdin, "quit\n")
		p.stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(runnerQuitTimeout):
		}
		r.stop(p)
	}
	return os.RemoveAll(r.dir)
}

// cleanDir removes the transfer files a dead runner may have left.
func (r *Runner) cleanDir() {
	ents, _ := os.ReadDir(r.dir)
	for _, e := range ents {
		os.RemoveAll(filepath.Join(r.dir, e.Name()))
	}
}

// Alive reports whether the runner process is running.
func (r *Runner) Alive() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.proc != nil
}

// parseErrReply splits "err CODE: message".
func parseErrReply(line string) (code, msg string, ok bool) {
	rest, ok := strings.CutPrefix(line, "err ")
	if !ok {
		return "", "", false
	}
	code, msg, found := strings.Cut(rest, ": ")
	if !found {
		return strings.TrimSpace(rest), "", true
	}
	return code, msg, true
}

// classify turns an error reply to command op into a Failure or a
// RunnerError.
func classify(op, code, msg string) error {
	isCUDA := strings.HasPrefix(code, "CUDA_ERROR_")
	switch {
	case stickyCodes[code]:
		return &Failure{Kind: Crash, Op: op, Code: code, Msg: msg}
	case code == "CUDA_ERROR_OUT_OF_MEMORY" || code == "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES":
		return &Failure{Kind: ResourceLimit, Op: op, Code: code, Msg: msg}
	case (op == "launch" || op == "time") && strings.HasPrefix(msg, "cuFuncSetAttribute"):
		return &Failure{Kind: ResourceLimit, Op: op, Code: code, Msg: msg}
	case isCUDA && (op == "load" || op == "func"):
		return &Failure{Kind: CompileError, Op: op, Code: code, Msg: msg}
	case isCUDA && (op == "launch" || op == "time" || op == "sync"):
		return &Failure{Kind: LaunchFailure, Op: op, Code: code, Msg: msg}
	}
	return &RunnerError{Op: op, Code: code, Msg: msg}
}

// do sends one command and returns the text after "ok". A dead or
// overdue runner is stopped and reported as a Crash or Timeout Failure.
func (r *Runner) do(ctx context.Context, timeout time.Duration, line string) (string, error) {
	op, _, _ := strings.Cut(line, " ")
	if strings.ContainsAny(line, "\n\r") {
		return "", &RunnerError{Op: op, Code: "EPROTO", Msg: "a command may not hold a line break"}
	}
	p := r.proc
	if p == nil {
		return "", ErrRunnerStopped
	}
	if timeout <= 0 {
		timeout = r.OpTimeout
	}
	if timeout <= 0 {
		timeout = DefaultOpTimeout
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()

	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		// The runner is gone; its exit status says why.
		r.stop(p)
		return "", &Failure{Kind: Crash, Op: op, Msg: "the runner died (" + p.exitStatus() + ")" + p.stderrText()}
	}
	select {
	case reply, ok := <-p.lines:
		if !ok {
			status := p.exitStatus()
			r.stop(p)
			return "", &Failure{Kind: Crash, Op: op, Msg: "the runner died (" + status + ")" + p.stderrText()}
		}
		if reply == "ok" {
			return "", nil
		}
		if rest, ok := strings.CutPrefix(reply, "ok "); ok {
			return rest, nil
		}
		code, msg, ok := parseErrReply(reply)
		if !ok {
			r.stop(p)
			return "", &RunnerError{Op: op, Code: "EPROTO", Msg: fmt.Sprintf("unexpected reply %q", reply)}
		}
		if stickyCodes[code] {
			// The runner exits by itself; make sure it is gone.
			select {
			case <-p.exited:
			case <-time.After(5 * time.Second):
			}
			r.stop(p)
		}
		return "", classify(op, code, msg)
	case <-timer.C:
		r.stop(p)
		return "", &Failure{Kind: Timeout, Op: op, Msg: fmt.Sprintf("no reply within %v; the runner was killed", timeout)}
	case <-ctx.Done():
		r.stop(p)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return "", &Failure{Kind: Timeout, Op: op, Msg: "deadline exceeded; the runner was killed"}
		}
		return "", fmt.Errorf("runner %s: %w (the runner was stopped)", op, ctx.Err())
	}
}

// call locks the runner and runs one command.
func (r *Runner) call(ctx context.Context, line string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.do(ctx, 0, line)
}

func (r *Runner) stale(op string, gen int) error {
	if gen != r.gen {
		return &RunnerError{Op: op, Code: "ESTALE", Msg: "handle from a runner that has been restarted"}
	}
	return nil
}

func parseID(op, s string) (int, error) {
	id, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, &RunnerError{Op: op, Code: "EPROTO", Msg: fmt.Sprintf("bad reply %q", s)}
	}
	return id, nil
}

// Load loads a cubin (or PTX, or fatbin) into the runner's context.
func (r *Runner) Load(ctx context.Context, path string) (Module, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Module{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rest, err := r.do(ctx, 0, "load "+abs)
	if err != nil {
		return Module{}, err
	}
	id, err := parseID("load", rest)
	return Module{id: id, gen: r.gen, Path: abs}, err
}

// Unload unloads a module; its functions become invalid.
func (r *Runner) Unload(ctx context.Context, m Module) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.stale("unload", m.gen); err != nil {
		return err
	}
	_, err := r.do(ctx, 0, fmt.Sprintf("unload %d", m.id))
	return err
}

// Func looks up a kernel entry point (its extern "C" name) in a module.
func (r *Runner) Func(ctx context.Context, m Module, name string) (Function, error) {
	if name == "" || strings.ContainsAny(name, " \t\r\n") {
		return Function{}, &RunnerError{Op: "func", Code: "EPROTO", Msg: fmt.Sprintf("bad kernel name %q", name)}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.stale("func", m.gen); err != nil {
		return Function{}, err
	}
	rest, err := r.do(ctx, 0, fmt.Sprintf("func %d %s", m.id, name))
	if err != nil {
		return Function{}, err
	}
	f, err := parseFuncReply(rest)
	f.gen, f.Name = r.gen, name
	return f, err
}

// MaxActiveClusters is how many clusters of cluster blocks of threads
// threads, with smem bytes of dynamic shared memory, the GPU holds at once
// running f (cuOccupancyMaxActiveClusters); 0 where none fits.
func (r *Runner) MaxActiveClusters(ctx context.Context, f Function, threads, smem, cluster int) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.stale("clusters", f.gen); err != nil {
		return 0, err
	}
	rest, err := r.do(ctx, 0, fmt.Sprintf("clusters %d %d %d %d", f.id, threads, smem, cluster))
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(rest))
	if err != nil || n < 0 {
		return 0, &RunnerError{Op: "clusters", Code: "EPROTO", Msg: fmt.Sprintf("bad reply %q", rest)}
	}
	return n, nil
}

func parseFuncReply(rest string) (Function, error) {
	var f Function
	n, err := fmt.Sscanf(rest, "%d %d %d %d", &f.id, &f.Regs, &f.StaticSmem, &f.MaxThreads)
	if err != nil || n != 4 {
		return Function{}, &RunnerError{Op: "func", Code: "EPROTO", Msg: fmt.Sprintf("bad reply %q", rest)}
	}
	return f, nil
}

// Alloc allocates device memory (0 bytes is allowed: a null pointer).
func (r *Runner) Alloc(ctx context.Context, bytes int64) (Buffer, error) {
	if bytes < 0 {
		return Buffer{}, &RunnerError{Op: "alloc", Code: "EPROTO", Msg: "negative size"}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rest, err := r.do(ctx, 0, fmt.Sprintf("alloc %d", bytes))
	if err != nil {
		return Buffer{}, err
	}
	id, err := parseID("alloc", rest)
	return Buffer{id: id, gen: r.gen, Size: bytes}, err
}

// Free frees device memory.
func (r *Runner) Free(ctx context.Context, b Buffer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.stale("free", b.gen); err != nil {
		return err
	}
	_, err := r.do(ctx, 0, fmt.Sprintf("free %d", b.id))
	return err
}

// transferPath names a fresh file in the runner's temp dir. r.mu is held.
func (r *Runner) transferPath(kind string) string {
	r.nextID++
	return filepath.Join(r.dir, fmt.Sprintf("%s%d.bin", kind, r.nextID))
}

// Write copies data to the buffer; len(data) must equal its size.
func (r *Runner) Write(ctx context.Context, b Buffer, data []byte) error {
	if int64(len(data)) != b.Size {
		return &RunnerError{Op: "write", Code: "ESIZE", Msg: fmt.Sprintf("%d bytes for a buffer of %d", len(data), b.Size)}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.stale("write", b.gen); err != nil {
		return err
	}
	path := r.transferPath("w")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return err
	}
	defer os.Remove(path)
	_, err := r.do(ctx, 0, fmt.Sprintf("write %d %s", b.id, path))
	return err
}

// Read copies the buffer's contents back.
func (r *Runner) Read(ctx context.Context, b Buffer) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.stale("read", b.gen); err != nil {
		return nil, err
	}
	path := r.transferPath("r")
	defer os.Remove(path)
	if _, err := r.do(ctx, 0, fmt.Sprintf("read %d %s", b.id, path)); err != nil {
		os.Remove(path + ".tmp")
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != b.Size {
		return nil, &RunnerError{Op: "read", Code: "ESIZE", Msg: fmt.Sprintf("got %d bytes from a buffer of %d", len(data), b.Size)}
	}
	return data, nil
}

// Fill sets every byte of the buffer to v (0xFF poisons floats with NaN).
func (r *Runner) Fill(ctx context.Context, b Buffer, v byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.stale("fill", b.gen); err != nil {
		return err
	}
	_, err := r.do(ctx, 0, fmt.Sprintf("fill %d %d", b.id, v))
	return err
}

// launchText formats LAUNCHSPEC (FN GX GY GZ BX BY BZ SMEM NARGS ARG...),
// checking the handles and the block size against the kernel's limit.
func (r *Runner) launchText(op string, s LaunchSpec) (string, error) {
	if err := r.stale(op, s.Func.gen); err != nil {
		return "", err
	}
	threads := 1
	for d := 0; d < 3; d++ {
		if s.Grid[d] < 1 || s.Block[d] < 1 {
			return "", &RunnerError{Op: op, Code: "EPROTO", Msg: fmt.Sprintf("grid %v and block %v must be at least 1 in every dimension", s.Grid, s.Block)}
		}
		threads *= s.Block[d]
	}
	if s.Smem < 0 {
		return "", &RunnerError{Op: op, Code: "EPROTO", Msg: "negative shared memory"}
	}
	if s.Func.MaxThreads > 0 && threads > s.Func.MaxThreads {
		return "", &Failure{Kind: ResourceLimit, Op: op, Msg: fmt.Sprintf("block %v has %d threads; %s allows at most %d", s.Block, threads, s.Func.Name, s.Func.MaxThreads)}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d %d %d %d %d %d %d %d %d", s.Func.id, s.Grid[0], s.Grid[1], s.Grid[2], s.Block[0], s.Block[1], s.Block[2], s.Smem, len(s.Args))
	for _, a := range s.Args {
		b.WriteByte(' ')
		if a.buf != nil {
			if err := r.stale(op, a.buf.gen); err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "b%d", a.buf.id)
		} else if a.text != "" {
			b.WriteString(a.text)
		} else {
			return "", &RunnerError{Op: op, Code: "EPROTO", Msg: "empty kernel argument"}
		}
	}
	return b.String(), nil
}

// Launch enqueues a kernel launch; it returns before the kernel ends, so a
// kernel's own failure (illegal address, hang) shows at the next Sync or
// Read.
func (r *Runner) Launch(ctx context.Context, s LaunchSpec) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	text, err := r.launchText("launch", s)
	if err != nil {
		return err
	}
	_, err = r.do(ctx, 0, "launch "+text)
	return err
}

// Sync waits for all launched work (cuCtxSynchronize). Give a hung kernel's
// context a deadline, or the OpTimeout applies.
func (r *Runner) Sync(ctx context.Context) error {
	_, err := r.call(ctx, "sync")
	return err
}

// Info describes the runner's GPU.
func (r *Runner) Info(ctx context.Context) (RunnerInfo, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.infoLocked(ctx)
}

func (r *Runner) infoLocked(ctx context.Context) (RunnerInfo, error) {
	if r.info != nil {
		return *r.info, nil
	}
	rest, err := r.do(ctx, 0, "info")
	if err != nil {
		return RunnerInfo{}, err
	}
	info, err := parseInfoReply(rest)
	if err != nil {
		return RunnerInfo{}, err
	}
	r.info = &info
	return info, nil
}

func parseInfoReply(rest string) (RunnerInfo, error) {
	f := strings.Split(rest, "|")
	bad := &RunnerError{Op: "info", Code: "EPROTO", Msg: fmt.Sprintf("bad reply %q", rest)}
	if len(f) < 7 {
		return RunnerInfo{}, bad
	}
	nums := make([]int64, len(f))
	for i := 1; i < len(f); i++ {
		v, err := strconv.ParseInt(strings.TrimSpace(f[i]), 10, 64)
		if err != nil {
			return RunnerInfo{}, bad
		}
		nums[i] = v
	}
	info := RunnerInfo{
		Name:          strings.TrimSpace(f[0]),
		CCMajor:       int(nums[1]),
		CCMinor:       int(nums[2]),
		SMs:           int(nums[3]),
		L2Bytes:       nums[4],
		MemBytes:      nums[5],
		DriverVersion: int(nums[6]),
	}
	if len(f) > 8 {
		info.SmemOptin = nums[7]
		info.MaxThreads = int(nums[8])
	}
	return info, nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
