#include "tcbench/gemm_lt.hpp"

#include "tcbench/scale_value.hpp"

#include <algorithm>
#include <source_location>
#include <sstream>

namespace tcbench {

// ---------------------------------------------------------------------------------------------
// Owners

namespace detail {
void LtHandleTraits::destroy(handle_type h) noexcept {
  TCB_CUBLAS_NOEXCEPT(cublasLtDestroy(h));
}
void MatmulDescTraits::destroy(handle_type h) noexcept {
  TCB_CUBLAS_NOEXCEPT(cublasLtMatmulDescDestroy(h));
}
void MatrixLayoutTraits::destroy(handle_type h) noexcept {
  TCB_CUBLAS_NOEXCEPT(cublasLtMatrixLayoutDestroy(h));
}
cublasStatus_t MatmulDescTraits::set(handle_type h, attribute_type a, const void* buf,
                                     std::size_t size) {
  return cublasLtMatmulDescSetAttribute(h, a, buf, size);
}
cublasStatus_t MatmulDescTraits::get(handle_type h, attribute_type a, void* buf, std::size_t size,
                                     std::size_t* written) {
  return cublasLtMatmulDescGetAttribute(h, a, buf, size, written);
}
cublasStatus_t MatrixLayoutTraits::set(handle_type h, attribute_type a, const void* buf,
                                       std::size_t size) {
  return cublasLtMatrixLayoutSetAttribute(h, a, buf, size);
}
cublasStatus_t MatrixLayoutTraits::get(handle_type h, attribute_type a, void* buf, std::size_t size,
                                       std::size_t* written) {
  return cublasLtMatrixLayoutGetAttribute(h, a, buf, size, written);
}
void MatmulPreferenceTraits::destroy(handle_type h) noexcept {
  TCB_CUBLAS_NOEXCEPT(cublasLtMatmulPreferenceDestroy(h));
}
}  // namespace detail

LtHandle::LtHandle() {
  TCB_CUBLAS_CTX(cublasLtCreate(&h_), "creating the cuBLASLt handle");
}

MatmulDesc::MatmulDesc(cublasComputeType_t compute, cudaDataType_t scale) {
  TCB_CUBLAS_CTX(cublasLtMatmulDescCreate(&h_, compute, scale),
                 "compute " + compute_type_name(compute) + ", scale " + data_type_name(scale));
}

MatrixLayout::MatrixLayout(cudaDataType_t type, std::uint64_t rows, std::uint64_t cols,
                           std::int64_t ld) {
  TCB_CUBLAS_CTX(cublasLtMatrixLayoutCreate(&h_, type, rows, cols, ld),
                 data_type_name(type) + " " + std::to_string(rows) + "x" + std::to_string(cols) +
                     " ld=" + std::to_string(ld));
}

MatmulPreference::MatmulPreference(std::size_t max_workspace_bytes) {
  TCB_CUBLAS(cublasLtMatmulPreferenceCreate(&h_));
  const std::uint64_t bytes = max_workspace_bytes;
  TCB_CUBLAS_CTX(cublasLtMatmulPreferenceSetAttribute(h_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                      &bytes, sizeof(bytes)),
                 "max workspace " + std::to_string(bytes) + " bytes");
}

std::size_t MatmulPreference::max_workspace_bytes() const {
  std::uint64_t bytes = 0;
  std::size_t written = 0;
  TCB_CUBLAS(cublasLtMatmulPreferenceGetAttribute(h_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                  &bytes, sizeof(bytes), &written));
  return static_cast<std::size_t>(bytes);
}

// ---------------------------------------------------------------------------------------------
// Descriptors

MatmulDesc make_matmul_desc(const GemmSpec& spec) {
  MatmulDesc desc(spec.compute_type, spec.scale_type);
  const auto op = [](bool transposed) {
    return static_cast<std::int32_t>(transposed ? CUBLAS_OP_T : CUBLAS_OP_N);
  };
  desc.set_attribute(CUBLASLT_MATMUL_DESC_TRANSA, op(spec.problem.trans_a));
  desc.set_attribute(CUBLASLT_MATMUL_DESC_TRANSB, op(spec.problem.trans_b));
  desc.set_attribute(CUBLASLT_MATMUL_DESC_EPILOGUE, static_cast<std::uint32_t>(spec.epilogue));
  if (spec.bias != nullptr) desc.set_attribute(CUBLASLT_MATMUL_DESC_BIAS_POINTER, spec.bias);
  // Block scale modes (scale_modes.hpp): the A/B scale pointers then point at scale tensors.
  if (spec.scale_mode != ScaleMode::tensor) {
    const ScaleModeInfo& mode = info(spec.scale_mode);
    desc.set_attribute(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, static_cast<std::int32_t>(mode.a_mode));
    desc.set_attribute(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, static_cast<std::int32_t>(mode.b_mode));
  }
  if (spec.a_scale != nullptr)
    desc.set_attribute(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, spec.a_scale);
  if (spec.b_scale != nullptr)
    desc.set_attribute(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, spec.b_scale);
  if (spec.d_scale != nullptr)
    desc.set_attribute(CUBLASLT_MATMUL_DESC_D_SCALE_POINTER,
                       static_cast<const void*>(spec.d_scale));
  if (spec.amax_d != nullptr)
    desc.set_attribute(CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, static_cast<void*>(spec.amax_d));
  // Only FP8 kernels read the flag; leaving it unset elsewhere keeps other descriptors default.
  if (spec.is_fp8())
    desc.set_attribute(CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                       static_cast<std::int8_t>(spec.fast_accum ? 1 : 0));
  return desc;
}

MatrixLayout make_layout(cudaDataType_t type, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                         std::int32_t batch_count, std::int64_t batch_stride) {
  if (rows <= 0 || cols <= 0 || ld < rows)
    throw InvalidArgument("matrix layout " + std::to_string(rows) + "x" + std::to_string(cols) +
                          " with ld=" + std::to_string(ld) +
                          " is invalid: sizes must be positive and ld >= rows.");
  MatrixLayout layout(type, static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols), ld);
  if (batch_count > 1) {
    layout.set_attribute(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, batch_count);
    layout.set_attribute(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                         batch_stride != 0 ? batch_stride : ld * cols);
  }
  return layout;
}

