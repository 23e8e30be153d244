// bench_fp8's accumulator rows: how many bits each FP8 tensor-core path keeps in its
// accumulator, and what that costs a GEMM as K grows (docs/concepts/fp8-scaling.md, "The
// accumulator").
//
//   accum_bits_<path>/<p>     the bit detection (tcbench/numerics/accumulator_probes.hpp): the
//                             probes as one GEMM through the path (D's diagonal), the one
//                             accumulator model that reproduces every output, and a sample of
//                             D's other outputs checked against that model bit for bit.
//                             Paths: tcbench's kernels (kernels/fp8_accumulator*.cu: mma_sync,
//                             wgmma, tcgen05, and the FP16/BF16 mma.sync controls) and
//                             cuBLASLt (accum:fast and split, one pass: no split-K).
//                             Counters: accumulator_bits, accumulator_at_least,
//                             accumulator_rounding, accumulator_step, promotion_interval.
//   accum_error_<path>/fp8    the FP8 block study's E4M3 operands (studies/fp8_accumulation.hpp)
//                             at K = 256 .. 16384 through tcbench's kernels, plain (promote:0) and
//                             promoted to FP32 every 64 .. 512 products: rel_error against FP64
//                             of the same E4M3 values, rel_error_unquantized against the FP32
//                             originals, and the kernel's TFLOP/s: an instruction-level
//                             comparison (every K slice staged from global memory), not a GEMM
//                             record. cuBLASLt's rows (fast and split) are in bench_fp8.cpp.
#pragma once

#include "tcbench/bench/harness.hpp"
#include "tcbench/kernels/fp8_accumulator.hpp"
#include "tcbench/numerics/accumulator_probes.hpp"
#include "tcbench/studies/fp8_accumulation.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace tcbench::bench {

