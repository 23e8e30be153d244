// alignment: does a batch of 33 run slower than 32, and does the efficiency model say why?
//
// A transformer-sized layer (M = K = 4096) with the batch/token dimension N swept 1..160, the
// headline pairs 32/33, 64/65, 128/129, 8192/8193, and M and K swept 4088..4104, per precision
// (fp16, bf16, tf32, int8, fp8 where the GPU has it) through cuBLASLt (layout:nn for the float
// types, layout:tn for int8 and fp8, which need it); the same N sweep with B stored N-contiguous
// (layout:nt, op_B = T, so ldb = N: the layout where N's alignment matters) and through our WMMA
// kernel; and 33 run as 40 and 48, pad copy included. The headline pairs also run through
// cuBLAS's cublasGemmEx (variant cublas: fp16, bf16, tf32, int8; FP8 is cuBLASLt-only), and the
// batch question is asked in the batched sense too: 32, 33, 64 and 65 heads of S = Q K^T
// (m:128/n:128/k:64 and k:65) and O = P V (m:128/n:64/k:128 and n:65), fp16 and bf16, one
// strided-batched call each through cuBLASLt and cublasGemmStridedBatchedEx (names end with
// /batch:<heads>).
//
// Counters per point: tflops|tops, pct_of_peak, waves (cuBLASLt's wavesCount), model_efficiency
// and model_tflops (the quantization bound of cuBLASLt's tile), tile_m, tile_n, split_k,
// align_{m,n,k}_bytes (the largest power of two <= 128 dividing dim x element size), and
// slowdown_vs_aligned (time per unit of the swept dimension over that of the next multiple of
// 16 bytes of it); cuBLAS rows carry vs_cublaslt (cuBLASLt's time on the same problem over
// cuBLAS's) instead of the model and tile counters, which need the kernel cuBLAS does not name.
// See docs/concepts/alignment.md for the predictions.
//
// --quick: the pairs for every precision, 32/33 through the nt layout, WMMA and cuBLAS, fp16's
// padding and fp16's S = Q K^T at 32/33 heads of head dimension 64/65 through both APIs: 62
// benchmarks and about 32 cached baselines, each ~0.15 s of warm-up and samples, estimated at
// 15-20 s on an H100-class GPU (not yet measured). The full run is 1891 benchmarks, about 20
// minutes.
//
//   build/release/bin/bench_alignment --quick
//   build/release/bin/bench_alignment
//   --benchmark_filter='alignment/cublaslt/fp16/m:4096/n:.*/layout:nn'
//   --benchmark_filter='alignment/cublas(lt)?/fp16/m:128/.*/batch:'
//   TCBENCH_ALIGNMENT_N=33,100,1000 build/release/bin/bench_alignment --benchmark_filter=/n:
#include "tcbench/bench/harness.hpp"
#include "tcbench/environment.hpp"
#include "tcbench/gemm_prediction.hpp"
#include "tcbench/kernels/gemm_wmma.hpp"
#include "tcbench/kernels/pad_copy.hpp"
#include "tcbench/numerics/gemm_padding.hpp"
#include "tcbench/numerics/lt_tiles.hpp"

