// KgRows is an operand stored in memory as rows of ld elements; ptr is
// where cp.async copies from.
template <class T>
struct KgRows {
  const T* p;
  int64_t ld;
  __device__ __forceinline__ T operator()(int64_t r, int64_t c) const { return p[r * ld + c]; }
  __device__ __forceinline__ const T* ptr(int64_t r, int64_t c) const { return p + r * ld + c; }
  // src is where the 16-byte chunk at (r, c) starts, with *ok telling
  // whether it is inside rlim x clim (else a valid address to copy
  // nothing from: a cp.async of 0 bytes zero-fills).
  __device__ __forceinline__ const T* src(int64_t r, int64_t c, int64_t rlim, int64_t clim, bool* ok) const {
    *ok = r < rlim && c < clim;
    return *ok ? p + r * ld + c : p;
  }
  template <int N>
  __device__ __forceinline__ void fill(T* d, int64_t r, int64_t c, int64_t rlim, int64_t clim) const {
#pragma unroll
    for (int e = 0; e < N; ++e) d[e] = r < rlim && c + e < clim ? p[r * ld + c + e] : kg_zero<T>();
  }
};

// KgGather is an operand computed by f(r, c, n, v), which writes elements
// (r, c) to (r, c + n - 1) to v, n <= 8: a chunk of elements costs one
// decomposition of r and c into the load's indices, then a step each.
template <class T, class F>
struct KgGather {
  F f;
  __device__ __forceinline__ T operator()(int64_t r, int64_t c) const {
    T x;
    f(r, c, 1, &x);
    return x;
  }
  // fill stores the N elements at once: d is aligned for them.
  template <int N>
  __device__ __forceinline__ void fill(T* d, int64_t r, int64_t c, int64_t rlim, int64_t clim) const {
    KgVec<T, N> v;
#pragma unroll
    for (int e = 0; e < N; ++e) v.v[e] = kg_zero<T>();
    if (r < rlim && c < clim) f(r, c, clim - c < N ? (int)(clim - c) : N, v.v);
    *(KgVec<T, N>*)d = v;
  }
};
template <class T, class F>
__device__ __forceinline__ KgGather<T, F> kg_gather(F f) {
  return KgGather<T, F>{f};
}

// KgGatherVec is a KgGather whose chunks are contiguous in memory where
// the kernel's run-time check allows (the emitter proves the rest: the
// load's last index is the stepped coordinate's fastest index, whole
// chunks of it, and the default, if any, is zero and tested only on other
// dimensions): at(r, c, ok) gives the address of the chunk's first
// element and whether the load reads it or takes the default, so that the
// chunk moves as one cp.async.
template <class T, class F, class A>
struct KgGatherVec : KgGather<T, F> {
  A at;
  const T* base;  // any valid address of the tensor
  __device__ __forceinline__ const T* src(int64_t r, int64_t c, int64_t rlim, int64_t clim, bool* ok) const {
    *ok = false;
    const T* q = r < rlim && c < clim ? at(r, c, ok) : base;
    return *ok ? q : base;
  }
};
template <class T, class F, class A>
__device__ __forceinline__ KgGatherVec<T, F, A> kg_gather_vec(F f, A at, const T* base) {
  return KgGatherVec<T, F, A>{{f}, at, base};
}

// kg_nvcc11_opaque is x, which nvcc 11 compiles for the device as a value
// it knows nothing about (an empty inline asm); elsewhere x itself, so
// that later compilers keep all they know of it.
__device__ __forceinline__ int64_t kg_nvcc11_opaque(int64_t x) {
#if defined(__CUDA_ARCH__) && defined(__CUDACC_VER_MAJOR__) && __CUDACC_VER_MAJOR__ < 12
  asm("" : "+l"(x));
#endif
  return x;
}

// kg_tile_of maps tile t of a tm x tn grid of output tiles to its row and
// column, in groups of 8 tile rows, so that blocks running together share
// A's and B's panels in L2.
__device__ __forceinline__ void kg_tile_of(int64_t t, int64_t tm, int64_t tn, int64_t* row, int64_t* col) {
  const int64_t group = 8;
  const int64_t per_group = group * tn;
  const int64_t first = (t / per_group) * group;
  const int64_t rows = tm - first < group ? tm - first : group;
  *row = first + (t % per_group) % rows;
  *col = (t % per_group) / rows;
}

