package cuda

import "fmt"

// A CenteredSum (lower.CenteredSum: a mean, then the sum of squared
// deviations from it) takes one reduction across the row's threads, not
// two: each thread's count, mean, sum of squared deviations from that
// mean and plain sum (KgMoments) combine pairwise as Chan, Golub and
// LeVeque's parallel variance does, and the squared deviations from the
// let's own mean mu are then m2 + n (mean - mu)^2. The second reduction
// waited on the first's result: in a cluster, a second cluster barrier a
// row, which cost the hand-written clusters of 16 blocks 224.42 -> 239.49
// us on the H100 (testsuite/results/2026-12-06-h100-s36-barrier/). The
// sum stays the plain sum of the points, combined in the same order as
// before, so that mu is what it was.

// momentsCode defines KgMoments, kg_moments_of and kg_moments_merge, and
// the shuffles (and, in CUDA, cluster loads) that the row's reductions
// take of them, a field at a time.
const momentsCode = `
// ---- A mean and its squared deviations in one reduction ----

// KgMoments are a set of points' count n, mean, sum of squared
// deviations from that mean m2, and plain sum.
template <class T>
struct KgMoments {
  T n, mean, m2, sum;
};

// kg_moments_div is a / b for the moments' fractions (a count over a
// count, a shifted sum over its count), in f32 by __fdividef (within 2
// ulp, b far below 2^126): IEEE's division took a slow path's call and
// about ten instructions a merge.
template <class T>
__device__ __forceinline__ T kg_moments_div(T a, T b) { return a / b; }
#ifndef KGEN_HOST_EMULATION
template <>
__device__ __forceinline__ float kg_moments_div<float>(float a, float b) { return __fdividef(a, b); }
#endif

// kg_moments_of are the moments of a thread's n points, shifted by k,
// whose shifted sums are s1 and s2 and whose plain sum is sum.
template <class T>
__device__ __forceinline__ KgMoments<T> kg_moments_of(T n, T k, T s1, T s2, T sum) {
  const T d = n > T(0) ? kg_moments_div(s1, n) : T(0);
  return {n, k + d, s2 - s1 * d, sum};
}

// kg_moments_merge are the moments of two sets together. The pair is
// taken in a fixed order (fewer points first, then the lower mean), so
// that merge(a, b) and merge(b, a) agree bit for bit, as the reductions'
// butterflies need.
template <class T>
__device__ __forceinline__ KgMoments<T> kg_moments_merge(KgMoments<T> a, KgMoments<T> b) {
  if (b.n < a.n || (b.n == a.n && b.mean < a.mean)) {
    const KgMoments<T> t = a;
    a = b;
    b = t;
  }
  if (a.n == T(0)) return b;  // b's, exactly (the reductions' identity is empty)
  const T n = a.n + b.n;
  const T f = kg_moments_div(b.n, n), d = b.mean - a.mean;
  return {n, a.mean + d * f, a.m2 + b.m2 + d * d * a.n * f, a.sum + b.sum};
}

template <class T>
__device__ __forceinline__ KgMoments<T> kg_shfl_xor(KgMoments<T> v, int o) {
  return {kg_shfl_xor(v.n, o), kg_shfl_xor(v.mean, o), kg_shfl_xor(v.m2, o), kg_shfl_xor(v.sum, o)};
}
`

// momentsCUDA is what CUDA's reductions (kg_block_reduce and
// kg_cluster_reduce shuffle with __shfl_xor_sync and __shfl_sync, and
// read other blocks' results with kg_cluster_load) take of KgMoments.
const momentsCUDA = `template <class T>
__device__ __forceinline__ KgMoments<T> __shfl_xor_sync(unsigned m, KgMoments<T> v, int o) {
  return {__shfl_xor_sync(m, v.n, o), __shfl_xor_sync(m, v.mean, o), __shfl_xor_sync(m, v.m2, o), __shfl_xor_sync(m, v.sum, o)};
}
template <class T>
__device__ __forceinline__ KgMoments<T> __shfl_sync(unsigned m, KgMoments<T> v, int l) {
  return {__shfl_sync(m, v.n, l), __shfl_sync(m, v.mean, l), __shfl_sync(m, v.m2, l), __shfl_sync(m, v.sum, l)};
}
#ifndef KGEN_HOST_EMULATION
template <class T>
__device__ __forceinline__ KgMoments<T> kg_cluster_load(const KgMoments<T>* p, unsigned rank) {
  return {kg_cluster_load(&p->n, rank), kg_cluster_load(&p->mean, rank), kg_cluster_load(&p->m2, rank), kg_cluster_load(&p->sum, rank)};
}
#endif
`

// moments names KgMoments of C type ct, and has the file define it.
func (e *emitter) moments(ct string) string {
	const op = "KgMoments"
	if _, ok := e.file.ops[op]; !ok {
		code := momentsCode
		if e.d == CUDA {
			code += momentsCUDA
		}
		e.file.ops[op] = code
		e.file.opOrder = append(e.file.opOrder, op)
	}
	return fmt.Sprintf("%s<%s>", op, ct)
}
