package runtime

// The timing protocol (issue 3, section 5), run inside the runner so that
// nothing but the GPU's own clock (CUDA events) is in the measurement:
//
//   - a warm-up of at least WarmupMS (25 ms), which also estimates one run;
//   - then at least max(MinReps, MinMS worth) samples (10, 100 ms), each
//     timed with CUDA events around the run;
//   - before each sample, outside the timed region, an L2 flush: a memset
//     of a scratch buffer of FlushBytes (twice the L2 size by default), as
//     triton.testing.do_bench flushes, or with Flush "read" a read of it
//     (runner.cpp's Scratch says what each costs or credits the kernel),
//     or with Flush "clean" a read, every sample then a CUDA graph that
//     ends with one more flush, less the graph of the flushes alone: a
//     run starts from a clean L2 and pays for writing back its own writes,
//     nothing else's;
//   - with Graph (for small kernels, whose launch latency would otherwise
//     be measured), each sample is a CUDA graph of K runs, each after its
//     own flush, K chosen so that the runs take at least ~20 us, less a
//     graph of the K flushes alone, divided by K: every run starts from a
//     flushed L2, as a single run does (one flush before K runs would let
//     runs 2..K read data that fits in the L2 from it);
//   - the median, p20 and p80 of the samples, the number of samples and the
//     SM clock read through NVML during the run (0 without NVML).

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// The L2 flush's kinds (TimeSpec.Flush).
const (
	FlushRead  = "read"
	FlushWrite = "write"
	FlushClean = "clean"
)

// CheckFlush reports whether kind names an L2 flush ("" is FlushWrite).
func CheckFlush(kind string) error {
	switch kind {
	case "", FlushRead, FlushWrite, FlushClean:
		return nil
	}
	return fmt.Errorf("unknown L2 flush %q (want %s, %s or %s)", kind, FlushWrite, FlushRead, FlushClean)
}

// orFlush is kind, or FlushWrite (the default) when it is empty.
func orFlush(kind string) string {
	if kind == "" {
		return FlushWrite
	}
	return kind
}

// Defaults of the timing protocol.
const (
	DefaultWarmupMS = 25
	DefaultMinReps  = 10
	DefaultMinMS    = 100
	// DefaultTimeTimeout bounds one Time call.
	DefaultTimeTimeout = 5 * time.Minute
	// DefaultCopyBytes is the size CopyBandwidth copies when given 0.
	DefaultCopyBytes = 1 << 30
)

// TimeSpec is one timing request; zero fields take the defaults.
type TimeSpec struct {
	// Launches are one run: a plan's launches in order, timed together.
	Launches   []LaunchSpec
	WarmupMS   float64 // default 25
	MinReps    int     // default 10
	MinMS      float64 // default 100
	FlushBytes int64   // 0: twice the device's L2; negative: no flush
	Flush      string  // how: FlushWrite ("" too), FlushRead or FlushClean
	Graph      bool    // time CUDA graphs of K flushed runs, less their flushes, divided by K
	Timeout    time.Duration
}

// Timing is the result of the timing protocol. Times are per kernel run,
// in microseconds.
type Timing struct {
	MedianUS float64 `json:"median_us"`
	P20US    float64 `json:"p20_us"`
	P80US    float64 `json:"p80_us"`
	Reps     int     `json:"reps"`      // samples taken
	ClockMHz int     `json:"clock_mhz"` // SM clock during the run (NVML), 0 when unknown
	Batch    int     `json:"batch"`     // launches per graph sample; 0 when no graph was used
}

func (t Timing) String() string {
	s := fmt.Sprintf("median %.3f us (p20 %.3f, p80 %.3f) over %d samples", t.MedianUS, t.P20US, t.P80US, t.Reps)
	if t.Batch > 0 {
		s += fmt.Sprintf(", CUDA graphs of %d launches", t.Batch)
	}
	if t.ClockMHz > 0 {
		s += fmt.Sprintf(", SM clock %d MHz", t.ClockMHz)
	}
	return s
}

// GBps is the achieved bandwidth when one run moves bytes (read plus
// written), in GB/s (1e9 bytes a second).
func (t Timing) GBps(bytes float64) float64 {
	if t.MedianUS <= 0 {
		return 0
	}
	return bytes / (t.MedianUS * 1e-6) / 1e9
}

// TFLOPs is the achieved rate when one run does flops floating-point
// operations, in TFLOP/s.
func (t Timing) TFLOPs(flops float64) float64 {
	if t.MedianUS <= 0 {
		return 0
	}
	return flops / (t.MedianUS * 1e-6) / 1e12
}

// GraphBelowUS is the run time under which TimeShortAsGraphs times runs
// as CUDA graphs: below it, the host's launch latency would be measured.
const GraphBelowUS = 20

// TimeShortAsGraphs times with spec through time, as CUDA graphs when a
// run takes under GraphBelowUS. Which it is, a probe of ten flushed
// samples tells first: the full protocol without graphs takes 100 ms
// worth of runs, each after a flush of tens of microseconds, so a run of
// 2 us would spend two seconds in flushes only to learn that it must be
// timed as graphs. A spec that asks for graphs, or for the clean flush
// (always graphs), is timed as it is.
func TimeShortAsGraphs(spec TimeSpec, time func(TimeSpec) (Timing, error)) (Timing, error) {
	if spec.Graph || spec.Flush == FlushClean {
		return time(spec)
	}
	probe := spec
	probe.MinReps, probe.MinMS = DefaultMinReps, 1e-3
	tm, err := time(probe)
	if err != nil {
		return tm, err
	}
	spec.Graph = tm.MedianUS < GraphBelowUS
	return time(spec)
}