GemmLayouts make_layouts(const GemmSpec& s) {
  const GemmProblem& p = s.problem;
  return GemmLayouts{
      make_layout(s.a_type, p.a_rows(), p.a_cols(), p.effective_lda(), s.batch_count,
                  s.effective_stride_a()),
      make_layout(s.b_type, p.b_rows(), p.b_cols(), p.effective_ldb(), s.batch_count,
                  s.effective_stride_b()),
      make_layout(s.c_type, p.m, p.n, p.effective_ldc(), s.batch_count, s.effective_stride_c()),
      make_layout(s.d_type, p.m, p.n, p.effective_ldd(), s.batch_count, s.effective_stride_d())};
}

NumericalImpl decode_numerical_impl(std::uint64_t flags) {
  NumericalImpl out;
  out.flags = flags;
  const std::uint64_t op = flags & CUBLASLT_NUMERICAL_IMPL_FLAGS_OP_TYPE_MASK;
  const std::uint64_t input = flags & CUBLASLT_NUMERICAL_IMPL_FLAGS_OP_INPUT_TYPE_MASK;
  const std::uint64_t acc = flags & CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_TYPE_MASK;
  out.uses_tensor_cores = (flags & CUBLASLT_NUMERICAL_IMPL_FLAGS_TENSOR_OP_MASK) != 0;

  constexpr std::uint64_t kFp8Inputs =
      CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_8F_E4M3 | CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_8F_E5M2;
  std::string cls;
  // cuBLASLt has no FP8 op-type bit: FP8 kernels report HMMA with FP8 inputs, and that is the
  // QMMA (Ada) / QGMMA (Hopper) class the benchmarks want to name.
  if ((op & CUBLASLT_NUMERICAL_IMPL_FLAGS_HMMA) != 0 && (input & kFp8Inputs) != 0)
    cls = "QMMA";
  else if ((op & CUBLASLT_NUMERICAL_IMPL_FLAGS_HMMA) != 0)
    cls = "HMMA";
  else if ((op & CUBLASLT_NUMERICAL_IMPL_FLAGS_IMMA) != 0)
    cls = "IMMA";
  else if ((op & CUBLASLT_NUMERICAL_IMPL_FLAGS_DMMA) != 0)
    cls = "DMMA";
  else if ((op & CUBLASLT_NUMERICAL_IMPL_FLAGS_FMA) != 0)
    cls = "FMA";
  else if (op != 0) {
    std::ostringstream os;
    os << "MMA(0x" << std::hex << op << ")";
    cls = os.str();
  } else {
    cls = "unknown";
  }

  static constexpr std::pair<std::uint64_t, const char*> kInputs[] = {
      {CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_16F, "fp16"},
      {CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_16BF, "bf16"},
      {CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_TF32, "tf32"},
      {CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_32F, "fp32"},
      {CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_64F, "fp64"},
      {CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_8I, "int8"},
      {CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_8F_E4M3, "e4m3"},
      {CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_8F_E5M2, "e5m2"}};
  static constexpr std::pair<std::uint64_t, const char*> kAccs[] = {
      {CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_16F, "fp16"},
      {CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_32F, "fp32"},
      {CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_64F, "fp64"},
      {CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_32I, "int32"}};
  std::string in, ac;
  for (const auto& [bit, label] : kInputs)
    if ((input & bit) != 0) in += (in.empty() ? "" : "+") + std::string(label);
  for (const auto& [bit, label] : kAccs)
    if ((acc & bit) != 0) ac += (ac.empty() ? "" : "+") + std::string(label);

  out.impl_name = cls;
  if (!in.empty() || !ac.empty())
    out.impl_name += " " + (in.empty() ? "?" : in) + "->" + (ac.empty() ? "?" : ac);
  return out;
}