namespace acc_detail {

namespace tn = tcbench::numerics;
namespace tk = tcbench::kernels;

constexpr int kProbeRowMultiple = 128;  // every path's tile divides it

// The probes of one input format, padded with zero probes to a whole number of tiles, on the
// device as a probe GEMM's A and B (rows x length, K-contiguous).
struct ProbeGemm {
  tn::AccumulatorProbes probes;
  int rows = 0;
  DeviceBuffer<std::uint8_t> a, b;
};
inline const ProbeGemm& probe_gemm(tn::Element input, cudaStream_t s) {
  return once<ProbeGemm>("accum_probes|" + std::string(tn::name(input)), [&] {
    ProbeGemm g;
    g.probes = tn::make_accumulator_probes(input);
    const auto count = static_cast<int>(g.probes.probes.size());
    g.rows = (count + kProbeRowMultiple - 1) / kProbeRowMultiple * kProbeRowMultiple;
    std::vector<float> a = g.probes.a, b = g.probes.b;
    a.resize(static_cast<std::size_t>(g.rows) * g.probes.length, 0.0f);
    b.resize(a.size(), 0.0f);
    const std::vector<std::uint8_t> a_bytes = tn::exact_bytes(input, a),
                                    b_bytes = tn::exact_bytes(input, b);
    g.a = DeviceBuffer<std::uint8_t>(a_bytes.size());
    g.b = DeviceBuffer<std::uint8_t>(b_bytes.size());
    g.a.upload(std::span<const std::uint8_t>(a_bytes), s);
    g.b.upload(std::span<const std::uint8_t>(b_bytes), s);
    TCB_CUDA(cudaStreamSynchronize(s));
    return g;
  });
}

// A path as the rows see it: its input format, a one-line description and the GEMM itself
// (D = A B^T, element (i, j) of D at d_index(i, j)).
struct AccRun {
  tn::Element input;
  std::string label;
  std::function<void(cudaStream_t, const void* a, const void* b, float* d, int m, int n, int k)>
      run;
  bool column_major = false;  // cuBLASLt's D
};

inline std::size_t d_index(const AccRun& r, int i, int j, int m, int n) {
  return r.column_major ? static_cast<std::size_t>(j) * m + i : static_cast<std::size_t>(i) * n + j;
}

// Outputs of the probe GEMM the estimator's model must reproduce besides the diagonal: every
// 97th of the others, each emulated over the products both operands share.
inline std::optional<std::string> check_off_diagonal(const ProbeGemm& g, const AccRun& r,
                                                     const std::vector<float>& d,
                                                     const tn::AccumulatorModel& m) {
  const auto count = static_cast<int>(g.probes.probes.size());
  const std::size_t length = static_cast<std::size_t>(g.probes.length);
  int checked = 0, wrong = 0;
  std::string first;
  for (long idx = 0; idx < static_cast<long>(count) * count; idx += 97) {
    const int i = static_cast<int>(idx / count), j = static_cast<int>(idx % count);
    if (i == j) continue;
    const int used = std::min(g.probes.probes[static_cast<std::size_t>(i)].used,
                              g.probes.probes[static_cast<std::size_t>(j)].used);
    const float* a = g.probes.a.data() + static_cast<std::size_t>(i) * length;
    const float* b = g.probes.b.data() + static_cast<std::size_t>(j) * length;
    const float want = tn::emulate_dot(
        m, [&](int l) { return static_cast<double>(a[l]) * b[l]; }, used);
    const float got = d[d_index(r, i, j, g.rows, g.rows)];
    ++checked;
    if (!(got == want)) {
      if (wrong++ == 0)
        first = "A row " + std::to_string(i) + " x B row " + std::to_string(j) + " gave " +
                std::to_string(got) + ", the model " + std::to_string(want);
    }
  }
  if (wrong == 0) return std::nullopt;
  return std::to_string(wrong) + " of " + std::to_string(checked) +
         " sampled off-diagonal outputs differ from the model found on the diagonal (first: " +
         first + ")";
}

inline void set_estimate_counters(benchmark::State& state, const tn::AccumulatorEstimate& e) {
  set_counter(state, counters::accumulator_bits, e.fraction_bits);
  set_counter(state, counters::accumulator_at_least, e.at_least ? 1.0 : 0.0);
  set_counter(state, counters::accumulator_rounding, static_cast<double>(e.rounding));
  if (e.block) set_counter(state, counters::accumulator_step, *e.block);
  if (e.promotion) set_counter(state, counters::promotion_interval, *e.promotion);
}

inline void run_accum_bits(benchmark::State& state, const Env& env, const AccRun& r) {
  const cudaStream_t s = env.stream();
  const ProbeGemm& g = probe_gemm(r.input, s);
  const int rows = g.rows, k = g.probes.length;
  DeviceBuffer<float> d(static_cast<std::size_t>(rows) * rows);
  TCB_CUDA(cudaMemsetAsync(d.get(), 0xFF, d.bytes(), s));  // NaN until written
  r.run(s, g.a.get(), g.b.get(), d.get(), rows, rows, k);
  const std::vector<float> out = d.download(s);
  std::vector<float> diagonal(g.probes.probes.size());
  for (std::size_t i = 0; i < diagonal.size(); ++i)
    diagonal[i] = out[d_index(r, static_cast<int>(i), static_cast<int>(i), rows, rows)];
  const tn::AccumulatorEstimate e = tn::estimate_accumulator(g.probes, diagonal);
  if (e.refused) throw Error("the accumulator of " + r.label + ": " + e.reason);
  if (auto wrong = check_off_diagonal(g, r, out, e.model))
    throw Error("the accumulator of " + r.label + " (" + e.describe() + "): " + *wrong);
  // The detection's cost: one probe GEMM (milliseconds).
  measure(state, env,
          [&](cudaStream_t st) { r.run(st, g.a.get(), g.b.get(), d.get(), rows, rows, k); },
          {.flush_l2 = false});
  set_estimate_counters(state, e);
  state.SetLabel(e.describe() + "; " + r.label);
}

// One path of tcbench's kernels as an AccRun with promotion every `promote` products.
inline AccRun kernel_run(tk::AccPath p, int promote) {
  const tk::AccPathInfo& i = tk::info(p);
  return {
      i.input, std::string(i.ptx) + " (tcbench kernel)",
      [p, promote](cudaStream_t s, const void* a, const void* b, float* d, int m, int n, int k) {
        tk::launch_acc_gemm(p, {a, b, d, m, n, k, promote}, s);
      }};
}

// cuBLASLt's FP8 GEMM (E4M3 in, FP32 out, no scales) with fast or split accumulation, as one
// pass per dot product (no split-K, whose FP32 reduction would read as promotion).
inline void run_accum_bits_cublaslt(benchmark::State& state, const Env& env, bool fast) {
  const ProbeGemm& g = probe_gemm(tn::Element::e4m3, env.stream());
  GemmSpec spec = GemmSpec::for_precision(Precision::fp8, g.rows, g.rows, g.probes.length);
  spec.problem.trans_a = true;
  spec.c_type = spec.d_type = CUDA_R_32F;
  spec.fast_accum = fast;
  env.skip_unless_valid(spec);
  GemmPlanOptions options;
  options.one_pass = true;
  const GemmPlan plan(env.lt(), spec, env.gpu().cc_major, env.gpu().cc_minor, options);
  const AccRun r{tn::Element::e4m3,
                 "cuBLASLt " + plan.selected().impl.impl_name +
                     (fast ? ", fast accumulation" : ", split accumulation") +
                     ", one pass (no split-K)",
                 [&plan](cudaStream_t s, const void* a, const void* b, float* d, int, int, int) {
                   plan.run(s, a, b, nullptr, d);
                 },
                 true};
  run_accum_bits(state, env, r);
}

// ---- the error as K grows ------------------------------------------------------------------

constexpr int kSweepVerified = 128;  // the verified tile: 128 x 128 outputs
constexpr int kSweepTimed = 1024;    // the timed problem: 8 x 8 copies of it

// The FP8 block study's operands at depth k (studies/fp8_accumulation.hpp): the verified tile's
// FP64 references on the host, and the timed problem's E4M3 operands on the device (row i of
// A and of B is row i % 128 of the tile's).
struct SweepData {
  studies::Fp8Operands ops;
  std::vector<double> exact, original;  // 128 x 128, row-major
  DeviceBuffer<std::uint8_t> a, b;
};
inline const SweepData& sweep_data(std::int64_t k, cudaStream_t s) {
  return once<SweepData>("accum_sweep|" + std::to_string(k), [&] {
    SweepData sd;
    sd.ops = studies::fp8_study_operands(kSweepVerified, kSweepVerified, k);
    const auto n = static_cast<std::size_t>(kSweepVerified);
    const auto kk = static_cast<std::size_t>(k);
    sd.exact.resize(n * n);
    sd.original.resize(n * n);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        double q = 0, x = 0;
        for (std::size_t l = 0; l < kk; ++l) {
          q += static_cast<double>(sd.ops.a8[i * kk + l]) * sd.ops.b8[j * kk + l];
          x += static_cast<double>(sd.ops.a32[i * kk + l]) * sd.ops.b32[j * kk + l];
        }
        sd.exact[i * n + j] = q;
        sd.original[i * n + j] = x;
      }
    const std::vector<std::uint8_t> a = tn::exact_bytes(tn::Element::e4m3, sd.ops.a8);
    const std::vector<std::uint8_t> b = tn::exact_bytes(tn::Element::e4m3, sd.ops.b8);
    std::vector<std::uint8_t> big_a(kSweepTimed * kk), big_b(kSweepTimed * kk);
    for (std::size_t i = 0; i < static_cast<std::size_t>(kSweepTimed); ++i) {
      std::memcpy(big_a.data() + i * kk, a.data() + (i % n) * kk, kk);
      std::memcpy(big_b.data() + i * kk, b.data() + (i % n) * kk, kk);
    }
    sd.a = DeviceBuffer<std::uint8_t>(big_a.size());
    sd.b = DeviceBuffer<std::uint8_t>(big_b.size());
    sd.a.upload(std::span<const std::uint8_t>(big_a), s);
    sd.b.upload(std::span<const std::uint8_t>(big_b), s);
    TCB_CUDA(cudaStreamSynchronize(s));
    return sd;
  });
}