#include <cublasLt.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace tcbench::bench {
namespace {

namespace tn = tcbench::numerics;

constexpr std::string_view kTopic = "alignment";
constexpr std::int64_t kBase = 4096;  // M = K of the layer; N of the M and K sweeps
constexpr Precision kPrecisions[] = {Precision::fp16, Precision::bf16, Precision::tf32,
                                     Precision::int8, Precision::fp8};
constexpr std::int64_t kPairs[] = {32, 33, 64, 65, 128, 129, 8192, 8193};
constexpr std::int64_t kPadUseful = 33;
constexpr std::int64_t kPadTo[] = {40, 48};

// The headline pairs through cuBLAS too (cublasGemmEx; FP8 is cuBLASLt-only); --quick: 32/33.
constexpr Precision kCublasPrecisions[] = {Precision::fp16, Precision::bf16, Precision::tf32,
                                           Precision::int8};
constexpr std::int64_t kQuickPair[] = {32, 33};

// Strided batches shaped like attention: `heads` matrices of sequence 128 with head dimension d,
// S = Q K^T as m = n = 128, k = d, and O = P V as m = 128, n = d, k = 128, in the precision's
// own layout (NN), through cuBLASLt (a batched layout) and cublasGemmStridedBatchedEx.
constexpr Precision kBatchedPrecisions[] = {Precision::fp16, Precision::bf16};
constexpr std::int64_t kSequence = 128;
constexpr std::int32_t kHeads[] = {32, 33, 64, 65};
constexpr std::int32_t kQuickHeads[] = {32, 33};
constexpr std::int64_t kHeadDims[] = {64, 65};

// cuBLASLt in the precision's own layout, cuBLASLt with B transposed (layout:nt), our WMMA
// kernel, cuBLAS in the precision's own layout.
enum class Variant { cublaslt, cublaslt_bT, wmma, cublas };
std::string_view variant_name(Variant v) {
  switch (v) {
    case Variant::wmma:
      return "wmma";
    case Variant::cublas:
      return "cublas";
    default:
      return "cublaslt";  // the layout key tells the two cuBLASLt variants apart
  }
}
using Axis = tn::GemmDim;

struct Point {
  Variant variant;
  Precision precision;
  std::int64_t m, n, k;
  Axis swept;
  std::int32_t batch = 1;  // > 1: one strided-batched call of `batch` matrices
};

// Extra N values from TCBENCH_ALIGNMENT_N ("33,100,1000"; tcbench/environment.hpp checks the value
// before anything runs); one too large for memory is skipped when it runs.
std::vector<std::int64_t> extra_n_values() {
  return environment::alignment_n();
}

std::vector<std::int64_t> n_sweep(bool quick) {
  std::vector<std::int64_t> n(std::begin(kPairs), std::end(kPairs));
  if (!quick)
    for (std::int64_t v = 1; v <= 160; ++v) n.push_back(v);
  for (std::int64_t v : extra_n_values()) n.push_back(v);
  std::sort(n.begin(), n.end());
  n.erase(std::unique(n.begin(), n.end()), n.end());
  return n;
}

std::vector<Point> points(bool quick) {
  std::vector<Point> out;
  for (Precision p : kPrecisions) {
    for (std::int64_t n : n_sweep(quick))
      out.push_back({Variant::cublaslt, p, kBase, n, kBase, Axis::n});
    if (!quick) {
      for (std::int64_t v = 4088; v <= 4104; ++v) {
        out.push_back({Variant::cublaslt, p, v, kBase, kBase, Axis::m});
        if (v != kBase) out.push_back({Variant::cublaslt, p, kBase, kBase, v, Axis::k});
      }
    }
    // B N-contiguous: float types only (INT8 and FP8 need TN, B not transposed). Quick mode:
    // the 32/33 pair in fp16 only.
    const bool headline = p == Precision::fp16;
    const std::vector<std::int64_t> pair{32, 33};
    if (p == Precision::fp16 || p == Precision::bf16 || p == Precision::tf32) {
      if (!quick || headline)
        for (std::int64_t n : quick ? pair : n_sweep(false))
          out.push_back({Variant::cublaslt_bT, p, kBase, n, kBase, Axis::n});
    }
    if (p == Precision::fp16 || p == Precision::bf16) {
      if (!quick || headline)
        for (std::int64_t n : quick ? pair : n_sweep(false))
          out.push_back({Variant::wmma, p, kBase, n, kBase, Axis::n});
    }
  }
  for (Precision p : kCublasPrecisions) {
    const std::span<const std::int64_t> ns =
        quick ? std::span<const std::int64_t>(kQuickPair) : std::span<const std::int64_t>(kPairs);
    for (std::int64_t n : ns) out.push_back({Variant::cublas, p, kBase, n, kBase, Axis::n});
  }
  for (Precision p : kBatchedPrecisions) {
    if (quick && p != Precision::fp16) continue;
    const std::span<const std::int32_t> heads =
        quick ? std::span<const std::int32_t>(kQuickHeads) : std::span<const std::int32_t>(kHeads);
    for (std::int64_t d : kHeadDims)
      for (std::int32_t h : heads)
        for (Variant v : {Variant::cublaslt, Variant::cublas}) {
          out.push_back({v, p, kSequence, kSequence, d, Axis::k, h});              // S = Q K^T
          if (!quick) out.push_back({v, p, kSequence, d, kSequence, Axis::n, h});  // O = P V
        }
  }
  return out;
}

GemmCase case_for(const Point& pt) {
  GemmCase c = GemmCase::for_precision(pt.precision, pt.m, pt.n, pt.k);
  if (pt.variant == Variant::cublaslt_bT) c.spec.problem.trans_b = true;  // B n x k, ldb = n
  c.spec.batch_count = pt.batch;  // packed matrices (strides 0)
  return c;
}

std::string name_of(const Point& pt) {
  const GemmCase c = case_for(pt);
  BenchName name = BenchName(kTopic, variant_name(pt.variant), pt.precision).gemm(c.spec.problem);
  if (pt.batch > 1) name.arg(Key::batch, pt.batch);
  return name;
}

std::int64_t swept_value(const Point& pt) {
  return pt.swept == Axis::m ? pt.m : (pt.swept == Axis::n ? pt.n : pt.k);
}

// The same point with the swept dimension rounded up to the next multiple of 16 bytes.
Point aligned_point(const Point& pt) {
  const auto type = element_of(case_for(pt).spec.a_type);
  const std::int64_t to = tn::round_up(swept_value(pt), tn::efficient_multiple(type));
  Point a = pt;
  (pt.swept == Axis::m ? a.m : (pt.swept == Axis::n ? a.n : a.k)) = to;
  return a;
}

std::uint32_t algo_config_u32(const cublasLtMatmulAlgo_t& algo,
                              cublasLtMatmulAlgoConfigAttributes_t attr) {
  std::uint32_t value = 0;
  std::size_t written = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &value, sizeof(value), &written) !=
      CUBLAS_STATUS_SUCCESS)
    return 0;
  return value;
}

