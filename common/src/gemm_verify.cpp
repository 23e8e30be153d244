#include "tcbench/gemm_verify.hpp"

#include "tcbench/cuda_owners.hpp"
#include "tcbench/gemm_spec.hpp"
#include "tcbench/reference_gemm.hpp"

#include <algorithm>

namespace tcbench {

VerifyStats verify_gemm(const GemmOutputCheck& c, const std::function<void(cudaStream_t)>& run,
                        double element_tolerance, cudaStream_t stream) {
  GemmProblem p = c.problem;
  p.resolve();
  const std::vector<std::int64_t> rows = sample_rows(p.m, std::min(c.max_rows, kMaxReferenceRows));
  const auto nrows = static_cast<std::int64_t>(rows.size());
  DeviceBuffer<std::int64_t> rows_dev(rows.size());
  rows_dev.upload(rows, stream);
  DeviceBuffer<double> ref(checked_elements(nrows, p.n)), abs_ref(checked_elements(nrows, p.n));
  reference_gemm_rows(p, c.a_type, c.a, c.b_type, c.b, rows_dev.get(), nrows, ref.get(),
                      abs_ref.get(), stream);
  const std::size_t d_bytes =
      checked_elements(p.ldd, p.n) * std::max<std::size_t>(1, data_type_bytes(c.d_type));
  poison(c.d, d_bytes, stream);
  run(stream);
  TCB_CUDA_CTX(cudaStreamSynchronize(stream), "running the GEMM under test, " + p.describe());
  return compare_rows_device(c.d_type, c.d, p.ldd, rows_dev.get(), nrows, p.n, ref.get(),
                             abs_ref.get(), c.scale, element_tolerance, stream);
}

}  // namespace tcbench
