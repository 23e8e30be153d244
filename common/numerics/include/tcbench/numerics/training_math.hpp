// The element functions of mixed-precision training, shared by the host trainer
// (tcbench/studies/mixed_precision_training.hpp) and the GPU kernels
// (kernels/training_step.cu), so both compute the very same bits: storing a value in a narrow
// format, the tally of what storing lost, tanh forward and backward, the scaled MSE gradient and
// one Adam step.
#pragma once

#include "tcbench/numerics/formats.hpp"
#include "tcbench/numerics/host_device.hpp"

#include <cstddef>
#include <cstdint>

namespace tcbench::numerics {

// Where activations and gradients are stored: a view of the element table.
enum class Storage : std::uint8_t { fp32, fp16, bf16 };
TCB_HD constexpr Element element(Storage s) {
  return s == Storage::fp32 ? Element::fp32 : s == Storage::fp16 ? Element::fp16 : Element::bf16;
}
inline constexpr Storage kStorages[] = {Storage::fp32, Storage::fp16, Storage::bf16};
constexpr bool is_training_storage(Element e) {
  return e == Element::fp32 || e == Element::fp16 || e == Element::bf16;
}
static_assert(is_view(kStorages, is_training_storage));

// Element functions, shared by the host trainer and the GPU kernels ---------------------------

// The value x keeps when stored in `s` (round to nearest even; FP32 keeps it).
TCB_HD inline float store_as(float x, Storage s) {
  switch (s) {
    case Storage::fp16:
      return round_trip(x, Format::fp16);
    case Storage::bf16:
      return round_trip(x, Format::bf16);
    case Storage::fp32:
      return x;
  }
  return x;
}

// What storing the gradients of one step lost. `flushed`: nonzero in FP32, zero once stored,
// i.e. zero only because of underflow. `non_finite`: Inf or NaN once stored (an overflow, or one
// carried from an earlier overflow), which makes the step's scaler skip it.
struct GradientTally {
  std::uint64_t stored = 0;
  std::uint64_t flushed = 0;
  std::uint64_t non_finite = 0;
  GradientTally& operator+=(const GradientTally& o) {
    stored += o.stored;
    flushed += o.flushed;
    non_finite += o.non_finite;
    return *this;
  }
};

// Per-element outcome of storing one gradient: bit 0 flushed, bit 1 non-finite. Kernels sum
// these; the host adds them to a GradientTally.
inline constexpr unsigned kFlushedBit = 1u, kNonFiniteBit = 2u;
TCB_HD inline unsigned store_outcome(float fp32_value, float stored) {
  unsigned bits = 0;
  if (fp32_value != 0.0f && stored == 0.0f) bits |= kFlushedBit;
  if (!is_finite(stored)) bits |= kNonFiniteBit;
  return bits;
}
inline void add_outcome(GradientTally& t, unsigned bits) {
  ++t.stored;
  t.flushed += bits & kFlushedBit;
  t.non_finite += (bits & kNonFiniteBit) >> 1;
}

TCB_HD inline float tanh_forward(float z) {
  return tanhf(z);
}
// d tanh(z)/dz expressed through the stored output h = tanh(z).
TCB_HD inline float tanh_backward(float dh, float h) {
  return dh * (1.0f - h * h);
}
// Gradient of scale * mean((y - t)^2) with respect to y; coef = scale * 2 / count, formed once in
// FP32, so the scale multiplies every element exactly as scaling the loss would.
TCB_HD inline float scaled_mse_gradient(float y, float t, float coef) {
  return (y - t) * coef;
}
TCB_HD inline float squared_error(float y, float t) {
  const float r = y - t;
  return r * r;
}

// One Adam step on one parameter (PyTorch torch.optim.Adam, no weight decay, no amsgrad):
//   m = b1 m + (1 - b1) g,  v = b2 v + (1 - b2) g^2,
//   p -= (lr / (1 - b1^t)) * m / (sqrt(v) / sqrt(1 - b2^t) + eps).
// step_size = lr / (1 - b1^t) and bias2_sqrt = sqrt(1 - b2^t) are computed once per step.
struct AdamConstants {
  float beta1, beta2, eps, step_size, bias2_sqrt;
};
TCB_HD inline void adam_update(float& p, float& m, float& v, float g, const AdamConstants& c) {
  m = c.beta1 * m + (1.0f - c.beta1) * g;
  v = c.beta2 * v + (1.0f - c.beta2) * g * g;
  p -= c.step_size * m / (sqrtf(v) / c.bias2_sqrt + c.eps);
}

// coef of scaled_mse_gradient for a loss averaged over `count` elements.
inline float scaled_mse_coef(float scale, std::size_t count) {
  return scale * (2.0f / static_cast<float>(count));
}

}  // namespace tcbench::numerics
