// Block-scaled quantization on the GPU (kernels/block_quant.cu): per-block amax, the block's
// scale, the cast into the element format, and the scale tensor written where cuBLASLt reads it
// (numerics/scale_layout.hpp). The element work is the numerics floor's (block_scaling.hpp), so
// the bytes equal numerics::quantize() + to_cublas_scales() + pack_fp4() on the host, bit for bit
// (tests/device/test_block_quant.cu).
//
//   granularity    elements        scales (layout)                          cuBLASLt scale mode
//   tile_1x128     e4m3 / e5m2     FP32 per 1x128 along K (M-major)          VEC128_32F
//   block_128x128  e4m3 / e5m2     FP32 per 128x128 block (K-major, ld % 4)  BLK128x128_32F
//   mx             e4m3 / e5m2     E8M0 per 32 along K (128x4 tiles)         VEC32_UE8M0
//   nvfp4          e2m1 (packed)   UE4M3 per 16 along K (128x4 tiles) and    VEC16_UE4M3
//                                  the FP32 tensor scale s_enc
//
// The operand is K-major: `rows` rows (M of A, N of B) of `cols` elements along K, FP32.
#pragma once

#include "tcbench/numerics/block_quantize.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace tcbench::kernels {

// Where one quantized operand goes (device pointers).
struct BlockQuantOutput {
  std::uint8_t* codes = nullptr;   // block_quant_code_bytes(); 4-byte aligned
  std::uint8_t* scales = nullptr;  // block_quant_scale_bytes(); 16-byte aligned (cuBLASLt)
  float* tensor_scale = nullptr;   // nvfp4: s_enc (one float); else unused
  unsigned* amax_bits = nullptr;   // nvfp4: scratch for the tensor amax (one unsigned)
};

// Bytes of the element codes: one per element (FP8), two elements per byte (FP4).
std::size_t block_quant_code_bytes(numerics::Granularity g, std::int64_t rows, std::int64_t cols);
// Bytes of the scale tensor as cuBLASLt reads it, padding included.
std::size_t block_quant_scale_bytes(numerics::Granularity g, std::int64_t rows, std::int64_t cols);
// Bytes one quantization moves at the least: the FP32 input once, codes, scales (and nvfp4's
// tensor scale). The nvfp4 path reads the input a second time for the tensor amax; that pass is
// part of its time, not of this count.
double block_quant_bytes_moved(numerics::Granularity g, std::int64_t rows, std::int64_t cols);

// Quantizes x (rows x cols, 16-byte aligned) with granularity g into format f (mx: `rule`).
// Throws InvalidArgument, with one sentence, for a granularity without a kernel here (tensor,
// row: fp8_scaling.cu and int8_quant.cu cover those), a format the granularity does not take,
// sizes that are not positive or whose cols is not a multiple of 4, or a null or misaligned
// pointer. Asynchronous on `stream`.
void block_quantize(const float* x, std::int64_t rows, std::int64_t cols, numerics::Granularity g,
                    numerics::ElementFormat f, numerics::MxRule rule, const BlockQuantOutput& out,
                    cudaStream_t stream);

}  // namespace tcbench::kernels