// timeText formats "WARMUP_MS MIN_REPS MIN_MS FLUSH GRAPH" with the
// defaults applied, FLUSH being 0, read:BYTES or write:BYTES; l2 is the
// device's L2 size.
func (s TimeSpec) timeText(l2 int64) string {
	warm, reps, minMS := s.WarmupMS, s.MinReps, s.MinMS
	if warm <= 0 {
		warm = DefaultWarmupMS
	}
	if reps <= 0 {
		reps = DefaultMinReps
	}
	if minMS <= 0 {
		minMS = DefaultMinMS
	}
	flush := s.FlushBytes
	if flush == 0 {
		flush = 2 * l2
	}
	flushText := "0"
	if flush > 0 {
		flushText = fmt.Sprintf("%s:%d", orFlush(s.Flush), flush)
	}
	graph := 0
	if s.Graph {
		graph = 1
	}
	return fmt.Sprintf("%s %d %s %s %d", strconv.FormatFloat(warm, 'g', -1, 64), reps, strconv.FormatFloat(minMS, 'g', -1, 64), flushText, graph)
}

// parseTimeReply parses "MEDIAN_US P20_US P80_US REPS CLOCK_MHZ [BATCH]".
func parseTimeReply(rest string) (Timing, error) {
	f := strings.Fields(rest)
	bad := &RunnerError{Op: "time", Code: "EPROTO", Msg: fmt.Sprintf("bad reply %q", rest)}
	if len(f) < 5 {
		return Timing{}, bad
	}
	var t Timing
	var err error
	fl := []*float64{&t.MedianUS, &t.P20US, &t.P80US}
	for i, p := range fl {
		if *p, err = strconv.ParseFloat(f[i], 64); err != nil || math.IsNaN(*p) {
			return Timing{}, bad
		}
	}
	ints := []*int{&t.Reps, &t.ClockMHz, &t.Batch}
	for i, p := range ints {
		if 3+i >= len(f) {
			break
		}
		if *p, err = strconv.Atoi(f[3+i]); err != nil {
			return Timing{}, bad
		}
	}
	return t, nil
}

// Time runs the timing protocol on a run of launches. The launch's outputs are
// overwritten many times; inputs are left as they are (as far as the kernel
// does). A kernel that crashes or hangs gives a Crash or Timeout Failure.
func (r *Runner) Time(ctx context.Context, s TimeSpec) (Timing, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(s.Launches) == 0 {
		return Timing{}, &RunnerError{Op: "time", Code: "EPROTO", Msg: "nothing to time"}
	}
	protocol, err := r.protocolLocked(ctx, "time", s)
	if err != nil {
		return Timing{}, err
	}
	var texts []string
	for _, l := range s.Launches {
		text, err := r.launchText("time", l)
		if err != nil {
			return Timing{}, err
		}
		texts = append(texts, text)
	}
	rest, err := r.do(ctx, s.timeout(), "time "+protocol+" "+strings.Join(texts, " "))
	if err != nil {
		return Timing{}, err
	}
	return parseTimeReply(rest)
}

// TimeCopy times a device-to-device copy of bytes under s's protocol (its
// launches aside), as Time times a kernel: the ceiling of a memory-bound
// launch that reads bytes and writes as many, where the copy bandwidth
// (CopyBandwidth) is a large copy's. A small copy reaches less of it.
func (r *Runner) TimeCopy(ctx context.Context, bytes int64, s TimeSpec) (Timing, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if bytes <= 0 {
		return Timing{}, &RunnerError{Op: "copytime", Code: "EPROTO", Msg: fmt.Sprintf("a copy of %d bytes", bytes)}
	}
	protocol, err := r.protocolLocked(ctx, "copytime", s)
	if err != nil {
		return Timing{}, err
	}
	rest, err := r.do(ctx, s.timeout(), fmt.Sprintf("copytime %d %s", bytes, protocol))
	if err != nil {
		return Timing{}, err
	}
	return parseTimeReply(rest)
}

// timeout is how long the runner may take to time s: s.Timeout, else
// DefaultTimeTimeout.
func (s TimeSpec) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultTimeTimeout
}

// protocolLocked checks s's flush and formats its protocol for the
// runner's op (timeText), asking the device's L2 size where the flush
// takes its default.
func (r *Runner) protocolLocked(ctx context.Context, op string, s TimeSpec) (string, error) {
	if err := CheckFlush(s.Flush); err != nil {
		return "", &RunnerError{Op: op, Code: "EPROTO", Msg: err.Error()}
	}
	var l2 int64
	if s.FlushBytes == 0 {
		info, err := r.infoLocked(ctx)
		if err != nil {
			return "", err
		}
		l2 = info.L2Bytes
	}
	return s.timeText(l2), nil
}

// CopyBandwidth measures device-to-device copy bandwidth (cuMemcpyDtoD of
// bytes, 1 GiB when 0) with the same warm-up and sampling, counting bytes
// read and written, in GB/s: the memory-bound kernels' ceiling.
func (r *Runner) CopyBandwidth(ctx context.Context, bytes int64) (float64, error) {
	if bytes <= 0 {
		bytes = DefaultCopyBytes
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rest, err := r.do(ctx, DefaultTimeTimeout, fmt.Sprintf("copybw %d", bytes))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(rest)
	if len(f) < 1 {
		return 0, &RunnerError{Op: "copybw", Code: "EPROTO", Msg: fmt.Sprintf("bad reply %q", rest)}
	}
	gbps, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0, &RunnerError{Op: "copybw", Code: "EPROTO", Msg: fmt.Sprintf("bad reply %q", rest)}
	}
	return gbps, nil
}