void report_alignment(benchmark::State& state, const GemmSpec& spec) {
  const auto type = element_of(spec.a_type);
  set_counter(state, counters::align_m_bytes, tn::alignment_bytes(spec.problem.m, type));
  set_counter(state, counters::align_n_bytes, tn::alignment_bytes(spec.problem.n, type));
  set_counter(state, counters::align_k_bytes, tn::alignment_bytes(spec.problem.k, type));
}

// model_efficiency and model_tflops with the tile cuBLASLt chose (the quantization bound of
// gemm_prediction.hpp); the label names the tile.
void report_model(benchmark::State& state, const Env& env, const Point& pt, const GemmSpec& spec,
                  const AlgoCandidate& algo) {
  const std::uint32_t split =
      std::max<std::uint32_t>(1, algo_config_u32(algo.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM));
  const auto tile = tn::lt_tile_shape(algo.tile_id);
  std::string label = algo.impl.impl_name + " tile " + tn::lt_tile_label(algo.tile_id) +
                      " stages " + tn::lt_stages_label(algo.stages_id) + " split-K " +
                      std::to_string(split);
  if (tile && gpu_rates(env.device().spec, pt.precision).flops_per_s > 0) {
    // The tile is rows x columns of cuBLAS's D; the row-major query (query_of) is D^T.
    const QuantizationBound b =
        quantization_bound(env.device().spec, query_of(spec, pt.precision),
                           tn::TimeModelTile{tile->n, tile->m}, static_cast<int>(split));
    set_counter(state, counters::model_efficiency, b.quantization.efficiency());
    set_counter(state, counters::model_tflops, b.flops_per_s / 1e12);
    set_counter(state, counters::model_waves, b.quantization.waves);
    set_counter(state, counters::tile_m, static_cast<double>(tile->m));
    set_counter(state, counters::tile_n, static_cast<double>(tile->n));
  }
  set_counter(state, counters::split_k, split);
  state.SetLabel(label);
}

