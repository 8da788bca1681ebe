// kgen runner: a small out-of-process program that loads compiled kernels
// (cubins), moves data through files, launches and times kernels on one GPU
// through the CUDA driver API. kgen (runtime/runner.go) compiles this file
// with nvcc on the machine where it runs and drives it over stdin/stdout with
// a line protocol: one command per line, one reply line per command, either
// "ok ..." or "err CODE: message". The runner is deliberately dumb: kgen
// evaluates grids, sizes and arguments and sends concrete numbers.
//
// Start: runner DEVICE_INDEX. First line printed: "ok kgen-runner 1" once
// the device's primary context is current, or "err CODE: ..." and exit 2.
//
//   load PATH                 -> ok MOD        (cuModuleLoad of a cubin/PTX/fatbin)
//   unload MOD                -> ok            (cuModuleUnload; its functions are gone)
//   func MOD NAME             -> ok FN REGS SMEM_STATIC MAXTHREADS
//   alloc BYTES               -> ok BUF        (0 bytes gives a null buffer)
//   free BUF                  -> ok
//   write BUF PATH            -> ok            (file size must equal the buffer size)
//   read BUF PATH             -> ok            (written to PATH.tmp, then renamed)
//   fill BUF BYTE             -> ok            (cuMemsetD8)
//   launch LAUNCHSPEC         -> ok            (asynchronous; errors show at sync)
//   clusters FN BX SMEM C     -> ok N          (clusters of C blocks of BX threads
//                                with SMEM bytes of dynamic shared memory
//                                that fit on the GPU at once,
//                                cuOccupancyMaxActiveClusters; 0 if none)
//   sync                      -> ok            (cuCtxSynchronize)
//   time WARMUP_MS MIN_REPS MIN_MS FLUSH GRAPH LAUNCHSPEC
//                             -> ok MEDIAN_US P20_US P80_US REPS CLOCK_MHZ BATCH
//                                (FLUSH: 0, read:BYTES or write:BYTES; see Scratch)
//   copybw BYTES              -> ok GBPS MEDIAN_US
//   copytime BYTES WARMUP_MS MIN_REPS MIN_MS FLUSH GRAPH
//                             -> as time, for a device-to-device copy of
//                                BYTES (cuMemcpyDtoDAsync) under the same
//                                protocol as a kernel's
//   info                      -> ok NAME|CC_MAJOR|CC_MINOR|SMS|L2_BYTES|MEM_BYTES|DRIVER_VERSION|SMEM_OPTIN|MAX_THREADS
//   quit                      -> exit 0, no reply
//
//   LAUNCHSPEC = FN GX GY GZ BX BY BZ SMEM NARGS ARG...
//   ARG = bBUF | i64:V | i32:V | u16:V | f32:V | f64:V   (floats: decimal or C hex float)
//
// Error codes: a CUDA error name (CUDA_ERROR_...) when the driver reported
// one, EPROTO for a malformed command or an unknown handle, EIO for a file
// error, ESIZE for a size mismatch. After a sticky CUDA error (illegal
// address, trap, misaligned address, ...) the context is dead: the runner
// replies with the error and exits with status 3.
//
// Kernel printf output and driver chatter go to stderr: the protocol uses a
// private copy of the original stdout.

#include <cuda.h>
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

const int kExitInit = 2;
const int kExitFatal = 3;
const int kExitIO = 4;

FILE* proto = nullptr;  // the protocol channel
CUdevice dev;
CUcontext ctx;
CUstream stream;

struct Fail {
  std::string code, msg;
  bool fatal;
};

[[noreturn]] void fail(const std::string& code, const std::string& msg) {
  throw Fail{code, msg, false};
}

bool sticky(CUresult r) {
  switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_UNKNOWN:
      return true;
    default:
      return false;
  }
}

void check(CUresult r, const char* call) {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  const char* desc = nullptr;
  if (cuGetErrorName(r, &name) != CUDA_SUCCESS || !name) name = "CUDA_ERROR_UNRECOGNIZED";
  if (cuGetErrorString(r, &desc) != CUDA_SUCCESS || !desc) desc = "";
  throw Fail{name, std::string(call) + ": " + desc + " (" + std::to_string((int)r) + ")", sticky(r)};
}

void reply(const std::string& line) {
  if (fputs(line.c_str(), proto) < 0 || fputc('\n', proto) < 0 || fflush(proto) != 0) {
    _exit(kExitIO);  // kgen is gone
  }
}

// ---- parsing ----

long long parseInt(const std::string& s, const char* what) {
  if (s.empty()) fail("EPROTO", std::string("empty ") + what);
  errno = 0;
  char* end = nullptr;
  long long v = strtoll(s.c_str(), &end, 0);
  if (errno != 0 || *end != 0) fail("EPROTO", std::string("bad ") + what + " '" + s + "'");
  return v;
}

long long parseNonNeg(const std::string& s, const char* what) {
  long long v = parseInt(s, what);
  if (v < 0) fail("EPROTO", std::string("negative ") + what + " '" + s + "'");
  return v;
}

