// The GEMM benchmark helper: a topic states a GemmCase (precision, spec, inputs) and, for its
// own kernels, the work; the helper allocates with the spec's element types, fills, verifies
// once against the FP64 reference (outputs poisoned first; FP8 scales applied), times through
// measure(), and reports tflops/tops, pct_of_peak, rel_error, waves and the label.
#pragma once

#include "tcbench/bench/env.hpp"
#include "tcbench/bench/measure.hpp"
#include "tcbench/gemm_lt.hpp"
#include "tcbench/gemm_types.hpp"
#include "tcbench/random_fill.hpp"
#include "tcbench/verify.hpp"

#include <benchmark/benchmark.h>

#include <functional>
#include <optional>
#include <string>

namespace tcbench::bench {

// The device buffers of one GEMM, typed by the spec (C aliases D: tcbench GEMMs use beta = 0).
struct GemmOperands {
  GemmProblem problem;  // resolved: leading dimensions filled
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
  // Optional: fill A and B yourself (e.g. quantize known FP32 originals); called once, before
  // verification.
  std::function<void(cudaStream_t, const GemmOperands&)> prepare;
  // Optional: called once after timing with a closure that runs the GEMM once (profilers,
  // extra accuracy measures). It may add counters.
  std::function<void(benchmark::State&, const std::function<void(cudaStream_t)>&)> after_timing;

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
  std::optional<AlgoCandidate> algo;  // cuBLASLt only
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
GemmResult run_cublaslt_gemm(benchmark::State& state, const Env& env, const GemmCase& gemm);

// An own kernel: `work` runs the GEMM on the given operands. The kernel's own support check
// belongs in the topic (throw Skipped before calling this).
GemmResult run_kernel_gemm(benchmark::State& state, const Env& env, const GemmCase& gemm,
                           const GemmWork& work);

// The median time of the cuBLASLt GEMM `gemm` (verified, L2 flushed), measured once per process
// and cached by the spec: the denominator of speedup_vs_* counters.
double baseline_median_seconds(const Env& env, const GemmCase& gemm);

}  // namespace tcbench::bench