inline void run_accum_error(benchmark::State& state, const Env& env, tk::AccPath p, std::int64_t k,
                            int promote) {
  env.skip_unless(tk::acc_path_unsupported(p, env.gpu().cc_major, env.gpu().cc_minor));
  require_memory(env, static_cast<std::size_t>(2 * kSweepTimed * k + 4 * kSweepTimed * kSweepTimed),
                 "the accumulator sweep at k = " + std::to_string(k));
  const cudaStream_t s = env.stream();
  const SweepData& sd = sweep_data(k, s);
  const auto kk = static_cast<int>(k);
  DeviceBuffer<float> d(static_cast<std::size_t>(kSweepTimed) * kSweepTimed);
  TCB_CUDA(cudaMemsetAsync(d.get(), 0xFF, d.bytes(), s));
  const tk::AccGemm g{sd.a.get(), sd.b.get(), d.get(), kSweepTimed, kSweepTimed, kk, promote};
  tk::launch_acc_gemm(p, g, s);
  const std::vector<float> out = d.download(s);
  // Every copy of the tile holds the same outputs (the kernels are deterministic).
  const auto n = static_cast<std::size_t>(kSweepVerified);
  std::vector<double> tile(n * n), user(n * n), original_user(sd.original);
  const double dequantize = static_cast<double>(sd.ops.a_scale_inv) * sd.ops.b_scale_inv;
  for (std::size_t i = 0; i < static_cast<std::size_t>(kSweepTimed); ++i)
    for (std::size_t j = 0; j < static_cast<std::size_t>(kSweepTimed); ++j) {
      const float v = out[i * kSweepTimed + j];
      const float first = out[(i % n) * kSweepTimed + j % n];
      if (!(v == first))
        throw Error("accumulator sweep: output (" + std::to_string(i) + ", " + std::to_string(j) +
                    ") is " + std::to_string(v) + ", its copy in the first tile " +
                    std::to_string(first));
      if (i < n && j < n) {
        tile[i * n + j] = v;
        user[i * n + j] = v * dequantize;
      }
    }
  const VerifyStats check = compare_host(sd.exact, tile);
  const double tol = error_model(Precision::fp8, k, CUDA_R_32F, true).frobenius_tolerance();
  if (!check.passes(tol))
    throw Error("accumulator sweep on " + std::string(tk::info(p).name) + ": " +
                check.describe(tol));
  const SampleStats t =
      measure(state, env, [&](cudaStream_t st) { tk::launch_acc_gemm(p, g, st); });
  report_compute(state, env, Precision::fp8,
                 2.0 * kSweepTimed * kSweepTimed * static_cast<double>(k), t);
  set_counter(state, counters::rel_error, check.rel_error());
  set_counter(state, counters::rel_error_unquantized, compare_host(sd.original, user).rel_error());
  state.SetLabel(std::string(tk::info(p).ptx) +
                 (promote ? ", promoted to FP32 every " + std::to_string(promote) + " products"
                          : ", no promotion") +
                 "; instruction-level comparison (tcbench kernel staging every K slice), not a "
                 "GEMM record");
}

}  // namespace acc_detail

