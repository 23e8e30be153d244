// A memory-bound kernel: the STREAM triad a[i] = b[i] + s * c[i] (McCalpin's STREAM benchmark,
// www.cs.virginia.edu/stream). 12 bytes move per 2 FLOP, so it runs at DRAM bandwidth and leaves
// the tensor pipe idle: the "no tensor work at all" point of the tensor_util topic.
#pragma once

#include "tcbench/numerics/host_device.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>

namespace tcbench::kernels {

// One element, as the kernel computes it (a single rounding: fused multiply-add).
TCB_HD inline float triad(float b, float c, float scalar) {
  return fmaf(scalar, c, b);
}

// a[i] = triad(b[i], c[i], scalar) for i < n. Enqueues on `stream` only.
void stream_triad(const float* b, const float* c, float* a, float scalar, std::size_t n,
                  cudaStream_t stream);

// Bytes one call moves: read b and c, write a.
constexpr double stream_triad_bytes(std::size_t n) {
  return 3.0 * sizeof(float) * static_cast<double>(n);
}

}  // namespace tcbench::kernels
