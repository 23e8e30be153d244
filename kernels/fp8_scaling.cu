// FP8 per-tensor scaling kernels: amax reduction, scaled saturating cast, the delayed-scaling
// cast that records amax in the same pass, and the one-thread scale update.
//
// Inputs are FP32 or BF16 (what Transformer Engine usually casts from). Memory-bound by design:
// each thread loads four inputs (one 16- or 8-byte load) and stores four FP8 bytes (one 32-bit
// store) per iteration of a grid-stride loop over a grid of at most 8 blocks
// per SM, so per-block amax partials reach memory with few atomics. The element work is the
// numerics headers' code; on sm_89+ nvcc turns the satfinite cast into the hardware
// cvt.rn.satfinite.e4m3x2/e5m2x2.f32 (SASS F2FP), which tests/sass/sass_rules.json checks.
#include "tcbench/error.hpp"
#include "tcbench/kernels/fp8_scaling.hpp"

#include <cuda_bf16.h>

#include <cstdint>
#include <string>

namespace tcbench::kernels {
namespace {

namespace tn = tcbench::numerics;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// Four consecutive inputs as floats (exact for BF16), from one 16-byte (float) or 8-byte (BF16)
// load.
__device__ inline float4 load4(const float* x, std::size_t i) {
  return reinterpret_cast<const float4*>(x)[i];
}
__device__ inline float4 load4(const __nv_bfloat16* x, std::size_t i) {
  const uint2 raw = reinterpret_cast<const uint2*>(x)[i];
  const __nv_bfloat162 lo = *reinterpret_cast<const __nv_bfloat162*>(&raw.x);
  const __nv_bfloat162 hi = *reinterpret_cast<const __nv_bfloat162*>(&raw.y);
  return make_float4(__low2float(lo), __high2float(lo), __low2float(hi), __high2float(hi));
}
__device__ inline float load1(const float* x, std::size_t i) {
  return x[i];
}
__device__ inline float load1(const __nv_bfloat16* x, std::size_t i) {
  return __bfloat162float(x[i]);
}

// Block-wide NaN-sticky max, merged into *amax_bits by one atomic per block.
__device__ void merge_block_amax(float acc, unsigned* amax_bits) {
  for (int offset = 16; offset > 0; offset /= 2)
    acc = tn::amax_step(acc, __shfl_xor_sync(0xffffffffu, acc, offset));
  __shared__ float warp_amax[kWarps];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_amax[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = lane < kWarps ? warp_amax[lane] : 0.0f;
    for (int offset = kWarps / 2; offset > 0; offset /= 2)
      acc = tn::amax_step(acc, __shfl_xor_sync(0xffffffffu, acc, offset));
    if (lane == 0 && tn::amax_to_bits(acc) != 0u) atomicMax(amax_bits, tn::amax_to_bits(acc));
  }
}

__device__ inline float amax4(float acc, float4 v) {
  return tn::amax_step(tn::amax_step(tn::amax_step(tn::amax_step(acc, v.x), v.y), v.z), v.w);
}

// The grid-stride walk every kernel here makes: groups of four elements (one vector load each),
// then the tail of n % 4 elements one by one.
struct GridStride {
  std::size_t first, stride, n4;
  __device__ explicit GridStride(std::size_t n)
      : first(static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x),
        stride(static_cast<std::size_t>(gridDim.x) * kThreads),
        n4(n / 4) {}
};

template <typename In>
__global__ void __launch_bounds__(kThreads)
    fp8_amax_kernel(const In* __restrict__ x, std::size_t n, unsigned* __restrict__ amax_bits) {
  const GridStride g(n);
  float acc = 0.0f;
  for (std::size_t i = g.first; i < g.n4; i += g.stride) acc = amax4(acc, load4(x, i));
  for (std::size_t i = 4 * g.n4 + g.first; i < n; i += g.stride)
    acc = tn::amax_step(acc, load1(x, i));
  merge_block_amax(acc, amax_bits);
}

// Four FP8 bytes in memory order, as one 32-bit store.
template <tn::Fp8Format F, tn::Saturation S>
__device__ inline std::uint32_t cast4(float4 v, float scale) {
  return static_cast<std::uint32_t>(tn::scaled_cast_fp8(v.x, scale, F, S)) |
         static_cast<std::uint32_t>(tn::scaled_cast_fp8(v.y, scale, F, S)) << 8 |
         static_cast<std::uint32_t>(tn::scaled_cast_fp8(v.z, scale, F, S)) << 16 |
         static_cast<std::uint32_t>(tn::scaled_cast_fp8(v.w, scale, F, S)) << 24;
}

// kRecord: also merge amax(x) into *amax_bits (the delayed-scaling pass).
template <tn::Fp8Format F, tn::Saturation S, bool kRecord, typename In>
__global__ void __launch_bounds__(kThreads)
    fp8_cast_kernel(const In* __restrict__ x, std::size_t n, const float* __restrict__ scale_ptr,
                    __nv_fp8_storage_t* __restrict__ out, unsigned* __restrict__ amax_bits) {
  const float scale = *scale_ptr;
  const GridStride g(n);
  float acc = 0.0f;
  for (std::size_t i = g.first; i < g.n4; i += g.stride) {
    const float4 v = load4(x, i);
    reinterpret_cast<std::uint32_t*>(out)[i] = cast4<F, S>(v, scale);
    if constexpr (kRecord) acc = amax4(acc, v);
  }
  for (std::size_t i = 4 * g.n4 + g.first; i < n; i += g.stride) {
    const float v = load1(x, i);
    out[i] = tn::scaled_cast_fp8(v, scale, F, S);
    if constexpr (kRecord) acc = tn::amax_step(acc, v);
  }
  if constexpr (kRecord) merge_block_amax(acc, amax_bits);
}

__global__ void fp8_compute_scale_kernel(const unsigned* __restrict__ amax_bits, ScaleRule rule,
                                         float fp8_max, int margin, float* __restrict__ scale,
                                         float* __restrict__ scale_inv) {
  const float amax = tn::amax_from_bits(*amax_bits);
  const float s = rule == ScaleRule::delayed
                      ? tn::delayed_scale_from_amax(amax, fp8_max, margin, *scale)
                      : tn::current_scale_from_amax(amax, fp8_max);
  *scale = s;
  *scale_inv = 1.0f / s;
}

int grid_for(std::size_t n) {
  int device = 0, sms = 0;
  TCB_CUDA(cudaGetDevice(&device));
  TCB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::size_t want = (n / 4 + kThreads - 1) / kThreads;
  const std::size_t cap = static_cast<std::size_t>(8) * static_cast<std::size_t>(sms);
  return static_cast<int>(want < 1 ? 1 : (want < cap ? want : cap));
}

template <typename In>
void check_pointers(const char* what, const In* x, std::size_t n, const void* out) {
  const auto in_addr = reinterpret_cast<std::uintptr_t>(x);
  const auto out_addr = reinterpret_cast<std::uintptr_t>(out);
  if (x == nullptr || in_addr % (4 * sizeof(In)) != 0 ||
      (out != nullptr && out_addr % kFp8CastOutAlign != 0))
    throw InvalidArgument(std::string(what) + ": x must be a non-null " +
                          std::to_string(4 * sizeof(In)) + "-byte aligned device pointer and " +
                          "out " + std::to_string(kFp8CastOutAlign) +
                          "-byte aligned; got n=" + std::to_string(n));
}

template <bool kRecord, typename In>
void launch_cast(const char* what, const In* x, std::size_t n, const float* scale, tn::Fp8Format f,
                 tn::Saturation sat, __nv_fp8_storage_t* out, unsigned* amax_bits,
                 cudaStream_t stream) {
  check_pointers(what, x, n, out);
  if (scale == nullptr || out == nullptr || (kRecord && amax_bits == nullptr))
    throw InvalidArgument(std::string(what) + ": scale, out" + (kRecord ? " and amax" : "") +
                          " must be device pointers; got a null one (n=" + std::to_string(n) + ")");
  if (n == 0) return;
  const int grid = grid_for(n);
  using tn::Fp8Format;
  using tn::Saturation;
  if (f == Fp8Format::e4m3 && sat == Saturation::satfinite)
    fp8_cast_kernel<Fp8Format::e4m3, Saturation::satfinite, kRecord, In>
        <<<grid, kThreads, 0, stream>>>(x, n, scale, out, amax_bits);
  else if (f == Fp8Format::e5m2 && sat == Saturation::satfinite)
    fp8_cast_kernel<Fp8Format::e5m2, Saturation::satfinite, kRecord, In>
        <<<grid, kThreads, 0, stream>>>(x, n, scale, out, amax_bits);
  else if (f == Fp8Format::e4m3)
    fp8_cast_kernel<Fp8Format::e4m3, Saturation::none, kRecord, In>
        <<<grid, kThreads, 0, stream>>>(x, n, scale, out, amax_bits);
  else
    fp8_cast_kernel<Fp8Format::e5m2, Saturation::none, kRecord, In>
        <<<grid, kThreads, 0, stream>>>(x, n, scale, out, amax_bits);
  TCB_CUDA_LAUNCH(std::string(what) + " n=" + std::to_string(n));
}

}  // namespace

void reset_amax(unsigned* amax_bits, cudaStream_t stream) {
  TCB_CUDA_CTX(cudaMemsetAsync(amax_bits, 0, sizeof(unsigned), stream), "reset_amax");
}

namespace {
template <typename In>
void amax_reduce_impl(const In* x, std::size_t n, unsigned* amax_bits, cudaStream_t stream) {
  check_pointers("amax_reduce", x, n, nullptr);
  if (amax_bits == nullptr)
    throw InvalidArgument(
        "amax_reduce: amax_bits must be a device pointer; got null (n=" + std::to_string(n) + ")");
  if (n == 0) return;
  fp8_amax_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, n, amax_bits);
  TCB_CUDA_LAUNCH("amax_reduce n=" + std::to_string(n));
}
}  // namespace

