// cuBLASLt GEMM: a GemmSpec (what to compute) -> a GemmPlan (descriptors, heuristic candidates,
// workspace) that runs on a stream.
//
// Column-major throughout: D = alpha * op(A) * op(B) + beta * C, op(A) is m x k, op(B) k x n,
// C and D m x n. "TN" means A transposed (stored k x m) and B not (stored k x n), i.e. both
// operands K-contiguous, which INT8 and (before Blackwell datacenter parts) FP8 require.
//
// A spec is validated against the target's compute capability before cuBLASLt sees it, so a
// layout the library would refuse with a bare CUBLAS_STATUS_NOT_SUPPORTED is instead reported
// as a sentence naming the values. Descriptor building needs no GPU; only the handle, the
// heuristic and run() do.
#pragma once

#include "tcbench/cuda_owners.hpp"
#include "tcbench/error.hpp"
#include "tcbench/precision.hpp"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <library_types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tcbench {

std::string data_type_name(cudaDataType_t t);          // "CUDA_R_8F_E4M3"
std::string compute_type_name(cublasComputeType_t t);  // "CUBLAS_COMPUTE_32F"
std::size_t data_type_bytes(cudaDataType_t t);         // 0 for types tcbench never uses

namespace detail {
// One move-only owner for the four cuBLASLt handle kinds; Traits::destroy reports failures
// without throwing, so destructors stay noexcept.
template <typename Traits>
class LtOwner {
 public:
  using handle_type = typename Traits::handle_type;
  LtOwner() = default;
  explicit LtOwner(handle_type h) noexcept : h_(h) {}
  LtOwner(const LtOwner&) = delete;  // two owners would destroy the descriptor twice
  LtOwner& operator=(const LtOwner&) = delete;
  LtOwner(LtOwner&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  LtOwner& operator=(LtOwner&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  ~LtOwner() { reset(); }

  handle_type get() const noexcept { return h_; }
  explicit operator bool() const noexcept { return h_ != nullptr; }

 protected:
  void reset() noexcept {
    if (h_ != nullptr) Traits::destroy(h_);
    h_ = nullptr;
  }
  handle_type h_ = nullptr;
};

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
class LtDescriptor : public LtOwner<Traits> {
 public:
  using attribute_type = typename Traits::attribute_type;
  using LtOwner<Traits>::LtOwner;
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
class LtHandle : public detail::LtOwner<detail::LtHandleTraits> {
 public:
  LtHandle();
  // Takes ownership of a handle created elsewhere (nullptr gives an empty owner).
  explicit LtHandle(cublasLtHandle_t adopt) noexcept : LtOwner(adopt) {}
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

class MatmulPreference : public detail::LtOwner<detail::MatmulPreferenceTraits> {
 public:
  explicit MatmulPreference(std::size_t max_workspace_bytes);
  std::size_t max_workspace_bytes() const;
};

struct GemmSpec {
  std::int64_t m = 0, n = 0, k = 0;
  cudaDataType_t a_type = CUDA_R_32F, b_type = CUDA_R_32F, c_type = CUDA_R_32F, d_type = CUDA_R_32F;
  cublasComputeType_t compute_type = CUBLAS_COMPUTE_32F;
  cudaDataType_t scale_type = CUDA_R_32F;  // type of alpha and beta
  cublasOperation_t trans_a = CUBLAS_OP_N, trans_b = CUBLAS_OP_N;
  std::int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0;  // 0: rows of the stored matrix (tightest)
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void* bias = nullptr;  // device vector of length m for the BIAS epilogues
  // FP8 tensor-wide scaling (device fp32 scalars; null means 1): D = d_scale * (alpha *
  // a_scale * b_scale * op(A) op(B) + beta * C), amax_d = max|D| before d_scale.
  const float* a_scale = nullptr;
  const float* b_scale = nullptr;
  const float* d_scale = nullptr;
  float* amax_d = nullptr;
  bool fast_accum = false;  // FP8 only: skip the periodic promotion of partial sums
  std::int32_t batch_count = 1;
  // Strided batch, in elements; 0: matrices packed back to back (ld x columns).
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0, stride_d = 0;

  // The configuration tcbench measures for each precision (m x n x k, tightest lds):
  //   fp64        64F everywhere, COMPUTE_64F (DMMA where the GPU has it)
  //   fp32        32F, COMPUTE_32F_PEDANTIC: plain COMPUTE_32F lets cuBLAS opt into TF32 or
  //               BF16x9 emulation through environment/math-mode settings; the baseline must
  //               stay FP32 FFMA
  //   tf32        32F data, COMPUTE_32F_FAST_TF32
  //   fp16        16F in/out, COMPUTE_32F, scale 32F
  //   fp16_acc16  16F in/out, COMPUTE_16F, scale 16F
  //   bf16        16BF in/out, COMPUTE_32F
  //   int8        8I in, 32I out, COMPUTE_32I, scale 32I, TN
  //   fp8         E4M3 x E4M3 -> BF16 (C and D), COMPUTE_32F, TN
  static GemmSpec for_precision(Precision p, std::int64_t m, std::int64_t n, std::int64_t k);

  // Stored shape of each operand (column-major rows x cols) and the leading dimension in use.
  std::int64_t a_rows() const { return trans_a == CUBLAS_OP_N ? m : k; }
  std::int64_t a_cols() const { return trans_a == CUBLAS_OP_N ? k : m; }
  std::int64_t b_rows() const { return trans_b == CUBLAS_OP_N ? k : n; }
  std::int64_t b_cols() const { return trans_b == CUBLAS_OP_N ? n : k; }
  std::int64_t effective_lda() const { return lda != 0 ? lda : a_rows(); }
  std::int64_t effective_ldb() const { return ldb != 0 ? ldb : b_rows(); }
  std::int64_t effective_ldc() const { return ldc != 0 ? ldc : m; }
  std::int64_t effective_ldd() const { return ldd != 0 ? ldd : m; }

  bool is_fp8() const;
  bool is_int8() const;

  // A sentence naming the offending values, or nullopt if cuBLASLt should accept the spec on
  // a GPU of this compute capability.
  std::optional<std::string> why_invalid(int cc_major, int cc_minor) const;
  // Throws InvalidArgument with why_invalid()'s sentence followed by describe().
  void validate(int cc_major, int cc_minor) const;
  // One line: sizes, types, ops, lds, compute/scale types, epilogue, flags.
  std::string describe() const;
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
};

struct GemmPlanOptions {
  int max_algorithms = 8;  // heuristic candidates to ask for
  // Workspace the heuristic may assume. The plan allocates max(workspace of the candidates)
  // unless the caller supplies a buffer (which must be 256-byte aligned).
  std::size_t max_workspace_bytes = std::size_t{32} << 20;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
};

class GemmPlan {
 public:
  // Validates `spec` for the device's compute capability, builds the descriptors, asks the
  // heuristic and allocates the workspace. `handle` must outlive the plan. Throws
  // InvalidArgument for an invalid spec, Error when no algorithm is returned.
  GemmPlan(const LtHandle& handle, GemmSpec spec, int cc_major, int cc_minor,
           GemmPlanOptions options = {});
  GemmPlan(GemmPlan&&) noexcept = default;
  GemmPlan& operator=(GemmPlan&&) noexcept = default;
  GemmPlan(const GemmPlan&) = delete;
  GemmPlan& operator=(const GemmPlan&) = delete;
  ~GemmPlan() = default;

  const GemmSpec& spec() const noexcept { return spec_; }
  const std::vector<AlgoCandidate>& candidates() const noexcept { return candidates_; }
  int selected_index() const noexcept { return selected_; }
  const AlgoCandidate& selected() const {
    return candidates_.at(static_cast<std::size_t>(selected_));
  }
  // Pick another heuristic candidate (0 = the heuristic's first choice).
  void select(int algo_index);

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
  int selected_ = 0;
  DeviceBuffer<std::byte> owned_workspace_;
  void* workspace_ = nullptr;
  std::size_t workspace_bytes_ = 0;
};

}  // namespace tcbench
