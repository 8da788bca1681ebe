// Floor division and floor modulo on integers (Python's // and %).
__device__ __forceinline__ int64_t kg_floordiv(int64_t a, int64_t b) {
  int64_t q = a / b, r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}
__device__ __forceinline__ int64_t kg_floormod(int64_t a, int64_t b) {
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
// Floor modulo on floats: x - floor(x / y) * y.
__device__ __forceinline__ float kg_fmod_floor(float a, float b) { return a - floorf(a / b) * b; }
__device__ __forceinline__ double kg_fmod_floor(double a, double b) { return a - floor(a / b) * b; }

// i is inside [0, n).
__device__ __forceinline__ bool kg_in(int64_t i, int64_t n) { return (uint64_t)i < (uint64_t)n; }

// Float to integer: truncate toward zero, saturate, NaN gives 0. In
// float as in double, lo and hi round to a power of two or stay exact, so
// that every value between them converts without overflow.
__device__ __forceinline__ int64_t kg_f2i(double x, int64_t lo, int64_t hi) {
  if (x != x) return 0;
  if (x <= (double)lo) return lo;
  if (x >= (double)hi) return hi;
  return (int64_t)x;
}
__device__ __forceinline__ int64_t kg_f2i(float x, int64_t lo, int64_t hi) {
  if (x != x) return 0;
  if (x <= (float)lo) return lo;
  if (x >= (float)hi) return hi;
  return (int64_t)x;
}

// Float to i8, u8 or i32 (lo and hi are the type's range), as kg_f2i
// converts. On NVIDIA GPUs cvt's float-to-integer conversions saturate and
// give 0 for NaN (PTX ISA, cvt), so one 32-bit conversion and an integer
// clamp replace kg_f2i's branches and its 64-bit conversion (F2I.S64).
#if defined(__CUDA_ARCH__)
__device__ __forceinline__ int kg_f2i32(float x, int lo, int hi) { return min(max(__float2int_rz(x), lo), hi); }
__device__ __forceinline__ int kg_f2i32(double x, int lo, int hi) { return min(max(__double2int_rz(x), lo), hi); }
#else
__device__ __forceinline__ int kg_f2i32(float x, int lo, int hi) { return (int)kg_f2i(x, lo, hi); }
__device__ __forceinline__ int kg_f2i32(double x, int lo, int hi) { return (int)kg_f2i(x, lo, hi); }
#endif

// min and max are IEEE 754-2019's minimum and maximum, as the reference
// interpreter's (Go's) are: NaN when either operand is NaN, and -0 below
// +0 in float and double.
template <class T> __device__ __forceinline__ T kg_max(T a, T b) { return a > b ? a : (b > a ? b : (a != a ? a : b)); }
template <class T> __device__ __forceinline__ T kg_min(T a, T b) { return a < b ? a : (b < a ? b : (a != a ? a : b)); }
// The two by comparisons: for double and, off NVIDIA GPUs, float.
template <class T> __device__ __forceinline__ T kg_max2019(T a, T b) {
  return a != a || b != b ? a + b : (a == b ? (signbit(a) ? b : a) : (a > b ? a : b));
}
template <class T> __device__ __forceinline__ T kg_min2019(T a, T b) {
  return a != a || b != b ? a + b : (a == b ? (signbit(a) ? a : b) : (a < b ? a : b));
}
template <> __device__ __forceinline__ double kg_max<double>(double a, double b) { return kg_max2019(a, b); }
template <> __device__ __forceinline__ double kg_min<double>(double a, double b) { return kg_min2019(a, b); }
#if defined(__CUDA_ARCH__)
// One instruction on sm_80 and later: max.NaN and min.NaN order -0 below +0.
template <> __device__ __forceinline__ float kg_max<float>(float a, float b) {
  float d;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
}
template <> __device__ __forceinline__ float kg_min<float>(float a, float b) {
  float d;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
}
#else
template <> __device__ __forceinline__ float kg_max<float>(float a, float b) { return kg_max2019(a, b); }
template <> __device__ __forceinline__ float kg_min<float>(float a, float b) { return kg_min2019(a, b); }
#endif
template <class T> __device__ __forceinline__ T kg_clamp(T x, T lo, T hi) { return kg_min(kg_max(x, lo), hi); }
template <class T> __device__ __forceinline__ T kg_relu(T x) { return x < (T)0 ? (T)0 : x; }

__device__ __forceinline__ float kg_exp(float x) { return expf(x); }
__device__ __forceinline__ double kg_exp(double x) { return exp(x); }
__device__ __forceinline__ float kg_exp2(float x) { return exp2f(x); }
__device__ __forceinline__ double kg_exp2(double x) { return exp2(x); }
__device__ __forceinline__ float kg_log(float x) { return logf(x); }
__device__ __forceinline__ double kg_log(double x) { return log(x); }
__device__ __forceinline__ float kg_log2(float x) { return log2f(x); }
__device__ __forceinline__ double kg_log2(double x) { return log2(x); }
__device__ __forceinline__ float kg_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double kg_sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float kg_rsqrt(float x) { return rsqrtf(x); }
__device__ __forceinline__ double kg_rsqrt(double x) { return rsqrt(x); }
__device__ __forceinline__ float kg_tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double kg_tanh(double x) { return tanh(x); }
__device__ __forceinline__ float kg_erf(float x) { return erff(x); }
__device__ __forceinline__ double kg_erf(double x) { return erf(x); }
__device__ __forceinline__ float kg_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
__device__ __forceinline__ double kg_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
template <class T> __device__ __forceinline__ T kg_abs(T x) { return x < (T)0 ? -x : x; }
template <> __device__ __forceinline__ float kg_abs<float>(float x) { return fabsf(x); }
template <> __device__ __forceinline__ double kg_abs<double>(double x) { return fabs(x); }
__device__ __forceinline__ float kg_sin(float x) { return sinf(x); }
__device__ __forceinline__ double kg_sin(double x) { return sin(x); }
__device__ __forceinline__ float kg_cos(float x) { return cosf(x); }
__device__ __forceinline__ double kg_cos(double x) { return cos(x); }
// kg_sincos gives sin(x) and cos(x) with one range reduction.
__device__ __forceinline__ void kg_sincos(float x, float* s, float* c) { sincosf(x, s, c); }
__device__ __forceinline__ void kg_sincos(double x, double* s, double* c) { sincos(x, s, c); }
__device__ __forceinline__ float kg_floor(float x) { return floorf(x); }
__device__ __forceinline__ double kg_floor(double x) { return floor(x); }
__device__ __forceinline__ float kg_ceil(float x) { return ceilf(x); }
__device__ __forceinline__ double kg_ceil(double x) { return ceil(x); }
__device__ __forceinline__ float kg_pow(float x, float y) { return powf(x, y); }
__device__ __forceinline__ double kg_pow(double x, double y) { return pow(x, y); }
__device__ __forceinline__ float kg_fma(float x, float y, float z) { return fmaf(x, y, z); }
// kg_tf32 rounds x to TensorFloat-32 (10 mantissa bits, to nearest, ties
// away from zero), the tensor cores' tf32 input; NaN and infinities pass.
__device__ __forceinline__ float kg_tf32(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & ~0x1fffu;
  memcpy(&x, &u, 4);
  return x;
}
__device__ __forceinline__ double kg_fma(double x, double y, double z) { return fma(x, y, z); }