void amax_reduce(const float* x, std::size_t n, unsigned* amax_bits, cudaStream_t stream) {
  amax_reduce_impl(x, n, amax_bits, stream);
}
void amax_reduce(const __nv_bfloat16* x, std::size_t n, unsigned* amax_bits, cudaStream_t stream) {
  amax_reduce_impl(x, n, amax_bits, stream);
}

void scaled_cast(const float* x, std::size_t n, const float* scale, numerics::Fp8Format f,
                 numerics::Saturation sat, __nv_fp8_storage_t* out, cudaStream_t stream) {
  launch_cast<false>("scaled_cast", x, n, scale, f, sat, out, nullptr, stream);
}
void scaled_cast(const __nv_bfloat16* x, std::size_t n, const float* scale, numerics::Fp8Format f,
                 numerics::Saturation sat, __nv_fp8_storage_t* out, cudaStream_t stream) {
  launch_cast<false>("scaled_cast", x, n, scale, f, sat, out, nullptr, stream);
}

void scaled_cast_record_amax(const float* x, std::size_t n, const float* scale,
                             numerics::Fp8Format f, __nv_fp8_storage_t* out, unsigned* amax_bits,
                             cudaStream_t stream) {
  launch_cast<true>("scaled_cast_record_amax", x, n, scale, f, numerics::Saturation::satfinite, out,
                    amax_bits, stream);
}
void scaled_cast_record_amax(const __nv_bfloat16* x, std::size_t n, const float* scale,
                             numerics::Fp8Format f, __nv_fp8_storage_t* out, unsigned* amax_bits,
                             cudaStream_t stream) {
  launch_cast<true>("scaled_cast_record_amax", x, n, scale, f, numerics::Saturation::satfinite, out,
                    amax_bits, stream);
}

