__device__ __forceinline__ float kg_widen(__half x) { return __half2float(x); }
__device__ __forceinline__ float kg_widen(__nv_bfloat16 x) { return __bfloat162float(x); }
// An f32 operand of a tensor-core product is a tf32 one: the spec wrote tf32(x).
__device__ __forceinline__ float kg_widen(float x) { return kg_tf32(x); }

