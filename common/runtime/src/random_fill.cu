#include "tcbench/numerics/host_device.hpp"
#include "tcbench/error.hpp"
#include "tcbench/random_fill.hpp"

#include <string>

namespace tcbench {
namespace {
template <typename T>
__global__ void fill_kernel(T* out, std::size_t count, Distribution d, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride)
    out[i] = convert_sample<T>(random_value(d, seed, i));
}
}  // namespace

template <typename T>
void fill_random(T* device_ptr, std::size_t count, const Distribution& d, std::uint64_t seed,
                 cudaStream_t stream) {
  if (count == 0) return;
  constexpr unsigned kThreads = 256;
  const std::size_t wanted = tcbench::numerics::ceil_div(count, kThreads);
  const unsigned blocks = static_cast<unsigned>(wanted < 65535 ? wanted : 65535);
  fill_kernel<<<blocks, kThreads, 0, stream>>>(device_ptr, count, d, seed);
  TCB_CUDA_LAUNCH("fill_random of " + std::to_string(count) + " elements");
}

template void fill_random<float>(float*, std::size_t, const Distribution&, std::uint64_t,
                                 cudaStream_t);
template void fill_random<double>(double*, std::size_t, const Distribution&, std::uint64_t,
                                  cudaStream_t);
template void fill_random<__half>(__half*, std::size_t, const Distribution&, std::uint64_t,
                                  cudaStream_t);
template void fill_random<__nv_bfloat16>(__nv_bfloat16*, std::size_t, const Distribution&,
                                         std::uint64_t, cudaStream_t);
template void fill_random<std::int8_t>(std::int8_t*, std::size_t, const Distribution&,
                                       std::uint64_t, cudaStream_t);
template void fill_random<std::int32_t>(std::int32_t*, std::size_t, const Distribution&,
                                        std::uint64_t, cudaStream_t);
template void fill_random<__nv_fp8_e4m3>(__nv_fp8_e4m3*, std::size_t, const Distribution&,
                                         std::uint64_t, cudaStream_t);
template void fill_random<__nv_fp8_e5m2>(__nv_fp8_e5m2*, std::size_t, const Distribution&,
                                         std::uint64_t, cudaStream_t);

}  // namespace tcbench