// ---------------------------------------------------------------------------------------------
// GemmPlan

GemmPlan::GemmPlan(const LtHandle& handle, GemmSpec spec, int cc_major, int cc_minor,
                   GemmPlanOptions options)
    : handle_(handle.get()), spec_(std::move(spec)) {
  spec_.validate(cc_major, cc_minor);
  const std::string ctx = describe();
  if (handle_ == nullptr) throw InvalidArgument("GemmPlan needs a live LtHandle [" + ctx + "]");
  if (options.max_algorithms < 1)
    throw InvalidArgument("GemmPlan needs max_algorithms >= 1; got " +
                          std::to_string(options.max_algorithms) + " [" + ctx + "]");
  if (options.workspace != nullptr &&
      reinterpret_cast<std::uintptr_t>(options.workspace) % 256 != 0)
    throw InvalidArgument("a caller-provided cuBLASLt workspace must be 256-byte aligned [" + ctx +
                          "]");

  try {
    desc_ = make_matmul_desc(spec_);
    layouts_ = make_layouts(spec_);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(std::string(e.what()) + " [" + ctx + "]");
  }

  const std::size_t ws_limit =
      options.workspace != nullptr ? options.workspace_bytes : options.max_workspace_bytes;
  MatmulPreference pref(ws_limit);
  if (options.one_pass) {
    const std::uint32_t none = CUBLASLT_REDUCTION_SCHEME_NONE;
    TCB_CUBLAS_CTX(cublasLtMatmulPreferenceSetAttribute(
                       pref.get(), CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &none, sizeof none),
                   "reduction scheme mask NONE [" + ctx + "]");
  }

  std::vector<cublasLtMatmulHeuristicResult_t> results(
      static_cast<std::size_t>(options.max_algorithms));
  int returned = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      handle_, desc_.get(), layouts_.a.get(), layouts_.b.get(), layouts_.c.get(), layouts_.d.get(),
      pref.get(), options.max_algorithms, results.data(), &returned);
  // NOT_SUPPORTED is how the heuristic says "nothing fits"; that deserves its own sentence.
  if (status == CUBLAS_STATUS_NOT_SUPPORTED || (status == CUBLAS_STATUS_SUCCESS && returned == 0))
    throw NoAlgorithm("cuBLASLt's heuristic returned no algorithm (workspace limit " +
                      std::to_string(ws_limit) + " bytes) for " + ctx);
  if (status != CUBLAS_STATUS_SUCCESS)
    detail::throw_api_error("cuBLAS", status_name(status), "cublasLtMatmulAlgoGetHeuristic",
                            std::source_location::current(), ctx);

  std::size_t max_ws = 0;
  for (int i = 0; i < returned; ++i) {
    const cublasLtMatmulHeuristicResult_t& r = results[static_cast<std::size_t>(i)];
    if (r.state != CUBLAS_STATUS_SUCCESS) continue;
    std::uint64_t flags = 0;
    std::size_t written = 0;
    TCB_CUBLAS_CTX(
        cublasLtMatmulAlgoCapGetAttribute(&r.algo, CUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS, &flags,
                                          sizeof(flags), &written),
        ctx);
    AlgoCandidate c;
    c.algo = r.algo;
    c.workspace_bytes = r.workspaceSize;
    c.waves_count = r.wavesCount;
    c.impl = decode_numerical_impl(flags);
    TCB_CUBLAS_CTX(cublasLtMatmulAlgoConfigGetAttribute(&r.algo, CUBLASLT_ALGO_CONFIG_TILE_ID,
                                                        &c.tile_id, sizeof(c.tile_id), &written),
                   ctx);
    TCB_CUBLAS_CTX(
        cublasLtMatmulAlgoConfigGetAttribute(&r.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &c.stages_id,
                                             sizeof(c.stages_id), &written),
        ctx);
    candidates_.push_back(std::move(c));
    max_ws = std::max(max_ws, r.workspaceSize);
  }
  if (candidates_.empty())
    throw Error("cuBLASLt's heuristic returned " + std::to_string(returned) +
                " algorithms, none usable, for " + ctx);

  // One allocation sized for every candidate, so select() never allocates.
  if (options.workspace != nullptr) {
    workspace_ = options.workspace;
    workspace_bytes_ = options.workspace_bytes;
  } else if (max_ws > 0) {
    owned_workspace_ = DeviceBuffer<std::byte>(max_ws);
    workspace_ = owned_workspace_.get();
    workspace_bytes_ = max_ws;
  }
}