inline constexpr std::int64_t kAccumSweepKs[] = {256, 512, 1024, 2048, 4096, 8192, 16384};
inline constexpr int kPromotions[] = {0, 64, 128, 256, 512};

// The bit detection of every path and the kernels' K sweep.
inline void add_accumulator_rows(const Env& env, std::string_view topic) {
  namespace tk = tcbench::kernels;
  for (bool fast : {true, false})
    register_gpu_benchmark(
        BenchName(topic, "accum_bits_cublaslt", Precision::fp8)
            .arg(Key::accum, fast ? "fast" : "split"),
        [&env, fast](benchmark::State& st) { acc_detail::run_accum_bits_cublaslt(st, env, fast); });
  for (tk::AccPath p : tk::kAccPaths) {
    const tk::AccPathInfo& i = tk::info(p);
    const Precision prec = i.input == numerics::Element::fp16   ? Precision::fp16
                           : i.input == numerics::Element::bf16 ? Precision::bf16
                                                                : Precision::fp8;
    register_gpu_benchmark(
        BenchName(topic, "accum_bits_" + std::string(i.name), prec),
        [&env, p](benchmark::State& st) {
          env.skip_unless(tk::acc_path_unsupported(p, env.gpu().cc_major, env.gpu().cc_minor));
          acc_detail::run_accum_bits(st, env, acc_detail::kernel_run(p, 0));
        });
  }
  for (std::int64_t k : kAccumSweepKs) {
    if (env.quick() && k != 4096 && k != 16384) continue;
    for (tk::AccPath p : tk::kAccPaths) {
      if (tk::info(p).control) continue;
      for (int promote : kPromotions) {
        if (env.quick() && promote != 0 && promote != 128) continue;  // DeepSeek-V3's N_C
        GemmProblem problem;
        problem.m = problem.n = acc_detail::kSweepTimed;
        problem.k = k;
        problem.trans_a = true;
        register_gpu_benchmark(
            BenchName(topic, "accum_error_" + std::string(tk::info(p).name), Precision::fp8)
                .gemm(problem)
                .arg(Key::promote, promote),
            [&env, p, k, promote](benchmark::State& st) {
              acc_detail::run_accum_error(st, env, p, k, promote);
            });
      }
    }
  }
}

}  // namespace tcbench::bench
