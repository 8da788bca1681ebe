#ifndef KGEN_HOST_EMULATION
#define KG_DYNAMIC_SMEM(name) extern __shared__ __attribute__((aligned(16))) unsigned char name[]
#else
#define KG_DYNAMIC_SMEM(name) unsigned char* name = nullptr
#endif

