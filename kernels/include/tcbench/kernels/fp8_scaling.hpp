// The GPU side of FP8 per-tensor scaling (recipes in tcbench/numerics/fp8_scaling.hpp):
//   current scaling: amax_reduce, compute_scale(current), scaled_cast      (two passes over x)
//   delayed scaling: scaled_cast_record_amax with last step's scale, then
//                    compute_scale(delayed) for the next step              (one pass over x)
// Every kernel is a loop around the host-tested element functions (scaled_cast_fp8, amax_step,
// amax_to_bits, delayed/current_scale_from_amax), so its results are bit-for-bit the host's.
//
// Scales live in device memory, as in Transformer Engine, so the whole pipeline (amax, scale,
// cast, GEMM with scale_inv as cuBLASLt's A/B_SCALE_POINTER) runs without a host round trip.
// An amax accumulator is one `unsigned` holding amax_to_bits(amax); zero it before a pass
// (reset_amax) and read it with amax_from_bits.
#pragma once

#include "tcbench/cuda_owners.hpp"
#include "tcbench/numerics/fp8_scaling.hpp"

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>
#include <string>

namespace tcbench::kernels {

// Inputs are FP32 or BF16. Alignment the kernels require (cudaMalloc gives 256 bytes): x four
// elements (16 bytes of FP32, 8 of BF16: one vector load), out 4 bytes (four FP8 values per
// store). The launchers throw InvalidArgument otherwise.
inline constexpr std::size_t kFp8CastOutAlign = 4;

void reset_amax(unsigned* amax_bits, cudaStream_t stream);

// *amax_bits = max(*amax_bits, amax_to_bits(max |x|)), NaN sticky.
void amax_reduce(const float* x, std::size_t n, unsigned* amax_bits, cudaStream_t stream);
void amax_reduce(const __nv_bfloat16* x, std::size_t n, unsigned* amax_bits, cudaStream_t stream);

// out[i] = scaled_cast_fp8(x[i], *scale, f, sat).
void scaled_cast(const float* x, std::size_t n, const float* scale, numerics::Fp8Format f,
                 numerics::Saturation sat, __nv_fp8_storage_t* out, cudaStream_t stream);
void scaled_cast(const __nv_bfloat16* x, std::size_t n, const float* scale, numerics::Fp8Format f,
                 numerics::Saturation sat, __nv_fp8_storage_t* out, cudaStream_t stream);

// The delayed-scaling pass: the satfinite cast of scaled_cast with `scale` (last step's) while
// merging this tensor's amax into *amax_bits, in one read of x.
void scaled_cast_record_amax(const float* x, std::size_t n, const float* scale,
                             numerics::Fp8Format f, __nv_fp8_storage_t* out, unsigned* amax_bits,
                             cudaStream_t stream);
void scaled_cast_record_amax(const __nv_bfloat16* x, std::size_t n, const float* scale,
                             numerics::Fp8Format f, __nv_fp8_storage_t* out, unsigned* amax_bits,
                             cudaStream_t stream);

using numerics::ScaleRule;

// One thread: amax = amax_from_bits(*amax_bits);
//   delayed: *scale = delayed_scale_from_amax(amax, fp8_max, margin, *scale)  (TE: keeps the
//            previous scale for amax 0/Inf/NaN)
//   current: *scale = current_scale_from_amax(amax, fp8_max)                  (1 for 0/Inf/NaN)
// and *scale_inv = 1 / *scale (what cuBLASLt's A/B_SCALE_POINTER takes). `margin` is ignored
// for current scaling.
void compute_scale(const unsigned* amax_bits, ScaleRule rule, float fp8_max, int margin,
                   float* scale, float* scale_inv, cudaStream_t stream);

// The host reference beside the kernels: the first and the last `sample` outputs of a satfinite
// scaled_cast of x (n elements, format f) against numerics::scaled_cast_fp8 of the same inputs.
// nullopt when they agree bit for bit, else a sentence naming the first element that differs.
// Synchronizes the stream.
std::optional<std::string> cast_mismatch(const float* x, const __nv_fp8_storage_t* out,
                                         std::size_t n, float scale, numerics::Fp8Format f,
                                         std::size_t sample, cudaStream_t stream);
std::optional<std::string> cast_mismatch(const __nv_bfloat16* x, const __nv_fp8_storage_t* out,
                                         std::size_t n, float scale, numerics::Fp8Format f,
                                         std::size_t sample, cudaStream_t stream);

// One tensor's scaling state on the device, as Transformer Engine keeps it per tensor: the amax
// accumulator, the quantizing scale (x * scale -> FP8) and its inverse (cuBLASLt's A/B scale).
struct ScaleState {
  DeviceValue<unsigned> amax;
  DeviceValue<float> scale{1.0f};
  DeviceValue<float> scale_inv{1.0f};
};

// A recipe's whole quantization of one tensor x (n elements) into `out` (format f, satfinite):
//   current: amax pass, compute_scale(current), scaled_cast          (two reads of x)
//   delayed: scaled_cast_record_amax with state.scale (last step's), then compute_scale(delayed)
//            for the next step                                        (one read of x)
void quantize(ScaleRule rule, const float* x, std::size_t n, numerics::Fp8Format f,
              __nv_fp8_storage_t* out, ScaleState& state, cudaStream_t stream);
void quantize(ScaleRule rule, const __nv_bfloat16* x, std::size_t n, numerics::Fp8Format f,
              __nv_fp8_storage_t* out, ScaleState& state, cudaStream_t stream);

// Current scaling's scale of x: the amax pass and compute_scale(current) into `state`; returns
// the scale (synchronizes the stream to read it).
float current_scale(const float* x, std::size_t n, numerics::Fp8Format f, ScaleState& state,
                    cudaStream_t stream);
float current_scale(const __nv_bfloat16* x, std::size_t n, numerics::Fp8Format f, ScaleState& state,
                    cudaStream_t stream);

}  // namespace tcbench::kernels
