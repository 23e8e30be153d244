#include "tcbench/gemm_verify.hpp"

#include "tcbench/cuda_owners.hpp"
#include "tcbench/error.hpp"
#include "tcbench/gemm_spec.hpp"
#include "tcbench/reference_gemm.hpp"

#include <algorithm>
#include <cstddef>
#include <string>

namespace tcbench {

namespace {

// Byte offset of matrix `index` of a batch with `stride` elements of type `t` between matrices.
std::size_t matrix_offset_bytes(cudaDataType_t t, std::int64_t stride, std::int32_t index,
                                const char* which) {
  if (index == 0) return 0;
  const std::size_t bits = data_type_bits(t);
  const std::size_t element_offset = checked_elements(stride, index);
  if (bits == 0 || (element_offset * bits) % 8 != 0)
    throw InvalidArgument(std::string("matrix ") + std::to_string(index) + " of the batch's " +
                          which + " (" + data_type_name(t) + ", stride " + std::to_string(stride) +
                          " elements) does not start on a byte");
  return element_offset * bits / 8;
}

const void* at(const void* base, std::size_t bytes) {
  return static_cast<const std::byte*>(base) + bytes;
}

}  // namespace

std::vector<std::int32_t> checked_matrices(std::int32_t batch_count) {
  if (batch_count <= 1) return {0};
  return {0, batch_count - 1};
}

VerifyStats verify_gemm(const GemmOutputCheck& c, const std::function<void(cudaStream_t)>& run,
                        double element_tolerance, cudaStream_t stream) {
  GemmProblem p = c.problem;
  p.resolve();
  if (c.batch_count < 1)
    throw InvalidArgument("verify_gemm: batch_count must be at least 1; got " +
                          std::to_string(c.batch_count));
  const std::int64_t stride_a = c.stride_a != 0 ? c.stride_a : p.lda * p.a_cols();
  const std::int64_t stride_b = c.stride_b != 0 ? c.stride_b : p.ldb * p.b_cols();
  const std::int64_t stride_d = c.stride_d != 0 ? c.stride_d : p.ldd * p.n;

  const std::vector<std::int64_t> rows = sample_rows(p.m, std::min(c.max_rows, kMaxReferenceRows));
  const auto nrows = static_cast<std::int64_t>(rows.size());
  DeviceBuffer<std::int64_t> rows_dev(rows.size());
  rows_dev.upload(rows, stream);
  // The references first, from the inputs as they are before the run (as for one GEMM).
  struct Reference {
    std::int32_t matrix;
    DeviceBuffer<double> value, abs;
  };
  std::vector<Reference> refs;
  for (const std::int32_t i : checked_matrices(c.batch_count)) {
    Reference& r =
        refs.emplace_back(Reference{i, DeviceBuffer<double>(checked_elements(nrows, p.n)),
                                    DeviceBuffer<double>(checked_elements(nrows, p.n))});
    reference_gemm_rows(p, c.a_type, at(c.a, matrix_offset_bytes(c.a_type, stride_a, i, "A")),
                        c.b_type, at(c.b, matrix_offset_bytes(c.b_type, stride_b, i, "B")),
                        rows_dev.get(), nrows, r.value.get(), r.abs.get(), stream);
  }
  const std::size_t d_elem_bytes = std::max<std::size_t>(1, data_type_bytes(c.d_type));
  const std::size_t last_d = matrix_offset_bytes(c.d_type, stride_d, c.batch_count - 1, "D");
  poison(c.d, last_d + checked_elements(p.ldd, p.n) * d_elem_bytes, stream);
  run(stream);
  TCB_CUDA_CTX(cudaStreamSynchronize(stream),
               "running the GEMM under test, " + p.describe() +
                   (c.batch_count > 1 ? " batch=" + std::to_string(c.batch_count) : ""));
  VerifyStats all;
  for (const Reference& r : refs) {
    const void* d = at(c.d, matrix_offset_bytes(c.d_type, stride_d, r.matrix, "D"));
    all.merge(compare_rows_device(c.d_type, d, p.ldd, rows_dev.get(), nrows, p.n, r.value.get(),
                                  r.abs.get(), c.scale, element_tolerance, stream));
  }
  return all;
}

}  // namespace tcbench
