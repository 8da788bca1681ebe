__device__ __forceinline__ float kg_widen(__half x) { return __half2float(x); }
__device__ __forceinline__ float kg_widen(kg_bf16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float kg_widen(float x) { return kg_tf32(x); }