// The GEMM time model's prediction beside the measurement (predicted_tflops, model_ratio), so a
// GPU run scores the model; library GEMMs only (our WMMA kernel is not what the model is of). The
// shapes the model does not cover are the ones cuBLASLt refuses, which skip before they run.
void report_prediction(benchmark::State& state, const Env& env, const Point& pt,
                       const GemmSpec& spec, double seconds) {
  const ModelPrediction p = predict_time(env.device().spec, query_of(spec, pt.precision));
  if (!p.not_covered.empty()) return;
  set_counter(state, counters::predicted_tflops, p.time.flops_per_s / 1e12);
  if (seconds > 0)
    set_counter(state, counters::model_ratio, p.time.flops_per_s * seconds / spec.flops());
}

void run_point(benchmark::State& state, const Env& env, const Point& pt) {
  const GemmCase c = case_for(pt);
  if (pt.variant == Variant::wmma)
    env.skip_unless(kernels::wmma_unsupported_reason(env.gpu().cc_major, env.gpu().cc_minor,
                                                     pt.precision, c.spec.problem));
  env.skip_unless_valid(c.spec);

  GemmResult r;
  if (pt.variant == Variant::wmma) {
    GemmCase wc = c;
    wc.label = "WMMA (HMMA) fp32 acc, 64x64 tiles";
    r = run_kernel_gemm(state, env, wc,
                        pt.precision == Precision::fp16
                            ? typed<Precision::fp16>(kernels::gemm_wmma<__half>)
                            : typed<Precision::bf16>(kernels::gemm_wmma<__nv_bfloat16>));
  } else if (pt.variant == Variant::cublas) {
    // cuBLAS does not say which kernel it chose, so the model (which needs the tile) is on the
    // cuBLASLt row of the same problem; vs_cublaslt relates the two.
    r = run_cublas_gemm(state, env, c);
  } else {
    r = run_cublaslt_gemm(state, env, c);
    if (r.algo) report_model(state, env, pt, c.spec, *r.algo);
  }
  report_alignment(state, c.spec);
  if (pt.variant != Variant::wmma) report_prediction(state, env, pt, c.spec, r.seconds.median);

  // Per unit of the swept dimension, against the next multiple of 16 bytes (cuBLASLt, cached):
  // cuBLASLt's sweeps only (cuBLAS rows compare with cuBLASLt through vs_cublaslt, batched rows
  // with each other).
  const Point aligned = aligned_point(pt);
  const std::int64_t v = swept_value(pt), va = swept_value(aligned);
  if (pt.variant == Variant::wmma || pt.variant == Variant::cublas || pt.batch > 1) return;
  if (va == v) {
    set_counter(state, counters::slowdown_vs_aligned, 1.0);
    return;
  }
  const GemmCase ca = case_for(aligned);
  if (ca.spec.why_invalid(env.gpu().cc_major, env.gpu().cc_minor)) return;  // nothing to compare
  const double ta = baseline_median_seconds(env, ca);
  set_counter(state, counters::slowdown_vs_aligned,
              (r.seconds.median / static_cast<double>(v)) / (ta / static_cast<double>(va)));
}

