#include "tcbench/cuda_owners.hpp"
#include "tcbench/gemm_types.hpp"
#include "tcbench/verify.hpp"

#include <algorithm>
#include <cstring>

namespace tcbench {
namespace {

struct DeviceStats {
  double sum_sq_diff;
  double sum_sq_ref;
  unsigned long long nonfinite;
  unsigned long long elem_violations;
  unsigned long long max_ratio_bits;  // a non-negative double's bits order like the double
};

template <typename TD>
__global__ void compare_rows_kernel(const TD* d, std::int64_t ldd, const std::int64_t* rows,
                                    std::int64_t nrows, std::int64_t n, const double* ref,
                                    const double* abs_ref, double scale, double elem_tol,
                                    DeviceStats* out) {
  double diff_acc = 0.0, ref_acc = 0.0, max_ratio = 0.0;
  unsigned long long bad = 0, violations = 0;
  const std::int64_t total = nrows * n;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t j = i % nrows, col = i / nrows;
    const double got = to_double(d[rows[j] + col * ldd]);
    const double want = scale * ref[j + col * nrows];
    if (!isfinite(got)) {
      ++bad;
      continue;
    }
    const double diff = got - want;
    diff_acc += diff * diff;
    ref_acc += want * want;
    const double abs_sum = fabs(scale) * abs_ref[j + col * nrows];
    if (fabs(diff) > elem_tol * abs_sum) ++violations;
    if (abs_sum > 0) max_ratio = fmax(max_ratio, fabs(diff) / abs_sum);
  }
  // Warp reduction, then one atomic per warp: cheap next to the reference GEMM itself.
  for (int offset = 16; offset > 0; offset /= 2) {
    diff_acc += __shfl_down_sync(0xffffffffu, diff_acc, offset);
    ref_acc += __shfl_down_sync(0xffffffffu, ref_acc, offset);
    bad += __shfl_down_sync(0xffffffffu, bad, offset);
    violations += __shfl_down_sync(0xffffffffu, violations, offset);
    max_ratio = fmax(max_ratio, __shfl_down_sync(0xffffffffu, max_ratio, offset));
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&out->sum_sq_diff, diff_acc);
    atomicAdd(&out->sum_sq_ref, ref_acc);
    atomicAdd(&out->nonfinite, bad);
    atomicAdd(&out->elem_violations, violations);
    atomicMax(&out->max_ratio_bits,
              static_cast<unsigned long long>(__double_as_longlong(max_ratio)));
  }
}

}  // namespace

void poison(void* device_ptr, std::size_t bytes, cudaStream_t stream) {
  TCB_CUDA_CTX(cudaMemsetAsync(device_ptr, 0xFF, bytes, stream),
               "poisoning " + std::to_string(bytes) + " bytes");
}

VerifyStats compare_rows_device(cudaDataType_t d_type, const void* d, std::int64_t ldd,
                                const std::int64_t* rows, std::int64_t nrows, std::int64_t n,
                                const double* reference, const double* abs_reference, double scale,
                                double element_tolerance, cudaStream_t stream) {
  DeviceBuffer<DeviceStats> stats(1);
  TCB_CUDA(cudaMemsetAsync(stats.get(), 0, sizeof(DeviceStats), stream));
  const std::int64_t total = nrows * n;
  const unsigned blocks = static_cast<unsigned>(std::min<std::int64_t>((total + 255) / 256, 4096));
  visit_data_type(d_type, [&]<typename T>(TypeTag<T>) {
    compare_rows_kernel<T><<<blocks, 256, 0, stream>>>(static_cast<const T*>(d), ldd, rows, nrows,
                                                       n, reference, abs_reference, scale,
                                                       element_tolerance, stats.get());
  });
  TCB_CUDA_LAUNCH("compare_rows over " + std::to_string(nrows) + " x " + std::to_string(n));
  DeviceStats host{};
  TCB_CUDA(cudaMemcpyAsync(&host, stats.get(), sizeof host, cudaMemcpyDeviceToHost, stream));
  TCB_CUDA(cudaStreamSynchronize(stream));
  VerifyStats s;
  s.sum_sq_diff = host.sum_sq_diff;
  s.sum_sq_ref = host.sum_sq_ref;
  s.nonfinite = host.nonfinite;
  s.elem_violations = host.elem_violations;
  std::memcpy(&s.max_elem_ratio, &host.max_ratio_bits, sizeof s.max_elem_ratio);
  s.checked = static_cast<std::uint64_t>(total);
  return s;
}

}  // namespace tcbench
