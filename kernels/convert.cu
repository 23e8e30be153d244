// FP32 -> FP16/BF16 conversion: a grid-stride loop around convert_sample (random_fill.hpp), the
// host/device function the fill tests cover.
#include "tcbench/numerics/host_device.hpp"
#include "tcbench/error.hpp"
#include "tcbench/kernels/convert.hpp"
#include "tcbench/random_fill.hpp"

#include <string>

namespace tcbench::kernels {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void __launch_bounds__(kThreads)
    convert_kernel(const float* __restrict__ in, std::size_t n, T* __restrict__ out) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x; i < n;
       i += stride)
    out[i] = convert_sample<T>(in[i]);
}

template <typename T>
void launch(const float* in, std::size_t n, T* out, cudaStream_t stream) {
  if (n == 0) return;
  if (in == nullptr || out == nullptr)
    throw InvalidArgument("convert: null device pointer (n=" + std::to_string(n) + ")");
  const std::size_t blocks = numerics::ceil_div(n, kThreads);
  const int grid = static_cast<int>(blocks < 65536 ? blocks : 65536);
  convert_kernel<T><<<grid, kThreads, 0, stream>>>(in, n, out);
  TCB_CUDA_LAUNCH("convert n=" + std::to_string(n));
}

}  // namespace

void convert(const float* in, std::size_t n, __half* out, cudaStream_t stream) {
  launch(in, n, out, stream);
}
void convert(const float* in, std::size_t n, __nv_bfloat16* out, cudaStream_t stream) {
  launch(in, n, out, stream);
}

}  // namespace tcbench::kernels
