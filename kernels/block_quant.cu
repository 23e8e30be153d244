// Block-scaled quantization (kernels/include/tcbench/kernels/block_quant.hpp): the kernels are thin
// loops around the numerics floor's element functions (block_scaling.hpp: group_scale/group_encode,
// mx_scale_code/mx_encode, nvfp4_*), writing the scales where cuBLASLt reads them
// (scale_layout.hpp). Host reference: numerics::quantize() + to_cublas_scales() + pack_fp4().
//
// Two shapes, both memory-bound:
//   block_quant_rows_kernel   1x128, MX (32) and NVFP4 (16): one warp per 128 consecutive
//                             elements of a row, four per lane (one 16-byte load); the lanes of
//                             one block (32, 8 or 4) reduce its amax with shuffles, one lane writes
//                             the block's scale, every lane stores its four codes (one 32-bit
//                             store for FP8, one 16-bit store for packed FP4).
//   block_quant_128x128_kernel one CTA per 128x128 block, held in registers (16 float4 a
//                             thread): the block's amax, one FP32 scale, then the cast; the
//                             block is read from memory once.
// NVFP4 needs the tensor amax first: fp8_scaling.cu's amax_reduce runs before the block pass.
//
// Conversions: E4M3/E5M2 from sm_89 on are one hardware cvt.rn.satfinite per element (SASS F2FP,
// tests/sass/sass_rules.json); earlier GPUs run cuda_fp8.h's software path. E2M1 (and the E8M0
// of MxRule::round_up) are hardware conversions only in family-specific code: cuda_fp8.h's
// __CUDA_FP8_INTERNAL_CAN_RELY_ON_PTX_FOR_SHORTTYPESCVT__ holds for sm_100f/sm_110f/sm_120f, not
// for portable sm_100/sm_120 cubins, which convert E2M1 through FP64 (slow where FP64 is, e.g.
// GeForce). So the kernels (block_quant_kernels.cuh) are built twice: here, portable, and in
// block_quant_blackwell.cu for those three families; block_quantize() runs the family build on
// compute capability 10.x, 11.x and 12.x when the build has it (TCBENCH_BLOCK_QUANT_BLACKWELL).
// Both builds round alike (the same element functions): the device tests hold for either.
#define TCB_BLOCK_QUANT_NS portable
#include "block_quant_kernels.cuh"

#include "tcbench/kernels/fp8_scaling.hpp"

#include <string>

