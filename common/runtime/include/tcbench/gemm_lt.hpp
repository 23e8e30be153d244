// cuBLASLt GEMM: a GemmSpec (gemm_spec.hpp: what to compute) -> a GemmPlan (descriptors,
// heuristic candidates, workspace) that runs on a stream.
//
// A spec is validated against the target's compute capability before cuBLASLt sees it, so a
// layout the library would refuse with a bare CUBLAS_STATUS_NOT_SUPPORTED is instead reported
// as a sentence naming the values. Descriptor building needs no GPU; only the handle, the
// heuristic and run() do.
#pragma once

#include "tcbench/cuda_owners.hpp"
#include "tcbench/error.hpp"
#include "tcbench/gemm_spec.hpp"
#include "tcbench/unique_handle.hpp"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tcbench {

namespace detail {
struct LtHandleTraits {
  using handle_type = cublasLtHandle_t;
  static void destroy(handle_type h) noexcept;
};
// Descriptors with attributes also say how to set and read them (and what to call them in errors).
struct MatmulDescTraits {
  using handle_type = cublasLtMatmulDesc_t;
  using attribute_type = cublasLtMatmulDescAttributes_t;
  static constexpr const char* kWhat = "matmul desc attribute";
  static void destroy(handle_type h) noexcept;
  static cublasStatus_t set(handle_type h, attribute_type a, const void* buf, std::size_t size);
  static cublasStatus_t get(handle_type h, attribute_type a, void* buf, std::size_t size,
                            std::size_t* written);
};
struct MatrixLayoutTraits {
  using handle_type = cublasLtMatrixLayout_t;
  using attribute_type = cublasLtMatrixLayoutAttribute_t;
  static constexpr const char* kWhat = "matrix layout attribute";
  static void destroy(handle_type h) noexcept;
  static cublasStatus_t set(handle_type h, attribute_type a, const void* buf, std::size_t size);
  static cublasStatus_t get(handle_type h, attribute_type a, void* buf, std::size_t size,
                            std::size_t* written);
};

// Typed attribute access shared by MatmulDesc and MatrixLayout; attribute() throws if the stored
// size differs from T.
template <typename Traits>
class LtDescriptor : public UniqueHandle<Traits> {
 public:
  using attribute_type = typename Traits::attribute_type;
  using UniqueHandle<Traits>::UniqueHandle;
  template <typename T>
  void set_attribute(attribute_type attr, const T& value) {
    TCB_CUBLAS_CTX(Traits::set(this->h_, attr, &value, sizeof(T)), describe(attr));
  }
  template <typename T>
  T attribute(attribute_type attr) const {
    T value{};
    std::size_t written = 0;
    TCB_CUBLAS_CTX(Traits::get(this->h_, attr, &value, sizeof(T), &written), describe(attr));
    if (written != sizeof(T))
      throw Error(describe(attr) + " holds " + std::to_string(written) + " bytes, read as " +
                  std::to_string(sizeof(T)));
    return value;
  }

 private:
  static std::string describe(attribute_type attr) {
    return std::string(Traits::kWhat) + " " + std::to_string(static_cast<int>(attr));
  }
};
struct MatmulPreferenceTraits {
  using handle_type = cublasLtMatmulPreference_t;
  static void destroy(handle_type h) noexcept;
};
}  // namespace detail

// The library context. Creating it needs a GPU (cublasLtCreate fails with
// CUBLAS_STATUS_NOT_INITIALIZED without one); call require_device() first for a clean NoDevice.
class LtHandle : public UniqueHandle<detail::LtHandleTraits> {
 public:
  LtHandle();
  // Takes ownership of a handle created elsewhere (nullptr gives an empty owner).
  explicit LtHandle(cublasLtHandle_t adopt) noexcept : UniqueHandle(adopt) {}
};

// Attribute value types follow cublasLt.h (e.g. TRANSA is int32_t, FAST_ACCUM int8_t, scale
// pointers void*).
class MatmulDesc : public detail::LtDescriptor<detail::MatmulDescTraits> {
 public:
  MatmulDesc() = default;
  MatmulDesc(cublasComputeType_t compute, cudaDataType_t scale);
};

class MatrixLayout : public detail::LtDescriptor<detail::MatrixLayoutTraits> {
 public:
  MatrixLayout() = default;
  MatrixLayout(cudaDataType_t type, std::uint64_t rows, std::uint64_t cols, std::int64_t ld);
};

