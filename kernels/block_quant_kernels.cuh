// The block quantization kernels and their launch, included by two translation units that build
// them for different targets (kernels/CMakeLists.txt): block_quant.cu, portable, for every
// architecture of the build, and block_quant_blackwell.cu, family-specific (sm_100f, sm_110f,
// sm_120f), where cuda_fp4.h and cuda_fp8.h use the hardware conversions for E2M1 and E8M0
// (cvt.rn.satfinite.e2m1x2.f32, cvt.rp.satfinite.ue8m0x2.f32: SASS F2FP). Each defines
// TCB_BLOCK_QUANT_NS (portable, blackwell) first, so the kernels' names say which they are.
// block_quant.cu's block_quantize() checks the arguments and picks one; see it for the shapes.
#pragma once

#ifndef TCB_BLOCK_QUANT_NS
#error "define TCB_BLOCK_QUANT_NS (portable or blackwell) before including block_quant_kernels.cuh"
#endif

#include "tcbench/error.hpp"
#include "tcbench/kernels/block_quant.hpp"
#include "tcbench/numerics/block_scaling.hpp"
#include "tcbench/numerics/fp8_scaling.hpp"
#include "tcbench/numerics/scale_layout.hpp"

#include <cstdint>

namespace tcbench::kernels::TCB_BLOCK_QUANT_NS {

namespace tn = tcbench::numerics;
using Index = std::int64_t;
using tn::ElementFormat;
using tn::Granularity;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr Index kChunk = 128;  // elements of a row one warp covers (32 lanes x 4)

__device__ inline float4 load4(const float* x, Index i) {
  return *reinterpret_cast<const float4*>(x + i);
}
__device__ inline float amax4(float acc, float4 v) {
  return tn::amax_step(tn::amax_step(tn::amax_step(tn::amax_step(acc, v.x), v.y), v.z), v.w);
}
// NaN-sticky max over aligned groups of kLanes lanes (xor offsets below kLanes stay inside).
template <int kLanes>
__device__ inline float group_amax(float a) {
  for (int offset = kLanes / 2; offset > 0; offset /= 2)
    a = tn::amax_step(a, __shfl_xor_sync(0xffffffffu, a, offset));
  return a;
}

// Four codes of one lane as stored: FP8 one byte each (a 32-bit store), FP4 two per byte, element
// 2i in the low nibble (a 16-bit store); `i` is the first element's index in the operand.
template <int kBits>
__device__ inline void store4(std::uint8_t* codes, Index i, std::uint32_t c0, std::uint32_t c1,
                              std::uint32_t c2, std::uint32_t c3) {
  if constexpr (kBits == 8) {
    *reinterpret_cast<std::uint32_t*>(codes + i) = c0 | c1 << 8 | c2 << 16 | c3 << 24;
  } else {
    *reinterpret_cast<std::uint16_t*>(codes + i / 2) = static_cast<std::uint16_t>(
        (c0 & 0xFu) | (c1 & 0xFu) << 4 | (c2 & 0xFu) << 8 | (c3 & 0xFu) << 12);
  }
}

// The three row-block rules: how a block's amax becomes its scale, where the scale goes, how an
// element is encoded with it.
template <ElementFormat F>
struct Vec128Rule {  // 1x128, FP32 scales, VEC128_32F: (row r, block b) at r + b * rows
  static constexpr int kBlock = tn::kTile;
  static constexpr int kBits = 8;
  using Scale = float;
  float* scales;
  Index rows;
  __device__ void begin() {}
  __device__ Scale scale(float amax) const { return tn::group_scale(amax, F); }
  __device__ void store_scale(Scale s, Index r, Index b, Index) const {
    scales[tn::vec128_offset(r, b, rows)] = 1.0f / s;
  }
  __device__ std::uint32_t encode(float x, Scale s) const { return tn::group_encode(x, s, F); }
};

template <ElementFormat F>
struct MxRowRule {  // MX: E8M0 per 32, VEC32_UE8M0's 128x4 tiles
  static constexpr int kBlock = tn::kMxBlock;
  static constexpr int kBits = 8;
  using Scale = std::uint8_t;
  std::uint8_t* scales;
  tn::MxRule rule;
  __device__ void begin() {}
  __device__ Scale scale(float amax) const { return tn::mx_scale_code(amax, F, rule); }
  __device__ void store_scale(Scale s, Index r, Index b, Index cols) const {
    scales[tn::block_scale_offset(r, b, cols, kBlock)] = s;
  }
  __device__ std::uint32_t encode(float x, Scale s) const { return tn::mx_encode(x, s, F); }
};

struct Nvfp4RowRule {  // NVFP4: E2M1, UE4M3 per 16 relative to s_enc, VEC16_UE4M3's tiles
  static constexpr int kBlock = tn::kNvfp4Block;
  static constexpr int kBits = 4;
  using Scale = std::uint8_t;
  std::uint8_t* scales;
  const unsigned* amax_bits;  // the tensor amax (amax_reduce)
  float* tensor_scale_out;
  float tensor_scale;
  __device__ void begin() {
    tensor_scale = tn::nvfp4_tensor_scale(tn::amax_from_bits(*amax_bits));
    if (blockIdx.x == 0 && threadIdx.x == 0) *tensor_scale_out = tensor_scale;
  }
  __device__ Scale scale(float amax) const { return tn::nvfp4_scale_code(amax, tensor_scale); }
  __device__ void store_scale(Scale s, Index r, Index b, Index cols) const {
    scales[tn::block_scale_offset(r, b, cols, kBlock)] = s;
  }
  __device__ std::uint32_t encode(float x, Scale s) const {
    return tn::nvfp4_encode(x, s, tensor_scale);
  }
};

template <class Rule>
__global__ void __launch_bounds__(kThreads)
    block_quant_rows_kernel(const float* __restrict__ x, Index rows, Index cols, Rule rule,
                            std::uint8_t* __restrict__ codes) {
  constexpr int kLanes = Rule::kBlock / 4;
  static_assert(kLanes >= 1 && kLanes <= 32 && 32 % kLanes == 0);
  rule.begin();
  const Index chunks = tn::ceil_div(cols, kChunk);
  const Index tasks = rows * chunks;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const Index stride = static_cast<Index>(gridDim.x) * kWarps;
  // t is the same on every lane of a warp: the shuffles below always see all 32.
  for (Index t = static_cast<Index>(blockIdx.x) * kWarps + threadIdx.x / 32; t < tasks;
       t += stride) {
    const Index r = t / chunks;
    const Index c = (t - r * chunks) * kChunk + 4 * lane;
    const bool inside = c < cols;  // cols % 4 == 0: a lane's four are all inside or all out
    const Index i = r * cols + c;
    const float4 v = inside ? load4(x, i) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    const float amax = group_amax<kLanes>(amax4(0.0f, v));
    if (!inside) continue;
    const typename Rule::Scale s = rule.scale(amax);
    if (lane % kLanes == 0) rule.store_scale(s, r, c / Rule::kBlock, cols);
    store4<Rule::kBits>(codes, i, rule.encode(v.x, s), rule.encode(v.y, s), rule.encode(v.z, s),
                        rule.encode(v.w, s));
  }
}

// NaN-sticky max over the CTA, returned to every thread.
__device__ float cta_amax(float a) {
  __shared__ float warp_amax[kWarps];
  a = group_amax<32>(a);
  if (threadIdx.x % 32 == 0) warp_amax[threadIdx.x / 32] = a;
  __syncthreads();
  float all = 0.0f;
  for (int w = 0; w < kWarps; ++w) all = tn::amax_step(all, warp_amax[w]);
  __syncthreads();  // warp_amax is free for the next block
  return all;
}

// 128x128: thread (row group g = tid / 32, column quad q = tid % 32) holds rows g, g + 8, ...,
// g + 120 of the block at columns 4q .. 4q + 3 in registers (16 float4), so the block is read
// from memory once: its amax, then the cast from the registers.
template <ElementFormat F>
__global__ void __launch_bounds__(kThreads)
    block_quant_128x128_kernel(const float* __restrict__ x, Index rows, Index cols,
                               float* __restrict__ scales, std::uint8_t* __restrict__ codes) {
  constexpr int kRowsPerThread = tn::kTile / kWarps;
  const Index block_rows = tn::ceil_div(rows, Index{tn::kTile});
  const Index block_cols = tn::ceil_div(cols, Index{tn::kTile});
  const int quad = static_cast<int>(threadIdx.x % 32);
  const int group = static_cast<int>(threadIdx.x / 32);
  for (Index blk = blockIdx.x; blk < block_rows * block_cols; blk += gridDim.x) {
    const Index p = blk / block_cols, b = blk - p * block_cols;
    const Index c = b * tn::kTile + 4 * quad;
    const bool inside = c < cols;
    const Index r0 = p * tn::kTile + group;
    float4 v[kRowsPerThread];
    float a = 0.0f;
#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i) {  // rows past the matrix read as zeros
      const Index r = r0 + Index{i} * kWarps;
      v[i] = inside && r < rows ? load4(x, r * cols + c) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      a = amax4(a, v[i]);
    }
    const float s = tn::group_scale(cta_amax(a), F);
    if (threadIdx.x == 0) scales[tn::blk128_offset(p, b, cols)] = 1.0f / s;
#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i) {
      const Index r = r0 + Index{i} * kWarps;
      if (inside && r < rows)
        store4<8>(codes, r * cols + c, tn::group_encode(v[i].x, s, F),
                  tn::group_encode(v[i].y, s, F), tn::group_encode(v[i].z, s, F),
                  tn::group_encode(v[i].w, s, F));
    }
  }
}