double parseDouble(const std::string& s, const char* what) {
  if (s.empty()) fail("EPROTO", std::string("empty ") + what);
  char* end = nullptr;
  double v = strtod(s.c_str(), &end);
  if (*end != 0) fail("EPROTO", std::string("bad ") + what + " '" + s + "'");
  return v;
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> t;
  size_t i = 0, n = line.size();
  while (i < n) {
    while (i < n && (line[i] == ' ' || line[i] == '\t')) i++;
    size_t j = i;
    while (j < n && line[j] != ' ' && line[j] != '\t') j++;
    if (j > i) t.push_back(line.substr(i, j - i));
    i = j;
  }
  return t;
}

// rest returns the text after the first k whitespace-separated fields of
// line (a path may hold spaces).
std::string rest(const std::string& line, int k) {
  size_t i = 0, n = line.size();
  for (int f = 0; f < k; f++) {
    while (i < n && (line[i] == ' ' || line[i] == '\t')) i++;
    while (i < n && line[i] != ' ' && line[i] != '\t') i++;
  }
  while (i < n && (line[i] == ' ' || line[i] == '\t')) i++;
  return line.substr(i);
}

void nargs(const std::vector<std::string>& t, size_t n, const char* usage) {
  if (t.size() != n) fail("EPROTO", std::string("usage: ") + usage);
}

// ---- handles ----

struct Buffer {
  CUdeviceptr ptr;
  size_t size;
};

long long nextId = 1;
std::map<long long, CUmodule> modules;
std::map<long long, CUfunction> funcs;
std::map<long long, long long> funcModule;
std::map<long long, Buffer> buffers;

Buffer& buffer(const std::string& s) {
  auto it = buffers.find(parseInt(s, "buffer id"));
  if (it == buffers.end()) fail("EPROTO", "unknown buffer " + s);
  return it->second;
}

CUfunction function(const std::string& s) {
  auto it = funcs.find(parseInt(s, "function id"));
  if (it == funcs.end()) fail("EPROTO", "unknown function " + s);
  return it->second;
}

// ---- launches ----

struct Launch {
  CUfunction f;
  unsigned grid[3], block[3], smem;
  std::vector<uint64_t> slots;  // one 8-byte slot per argument
  std::vector<void*> params;
};