class MatmulPreference : public UniqueHandle<detail::MatmulPreferenceTraits> {
 public:
  explicit MatmulPreference(std::size_t max_workspace_bytes);
  std::size_t max_workspace_bytes() const;
};

// cuBLASLt's heuristic found no algorithm for a valid spec: the library cannot run this GEMM
// here (a gap in its kernel set, not a bug of the caller). Benchmarks report it as skipped.
class NoAlgorithm : public Error {
 public:
  using Error::Error;
};

// Descriptor building, no GPU needed. The layouts carry batch count and strides.
MatmulDesc make_matmul_desc(const GemmSpec& spec);
MatrixLayout make_layout(cudaDataType_t type, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                         std::int32_t batch_count = 1, std::int64_t batch_stride = 0);
struct GemmLayouts {
  MatrixLayout a, b, c, d;
};
GemmLayouts make_layouts(const GemmSpec& spec);

// What the algorithm's CUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS say it runs on.
struct NumericalImpl {
  std::uint64_t flags = 0;
  bool uses_tensor_cores = false;  // any MMA op type (HMMA, IMMA, DMMA), not FMA
  // "HMMA" / "IMMA" / "DMMA" / "FMA"; FP8 inputs on an HMMA-class path are reported as
  // "QMMA" (Ada's QMMA, Hopper's QGMMA, Blackwell's tcgen05 FP8 all land there), with the
  // input and accumulator, e.g. "HMMA fp16->fp32", "QMMA e4m3->fp32", "IMMA int8->int32".
  std::string impl_name;
};
NumericalImpl decode_numerical_impl(std::uint64_t flags);

struct AlgoCandidate {
  cublasLtMatmulAlgo_t algo{};
  std::size_t workspace_bytes = 0;
  float waves_count = 0;  // 1.0 = one full wave of CTAs over the GPU
  NumericalImpl impl;
  // CUBLASLT_ALGO_CONFIG_TILE_ID / _STAGES_ID: cublasLtMatmulTile_t and cublasLtMatmulStages_t
  // values (the CTA tile and pipeline depth the algorithm uses; 0 = undefined).
  std::uint32_t tile_id = 0;
  std::uint32_t stages_id = 0;
};

struct GemmPlanOptions {
  int max_algorithms = 8;  // heuristic candidates to ask for
  // Workspace the heuristic may assume. The plan allocates max(workspace of the candidates)
  // unless the caller supplies a buffer (which must be 256-byte aligned).
  std::size_t max_workspace_bytes = std::size_t{32} << 20;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  // Only algorithms that compute every dot product in one sequence (reduction scheme NONE: no
  // split-K), for measurements of the accumulator itself (bench_fp8's bit detection).
  bool one_pass = false;
};

class GemmPlan {
 public:
  // Validates `spec` for the device's compute capability, builds the descriptors, asks the
  // heuristic and allocates the workspace. `handle` must outlive the plan. Throws
  // InvalidArgument for an invalid spec, NoAlgorithm when the heuristic returns none.
  GemmPlan(const LtHandle& handle, GemmSpec spec, int cc_major, int cc_minor,
           GemmPlanOptions options = {});
  GemmPlan(GemmPlan&&) noexcept = default;
  GemmPlan& operator=(GemmPlan&&) noexcept = default;
  GemmPlan(const GemmPlan&) = delete;
  GemmPlan& operator=(const GemmPlan&) = delete;
  ~GemmPlan() = default;

  const GemmSpec& spec() const noexcept { return spec_; }
  const std::vector<AlgoCandidate>& candidates() const noexcept { return candidates_; }
  // The heuristic's first choice, which run() uses.
  const AlgoCandidate& selected() const { return candidates_.front(); }

  // alpha/beta are converted to the scale type (float, double, int32 or half); int32 scale
  // rejects non-integral values. C may alias D. Asynchronous on `stream`.
  void run(cudaStream_t stream, const void* a, const void* b, const void* c, void* d,
           double alpha = 1.0, double beta = 0.0) const;

  std::string describe() const { return spec_.describe(); }

 private:
  cublasLtHandle_t handle_ = nullptr;
  GemmSpec spec_;
  MatmulDesc desc_;
  GemmLayouts layouts_;
  std::vector<AlgoCandidate> candidates_;
  DeviceBuffer<std::byte> owned_workspace_;
  void* workspace_ = nullptr;
  std::size_t workspace_bytes_ = 0;
};

}  // namespace tcbench
