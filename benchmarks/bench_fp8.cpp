// fp8: what FP8 tensor cores buy (Ada, Hopper, Blackwell), what they cost in accuracy and in
// scaling work, and which precision each layer of a transformer block should run in.
//
//   gemm_<A>x<B>_<D>/fp8   cuBLASLt FP8 GEMMs, TN (A/B scale pointers; D in BF16, or E4M3 with
//                          D_SCALE and AMAX_D; fast accumulation on and off) on operands
//                          quantized from known FP32 originals with per-tensor current scaling.
//                          Counters: tflops, pct_of_peak (FP8 peak), speedup_vs_bf16 (the same
//                          TN problem in BF16), rel_error (vs the quantized inputs: the GEMM's own
//                          error) and rel_error_unquantized (vs FP32 of the originals: what a user
//                          gets)
//   gemm/bf16, gemm/fp16   the same TN shapes in 16 bits, beside
//   recipe_<kernel>        the scaling kernels (kernels/fp8_scaling.cu): gbps, pct_of_peak DRAM
//   overhead_<recipe>      quantizing A and B with a recipe, as % of the FP8 GEMM it feeds
//   accum_bits_<path>      how many bits each FP8 path's accumulator keeps, and accum_error_<path>
//                          the error as K grows with and without promotion
//                          (fp8_accumulator_cases.hpp); accum_error_cublaslt: cuBLASLt FP8 with
//                          FP32 out, fast vs split, K = 256 .. 16384, on the same operands
//   layer_<l>, block       a transformer block's GEMMs (QKV, attention out, MLP up, MLP down) in
//                          every precision option, the per-layer selection
//                          (studies/precision_selector) and the block's time and end-to-end error
//                          (studies/fp8_block): all-BF16, all-FP8, selected
// See docs/concepts/fp8-scaling.md for the predictions these numbers are read against.
//
//   build/release/bin/bench_fp8 --quick
//   build/release/bin/bench_fp8 --benchmark_filter='fp8/(layer_|block/)'
#include "tcbench/bench/harness.hpp"
#include "tcbench/kernels/fp8_scaling.hpp"
#include "tcbench/studies/fp8_block.hpp"

#include "fp8_accumulator_cases.hpp"
#include "fp8_recipe_cases.hpp"

#include <cuda_bf16.h>

#include <cmath>
#include <vector>

