// Loss-scaling kernels: where scaled gradients land (classify and count), and the fused
// multi-tensor check-and-unscale that GradScaler.unscale_ runs before every optimizer step.
// Both are thin loops around the host-tested element functions of
// tcbench/numerics/loss_scaling.hpp; tests/device compares them with the host bit for bit.
#pragma once

#include "tcbench/cuda_owners.hpp"
#include "tcbench/numerics/loss_scaling.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tcbench::kernels {

// The most scales one count_landings launch takes.
inline constexpr int kMaxLandingScales = 8;

// counts[(s * 2 + f) * kLandingCount + landing] = how many of grads[0, n) land in class
// `landing` of format f (0 FP16, 1 BF16) when multiplied by scales[s]: per scale and format,
// exactly numerics::count_landings. `counts` holds scales.size() * 2 * kLandingCount values; the
// launcher zeroes it on `stream` first.
void count_landings(const float* grads, std::size_t n, std::span<const float> scales,
                    unsigned long long* counts, cudaStream_t stream);

// One gradient tensor of a parameter set (FP32 master gradients, as GradScaler sees them).
struct GradTensor {
  float* data;
  std::size_t count;
};

// PyTorch's _amp_foreach_non_finite_check_and_unscale_ over a list of tensors: every element is
// multiplied by *inv_scale in place, and *found_inf is set to 1.0f when any element was Inf or
// NaN (never cleared). The list is cut into chunks of kChunk elements once, at construction, and
// the chunk table lives on the device, so run() is a single launch whatever the tensor count.
// Tensors whose address is 16-byte aligned are read and written with 128-bit accesses.
class MultiTensorUnscale {
 public:
  static constexpr std::size_t kChunk = 65536;  // elements per chunk, as multi_tensor_apply
  explicit MultiTensorUnscale(std::span<const GradTensor> tensors);
  // inv_scale and found_inf are device pointers (as in PyTorch: no host synchronization).
  void run(const float* inv_scale, float* found_inf, cudaStream_t stream) const;
  std::size_t elements() const { return elements_; }
  std::size_t chunks() const { return chunk_count_; }

  struct Chunk {
    float* data;           // first element of the chunk
    std::uint32_t count;   // elements in it, <= kChunk
    std::uint32_t vector;  // 1 when data is 16-byte aligned
  };

 private:
  DeviceBuffer<Chunk> chunks_;
  std::size_t chunk_count_ = 0;
  std::size_t elements_ = 0;
};

// The host reference of MultiTensorUnscale::run: the same element function, tensor by tensor.
bool check_and_unscale_host(std::span<const std::span<float>> tensors, float inv_scale);

}  // namespace tcbench::kernels
