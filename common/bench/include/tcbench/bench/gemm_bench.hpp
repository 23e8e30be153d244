// The GEMM benchmark helper: a topic states a GemmCase (precision, spec, inputs) and, for its
// own kernels, the work; the helper allocates with the spec's element types (every matrix of a
// strided batch), fills, verifies once against the FP64 reference (outputs poisoned first; FP8
// scales applied; a batch's first and last matrix), times through measure(), and reports
// tflops/tops (every matrix of a batch counted), pct_of_peak, rel_error, the speed-ups the case
// asks for (each against the same problem in another precision: same layout, same leading
// dimensions, same batch), the label, for cuBLASLt the wave count and for cuBLAS vs_cublaslt.
#pragma once

#include "tcbench/bench/env.hpp"
#include "tcbench/bench/measure.hpp"
#include "tcbench/gemm_lt.hpp"
#include "tcbench/gemm_types.hpp"
#include "tcbench/random_fill.hpp"
#include "tcbench/schema.hpp"
#include "tcbench/verify.hpp"

#include <benchmark/benchmark.h>

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tcbench::bench {

// The device buffers of one GEMM, typed by the spec (C aliases D: tcbench GEMMs use beta = 0).
// A strided batch holds batch_count matrices per operand, matrix i at i * stride elements.
struct GemmOperands {
  GemmProblem problem;  // resolved: leading dimensions filled
  std::int32_t batch_count = 1;
  std::int64_t stride_a = 0, stride_b = 0, stride_d = 0;  // effective (GemmSpec), in elements
  std::size_t a_count = 0, b_count = 0, d_count = 0;      // elements of each buffer, batch included
  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  void* d = nullptr;
  template <typename T>
  T* a_as() const {
    return static_cast<T*>(a);
  }
  template <typename T>
  T* b_as() const {
    return static_cast<T*>(b);
  }
  template <typename T>
  T* c_as() const {
    return static_cast<T*>(c);
  }
  template <typename T>
  T* d_as() const {
    return static_cast<T*>(d);
  }
};

using GemmWork = std::function<void(cudaStream_t, const GemmOperands&)>;

struct GemmCase {
  Precision precision = Precision::fp32;  // counters (tflops or tops), peak, default tolerance
  GemmSpec spec;  // GemmSpec::for_precision(p, m, n, k), then edited; shape in spec.problem
  // What A and B hold. Default (nullopt): uniform(-1, 1) for floating point, integers in
  // [-127, 127] for INT8 and in [-8, 8] for FP8 (exact in E4M3 and E5M2, so the FP8 reference
  // is exact too).
  std::optional<Distribution> input_a, input_b;
  // FP8 tensor-wide scales (host values; the helper puts them on the device and into the spec's
  // scale pointers when they differ from 1). Verification expects D = d * a * b * op(A) op(B).
  float a_scale = 1.0f, b_scale = 1.0f, d_scale = 1.0f;
  double alpha = 1.0;  // passed to cuBLASLt, applied by verification (INT8 requantization)
  // Frobenius tolerance; default: the precision's error model with the spec's output format.
  std::optional<double> tolerance;
  std::string label;  // own kernels ("WMMA fp16->fp32"); cuBLASLt's label comes from the plan
  // speedup_vs_<p> counters: cuBLASLt's median of this very problem (layout and leading
  // dimensions included) in precision p (baseline_case), over this case's median. A block-scaled
  // case may name its own precision: the baseline is then the per-tensor-scaled GEMM.
  std::vector<Precision> speedup_vs;
  // A second reference, measured once before timing: the same problem on other operands (for
  // FP8, the FP32 originals before quantization: the error a user gets), reported as `counter`.
  struct ExtraReference {
    const void* a = nullptr;
    const void* b = nullptr;
    cudaDataType_t a_type = CUDA_R_32F, b_type = CUDA_R_32F;
    Counter counter = counters::rel_error_unquantized;
    // alpha holds dequantization (NVFP4's tensor scales): the originals are compared without it.
    bool alpha_dequantizes = false;
  };
  std::optional<ExtraReference> extra_reference;
  // The operands verification multiplies instead of A and B as stored, for GEMMs whose stored
  // operands are not the values they multiply: block-scaled GEMMs give their dequantized elements
  // (element x its block's scale, before alpha), in A's and B's layout and leading dimensions.
  // The case fills them in `prepare`.
  struct ReferenceOperands {
    const void* a = nullptr;
    const void* b = nullptr;
    cudaDataType_t a_type = CUDA_R_32F, b_type = CUDA_R_32F;
  };
  std::optional<ReferenceOperands> reference;
  // Optional: fill A and B yourself (e.g. quantize known FP32 originals); called once, before
  // verification.
  std::function<void(cudaStream_t, const GemmOperands&)> prepare;
  // Optional: called once after timing with a closure that runs the GEMM once (profilers,
  // extra accuracy measures). It may add counters.
  std::function<void(benchmark::State&, const std::function<void(cudaStream_t)>&)> after_timing;
  // How it is timed: the standard window (warm-up, samples, the L2 flushed), or a burst or
  // sustained window (regime.hpp), whose sentence the label then carries.
  MeasureOptions timing;

  // The configuration tcbench measures for `p` at m x n x k (GemmSpec::for_precision), default
  // inputs; edit fields from there.
  static GemmCase for_precision(Precision p, std::int64_t m, std::int64_t n, std::int64_t k) {
    GemmCase c;
    c.precision = p;
    c.spec = GemmSpec::for_precision(p, m, n, k);
    return c;
  }
};

struct GemmResult {
  SampleStats seconds;
  VerifyStats check;
  std::optional<AlgoCandidate> algo;   // cuBLASLt only
  std::optional<RegimeReport> regime;  // a burst or sustained window's report
};

// The inputs the helper draws when a case names none: uniform(-1, 1) for floating point,
// integers in [-127, 127] for INT8, in [-8, 8] for FP8. For topics that fill operands themselves
// (GemmCase::prepare, padded copies), so their data match the helper's.
Distribution default_input(cudaDataType_t t);
// Fills `count` elements of type `t` at `p` with `d` (seeded, identical on host and device).
void fill_operand(cudaDataType_t t, void* p, std::size_t count, const Distribution& d,
                  std::uint64_t seed, cudaStream_t stream);

// cuBLASLt: builds the plan (the heuristic's first choice), verifies, times, reports.
// Throws Skipped with the rule when the spec is invalid on this GPU or no algorithm exists.
// A spec with batch_count > 1 runs as one strided-batched matmul (the layouts' BATCH_COUNT and
// STRIDED_BATCH_OFFSET); its rates count every matrix, and verification checks the first and
// the last against the FP64 reference.
GemmResult run_cublaslt_gemm(benchmark::State& state, const Env& env, const GemmCase& gemm);

// cuBLAS: cublasGemmEx (cublasGemmStridedBatchedEx for a batch) on the Env's cuBLAS handle, in the
// compute type and math mode the precision's row gives (gemm_cublas.hpp), verified and timed like
// cuBLASLt, labelled "cuBLAS GemmEx (<math mode>)". vs_cublaslt is cuBLASLt's median on the very
// same problem (baseline_case in the case's own precision) over this one: > 1 when cuBLAS is
// faster; not written where cuBLASLt cannot run the problem. Throws Skipped with the rule where
// cuBLAS cannot (FP8: cuBLASLt-only).
GemmResult run_cublas_gemm(benchmark::State& state, const Env& env, const GemmCase& gemm);

// An own kernel: `work` runs the GEMM on the given operands. The kernel's own support check
// belongs in the topic (throw Skipped before calling this). Our kernels compute one GEMM per
// call: a batched case is refused (InvalidArgument).
GemmResult run_kernel_gemm(benchmark::State& state, const Env& env, const GemmCase& gemm,
                           const GemmWork& work);

// The median time of the cuBLASLt GEMM `gemm` (verified, L2 flushed), measured once per process
// and cached by the spec.
double baseline_median_seconds(const Env& env, const GemmCase& gemm);

// The case `c` runs as in precision `base`: c's problem (m, n, k, layout, leading dimensions,
// batch count and strides) with base's types from the precision table, default inputs, no
// scales. The only way a speed-up's (and vs_cublaslt's) denominator is built, so a ratio can never
// compare two layouts or a batch with one matrix.
GemmCase baseline_case(const GemmCase& c, Precision base);
// baseline_median_seconds(env, baseline_case(c, base)).
double baseline_seconds(const Env& env, const GemmCase& c, Precision base);
// The speedup_vs_<base> counter: `base_seconds` (the same work in precision `base`) over
// `seconds`. The one writer of a speed-up: GemmCase::speedup_vs goes through it, and so do the
// ratios a topic measures itself (the sum of a model's layer GEMMs, a study's per-layer times),
// which name their baseline by precision. Not written unless both times are positive and finite.
void report_speedup(benchmark::State& state, Precision base, double base_seconds, double seconds);

// Declarative registration: one benchmark per precision and shape, named from the case itself
// (topic/variant/<p>/m/n/k/layout, BenchName), whose body runs `run` on make_case(p, shape).
// make_case must be pure host code (it also runs in listing mode, without a GPU).
struct GemmShape {
  std::int64_t m, n, k;
};
using MakeCase = std::function<GemmCase(Precision, const GemmShape&)>;
using RunGemm = std::function<GemmResult(benchmark::State&, const Env&, const GemmCase&)>;
// The default case: GemmCase::for_precision(p, m, n, k).
GemmCase default_case(Precision p, const GemmShape& s);
// The default case with `label`: what an own kernel is ("SIMT FFMA", "WMMA (HMMA) fp32 acc").
MakeCase labelled_case(std::string label);
// cuBLASLt (run_cublaslt_gemm), the default runner.
GemmResult run_cublaslt(benchmark::State& state, const Env& env, const GemmCase& gemm);
// cuBLAS (run_cublas_gemm).
GemmResult run_cublas(benchmark::State& state, const Env& env, const GemmCase& gemm);
void add_gemms(const Env& env, std::string_view topic, std::string_view variant,
               std::span<const Precision> precisions, std::span<const GemmShape> shapes,
               MakeCase make_case = default_case, RunGemm run = run_cublaslt);

// An own kernel as a runner: skips (with `unsupported`'s sentence) where the kernel cannot run,
// then run_kernel_gemm with `work`.
using KernelSupport = std::function<std::optional<std::string>(const GpuSpec&, const GemmCase&)>;
RunGemm own_kernel(GemmWork work, KernelSupport unsupported = {});

// A typed kernel launcher as GemmWork: kernel(problem, A*, B*, D*, stream) with the storage types
// of precision P's row (GemmTypes<P>), so topics write no casts.
template <Precision P, typename Kernel>
GemmWork typed(Kernel kernel) {
  using T = GemmTypes<P>;
  return [kernel](cudaStream_t s, const GemmOperands& o) {
    kernel(o.problem, o.a_as<typename T::A>(), o.b_as<typename T::B>(), o.d_as<typename T::D>(), s);
  };
}

}  // namespace tcbench::bench
