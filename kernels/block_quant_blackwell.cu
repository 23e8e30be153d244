// The block quantization kernels (block_quant_kernels.cuh) built family-specific for Blackwell:
// sm_100f (10.0, 10.3), sm_110f and sm_120f (12.0, 12.1), where cuda_fp4.h and cuda_fp8.h convert
// E2M1 and E8M0 in hardware (cvt.rn.satfinite.e2m1x2.f32, cvt.rp.satfinite.ue8m0x2.f32; SASS
// F2FP.SATFINITE.E2M1 and .E8) instead of through FP64. kernels/CMakeLists.txt builds this file
// for those three targets alone; block_quant.cu's block_quantize() calls it on those GPUs.
#define TCB_BLOCK_QUANT_NS blackwell
#include "block_quant_kernels.cuh"