// allowSmem lets f take smem bytes of dynamic shared memory, which above
// 48 KiB a function must opt into.
void allowSmem(CUfunction f, unsigned smem) {
  if (smem > 48 * 1024) {
    check(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem),
          "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  }
}

// parseLaunch reads FN GX GY GZ BX BY BZ SMEM NARGS ARG... from t[i:] and
// returns the index after it.
size_t parseLaunch(const std::vector<std::string>& t, size_t i, Launch& L) {
  if (t.size() < i + 9) fail("EPROTO", "launch spec: FN GX GY GZ BX BY BZ SMEM NARGS ARG...");
  L.f = function(t[i]);
  for (int d = 0; d < 3; d++) {
    long long g = parseInt(t[i + 1 + d], "grid size");
    long long b = parseInt(t[i + 4 + d], "block size");
    if (g < 1 || g > 0xffffffffLL || b < 1 || b > 0xffffffffLL) fail("EPROTO", "grid and block sizes must be >= 1");
    L.grid[d] = (unsigned)g;
    L.block[d] = (unsigned)b;
  }
  long long smem = parseNonNeg(t[i + 7], "shared memory bytes");
  if (smem > 0xffffffffLL) fail("EPROTO", "shared memory bytes too large");
  L.smem = (unsigned)smem;
  long long n = parseNonNeg(t[i + 8], "argument count");
  if ((long long)t.size() < (long long)i + 9 + n)
    fail("EPROTO", "argument count " + t[i + 8] + " is more than the " + std::to_string(t.size() - i - 9) + " arguments given");
  L.slots.assign(n, 0);
  L.params.resize(n);
  for (long long a = 0; a < n; a++) {
    const std::string& s = t[i + 9 + a];
    void* slot = &L.slots[a];
    L.params[a] = slot;
    if (s.size() > 1 && s[0] == 'b' && s.find(':') == std::string::npos) {
      CUdeviceptr p = buffer(s.substr(1)).ptr;
      memcpy(slot, &p, sizeof p);
      continue;
    }
    size_t colon = s.find(':');
    if (colon == std::string::npos) fail("EPROTO", "bad argument '" + s + "' (bBUF, i64:, i32:, u16:, f32:, f64:)");
    std::string ty = s.substr(0, colon), v = s.substr(colon + 1);
    if (ty == "i64") {
      int64_t x;
      if (!v.empty() && v[0] != '-') {
        errno = 0;
        char* end = nullptr;
        unsigned long long u = strtoull(v.c_str(), &end, 0);
        if (errno != 0 || *end != 0 || v.empty()) fail("EPROTO", "bad i64 '" + v + "'");
        x = (int64_t)u;
      } else {
        x = parseInt(v, "i64");
      }
      memcpy(slot, &x, sizeof x);
    } else if (ty == "i32") {
      long long x = parseInt(v, "i32");
      if (x < INT32_MIN || x > (long long)UINT32_MAX) fail("EPROTO", "i32 out of range '" + v + "'");
      uint32_t u = (uint32_t)x;
      memcpy(slot, &u, sizeof u);
    } else if (ty == "u16") {
      long long x = parseInt(v, "u16");
      if (x < 0 || x > 0xffff) fail("EPROTO", "u16 out of range '" + v + "'");
      uint16_t u = (uint16_t)x;
      memcpy(slot, &u, sizeof u);
    } else if (ty == "f32") {
      char* end = nullptr;
      float x = strtof(v.c_str(), &end);
      if (v.empty() || *end != 0) fail("EPROTO", "bad f32 '" + v + "'");
      memcpy(slot, &x, sizeof x);
    } else if (ty == "f64") {
      double x = parseDouble(v, "f64");
      memcpy(slot, &x, sizeof x);
    } else {
      fail("EPROTO", "bad argument type '" + ty + "'");
    }
  }
  allowSmem(L.f, L.smem);
  return i + 9 + (size_t)n;
}

void launch(Launch& L) {
  check(cuLaunchKernel(L.f, L.grid[0], L.grid[1], L.grid[2], L.block[0], L.block[1], L.block[2], L.smem, stream,
                       L.params.empty() ? nullptr : L.params.data(), nullptr),
        "cuLaunchKernel");
}

// ---- NVML, loaded at run time so that the runner needs only libcuda ----

typedef int (*nvmlInit_t)(void);
typedef int (*nvmlByBus_t)(const char*, void**);
typedef int (*nvmlClock_t)(void*, int, unsigned*);

struct Nvml {
  bool tried = false;
  void* nvdev = nullptr;
  nvmlClock_t clock = nullptr;

  // smClockMHz returns the current SM clock, or 0 when NVML is missing.
  int smClockMHz() {
    if (!tried) {
      tried = true;
      void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
      if (!h) return 0;
      auto init = (nvmlInit_t)dlsym(h, "nvmlInit_v2");
      auto byBus = (nvmlByBus_t)dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2");
      clock = (nvmlClock_t)dlsym(h, "nvmlDeviceGetClockInfo");
      char bus[64] = {0};
      if (!init || !byBus || !clock || init() != 0 || cuDeviceGetPCIBusId(bus, sizeof bus, dev) != CUDA_SUCCESS ||
          byBus(bus, &nvdev) != 0) {
        nvdev = nullptr;
      }
    }
    if (!nvdev) return 0;
    unsigned mhz = 0;
    if (clock(nvdev, /*NVML_CLOCK_SM*/ 1, &mhz) != 0) return 0;
    return (int)mhz;
  }
} nvml;

// ---- timing ----

struct Events {
  std::vector<CUevent> ev;
  explicit Events(size_t n) {
    for (size_t i = 0; i < n; i++) {
      CUevent e;
      check(cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
      ev.push_back(e);
    }
  }
  ~Events() {
    for (CUevent e : ev) cuEventDestroy(e);
  }
};

// The L2 flush before each timed run: a scratch buffer of twice the L2 is
// written (a memset, as triton.testing.do_bench flushes; kgen's default)
// or read. A write leaves the L2 full of dirty lines, and the timed
// kernel's misses pay for writing them back: about 10 us on a 64 MiB read
// on the H100 (testsuite/results/2026-11-26-h100-s8-flush/), as a kernel
// after others that wrote would. A read leaves clean lines, which evict
// for free, and the L2 then absorbs up to its size of the kernel's own
// writes before the timed region ends: kernels that write tens of MiB
// measure above the copy bandwidth (-s11-flush-kinds/). The two bound a
// kernel's time from either side. The clean flush charges a run for its
// own traffic and nothing else: read flushes, every run timed in a graph
// that ends with one more flush, less the graph of the flushes alone (see
// measure).
//
// kg_flush_read reads the buffer in 16-byte vectors, grid-stride, and stores
// the XOR of what it read only when that is non-zero; the buffer is zeroed
// once, so it never stores, but the compiler cannot know that.
const char* flushPTX = R"(
.version 6.0
.target sm_50
.address_size 64

.visible .entry kg_flush_read(.param .u64 buf, .param .u64 n16)
{
  .reg .pred p;
  .reg .b32 r<10>;
  .reg .b64 rd<10>;
  ld.param.u64 rd1, [buf];
  ld.param.u64 rd2, [n16];
  cvta.to.global.u64 rd1, rd1;
  mov.u32 r1, %ctaid.x;
  mov.u32 r2, %ntid.x;
  mov.u32 r3, %tid.x;
  mov.u32 r4, %nctaid.x;
  mul.wide.u32 rd3, r1, r2;
  cvt.u64.u32 rd4, r3;
  add.u64 rd3, rd3, rd4;
  mul.wide.u32 rd5, r4, r2;
  mov.u32 r5, 0;
LOOP:
  setp.ge.u64 p, rd3, rd2;
  @p bra DONE;
  shl.b64 rd6, rd3, 4;
  add.u64 rd6, rd1, rd6;
  ld.global.v4.u32 {r6, r7, r8, r9}, [rd6];
  xor.b32 r5, r5, r6;
  xor.b32 r5, r5, r7;
  xor.b32 r5, r5, r8;
  xor.b32 r5, r5, r9;
  add.u64 rd3, rd3, rd5;
  bra LOOP;
DONE:
  setp.eq.u32 p, r5, 0;
  @p bra END;
  st.global.u32 [rd1], r5;
END:
  ret;
}
)";

struct Scratch {
  CUdeviceptr ptr = 0;
  size_t size = 0;
  CUmodule mod = nullptr;
  CUfunction readFn = nullptr;
  int grid = 0;
  void ensure(size_t n) {
    if (n <= size) return;
    if (ptr) cuMemFree(ptr);
    ptr = 0;
    size = 0;
    check(cuMemAlloc(&ptr, n), "cuMemAlloc(L2 flush buffer)");
    check(cuMemsetD8(ptr, 0, n), "cuMemsetD8(L2 flush buffer)");
    size = n;
  }
  // enqueue flushes bytes of the buffer on stream; i varies a write
  // flush's byte from one flush to the next.
  void enqueue(bool read, size_t bytes, long i) {
    if (!read) {
      check(cuMemsetD8Async(ptr, (unsigned char)i, bytes, stream), "cuMemsetD8Async(L2 flush)");
      return;
    }
    if (!readFn) {
      check(cuModuleLoadData(&mod, flushPTX), "cuModuleLoadData(L2 flush kernel)");
      check(cuModuleGetFunction(&readFn, mod, "kg_flush_read"), "cuModuleGetFunction(kg_flush_read)");
      int sms = 0;
      check(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");
      grid = 8 * sms;  // 8 blocks of 256 threads fill an SM's 2048 threads
    }
    unsigned long long n16 = bytes / 16;
    void* args[] = {&ptr, &n16};
    check(cuLaunchKernel(readFn, grid, 1, 1, 256, 1, 1, 0, stream, args, nullptr), "cuLaunchKernel(L2 flush)");
  }
} flush;

struct Stats {
  double median, p20, p80;  // microseconds per run
  long reps;
  int clockMHz;
  int batch;
};

double percentile(const std::vector<double>& sorted, double p) {
  double pos = p * (sorted.size() - 1);
  size_t lo = (size_t)std::floor(pos);
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double f = pos - lo;
  return sorted[lo] * (1 - f) + sorted[hi] * f;
}

double wallMS(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The kinds of L2 flush (cmdTime's FLUSH).
enum FlushKind { FlushRead, FlushWrite, FlushClean };

// measure runs the issue's timing protocol on op (one run enqueued on stream):
// warm-up for at least warmupMS; then at least max(minReps, minMS worth)
// samples, each timed with CUDA events around the run, with an L2 flush
// (flushBytes read, or written with FlushWrite) before each sample outside
// the timed region. FlushClean reads, always takes graphs, and ends both
// graphs with one more flush: the flush after each run writes back the
// run's dirty lines, which the difference so charges to the runs, while
// the L2 a run starts from holds only clean lines (nothing else's writes
// to pay for). With
// useGraph, a CUDA graph of K runs (K chosen so that the runs take at least
// ~20 us), each after its own flush, is timed, then a graph of the K flushes
// alone, and a sample is their difference divided by K: each run starts
// from the flushed L2 a single run starts from, without the host's launch
// latency. (A graph of K runs after one flush would read the data of runs
// 2..K from the L2 when it fits there.)
Stats measure(const std::function<void()>& op, double warmupMS, long minReps, double minMS, size_t flushBytes,
              FlushKind kind, bool useGraph) {
  const bool clean = kind == FlushClean && flushBytes > 0;
  useGraph = useGraph || clean;
  Events we(2);
  // Warm-up, which also estimates the time of one run (back to back, L2 warm).
  auto t0 = std::chrono::steady_clock::now();
  double estMS = 0;
  long chunk = 1;
  for (;;) {
    check(cuEventRecord(we.ev[0], stream), "cuEventRecord");
    for (long i = 0; i < chunk; i++) op();
    check(cuEventRecord(we.ev[1], stream), "cuEventRecord");
    check(cuEventSynchronize(we.ev[1]), "cuEventSynchronize");
    float ms = 0;
    check(cuEventElapsedTime(&ms, we.ev[0], we.ev[1]), "cuEventElapsedTime");
    estMS = std::max((double)ms / chunk, 1e-6);
    if (wallMS(t0) >= warmupMS) break;
    chunk = (long)std::min(std::max(std::ceil(5.0 / estMS), 1.0), 100000.0);  // ~5 ms chunks
  }
  if (flushBytes > 0) flush.ensure(flushBytes);
  auto flushL2 = [&](long i) { flush.enqueue(kind != FlushWrite, flushBytes, i); };

  int K = 1;
  CUgraphExec runs = nullptr, flushes = nullptr;  // K flushed runs; the K flushes alone
  auto capture = [&](bool withRuns) {
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
    check(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
    try {
      for (int k = 0; k < K; k++) {
        if (flushBytes > 0) flushL2(k);
        if (withRuns) op();
      }
      if (clean) flushL2(K);
    } catch (...) {
      CUgraph g = nullptr;
      cuStreamEndCapture(stream, &g);
      if (g) cuGraphDestroy(g);
      throw;
    }
    check(cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
    CUresult r = cuGraphInstantiateWithFlags(&exec, graph, 0);
    cuGraphDestroy(graph);
    check(r, "cuGraphInstantiateWithFlags");
    return exec;
  };
  auto cleanup = [&]() {
    if (runs) cuGraphExecDestroy(runs);
    if (flushes) cuGraphExecDestroy(flushes);
  };
  try {
    if (useGraph) {
      K = (int)std::min(std::max(std::ceil(0.020 / estMS), 1.0), 1000.0);
      runs = capture(true);
      if (flushBytes > 0) flushes = capture(false);
      for (int i = 0; i < 3; i++) {  // warm the graphs
        check(cuGraphLaunch(runs, stream), "cuGraphLaunch");
        if (flushes) check(cuGraphLaunch(flushes, stream), "cuGraphLaunch");
      }
      check(cuStreamSynchronize(stream), "cuStreamSynchronize");
    }
    // 100 ms worth of samples: with graphs, of the runs and the flushes
    // the samples take (a flush of 2 x 50 MiB takes ~35 us).
    double sampleMS = estMS * K;
    if (runs && flushBytes > 0) sampleMS += (K + (clean ? 1 : 0)) * (double)flushBytes / 3e9;
    double want = std::ceil(minMS / sampleMS);
    long reps = (long)std::min(std::max((double)minReps, want), 100000.0);
    if (reps < 1) reps = 1;

    const long B = 256;
    Events ev(3 * B);
    std::vector<double> samples;
    std::vector<int> clocks;
    samples.reserve(reps);
    for (long done = 0; done < reps;) {
      long n = std::min(B, reps - done);
      for (long j = 0; j < n; j++) {
        CUevent* e = &ev.ev[3 * j];
        if (runs) {
          // e0 | the K flushes | e1 | the K flushed runs | e2
          check(cuEventRecord(e[0], stream), "cuEventRecord");
          if (flushes) check(cuGraphLaunch(flushes, stream), "cuGraphLaunch");
          check(cuEventRecord(e[1], stream), "cuEventRecord");
          check(cuGraphLaunch(runs, stream), "cuGraphLaunch");
          check(cuEventRecord(e[2], stream), "cuEventRecord");
          continue;
        }
        if (flushBytes > 0) flushL2(done + j);
        check(cuEventRecord(e[1], stream), "cuEventRecord");
        op();
        check(cuEventRecord(e[2], stream), "cuEventRecord");
      }
      check(cuStreamSynchronize(stream), "cuStreamSynchronize");
      for (long j = 0; j < n; j++) {
        CUevent* e = &ev.ev[3 * j];
        float ms = 0, flushMS = 0;
        check(cuEventElapsedTime(&ms, e[1], e[2]), "cuEventElapsedTime");
        if (flushes) check(cuEventElapsedTime(&flushMS, e[0], e[1]), "cuEventElapsedTime");
        samples.push_back((ms - flushMS) * 1000.0 / K);
      }
      int c = nvml.smClockMHz();
      if (c > 0) clocks.push_back(c);
      done += n;
    }
    cleanup();
    std::sort(samples.begin(), samples.end());
    std::sort(clocks.begin(), clocks.end());
    Stats s;
    s.median = percentile(samples, 0.5);
    s.p20 = percentile(samples, 0.2);
    s.p80 = percentile(samples, 0.8);
    s.reps = (long)samples.size();
    s.clockMHz = clocks.empty() ? 0 : clocks[clocks.size() / 2];
    s.batch = runs ? K : 0;
    return s;
  } catch (...) {
    cleanup();
    throw;
  }
}

// ---- commands ----

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
  char b[512];
  va_list ap;
  va_start(ap, f);
  vsnprintf(b, sizeof b, f, ap);
  va_end(ap);
  return b;
}

std::string cmdLoad(const std::string& line) {
  std::string path = rest(line, 1);
  if (path.empty()) fail("EPROTO", "usage: load PATH");
  CUmodule m;
  check(cuModuleLoad(&m, path.c_str()), "cuModuleLoad");
  long long id = nextId++;
  modules[id] = m;
  return fmt("ok %lld", id);
}

std::string cmdUnload(const std::vector<std::string>& t) {
  nargs(t, 2, "unload MOD");
  long long id = parseInt(t[1], "module id");
  auto it = modules.find(id);
  if (it == modules.end()) fail("EPROTO", "unknown module " + t[1]);
  CUmodule m = it->second;
  modules.erase(it);
  for (auto f = funcModule.begin(); f != funcModule.end();) {
    if (f->second == id) {
      funcs.erase(f->first);
      f = funcModule.erase(f);
    } else {
      ++f;
    }
  }
  check(cuModuleUnload(m), "cuModuleUnload");
  return "ok";
}

std::string cmdFunc(const std::vector<std::string>& t) {
  nargs(t, 3, "func MOD NAME");
  long long mid = parseInt(t[1], "module id");
  auto it = modules.find(mid);
  if (it == modules.end()) fail("EPROTO", "unknown module " + t[1]);
  CUfunction f;
  check(cuModuleGetFunction(&f, it->second, t[2].c_str()), "cuModuleGetFunction");
  // A kernel compiled for clusters of more than 8 blocks (a non-portable
  // size; 16 on the H100) launches only where it allows them. Others are
  // unaffected, and a GPU without clusters refuses the attribute, which
  // stays unset: no check.
  (void)cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
  int regs = 0, smem = 0, maxThreads = 0;
  check(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f), "cuFuncGetAttribute(NUM_REGS)");
  check(cuFuncGetAttribute(&smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f), "cuFuncGetAttribute(SHARED_SIZE_BYTES)");
  check(cuFuncGetAttribute(&maxThreads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f),
        "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)");
  long long id = nextId++;
  funcs[id] = f;
  funcModule[id] = mid;
  return fmt("ok %lld %d %d %d", id, regs, smem, maxThreads);
}

std::string cmdAlloc(const std::vector<std::string>& t) {
  nargs(t, 2, "alloc BYTES");
  long long n = parseNonNeg(t[1], "byte count");
  Buffer b{0, (size_t)n};
  if (n > 0) check(cuMemAlloc(&b.ptr, (size_t)n), "cuMemAlloc");
  long long id = nextId++;
  buffers[id] = b;
  return fmt("ok %lld", id);
}

std::string cmdFree(const std::vector<std::string>& t) {
  nargs(t, 2, "free BUF");
  long long id = parseInt(t[1], "buffer id");
  auto it = buffers.find(id);
  if (it == buffers.end()) fail("EPROTO", "unknown buffer " + t[1]);
  Buffer b = it->second;
  buffers.erase(it);
  if (b.ptr) check(cuMemFree(b.ptr), "cuMemFree");
  return "ok";
}

std::string cmdWrite(const std::string& line, const std::vector<std::string>& t) {
  if (t.size() < 3) fail("EPROTO", "usage: write BUF PATH");
  Buffer& b = buffer(t[1]);
  std::string path = rest(line, 2);
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) fail("EIO", "open " + path + ": " + strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) != 0) {
    int e = errno;
    fclose(f);
    fail("EIO", "stat " + path + ": " + strerror(e));
  }
  if ((size_t)st.st_size != b.size) {
    fclose(f);
    fail("ESIZE", fmt("file %s holds %lld bytes, buffer %s holds %zu", path.c_str(), (long long)st.st_size,
                      t[1].c_str(), b.size));
  }
  std::vector<char> host(b.size);
  size_t got = b.size ? fread(host.data(), 1, b.size, f) : 0;
  fclose(f);
  if (got != b.size) fail("EIO", "short read of " + path);
  if (b.size) {
    check(cuMemcpyHtoDAsync(b.ptr, host.data(), b.size, stream), "cuMemcpyHtoDAsync");
    check(cuStreamSynchronize(stream), "cuStreamSynchronize");
  }
  return "ok";
}

std::string cmdRead(const std::string& line, const std::vector<std::string>& t) {
  if (t.size() < 3) fail("EPROTO", "usage: read BUF PATH");
  Buffer& b = buffer(t[1]);
  std::string path = rest(line, 2);
  std::vector<char> host(b.size);
  if (b.size) {
    check(cuMemcpyDtoHAsync(host.data(), b.ptr, b.size, stream), "cuMemcpyDtoHAsync");
    check(cuStreamSynchronize(stream), "cuStreamSynchronize");
  }
  std::string tmp = path + ".tmp";
  FILE* f = fopen(tmp.c_str(), "wb");
  if (!f) fail("EIO", "create " + tmp + ": " + strerror(errno));
  bool ok = (b.size == 0 || fwrite(host.data(), 1, b.size, f) == b.size);
  ok = (fflush(f) == 0) && ok;
  ok = (fclose(f) == 0) && ok;
  if (!ok) {
    int e = errno;
    unlink(tmp.c_str());
    fail("EIO", "write " + tmp + ": " + strerror(e));
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    unlink(tmp.c_str());
    fail("EIO", "rename " + tmp + ": " + strerror(e));
  }
  return "ok";
}

std::string cmdFill(const std::vector<std::string>& t) {
  nargs(t, 3, "fill BUF BYTE");
  Buffer& b = buffer(t[1]);
  long long v = parseInt(t[2], "byte");
  if (v < 0 || v > 255) fail("EPROTO", "fill byte out of range '" + t[2] + "'");
  if (b.size) check(cuMemsetD8Async(b.ptr, (unsigned char)v, b.size, stream), "cuMemsetD8Async");
  return "ok";
}

// cmdClusters answers how many clusters of C blocks the GPU holds at once
// for function FN, so that a launch whose rows stride by the grid can take
// only those (kgen's row launches by clusters: a cluster a row relaunches
// clusters where the ones that fit could loop over the rows).
std::string cmdClusters(const std::vector<std::string>& t) {
  nargs(t, 5, "clusters FN BX SMEM C");
  CUfunction f = function(t[1]);
  long long bx = parseInt(t[2], "block size"), smem = parseNonNeg(t[3], "shared memory bytes"),
            c = parseInt(t[4], "cluster size");
  if (bx < 1 || bx > 0xffffffffLL || c < 1 || c > 64 || smem > 0xffffffffLL)
    fail("EPROTO", "block size, cluster size (1 to 64) or shared memory out of range");
  allowSmem(f, (unsigned)smem);
  CUlaunchAttribute attr;
  memset(&attr, 0, sizeof attr);
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = (unsigned)c;
  attr.value.clusterDim.y = 1;
  attr.value.clusterDim.z = 1;
  CUlaunchConfig cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.gridDimX = (unsigned)c;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = (unsigned)bx;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.sharedMemBytes = (unsigned)smem;
  cfg.hStream = stream;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  int n = 0;
  check(cuOccupancyMaxActiveClusters(&n, f, &cfg), "cuOccupancyMaxActiveClusters");
  return fmt("ok %d", n);
}

std::string cmdLaunch(const std::vector<std::string>& t) {
  Launch L;
  if (parseLaunch(t, 1, L) != t.size()) fail("EPROTO", "argument count " + t[9] + " does not match the " + std::to_string(t.size() - 10) + " arguments given");
  launch(L);
  return "ok";
}

// TimeArgs are a time command's protocol: WARMUP_MS MIN_REPS MIN_MS FLUSH
// GRAPH from t[i].
struct TimeArgs {
  double warm, minMS;
  long minReps;
  FlushKind kind;
  size_t flushBytes;
  bool graph;
};

TimeArgs parseTimeArgs(const std::vector<std::string>& t, size_t i) {
  TimeArgs a;
  a.warm = parseDouble(t[i], "warm-up ms");
  a.minReps = (long)parseNonNeg(t[i + 1], "minimum repetitions");
  a.minMS = parseDouble(t[i + 2], "minimum ms");
  // FLUSH: 0 (none), read:BYTES, write:BYTES or clean:BYTES.
  a.kind = FlushRead;
  std::string fl = t[i + 3];
  if (fl.rfind("read:", 0) == 0) {
    fl = fl.substr(5);
  } else if (fl.rfind("write:", 0) == 0) {
    fl = fl.substr(6);
    a.kind = FlushWrite;
  } else if (fl.rfind("clean:", 0) == 0) {
    fl = fl.substr(6);
    a.kind = FlushClean;
  } else if (fl != "0") {
    fail("EPROTO", "flush must be 0, read:BYTES, write:BYTES or clean:BYTES, not " + fl);
  }
  a.flushBytes = (size_t)parseNonNeg(fl, "flush bytes");
  long long graph = parseInt(t[i + 4], "graph flag");
  if (graph != 0 && graph != 1) fail("EPROTO", "graph flag must be 0 or 1");
  a.graph = graph == 1;
  return a;
}

std::string timeReply(const Stats& s) {
  return fmt("ok %.4f %.4f %.4f %ld %d %d", s.median, s.p20, s.p80, s.reps, s.clockMHz, s.batch);
}

std::string cmdTime(const std::vector<std::string>& t) {
  if (t.size() < 7) fail("EPROTO", "usage: time WARMUP_MS MIN_REPS MIN_MS FLUSH GRAPH LAUNCHSPEC...");
  TimeArgs a = parseTimeArgs(t, 1);
  // One run is every launch in order: a plan of several launches is timed
  // as a whole.
  std::vector<std::unique_ptr<Launch>> Ls;
  for (size_t i = 6; i < t.size();) {
    Ls.push_back(std::make_unique<Launch>());
    i = parseLaunch(t, i, *Ls.back());
  }
  Stats s = measure(
      [&]() {
        for (auto& L : Ls) launch(*L);
      },
      a.warm, a.minReps, a.minMS, a.flushBytes, a.kind, a.graph);
  return timeReply(s);
}

// timeCopy allocates a source of n bytes (filled with ones) and a
// destination, times a copy between them (cuMemcpyDtoDAsync) under the
// protocol a, and frees both, whatever the timing throws.
Stats timeCopy(long long n, const TimeArgs& a) {
  CUdeviceptr src = 0, dst = 0;
  check(cuMemAlloc(&src, (size_t)n), "cuMemAlloc");
  CUresult r = cuMemAlloc(&dst, (size_t)n);
  if (r != CUDA_SUCCESS) {
    cuMemFree(src);
    check(r, "cuMemAlloc");
  }
  Stats s;
  try {
    check(cuMemsetD8Async(src, 1, (size_t)n, stream), "cuMemsetD8Async");
    s = measure([&]() { check(cuMemcpyDtoDAsync(dst, src, (size_t)n, stream), "cuMemcpyDtoDAsync"); }, a.warm,
                a.minReps, a.minMS, a.flushBytes, a.kind, a.graph);
  } catch (...) {
    cuMemFree(src);
    cuMemFree(dst);
    throw;
  }
  check(cuMemFree(src), "cuMemFree");
  check(cuMemFree(dst), "cuMemFree");
  return s;
}

// cmdCopyTime times a copy of BYTES as time times a kernel: the ceiling
// of a memory-bound launch that moves as much (BYTES read, BYTES written).
std::string cmdCopyTime(const std::vector<std::string>& t) {
  nargs(t, 7, "copytime BYTES WARMUP_MS MIN_REPS MIN_MS FLUSH GRAPH");
  long long n = parseNonNeg(t[1], "byte count");
  if (n == 0) fail("EPROTO", "copytime needs a positive byte count");
  return timeReply(timeCopy(n, parseTimeArgs(t, 2)));
}

// cmdCopyBW times a copy of BYTES without a flush or graphs: the copy
// bandwidth.
std::string cmdCopyBW(const std::vector<std::string>& t) {
  nargs(t, 2, "copybw BYTES");
  long long n = parseNonNeg(t[1], "byte count");
  if (n == 0) fail("EPROTO", "copybw needs a positive byte count");
  TimeArgs a;
  a.warm = 25, a.minReps = 10, a.minMS = 100, a.kind = FlushRead, a.flushBytes = 0, a.graph = false;
  Stats s = timeCopy(n, a);
  double gbps = 2.0 * (double)n / (s.median * 1e-6) / 1e9;
  return fmt("ok %.2f %.4f", gbps, s.median);
}

std::string cmdInfo(const std::vector<std::string>& t) {
  nargs(t, 1, "info");
  char name[256] = {0};
  check(cuDeviceGetName(name, sizeof name - 1, dev), "cuDeviceGetName");
  for (char* p = name; *p; p++)
    if (*p == '|' || *p == '\n' || *p == '\r') *p = ' ';
  auto attr = [](CUdevice_attribute a, const char* what) {
    int v = 0;
    check(cuDeviceGetAttribute(&v, a, dev), what);
    return v;
  };
  int major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "cuDeviceGetAttribute(CC_MAJOR)");
  int minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "cuDeviceGetAttribute(CC_MINOR)");
  int sms = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");
  int l2 = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "cuDeviceGetAttribute(L2_CACHE_SIZE)");
  int optin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "cuDeviceGetAttribute(SMEM_OPTIN)");
  int maxThreads = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "cuDeviceGetAttribute(MAX_THREADS_PER_BLOCK)");
  size_t mem = 0;
  check(cuDeviceTotalMem(&mem, dev), "cuDeviceTotalMem");
  int drv = 0;
  check(cuDriverGetVersion(&drv), "cuDriverGetVersion");
  return fmt("ok %s|%d|%d|%d|%d|%zu|%d|%d|%d", name, major, minor, sms, l2, mem, drv, optin, maxThreads);
}