void compute_scale(const unsigned* amax_bits, ScaleRule rule, float fp8_max, int margin,
                   float* scale, float* scale_inv, cudaStream_t stream) {
  if (amax_bits == nullptr || scale == nullptr || scale_inv == nullptr)
    throw InvalidArgument("compute_scale: amax, scale and scale_inv must be device pointers");
  if (!(fp8_max > 0.0f) || margin < 0)
    throw InvalidArgument("compute_scale: fp8_max must be positive and margin >= 0; got fp8_max=" +
                          std::to_string(fp8_max) + " margin=" + std::to_string(margin));
  fp8_compute_scale_kernel<<<1, 1, 0, stream>>>(amax_bits, rule, fp8_max, margin, scale, scale_inv);
  TCB_CUDA_LAUNCH("compute_scale");
}

namespace {

template <typename In>
void quantize_impl(ScaleRule rule, const In* x, std::size_t n, tn::Fp8Format f,
                   __nv_fp8_storage_t* out, ScaleState& state, cudaStream_t stream) {
  const float max = tn::fp8_max(f);
  reset_amax(state.amax.ptr(), stream);
  if (rule == ScaleRule::current) {
    amax_reduce(x, n, state.amax.ptr(), stream);
    compute_scale(state.amax.ptr(), ScaleRule::current, max, 0, state.scale.ptr(),
                  state.scale_inv.ptr(), stream);
    scaled_cast(x, n, state.scale.ptr(), f, tn::Saturation::satfinite, out, stream);
  } else {
    scaled_cast_record_amax(x, n, state.scale.ptr(), f, out, state.amax.ptr(), stream);
    compute_scale(state.amax.ptr(), ScaleRule::delayed, max, 0, state.scale.ptr(),
                  state.scale_inv.ptr(), stream);
  }
}

template <typename In>
float current_scale_impl(const In* x, std::size_t n, tn::Fp8Format f, ScaleState& state,
                         cudaStream_t stream) {
  reset_amax(state.amax.ptr(), stream);
  amax_reduce(x, n, state.amax.ptr(), stream);
  compute_scale(state.amax.ptr(), ScaleRule::current, tn::fp8_max(f), 0, state.scale.ptr(),
                state.scale_inv.ptr(), stream);
  return state.scale.get(stream);
}

}  // namespace

void quantize(ScaleRule rule, const float* x, std::size_t n, numerics::Fp8Format f,
              __nv_fp8_storage_t* out, ScaleState& state, cudaStream_t stream) {
  quantize_impl(rule, x, n, f, out, state, stream);
}
void quantize(ScaleRule rule, const __nv_bfloat16* x, std::size_t n, numerics::Fp8Format f,
              __nv_fp8_storage_t* out, ScaleState& state, cudaStream_t stream) {
  quantize_impl(rule, x, n, f, out, state, stream);
}
float current_scale(const float* x, std::size_t n, numerics::Fp8Format f, ScaleState& state,
                    cudaStream_t stream) {
  return current_scale_impl(x, n, f, state, stream);
}
float current_scale(const __nv_bfloat16* x, std::size_t n, numerics::Fp8Format f, ScaleState& state,
                    cudaStream_t stream) {
  return current_scale_impl(x, n, f, state, stream);
}

}  // namespace tcbench::kernels
