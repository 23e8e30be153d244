// STREAM triad, grid-stride, four elements per thread per step (16-byte loads where the
// pointers allow); the tail is done element by element.
#include "tcbench/numerics/host_device.hpp"
#include "tcbench/error.hpp"
#include "tcbench/kernels/stream_triad.hpp"

#include <algorithm>
#include <cstdint>

namespace tcbench::kernels {
namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
    stream_triad_kernel(const float* __restrict__ b, const float* __restrict__ c,
                        float* __restrict__ a, float scalar, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t vec = n / 4;
  const auto* b4 = reinterpret_cast<const float4*>(b);
  const auto* c4 = reinterpret_cast<const float4*>(c);
  auto* a4 = reinterpret_cast<float4*>(a);
  for (std::size_t i = first; i < vec; i += stride) {
    const float4 x = b4[i], y = c4[i];
    a4[i] = make_float4(triad(x.x, y.x, scalar), triad(x.y, y.y, scalar), triad(x.z, y.z, scalar),
                        triad(x.w, y.w, scalar));
  }
  for (std::size_t i = 4 * vec + first; i < n; i += stride) a[i] = triad(b[i], c[i], scalar);
}

}  // namespace

void stream_triad(const float* b, const float* c, float* a, float scalar, std::size_t n,
                  cudaStream_t stream) {
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  if (!aligned(a) || !aligned(b) || !aligned(c))
    throw InvalidArgument("stream_triad needs 16-byte aligned arrays (cudaMalloc gives 256)");
  if (n == 0) return;
  int device = 0, sms = 0;
  TCB_CUDA(cudaGetDevice(&device));
  TCB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  // Enough blocks for every SM to keep loads in flight; the grid-stride loop covers the rest.
  const std::size_t wanted = numerics::ceil_div(n / 4, kThreads);
  const int blocks = static_cast<int>(
      std::max<std::size_t>(1, std::min<std::size_t>(wanted, static_cast<std::size_t>(sms) * 8)));
  stream_triad_kernel<<<blocks, kThreads, 0, stream>>>(b, c, a, scalar, n);
  TCB_CUDA_LAUNCH("stream_triad n=" + std::to_string(n));
}

}  // namespace tcbench::kernels
