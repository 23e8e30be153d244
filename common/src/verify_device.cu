#include "tcbench/cuda_owners.hpp"
#include "tcbench/verify.hpp"

namespace tcbench {
namespace {

struct DeviceStats {
  double sum_sq_diff;
  double sum_sq_ref;
  unsigned long long nonfinite;
};

template <typename TD>
__global__ void compare_rows_kernel(const TD* d, std::int64_t ldd, const std::int64_t* rows,
                                    std::int64_t nrows, std::int64_t n, const double* ref,
                                    DeviceStats* out) {
  double diff_acc = 0.0, ref_acc = 0.0;
  unsigned long long bad = 0;
  const std::int64_t total = nrows * n;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t j = i % nrows, col = i / nrows;
    const double got = to_double(d[rows[j] + col * ldd]);
    const double want = ref[j + col * nrows];
    if (!isfinite(got)) {
      ++bad;
      continue;
    }
    diff_acc += (got - want) * (got - want);
    ref_acc += want * want;
  }
  // Warp reduction, then one atomic per warp: cheap next to the reference GEMM itself.
  for (int offset = 16; offset > 0; offset /= 2) {
    diff_acc += __shfl_down_sync(0xffffffffu, diff_acc, offset);
    ref_acc += __shfl_down_sync(0xffffffffu, ref_acc, offset);
    bad += __shfl_down_sync(0xffffffffu, bad, offset);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&out->sum_sq_diff, diff_acc);
    atomicAdd(&out->sum_sq_ref, ref_acc);
    atomicAdd(&out->nonfinite, bad);
  }
}

}  // namespace

void poison(void* device_ptr, std::size_t bytes, cudaStream_t stream) {
  TCB_CUDA_CTX(cudaMemsetAsync(device_ptr, 0xFF, bytes, stream),
               "poisoning " + std::to_string(bytes) + " bytes");
}

template <typename TD>
VerifyStats compare_rows_device(const TD* d, std::int64_t ldd, const std::int64_t* rows,
                                std::int64_t nrows, std::int64_t n, const double* reference,
                                cudaStream_t stream) {
  DeviceBuffer<DeviceStats> stats(1);
  TCB_CUDA(cudaMemsetAsync(stats.get(), 0, sizeof(DeviceStats), stream));
  const std::int64_t total = nrows * n;
  const unsigned blocks = static_cast<unsigned>(std::min<std::int64_t>((total + 255) / 256, 4096));
  compare_rows_kernel<<<blocks, 256, 0, stream>>>(d, ldd, rows, nrows, n, reference, stats.get());
  TCB_CUDA_LAUNCH("compare_rows over " + std::to_string(nrows) + " x " + std::to_string(n));
  DeviceStats host{};
  TCB_CUDA(cudaMemcpyAsync(&host, stats.get(), sizeof host, cudaMemcpyDeviceToHost, stream));
  TCB_CUDA(cudaStreamSynchronize(stream));
  VerifyStats s;
  s.sum_sq_diff = host.sum_sq_diff;
  s.sum_sq_ref = host.sum_sq_ref;
  s.nonfinite = host.nonfinite;
  s.checked = static_cast<std::uint64_t>(total);
  return s;
}

#define TCB_INSTANTIATE_COMPARE(TD)                                                          \
  template VerifyStats compare_rows_device<TD>(const TD*, std::int64_t, const std::int64_t*, \
                                               std::int64_t, std::int64_t, const double*,    \
                                               cudaStream_t);
TCB_INSTANTIATE_COMPARE(float)
TCB_INSTANTIATE_COMPARE(double)
TCB_INSTANTIATE_COMPARE(__half)
TCB_INSTANTIATE_COMPARE(__nv_bfloat16)
TCB_INSTANTIATE_COMPARE(std::int32_t)
TCB_INSTANTIATE_COMPARE(std::int8_t)
TCB_INSTANTIATE_COMPARE(__nv_fp8_e4m3)
#undef TCB_INSTANTIATE_COMPARE

}  // namespace tcbench