void GemmPlan::run(cudaStream_t stream, const void* a, const void* b, const void* c, void* d,
                   double alpha, double beta) const {
  if (a == nullptr || b == nullptr || d == nullptr)
    throw InvalidArgument("GemmPlan::run needs A, B and D device pointers [" + describe() + "]");
  if (c == nullptr && beta != 0.0)
    throw InvalidArgument("GemmPlan::run got beta=" + std::to_string(beta) + " but no C [" +
                          describe() + "]");
  const ScaleValue alpha_v = to_scale_value(alpha, spec_, "alpha");
  const ScaleValue beta_v = to_scale_value(beta, spec_, "beta");
  const AlgoCandidate& algo = selected();
  // With beta == 0 C is never read, but cuBLASLt still wants a pointer; D is a valid one.
  const void* c_ptr = c != nullptr ? c : d;
  TCB_CUBLAS_CTX(cublasLtMatmul(handle_, desc_.get(), alpha_v.get(), a, layouts_.a.get(), b,
                                layouts_.b.get(), beta_v.get(), c_ptr, layouts_.c.get(), d,
                                layouts_.d.get(), &algo.algo, workspace_, workspace_bytes_, stream),
                 describe() + ", algorithm " + algo.impl.impl_name);
}

}  // namespace tcbench