namespace tcbench::kernels {

#if defined(TCBENCH_BLOCK_QUANT_BLACKWELL)
namespace blackwell {  // block_quant_blackwell.cu
void launch_block_quant(const float* x, std::int64_t rows, std::int64_t cols,
                        numerics::Granularity g, numerics::ElementFormat f, numerics::MxRule rule,
                        const BlockQuantOutput& out, cudaStream_t stream);
}
#endif

namespace {

namespace tn = tcbench::numerics;
using Index = std::int64_t;
using tn::ElementFormat;
using tn::Granularity;

std::string shape(Index rows, Index cols) {
  return std::to_string(rows) + " x " + std::to_string(cols);
}

bool aligned(const void* p, std::uintptr_t to) {
  return p != nullptr && reinterpret_cast<std::uintptr_t>(p) % to == 0;
}

// Scale elements the granularity writes (the rest of the tensor is padding).
Index written_scales(Granularity g, Index rows, Index cols) {
  const Index blocks = tn::ceil_div(cols, tn::block_of(g));
  return g == Granularity::block_128x128 ? tn::ceil_div(rows, Index{tn::kTile}) * blocks
                                         : rows * blocks;
}

#if defined(TCBENCH_BLOCK_QUANT_BLACKWELL)
// Compute capability 10.x, 11.x or 12.x: the family cubins (sm_100f, sm_110f, sm_120f) load.
bool blackwell_family() {
  int device = 0, major = 0;
  TCB_CUDA(cudaGetDevice(&device));
  TCB_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major >= 10 && major <= 12;
}
#endif

}  // namespace

std::size_t block_quant_code_bytes(Granularity g, Index rows, Index cols) {
  const auto n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  return g == Granularity::nvfp4 ? (n + 1) / 2 : n;
}

std::size_t block_quant_scale_bytes(Granularity g, Index rows, Index cols) {
  switch (g) {
    case Granularity::tile_1x128:
      return static_cast<std::size_t>(tn::vec128_elements(rows, cols)) * sizeof(float);
    case Granularity::block_128x128:
      return static_cast<std::size_t>(tn::blk128_elements(rows, cols)) * sizeof(float);
    case Granularity::mx:
    case Granularity::nvfp4:
      return static_cast<std::size_t>(tn::block_scale_elements(rows, cols, tn::block_of(g)));
    default:
      return 0;
  }
}

double block_quant_bytes_moved(Granularity g, Index rows, Index cols) {
  return static_cast<double>(rows) * static_cast<double>(cols) * sizeof(float) +
         static_cast<double>(block_quant_code_bytes(g, rows, cols)) +
         static_cast<double>(block_quant_scale_bytes(g, rows, cols)) +
         (g == Granularity::nvfp4 ? sizeof(float) : 0.0);
}

void block_quantize(const float* x, Index rows, Index cols, Granularity g, ElementFormat f,
                    tn::MxRule rule, const BlockQuantOutput& out, cudaStream_t stream) {
  const std::string what = "block_quantize(" + std::string(tn::name(g)) + ", " +
                           std::string(tn::name(f)) + ", " + shape(rows, cols) + ")";
  if (g == Granularity::tensor || g == Granularity::row)
    throw InvalidArgument(what +
                          ": per-tensor and per-row scales are fp8_scaling.cu's and "
                          "int8_quant.cu's kernels, not a block quantization");
  const bool fp8 = f == ElementFormat::e4m3 || f == ElementFormat::e5m2;
  if (g == Granularity::nvfp4 ? f != ElementFormat::e2m1 : !fp8)
    throw InvalidArgument(what + ": " +
                          (g == Granularity::nvfp4 ? "NVFP4 elements are E2M1"
                                                   : "this granularity quantizes to E4M3 or E5M2"));
  if (rows <= 0 || cols <= 0 || cols % 4 != 0 || rows > (Index{1} << 40) / cols)
    throw InvalidArgument(what +
                          ": rows and cols must be positive, cols a multiple of 4 and "
                          "rows x cols at most 2^40");
  if (!aligned(x, 16) || !aligned(out.codes, 4) || !aligned(out.scales, tn::kScaleAlignBytes) ||
      (g == Granularity::nvfp4 && (!aligned(out.tensor_scale, 4) || !aligned(out.amax_bits, 4))))
    throw InvalidArgument(what +
                          ": x must be a 16-byte aligned device pointer, codes 4-byte and "
                          "scales 16-byte aligned" +
                          (g == Granularity::nvfp4 ? ", tensor_scale and amax_bits non-null" : "") +
                          "; got a null or misaligned one");
  // cuBLASLt reads whole scale tiles (and BLK128x128's padded columns): the padding is zero, as
  // to_cublas_scales() has it.
  const std::size_t scale_bytes = block_quant_scale_bytes(g, rows, cols);
  const std::size_t scale_size = g == Granularity::mx || g == Granularity::nvfp4 ? 1 : 4;
  if (static_cast<std::size_t>(written_scales(g, rows, cols)) * scale_size != scale_bytes)
    TCB_CUDA_CTX(cudaMemsetAsync(out.scales, 0, scale_bytes, stream), what + " padding");
  if (g == Granularity::nvfp4) {  // the tensor amax first: s_enc needs it
    reset_amax(out.amax_bits, stream);
    amax_reduce(x, static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols), out.amax_bits,
                stream);
  }
#if defined(TCBENCH_BLOCK_QUANT_BLACKWELL)
  if (blackwell_family())
    blackwell::launch_block_quant(x, rows, cols, g, f, rule, out, stream);
  else
#endif
    portable::launch_block_quant(x, rows, cols, g, f, rule, out, stream);
  TCB_CUDA_LAUNCH(what);
}

}  // namespace tcbench::kernels