std::string handle(const std::string& line) {
  std::vector<std::string> t = split(line);
  if (t.empty()) fail("EPROTO", "empty command");
  const std::string& c = t[0];
  if (c == "load") return cmdLoad(line);
  if (c == "unload") return cmdUnload(t);
  if (c == "func") return cmdFunc(t);
  if (c == "alloc") return cmdAlloc(t);
  if (c == "free") return cmdFree(t);
  if (c == "write") return cmdWrite(line, t);
  if (c == "read") return cmdRead(line, t);
  if (c == "fill") return cmdFill(t);
  if (c == "launch") return cmdLaunch(t);
  if (c == "clusters") return cmdClusters(t);
  if (c == "sync") {
    nargs(t, 1, "sync");
    check(cuCtxSynchronize(), "cuCtxSynchronize");
    return "ok";
  }
  if (c == "time") return cmdTime(t);
  if (c == "copybw") return cmdCopyBW(t);
  if (c == "copytime") return cmdCopyTime(t);
  if (c == "info") return cmdInfo(t);
  fail("EPROTO", "unknown command '" + c + "'");
}

void init(int device) {
  check(cuInit(0), "cuInit");
  int n = 0;
  check(cuDeviceGetCount(&n), "cuDeviceGetCount");
  if (device < 0 || device >= n) throw Fail{"CUDA_ERROR_INVALID_DEVICE", fmt("device %d of %d", device, n), false};
  check(cuDeviceGet(&dev, device), "cuDeviceGet");
  check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
}

}  // namespace

int main(int argc, char** argv) {
  // Keep the protocol channel private: whatever else writes to stdout
  // (kernel printf, libraries) goes to stderr.
  int fd = dup(1);
  if (fd < 0 || dup2(2, 1) < 0) return kExitIO;
  proto = fdopen(fd, "w");
  if (!proto) return kExitIO;

  int device = 0;
  if (argc > 1) device = atoi(argv[1]);
  try {
    init(device);
  } catch (const Fail& f) {
    reply("err " + f.code + ": " + f.msg);
    return kExitInit;
  }
  reply("ok kgen-runner 1");

  char* buf = nullptr;
  size_t cap = 0;
  for (;;) {
    ssize_t n = getline(&buf, &cap, stdin);
    if (n < 0) break;
    std::string line(buf, n);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    std::vector<std::string> t = split(line);
    if (t.size() == 1 && t[0] == "quit") break;
    try {
      reply(handle(line));
    } catch (const Fail& f) {
      reply("err " + f.code + ": " + f.msg);
      if (f.fatal) {
        fflush(stderr);
        _exit(kExitFatal);  // the context is dead; kgen restarts us
      }
    }
  }
  free(buf);
  return 0;
}
