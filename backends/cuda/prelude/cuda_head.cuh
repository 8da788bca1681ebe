// kgen CUDA prelude: the language's scalar semantics as device functions.
// Every generated kernel source includes it verbatim.
#ifndef KGEN_HOST_EMULATION  // kgen's tests run this code on the CPU through a shim
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#endif
#include <stdint.h>
#include <math.h>

