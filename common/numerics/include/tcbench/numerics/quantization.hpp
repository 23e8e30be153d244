// Symmetric INT8 quantization as NVIDIA's pytorch-quantization / ModelOpt define it and as the
// IMMA GEMMs consume it: scale = amax / 127, q = clamp(rne(x / scale), -127, 127) (narrow range,
// zero point 0), x' = q * scale. Weights per output channel (one amax per row of a row-major
// [out, in] matrix), activations per tensor.
//
// Sources: NVIDIA/TensorRT tools/pytorch-quantization, tensor_quant.py (_tensor_quant,
// FakeTensorQuantFunction: clipped straight-through estimator); Wu et al., "Integer
// Quantization for Deep Learning Inference", arXiv:2004.09602.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tcbench/numerics/host_device.hpp"

namespace tcbench::numerics {

inline constexpr int kInt8MaxBound = 127;
// pytorch-quantization treats amax <= 2^-24 as zero: everything quantizes to 0.
inline constexpr float kInt8ZeroAmax = 0x1p-24f;  // not a format limit: pytorch's threshold

TCB_HD inline float int8_scale(float amax) {
  return (amax > kInt8ZeroAmax && is_finite(amax)) ? amax / static_cast<float>(kInt8MaxBound)
                                                   : 0.0f;
}

// rintf rounds half to even in the default rounding mode on the host and compiles to cvt.rni on
// the device. NaN maps to 0 because converting NaN to an integer is undefined.
TCB_HD inline std::int8_t quantize_int8(float x, float scale) {
  if (!(scale > 0.0f) || is_nan(x)) return 0;
  float q = rintf(x / scale);
  const float bound = static_cast<float>(kInt8MaxBound);
  q = q > bound ? bound : (q < -bound ? -bound : q);
  return static_cast<std::int8_t>(q);
}

TCB_HD inline float dequantize_int8(std::int8_t q, float scale) {
  return static_cast<float>(q) * scale;
}

// The epilogue of an INT8 GEMM with a per-tensor activation scale and per-channel weight scales:
// the exact int32 accumulator back to float. One rounding (the product of the scales is formed
// first, as a requantizing GEMM's alpha is), so host emulation and kernels agree bit for bit.
TCB_HD inline float dequantize_accumulator(std::int32_t acc, float scale_x, float scale_w) {
  return static_cast<float>(acc) * (scale_x * scale_w);
}

// QAT forward: quantize then dequantize, float in and out.
TCB_HD inline float fake_quant_int8(float x, float amax) {
  const float s = int8_scale(amax);
  return dequantize_int8(quantize_int8(x, s), s);
}

// QAT backward (clipped STE): the gradient passes where |x| <= amax and is zeroed outside.
TCB_HD inline float ste_grad_mask(float x, float amax) {
  return fabsf(x) <= amax ? 1.0f : 0.0f;
}

// Host helpers over whole tensors -------------------------------------------------------------

// Quantizes xs with one scale; returns that scale (amax(xs) / 127).
float quantize_per_tensor(std::span<const float> xs, std::span<std::int8_t> out);

// One scale per row of a row-major [rows, cols] weight matrix (rows = output channels).
std::vector<float> per_channel_scales(std::span<const float> w, std::size_t rows, std::size_t cols);
// Quantizes w row by row with the given scales (size rows).
void quantize_per_channel(std::span<const float> w, std::size_t rows, std::size_t cols,
                          std::span<const float> scales, std::span<std::int8_t> out);

void dequantize(std::span<const std::int8_t> q, float scale, std::span<float> out);
void dequantize_per_channel(std::span<const std::int8_t> q, std::size_t rows, std::size_t cols,
                            std::span<const float> scales, std::span<float> out);

}  // namespace tcbench::numerics