int grid_for(Index ctas_wanted) {
  int device = 0, sms = 0;
  TCB_CUDA(cudaGetDevice(&device));
  TCB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const Index cap = Index{16} * sms;
  return static_cast<int>(ctas_wanted < 1 ? 1 : (ctas_wanted < cap ? ctas_wanted : cap));
}

template <class Rule>
void launch_rows(const float* x, Index rows, Index cols, const Rule& rule, std::uint8_t* codes,
                 cudaStream_t stream) {
  const Index warps = rows * tn::ceil_div(cols, kChunk);
  block_quant_rows_kernel<Rule>
      <<<grid_for(tn::ceil_div(warps, Index{kWarps})), kThreads, 0, stream>>>(x, rows, cols, rule,
                                                                              codes);
}

// Launches the block pass of g into `out`; block_quantize() has checked the arguments, zeroed the
// scale tensor's padding and, for nvfp4, put the tensor amax in out.amax_bits.
void launch_block_quant(const float* x, Index rows, Index cols, Granularity g, ElementFormat f,
                        tn::MxRule rule, const BlockQuantOutput& out, cudaStream_t stream) {
  auto* fscales = reinterpret_cast<float*>(out.scales);
  const bool e4m3 = f == ElementFormat::e4m3;
  switch (g) {
    case Granularity::tile_1x128:
      if (e4m3)
        launch_rows(x, rows, cols, Vec128Rule<ElementFormat::e4m3>{fscales, rows}, out.codes,
                    stream);
      else
        launch_rows(x, rows, cols, Vec128Rule<ElementFormat::e5m2>{fscales, rows}, out.codes,
                    stream);
      break;
    case Granularity::block_128x128: {
      const Index blocks = tn::ceil_div(rows, Index{tn::kTile}) * tn::ceil_div(cols, tn::kTile);
      const int grid = grid_for(blocks);
      if (e4m3)
        block_quant_128x128_kernel<ElementFormat::e4m3>
            <<<grid, kThreads, 0, stream>>>(x, rows, cols, fscales, out.codes);
      else
        block_quant_128x128_kernel<ElementFormat::e5m2>
            <<<grid, kThreads, 0, stream>>>(x, rows, cols, fscales, out.codes);
      break;
    }
    case Granularity::mx:
      if (e4m3)
        launch_rows(x, rows, cols, MxRowRule<ElementFormat::e4m3>{out.scales, rule}, out.codes,
                    stream);
      else
        launch_rows(x, rows, cols, MxRowRule<ElementFormat::e5m2>{out.scales, rule}, out.codes,
                    stream);
      break;
    case Granularity::nvfp4: {
      launch_rows(x, rows, cols, Nvfp4RowRule{out.scales, out.amax_bits, out.tensor_scale, 1.0f},
                  out.codes, stream);
      break;
    }
    default:
      break;
  }
}

}  // namespace tcbench::kernels::TCB_BLOCK_QUANT_NS