// 33 run as `to`: B (K x 33, K-contiguous) copied into a zero-padded K x `to` buffer, then
// cuBLASLt on M x `to` x K; the time is copy + GEMM and the rates count the useful 33 columns.
void run_padding(benchmark::State& state, const Env& env, Precision p, std::int64_t to) {
  GemmCase padded = GemmCase::for_precision(p, kBase, to, kBase);
  env.skip_unless_valid(padded.spec);
  const std::size_t elem = data_type_bytes(padded.spec.b_type);
  const tn::PadCopyShape shape{kBase, kPadUseful, kBase, kBase, to, kBase};
  env.skip_unless(tn::pad_copy_invalid(shape, static_cast<int>(elem)));

  const std::size_t useful_bytes = static_cast<std::size_t>(kBase * kPadUseful) * elem;
  const std::size_t padded_bytes = static_cast<std::size_t>(kBase * to) * elem;
  require_memory(env, useful_bytes + padded_bytes, "the padding buffers");
  DeviceBuffer<std::byte> b_unpadded(useful_bytes), b_scratch(padded_bytes);
  GemmPlan plan(env.lt(), padded.spec, env.gpu().cc_major, env.gpu().cc_minor);
  // The operands as they are after the copy (the reference reads them before the first run):
  // B's first 33 columns are the unpadded B, the rest zero. A is filled as the harness would.
  padded.prepare = [&](cudaStream_t s, const GemmOperands& op) {
    fill_operand(padded.spec.a_type, op.a,
                 static_cast<std::size_t>(op.problem.effective_lda() * op.problem.a_cols()),
                 default_input(padded.spec.a_type), 0xA11A, s);
    fill_operand(padded.spec.b_type, b_unpadded.get(), static_cast<std::size_t>(kBase * kPadUseful),
                 default_input(padded.spec.b_type), 0xA11B, s);
    kernels::pad_copy(shape, static_cast<int>(elem), b_unpadded.get(), op.b, s);
  };
  padded.label = "pad copy + cuBLASLt n=" + std::to_string(to);
  const GemmResult r =
      run_kernel_gemm(state, env, padded, [&](cudaStream_t s, const GemmOperands& op) {
        kernels::pad_copy(shape, static_cast<int>(elem), b_unpadded.get(), op.b, s);
        plan.run(s, op.a, op.b, op.c, op.d);
      });

  // Rates of the useful work (the helper reported the padded problem's).
  report_compute(state, env, p, 2.0 * kBase * kPadUseful * kBase, r.seconds);
  set_counter(state, counters::padded_n, static_cast<double>(to));

  // The parts, for the report: the copy alone, the padded GEMM alone and the unpadded GEMM. The
  // copy is sampled once per configuration, as the GEMMs are (baseline_median_seconds), not on
  // each of Google Benchmark's sizing calls.
  const double copy =
      once<double>("pad_copy|" + std::string(name(p)) + "|" + std::to_string(to), [&] {
        return sample_work(env,
                           [&](cudaStream_t s) {
                             kernels::pad_copy(shape, static_cast<int>(elem), b_unpadded.get(),
                                               b_scratch.get(), s);
                           })
            .median;
      });
  set_counter(state, counters::copy_us, copy * 1e6);
  set_counter(state, counters::gemm_us,
              baseline_median_seconds(env, GemmCase::for_precision(p, kBase, to, kBase)) * 1e6);
  const GemmCase unpadded = GemmCase::for_precision(p, kBase, kPadUseful, kBase);
  if (unpadded.spec.why_invalid(env.gpu().cc_major, env.gpu().cc_minor)) {
    set_counter(state, counters::padding_wins, 1);  // 33 cannot run at all (FP8: n % 8 != 0)
  } else {
    const double t33 = baseline_median_seconds(env, unpadded);
    set_counter(state, counters::unpadded_us, t33 * 1e6);
    set_counter(state, counters::padding_wins, r.seconds.median < t33 ? 1 : 0);
  }
}

}  // namespace

TopicHelp topic_help() {
  return {
      "Whether a batch of 33 runs slower than 32, and whether the efficiency model (roofline "
      "with tile and wave quantization for the tile cuBLASLt chose) says why: M = K = 4096 "
      "with N swept, the pairs 32/33, 64/65, 128/129 and 8192/8193, M and K swept around "
      "4096, per precision, through cuBLASLt (also with B N-contiguous) and a WMMA kernel, "
      "and 33 padded to 40 and 48 with the pad copy timed.",
      "docs/concepts/alignment.md",
      "TCBENCH_ALIGNMENT_N=33,100  extra N values to time (positive integers, comma-separated)"};
}

void register_topic(const Env& env) {
  std::set<std::string> seen;  // the M, K sweeps and the N list share the 4096^3 point
  for (const Point& pt : points(env.quick())) {
    const std::string name = name_of(pt);
    if (!seen.insert(name).second) continue;
    register_gpu_benchmark(name,
                           [&env, pt](benchmark::State& state) { run_point(state, env, pt); });
  }
  for (Precision p : kPrecisions) {
    if (env.quick() && p != Precision::fp16) continue;  // quick: fp16's padding only
    for (std::int64_t to : kPadTo)
      register_gpu_benchmark(
          BenchName(kTopic, "pad_to_" + std::to_string(to), p)
              .gemm(GemmCase::for_precision(p, kBase, kPadUseful, kBase).spec.problem),
          [&env, p, to](benchmark::State& state) { run_padding(state, env, p, to); });
  }
}

}  // namespace tcbench::bench