namespace tcbench::bench {
namespace {

namespace tn = tcbench::numerics;
namespace tk = tcbench::kernels;
namespace ts = tcbench::studies;

constexpr std::string_view kTopic = "fp8";
constexpr std::uint64_t kSeedA = 0xF8A0, kSeedB = 0xF8B0;

// FP8 exists from compute capability 8.9; the sentence is the GEMM validator's, so the rule has
// one home. The scaling kernels are measured only where FP8 GEMMs exist to consume them.
void require_fp8(const Env& env) {
  env.skip_unless_valid(GemmSpec::for_precision(Precision::fp8, 256, 256, 256));
}

// The FP8 format of an FP8 cudaDataType_t (the variants below hold only FP8 A and B).
tn::Fp8Format fp8_format(cudaDataType_t t) {
  return *tn::view_of(tn::kFp8Formats, element_of(t));
}

// Layer GEMMs are TN (D = W^T X with W stored k x m), the layout FP8 needs: every GEMM of this
// topic, 16-bit ones included, runs it, so every speed-up compares one layout.
GemmCase tn_case(Precision p, const GemmShape& s) {
  GemmCase c = default_case(p, s);
  c.spec.problem.trans_a = true;
  return c;
}

// ---------------------------------------------------------------------------------------------
// FP8 GEMMs on quantized FP32 originals

struct Fp8Variant {
  cudaDataType_t a, b, d;
  std::string name() const {
    auto f = [](cudaDataType_t t) { return std::string(tn::name(element_of(t))); };
    return "gemm_" + f(a) + "x" + f(b) + "_" + f(d);
  }
};
const Fp8Variant kHeadline{CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF};

struct Fp8Gemm {
  Fp8Variant variant = kHeadline;
  bool fast_accum = true;
};

GemmCase fp8_case(const Fp8Gemm& g, const GemmShape& s) {
  GemmCase c = tn_case(Precision::fp8, s);
  c.spec.a_type = g.variant.a;
  c.spec.b_type = g.variant.b;
  c.spec.d_type = g.variant.d;
  c.spec.fast_accum = g.fast_accum;
  c.speedup_vs = {Precision::bf16};
  return c;
}

// A power of two that keeps an FP8 output inside E4M3/E5M2's range: D = A B has elements of
// standard deviation about sqrt(k)/3 for uniform(-1, 1) originals; leave 6 of them below max.
float output_scale(cudaDataType_t d, std::int64_t k) {
  if (!is_fp8_type(d)) return 1.0f;
  const double bound = 2.0 * std::sqrt(static_cast<double>(k));
  return static_cast<float>(std::exp2(std::floor(std::log2(tn::fp8_max(fp8_format(d)) / bound))));
}

// The FP32 originals of A and B (uniform(-1, 1), the harness's default for floating point), their
// per-tensor current scales (computed on the device with the recipe kernels), and amax of D.
struct Originals {
  DeviceBuffer<float> a32, b32;
  tk::ScaleState a_scale, b_scale;
  DeviceValue<float> amax_d{0.0f};
};

void run_fp8_gemm(benchmark::State& state, const Env& env, const Fp8Gemm& g, const GemmShape& s) {
  require_fp8(env);
  GemmCase c = fp8_case(g, s);
  env.skip_unless_valid(c.spec);
  GemmProblem p = c.spec.problem;
  p.resolve();
  const std::size_t a_count = checked_elements(p.effective_lda(), p.a_cols());
  const std::size_t b_count = checked_elements(p.effective_ldb(), p.b_cols());
  require_memory(env, checked_bytes<float>(a_count + b_count),
                 "the FP32 originals of a " + p.describe() + " FP8 GEMM");
  Originals o;
  o.a32 = DeviceBuffer<float>(a_count);
  o.b32 = DeviceBuffer<float>(b_count);
  const cudaStream_t st = env.stream();
  fill_random(o.a32.get(), a_count, Distribution::uniform(-1.0f, 1.0f), kSeedA, st);
  fill_random(o.b32.get(), b_count, Distribution::uniform(-1.0f, 1.0f), kSeedB, st);
  // cuBLASLt's A/B_SCALE_POINTER dequantize: the inverse of the quantizing scales.
  c.a_scale =
      1.0f / tk::current_scale(o.a32.get(), a_count, fp8_format(g.variant.a), o.a_scale, st);
  c.b_scale =
      1.0f / tk::current_scale(o.b32.get(), b_count, fp8_format(g.variant.b), o.b_scale, st);
  if (is_fp8_type(g.variant.d)) {
    c.d_scale = output_scale(g.variant.d, s.k);
    c.spec.amax_d = o.amax_d.ptr();
  }
  const tn::Fp8Format fa = fp8_format(g.variant.a), fb = fp8_format(g.variant.b);
  c.prepare = [&o, fa, fb](cudaStream_t stream, const GemmOperands& ops) {
    tk::scaled_cast(o.a32.get(), o.a32.size(), o.a_scale.scale.ptr(), fa, tn::Saturation::satfinite,
                    ops.a_as<__nv_fp8_storage_t>(), stream);
    tk::scaled_cast(o.b32.get(), o.b32.size(), o.b_scale.scale.ptr(), fb, tn::Saturation::satfinite,
                    ops.b_as<__nv_fp8_storage_t>(), stream);
  };
  c.extra_reference = GemmCase::ExtraReference{o.a32.get(), o.b32.get()};
  run_cublaslt_gemm(state, env, c);
  if (is_fp8_type(g.variant.d)) set_counter(state, counters::amax_d, o.amax_d.get(st));
}

void add_fp8_gemm(const Env& env, const Fp8Gemm& g, const GemmShape& s, std::string_view layer) {
  BenchName name(kTopic, g.variant.name(), Precision::fp8);
  name.gemm(fp8_case(g, s).spec.problem).arg(Key::accum, g.fast_accum ? "fast" : "split");
  if (!layer.empty()) name.arg(Key::layer, layer);
  register_gpu_benchmark(name, [&env, g, s](benchmark::State& st) { run_fp8_gemm(st, env, g, s); });
}

void add_16bit_gemm(const Env& env, Precision p, const GemmShape& s, std::string_view layer) {
  BenchName name(kTopic, "gemm", p);
  name.gemm(tn_case(p, s).spec.problem);
  if (!layer.empty()) name.arg(Key::layer, layer);
  register_gpu_benchmark(
      name, [&env, p, s](benchmark::State& st) { run_cublaslt_gemm(st, env, tn_case(p, s)); });
}

// ---------------------------------------------------------------------------------------------
// Scaling kernels (fp8_recipe_cases.hpp: one case per kernel, checked against the host)

template <typename In>
void add_recipe_kernel(const Env& env, const RecipeKernel<In>& k, std::size_t n,
                       std::string_view in) {
  const std::string name = BenchName(kTopic, k.name, Precision::fp8)
                               .arg(Key::elements, static_cast<std::int64_t>(n))
                               .arg(Key::in, in);
  register_gpu_benchmark(name, [&env, &k, n, name](benchmark::State& st) {
    require_fp8(env);
    require_memory(env, n * (sizeof(In) + 1),
                   "a scaling pass over " + std::to_string(n) + " elements");
    RecipeBuffers<In> b(env, n, kSeedA);
    run_kernel(st, env, name, k.make(b));
  });
}

// ---------------------------------------------------------------------------------------------
// A recipe's cost beside the GEMM it feeds

// Median seconds of quantizing a BF16 tensor of n elements with `rule` (checked once).
double recipe_seconds(const Env& env, tn::ScaleRule rule, std::size_t n) {
  const std::string recipe(tn::name(rule));
  return once<double>("fp8_recipe|" + recipe + "|" + std::to_string(n), [&] {
    require_memory(env, n * 3, "quantizing " + std::to_string(n) + " BF16 elements");
    const DeviceBuffer<__nv_bfloat16> x = recipe_input<__nv_bfloat16>(env, n, kSeedA);
    DeviceBuffer<__nv_fp8_storage_t> out(n);
    tk::ScaleState st;
    tk::quantize(rule, x.get(), n, tn::Fp8Format::e4m3, out.get(), st, env.stream());
    if (auto wrong = check_amax(st.amax, env.stream()))
      throw Error("the " + recipe + " recipe: " + *wrong);
    return sample_work(env,
                       [&](cudaStream_t s) {
                         tk::quantize(rule, x.get(), n, tn::Fp8Format::e4m3, out.get(), st, s);
                       })
        .median;
  });
}

void run_overhead(benchmark::State& state, const Env& env, tn::ScaleRule rule, const GemmShape& s) {
  require_fp8(env);
  const auto a_n = checked_elements(s.m, s.k), b_n = checked_elements(s.k, s.n);
  const double t = recipe_seconds(env, rule, a_n) + recipe_seconds(env, rule, b_n);
  report_precomputed(state, t);
  // Bytes per element (BF16 in): delayed casts and records amax in one pass, current reads twice.
  const double passes = rule == tn::ScaleRule::current ? 5.0 : 3.0;
  report_bandwidth(state, env, passes * static_cast<double>(a_n + b_n),
                   SampleStats{.count = 1, .median = t});
  const double gemm = baseline_median_seconds(env, fp8_case({}, s));
  set_counter(state, counters::recipe_us, t * 1e6);
  set_counter(state, counters::gemm_us, gemm * 1e6);
  set_counter(state, counters::overhead_pct, 100.0 * t / gemm);
}

// ---------------------------------------------------------------------------------------------
// The block: per-layer options, the selection, end-to-end error

// Time of one layer option at t tokens: the GEMM (verified, cached by the harness) plus, for FP8,
// quantizing the BF16 activation with the recipe (weights are quantized once per optimizer step,
// as Transformer Engine does, so they are not charged).
double layer_seconds(const Env& env, const ts::LayerShape& l, std::int64_t t,
                     const ts::LayerOption& o) {
  const GemmShape s{l.out, t, l.in};
  if (o.precision != Precision::fp8)
    return baseline_seconds(env, fp8_case({}, s), o.precision);  // same TN problem
  return baseline_median_seconds(env, fp8_case({.fast_accum = o.fast_accum()}, s)) +
         recipe_seconds(env, tn::scale_rule(*o.recipe), checked_elements(l.in, t));
}

ts::BlockSelection compute_block(const Env& env, std::int64_t h, std::int64_t t) {
  require_fp8(env);
  require_memory(env, ts::Fp8BlockStudy::bytes_needed(h),
                 "the FP8 block study at hidden " + std::to_string(h));
  const ts::Fp8BlockStudy study(env.lt(), env.gpu().cc_major, env.gpu().cc_minor, h, env.stream());
  return study.select([&](std::size_t layer, std::size_t option) {
    return layer_seconds(env, study.layers()[layer], t, ts::layer_options()[option]);
  });
}

// Every layer and block row reads the same measurement, made once per (h, t) and process.
const ts::BlockSelection& block_result(const Env& env, std::int64_t h, std::int64_t t) {
  return once<ts::BlockSelection>("fp8_block|" + std::to_string(h) + "|" + std::to_string(t),
                                  [&] { return compute_block(env, h, t); });
}

void add_layer_rows(const Env& env, std::int64_t h, std::int64_t t) {
  const std::vector<ts::LayerShape> layers = ts::block_layers(h);
  const std::span<const ts::LayerOption> options = ts::layer_options();
  for (std::size_t li = 0; li < layers.size(); ++li)
    for (std::size_t oi = 0; oi < options.size(); ++oi) {
      BenchName name(kTopic, "layer_" + layers[li].name, options[oi].precision);
      name.arg(Key::hidden, h).arg(Key::tokens, t).arg(Key::layout, "tn");
      if (options[oi].recipe) name.arg(Key::recipe, tn::name(*options[oi].recipe));
      register_gpu_benchmark(name, [&env, h, t, li, oi](benchmark::State& st) {
        const ts::BlockSelection& r = block_result(env, h, t);
        const ts::PrecisionOption& opt = r.layers[li].options[oi];
        report_precomputed(st, opt.seconds);
        set_counter(st, counters::time_us, opt.seconds * 1e6);
        set_counter(st, counters::rel_error_unquantized, opt.rel_error);
        // BF16 on the same TN problem (layer_seconds).
        report_speedup(st, Precision::bf16, r.layers[li].fastest(Precision::bf16)->seconds,
                       opt.seconds);
        set_counter(st, counters::selected, r.selected.layers[li].option == oi ? 1.0 : 0.0);
        st.SetLabel(opt.label());
      });
    }
}

std::string mix_label(const ts::Selection& sel) {
  std::string s;
  for (const ts::LayerChoice& c : sel.layers)
    s += (s.empty() ? "" : " ") + c.layer + "=" + c.chosen.label();
  return s;
}

void add_block_rows(const Env& env, std::int64_t h, std::int64_t t) {
  struct Mix {
    std::string_view name;
    ts::Selection ts::BlockSelection::*selection;
    double ts::BlockSelection::*error;
  };
  static constexpr Mix kMixes[] = {
      {"bf16", &ts::BlockSelection::all_bf16, &ts::BlockSelection::error_bf16},
      {"fp8", &ts::BlockSelection::all_fp8, &ts::BlockSelection::error_fp8},
      {"selected", &ts::BlockSelection::selected, &ts::BlockSelection::error_selected}};
  for (const Mix& mix : kMixes) {
    BenchName name(kTopic, "block", mix.name);
    name.arg(Key::hidden, h).arg(Key::tokens, t).arg(Key::layout, "tn");
    register_gpu_benchmark(name, [&env, h, t, &mix](benchmark::State& st) {
      const ts::BlockSelection& r = block_result(env, h, t);
      const ts::Selection& sel = r.*mix.selection;
      int fp8_layers = 0;
      for (const ts::LayerChoice& c : sel.layers)
        fp8_layers += c.chosen.precision == Precision::fp8;
      report_precomputed(st, sel.total_seconds);
      set_counter(st, counters::block_time_us, sel.total_seconds * 1e6);
      report_speedup(st, Precision::bf16, r.all_bf16.total_seconds, sel.total_seconds);
      set_counter(st, counters::block_rel_error, r.*mix.error);
      set_counter(st, counters::fp8_layers, fp8_layers);
      set_counter(st, counters::within_budget, sel.within_budget() ? 1.0 : 0.0);
      set_counter(st, counters::budget, sel.budget);
      st.SetLabel(mix_label(sel));
    });
  }
}

}  // namespace

TopicHelp topic_help() {
  return {
      "What FP8 Tensor Cores buy and cost (Ada, Hopper, Blackwell): cuBLASLt FP8 GEMMs (E4M3 "
      "and E5M2, fast and split accumulation) beside BF16 and FP16 on the same TN shapes, "
      "their error against the quantized inputs and the FP32 originals, the cost of delayed "
      "and current per-tensor scaling, and the precision a selector picks per transformer "
      "layer within an error budget.",
      "docs/concepts/fp8-scaling.md"};
}

void register_topic(const Env& env) {
  const bool quick = env.quick();
  const Fp8Variant variants[] = {kHeadline,
                                 {CUDA_R_8F_E4M3, CUDA_R_8F_E5M2, CUDA_R_16BF},
                                 {CUDA_R_8F_E5M2, CUDA_R_8F_E4M3, CUDA_R_16BF},
                                 {CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_8F_E4M3},
                                 // Not supported by cuBLASLt: reported as skipped, with the rule.
                                 {CUDA_R_8F_E5M2, CUDA_R_8F_E5M2, CUDA_R_16BF}};

  // Squares: every variant at the headline size (8192; quick 4096), headline elsewhere.
  const std::int64_t variant_size = quick ? 4096 : 8192;
  const std::vector<std::int64_t> squares =
      quick ? std::vector<std::int64_t>{4096, 8192}
            : std::vector<std::int64_t>{1024, 2048, 4096, 8192, 16384};
  for (std::int64_t n : squares) {
    const GemmShape s{n, n, n};
    add_16bit_gemm(env, Precision::bf16, s, "");
    add_16bit_gemm(env, Precision::fp16, s, "");
    for (const Fp8Variant& v : variants) {
      const bool headline = v.name() == kHeadline.name();
      if (n != variant_size && !headline) continue;
      add_fp8_gemm(env, {v, true}, s, "");
      if (!quick || headline) add_fp8_gemm(env, {v, false}, s, "");
    }
  }

  // A transformer block's GEMMs.
  const std::vector<std::int64_t> hiddens =
      quick ? std::vector<std::int64_t>{4096} : std::vector<std::int64_t>{4096, 8192};
  const std::vector<std::int64_t> tokens =
      quick ? std::vector<std::int64_t>{4096} : std::vector<std::int64_t>{4096, 8192, 16384};
  for (std::int64_t h : hiddens)
    for (std::int64_t t : tokens)
      for (const ts::LayerShape& l : ts::block_layers(h)) {
        const GemmShape s{l.out, t, l.in};
        add_16bit_gemm(env, Precision::bf16, s, l.name);
        add_fp8_gemm(env, {kHeadline, true}, s, l.name);
        if (!quick) add_fp8_gemm(env, {kHeadline, false}, s, l.name);
      }

  // Scaling kernels and their overhead.
  const std::vector<std::size_t> sizes =
      quick ? std::vector<std::size_t>{std::size_t{1} << 24}
            : std::vector<std::size_t>{std::size_t{1} << 20, std::size_t{1} << 22,
                                       std::size_t{1} << 24, std::size_t{1} << 26,
                                       std::size_t{1} << 28};
  for (std::size_t n : sizes)
    for (std::size_t i = 0; i < std::size(kRecipeKernels<float>); ++i) {
      add_recipe_kernel(env, kRecipeKernels<__nv_bfloat16>[i], n, "bf16");
      if (!quick) add_recipe_kernel(env, kRecipeKernels<float>[i], n, "fp32");
    }
  const std::vector<std::int64_t> overhead_sizes =
      quick ? std::vector<std::int64_t>{8192} : std::vector<std::int64_t>{4096, 8192, 16384};
  for (std::int64_t n : overhead_sizes)
    for (tn::ScaleRule rule : {tn::ScaleRule::delayed, tn::ScaleRule::current}) {
      const GemmShape s{n, n, n};
      register_gpu_benchmark(
          BenchName(kTopic, "overhead_" + std::string(tn::name(rule)), Precision::fp8)
              .gemm(fp8_case({}, s).spec.problem),
          [&env, rule, s](benchmark::State& st) { run_overhead(st, env, rule, s); });
    }

  // The accumulator: bits per path, and the error as K grows (cuBLASLt here, with FP32 out so
  // that only the accumulation differs between fast and split).
  add_accumulator_rows(env, kTopic);
  const Fp8Variant fp32_out{CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_32F};
  for (std::int64_t k : kAccumSweepKs) {
    if (quick && k != 4096 && k != 16384) continue;
    const GemmShape s{4096, 4096, k};
    for (bool fast : {true, false}) {
      BenchName name(kTopic, "accum_error_cublaslt", Precision::fp8);
      name.gemm(fp8_case({fp32_out, fast}, s).spec.problem)
          .arg(Key::accum, fast ? "fast" : "split");
      register_gpu_benchmark(name, [&env, fp32_out, fast, s](benchmark::State& st) {
        run_fp8_gemm(st, env, {fp32_out, fast}, s);
      });
    }
  }

  // Precision per layer.
  for (std::int64_t h : hiddens)
    for (std::int64_t t : tokens) {
      add_layer_rows(env, h, t);
      add_block_rows(env, h, t);
    }
}

}  // namespace tcbench::bench
