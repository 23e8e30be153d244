// fp8: what FP8 tensor cores buy (Ada, Hopper, Blackwell), what they cost in accuracy and in
// scaling work, and which precision each layer of a transformer block should run in.
//
//   gemm_<A>x<B>_<D>/fp8   cuBLASLt FP8 GEMMs (A/B scale pointers; D in BF16, or E4M3 with
//                          D_SCALE and AMAX_D; fast accumulation on and off) on operands
//                          quantized from known FP32 originals with per-tensor current scaling.
//                          Counters: tflops, pct_of_peak (FP8 peak), speedup_vs_bf16, rel_error
//                          (vs the quantized inputs: the GEMM's own error) and
//                          rel_error_unquantized (vs FP32 of the originals: what a user gets)
//   gemm/bf16, gemm/fp16   the same shapes in 16 bits, beside
//   recipe_<kernel>        the scaling kernels (kernels/fp8_scaling.cu): gbps, pct_of_peak DRAM
//   overhead_<recipe>      quantizing A and B with a recipe, as % of the FP8 GEMM it feeds
//   layer_<l>, block       a transformer block's GEMMs (QKV, attention out, MLP up, MLP down) in
//                          every precision, the per-layer selection (numerics/precision_selector)
//                          and the block's time and end-to-end error: all-BF16, all-FP8, selected
// See docs/concepts/fp8-scaling.md for the predictions these numbers are read against.
//
//   build/release/bin/bench_fp8 --quick
//   build/release/bin/bench_fp8 --benchmark_filter='fp8/(layer_|block/)'
#include "tcbench/bench/harness.hpp"
#include "tcbench/gemm_verify.hpp"
#include "tcbench/kernels/convert.hpp"
#include "tcbench/kernels/fp8_scaling.hpp"
#include "tcbench/numerics/fp8_scaling.hpp"
#include "tcbench/numerics/precision_selector.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace tcbench::bench {
namespace {

namespace tn = tcbench::numerics;
namespace tk = tcbench::kernels;

constexpr std::string_view kTopic = "fp8";
constexpr std::uint64_t kSeedA = 0xF8A0, kSeedB = 0xF8B0;

// ---------------------------------------------------------------------------------------------
// Support

// FP8 exists from compute capability 8.9; the sentence is the GEMM validator's, so the rule has one
// home. The scaling kernels are measured only where FP8 GEMMs exist to consume them.
void require_fp8(const Env& env) {
  const GpuSpec& s = env.device().spec;
  if (auto why = GemmSpec::for_precision(Precision::fp8, 256, 256, 256)
                     .why_invalid(s.cc_major, s.cc_minor))
    throw Skipped(*why);
}

tn::Fp8Format fp8_format(cudaDataType_t t) {
  return t == CUDA_R_8F_E5M2 ? tn::Fp8Format::e5m2 : tn::Fp8Format::e4m3;
}

// The harness's FP8 error model assumes FP32 accumulation, which split accumulation (partial sums
// promoted to FP32 periodically) provides. Fast accumulation keeps them in the tensor core's own
// accumulator, about 14 mantissa bits on Hopper (DeepSeek-V3 technical report, arXiv:2412.19437,
// section 3.3.2), so its tolerance is the same random-walk model with u_acc = 2^-14; a dropped
// 128-deep K tile (error sqrt(128 / K)) still fails it at every K here.
std::optional<double> fp8_tolerance(std::int64_t k, bool fast_accum, cudaDataType_t d) {
  if (!fast_accum) return std::nullopt;
  ErrorModel e = error_model(Precision::fp8, k);
  e.u_acc = 0x1p-14;
  if (unit_roundoff(d) > e.u_out) e.u_out = unit_roundoff(d);
  return e.frobenius_tolerance();
}

// One float on the device (scales, amax).
struct DeviceScalar {
  DeviceBuffer<float> buf{1};
  void set(float v, cudaStream_t s) { buf.upload(std::vector<float>{v}, s); }
  float get(cudaStream_t s) const { return buf.download(s)[0]; }
  float* ptr() const { return buf.get(); }
};

// ---------------------------------------------------------------------------------------------
// FP8 GEMMs on quantized FP32 originals

struct Shape {
  std::int64_t m, n, k;
  std::string layer;  // empty for squares
};

struct Fp8Variant {
  cudaDataType_t a, b, d;
  std::string name() const {
    auto f = [](cudaDataType_t t) {
      return t == CUDA_R_8F_E4M3 ? "e4m3" : t == CUDA_R_8F_E5M2 ? "e5m2" : "bf16";
    };
    return std::string("gemm_") + f(a) + "x" + f(b) + "_" + f(d);
  }
};
const Fp8Variant kHeadline{CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF};

std::string shape_suffix(const Shape& s) {
  return s.layer.empty() ? std::string() : "/layer:" + s.layer;
}

// FP32 originals of A and B (uniform(-1, 1), the harness's default for floating point) and their
// per-tensor current scaling, computed on the device with the recipe kernels.
struct QuantizedOperands {
  DeviceBuffer<float> a32, b32;
  DeviceScalar a_scale, b_scale;  // quantizing scales (x * scale -> FP8)
  float a_scale_host = 1, b_scale_host = 1;
  GemmOperands ops;  // the harness's buffers, seen in prepare()
};

float current_scale_on_device(const float* x, std::size_t n, tn::Fp8Format f, DeviceScalar& scale,
                              cudaStream_t stream) {
  DeviceBuffer<unsigned> amax(1);
  DeviceScalar inv;
  tk::reset_amax(amax.get(), stream);
  tk::amax_reduce(x, n, amax.get(), stream);
  tk::compute_scale(amax.get(), tk::ScaleRule::current, tn::fp8_max(f), 0, scale.ptr(), inv.ptr(),
                    stream);
  return scale.get(stream);
}

std::unique_ptr<QuantizedOperands> make_originals(const Env& env, const GemmSpec& spec) {
  GemmProblem p = spec.problem;
  p.resolve();
  const std::size_t a_count = checked_elements(p.effective_lda(), p.a_cols());
  const std::size_t b_count = checked_elements(p.effective_ldb(), p.b_cols());
  require_memory(env, checked_bytes<float>(a_count) + checked_bytes<float>(b_count),
                 "the FP32 originals of a " + p.describe() + " FP8 GEMM");
  auto q = std::make_unique<QuantizedOperands>();
  q->a32 = DeviceBuffer<float>(a_count);
  q->b32 = DeviceBuffer<float>(b_count);
  const cudaStream_t s = env.stream();
  fill_random(q->a32.get(), a_count, Distribution::uniform(-1.0f, 1.0f), kSeedA, s);
  fill_random(q->b32.get(), b_count, Distribution::uniform(-1.0f, 1.0f), kSeedB, s);
  q->a_scale_host =
      current_scale_on_device(q->a32.get(), a_count, fp8_format(spec.a_type), q->a_scale, s);
  q->b_scale_host =
      current_scale_on_device(q->b32.get(), b_count, fp8_format(spec.b_type), q->b_scale, s);
  return q;
}

// A power of two that keeps an FP8 output inside E4M3/E5M2's range: D = A B has elements of
// standard deviation about sqrt(k)/3 for uniform(-1, 1) originals; leave 6 of them below max.
float output_scale(cudaDataType_t d, std::int64_t k) {
  if (!is_fp8_type(d)) return 1.0f;
  const double bound = 2.0 * std::sqrt(static_cast<double>(k));
  return static_cast<float>(std::exp2(std::floor(std::log2(tn::fp8_max(fp8_format(d)) / bound))));
}

GemmCase bf16_baseline_case(const Shape& s) {
  return GemmCase::for_precision(Precision::bf16, s.m, s.n, s.k);
}

void run_fp8_gemm(benchmark::State& state, const Env& env, const Fp8Variant& v, bool fast_accum,
                  const Shape& shape) {
  require_fp8(env);
  GemmCase c = GemmCase::for_precision(Precision::fp8, shape.m, shape.n, shape.k);
  c.spec.a_type = v.a;
  c.spec.b_type = v.b;
  c.spec.d_type = v.d;
  c.spec.fast_accum = fast_accum;
  c.tolerance = fp8_tolerance(shape.k, fast_accum, v.d);
  const GpuSpec& gpu = env.device().spec;
  if (auto why = c.spec.why_invalid(gpu.cc_major, gpu.cc_minor)) throw Skipped(*why);

  const std::unique_ptr<QuantizedOperands> q = make_originals(env, c.spec);
  DeviceScalar amax_d;
  if (is_fp8_type(v.d)) {
    c.d_scale = output_scale(v.d, shape.k);
    c.spec.amax_d = amax_d.ptr();
  }
  // cuBLASLt's A/B_SCALE_POINTER dequantize: the inverse of the quantizing scales.
  c.a_scale = 1.0f / q->a_scale_host;
  c.b_scale = 1.0f / q->b_scale_host;
  QuantizedOperands* qp = q.get();
  const tn::Fp8Format fa = fp8_format(v.a), fb = fp8_format(v.b);
  c.prepare = [qp, fa, fb](cudaStream_t s, const GemmOperands& ops) {
    qp->ops = ops;
    tk::scaled_cast(qp->a32.get(), qp->a32.size(), qp->a_scale.ptr(), fa, tn::Saturation::satfinite,
                    ops.a_as<__nv_fp8_storage_t>(), s);
    tk::scaled_cast(qp->b32.get(), qp->b32.size(), qp->b_scale.ptr(), fb, tn::Saturation::satfinite,
                    ops.b_as<__nv_fp8_storage_t>(), s);
  };
  const float d_scale = c.d_scale;
  const cudaDataType_t d_type = v.d;
  const bool has_amax = is_fp8_type(v.d);
  c.after_timing = [&env, qp, d_scale, d_type, has_amax, &amax_d](
                       benchmark::State& st, const std::function<void(cudaStream_t)>& run) {
    // The same GEMM against the FP32 product of the originals (the error a user gets).
    GemmOutputCheck check;
    check.problem = qp->ops.problem;
    check.a_type = CUDA_R_32F;
    check.b_type = CUDA_R_32F;
    check.d_type = d_type;
    check.a = qp->a32.get();
    check.b = qp->b32.get();
    check.d = qp->ops.d;
    check.scale = d_scale;
    const VerifyStats unquantized =
        verify_gemm(check, run, std::numeric_limits<double>::infinity(), env.stream());
    st.counters["rel_error_unquantized"] = unquantized.rel_error();
    if (has_amax) st.counters["amax_d"] = amax_d.get(env.stream());
  };
  const GemmResult r = run_cublaslt_gemm(state, env, c);
  state.counters["speedup_vs_bf16"] =
      baseline_median_seconds(env, bf16_baseline_case(shape)) / r.seconds.median;
}

void add_fp8_gemm(const Env& env, const Fp8Variant& v, bool fast, const Shape& s) {
  register_gpu_benchmark(
      env,
      gemm_name(kTopic, v.name(), Precision::fp8, s.m, s.n, s.k) +
          "/accum:" + (fast ? "fast" : "split") + shape_suffix(s),
      [&env, v, fast, s](benchmark::State& st) { run_fp8_gemm(st, env, v, fast, s); });
}

void add_16bit_gemm(const Env& env, Precision p, const Shape& s) {
  register_gpu_benchmark(env, gemm_name(kTopic, "gemm", p, s.m, s.n, s.k) + shape_suffix(s),
                         [&env, p, s](benchmark::State& st) {
                           run_cublaslt_gemm(st, env, GemmCase::for_precision(p, s.m, s.n, s.k));
                         });
}

// ---------------------------------------------------------------------------------------------
// Transformer block shapes: column-major D (features x tokens) = W^T X with W stored k x m
// (PyTorch's [out, in] row-major), i.e. the TN layout FP8 requires.

struct LayerShape {
  std::string name;
  std::int64_t out, in;  // m and k
};
std::vector<LayerShape> block_layers(std::int64_t h) {
  return {{"qkv", 3 * h, h}, {"attn_out", h, h}, {"mlp_up", 4 * h, h}, {"mlp_down", h, 4 * h}};
}

// ---------------------------------------------------------------------------------------------
// Scaling kernels, per tensor size

enum class RecipeKernel { amax, cast, cast_record_amax };
std::string_view kernel_name(RecipeKernel k) {
  switch (k) {
    case RecipeKernel::amax:
      return "amax";
    case RecipeKernel::cast:
      return "cast";
    case RecipeKernel::cast_record_amax:
      return "cast_record_amax";
  }
  return "?";
}

template <typename In>
void run_recipe_kernel(benchmark::State& state, const Env& env, RecipeKernel kernel,
                       std::size_t n) {
  require_fp8(env);
  require_memory(env, n * (sizeof(In) + 1),
                 "a scaling pass over " + std::to_string(n) + " elements");
  DeviceBuffer<In> x(n);
  DeviceBuffer<__nv_fp8_storage_t> out(n);
  DeviceBuffer<unsigned> amax(1);
  DeviceScalar scale;
  const cudaStream_t s = env.stream();
  fill_random(x.get(), n, Distribution::uniform(-1.0f, 1.0f), kSeedA, s);
  scale.set(448.0f, s);
  const auto work = [&](cudaStream_t st) {
    switch (kernel) {
      case RecipeKernel::amax:
        tk::reset_amax(amax.get(), st);
        tk::amax_reduce(x.get(), n, amax.get(), st);
        break;
      case RecipeKernel::cast:
        tk::scaled_cast(x.get(), n, scale.ptr(), tn::Fp8Format::e4m3, tn::Saturation::satfinite,
                        out.get(), st);
        break;
      case RecipeKernel::cast_record_amax:
        tk::reset_amax(amax.get(), st);
        tk::scaled_cast_record_amax(x.get(), n, scale.ptr(), tn::Fp8Format::e4m3, out.get(),
                                    amax.get(), st);
        break;
    }
  };
  const SampleStats t = measure(state, env, work);
  const double bytes =
      static_cast<double>(n) * (sizeof(In) + (kernel == RecipeKernel::amax ? 0.0 : 1.0));
  report_bandwidth(state, env, bytes, t);
  // The kernels' results were checked bit for bit against the host in the device tests; here a
  // cheap sanity check that the timed kernel really ran on this data.
  if (kernel != RecipeKernel::cast) {
    const float a = tn::amax_from_bits(amax.download(s)[0]);
    if (!(a > 0.9f && a <= 1.0f))
      throw Error("amax of uniform(-1, 1) data came back as " + std::to_string(a));
  }
}

template <typename In>
void add_recipe_kernel(const Env& env, RecipeKernel k, std::size_t n, std::string_view in) {
  register_gpu_benchmark(
      env,
      std::string(kTopic) + "/recipe_" + std::string(kernel_name(k)) +
          "/fp8/n:" + std::to_string(n) + "/in:" + std::string(in),
      [&env, k, n](benchmark::State& st) { run_recipe_kernel<In>(st, env, k, n); });
}

// A recipe's work to quantize one BF16 tensor of n elements into `out`, scales on the device.
struct RecipeBuffers {
  DeviceBuffer<unsigned> amax{1};
  DeviceScalar scale, scale_inv;
};
void quantize_with_recipe(const std::string& recipe, const __nv_bfloat16* x, std::size_t n,
                          __nv_fp8_storage_t* out, RecipeBuffers& rb, cudaStream_t s) {
  tk::reset_amax(rb.amax.get(), s);
  if (recipe == "current") {
    tk::amax_reduce(x, n, rb.amax.get(), s);
    tk::compute_scale(rb.amax.get(), tk::ScaleRule::current, 448.0f, 0, rb.scale.ptr(),
                      rb.scale_inv.ptr(), s);
    tk::scaled_cast(x, n, rb.scale.ptr(), tn::Fp8Format::e4m3, tn::Saturation::satfinite, out, s);
  } else {  // delayed: last step's scale, this step's amax recorded, next scale
            // computed
    tk::scaled_cast_record_amax(x, n, rb.scale.ptr(), tn::Fp8Format::e4m3, out, rb.amax.get(), s);
    tk::compute_scale(rb.amax.get(), tk::ScaleRule::delayed, 448.0f, 0, rb.scale.ptr(),
                      rb.scale_inv.ptr(), s);
  }
}

// Median seconds of quantizing a BF16 tensor of n elements with `recipe`.
double recipe_seconds(const Env& env, const std::string& recipe, std::size_t n) {
  require_memory(env, n * 3, "quantizing " + std::to_string(n) + " BF16 elements");
  DeviceBuffer<__nv_bfloat16> x(n);
  DeviceBuffer<__nv_fp8_storage_t> out(n);
  RecipeBuffers rb;
  fill_random(x.get(), n, Distribution::uniform(-1.0f, 1.0f), kSeedB, env.stream());
  rb.scale.set(448.0f, env.stream());
  return sample_work(
             env,
             [&](cudaStream_t s) { quantize_with_recipe(recipe, x.get(), n, out.get(), rb, s); })
      .median;
}

GemmCase fp8_forward_case(std::int64_t m, std::int64_t n, std::int64_t k, bool fast_accum) {
  GemmCase c = GemmCase::for_precision(Precision::fp8, m, n, k);
  c.spec.fast_accum = fast_accum;
  c.tolerance = fp8_tolerance(k, fast_accum, c.spec.d_type);
  return c;
}

void run_overhead(benchmark::State& state, const Env& env, const std::string& recipe,
                  const Shape& s) {
  require_fp8(env);
  const std::size_t a_n = static_cast<std::size_t>(s.m * s.k),
                    b_n = static_cast<std::size_t>(s.k * s.n);
  require_memory(env, (a_n + b_n) * 3,
                 "quantizing the operands of a " + std::to_string(s.m) + "x" + std::to_string(s.n) +
                     "x" + std::to_string(s.k) + " GEMM");
  DeviceBuffer<__nv_bfloat16> a(a_n), b(b_n);
  DeviceBuffer<__nv_fp8_storage_t> qa(a_n), qb(b_n);
  RecipeBuffers ra, rbuf;
  fill_random(a.get(), a_n, Distribution::uniform(-1.0f, 1.0f), kSeedA, env.stream());
  fill_random(b.get(), b_n, Distribution::uniform(-1.0f, 1.0f), kSeedB, env.stream());
  ra.scale.set(448.0f, env.stream());
  rbuf.scale.set(448.0f, env.stream());
  const SampleStats t = measure(state, env, [&](cudaStream_t st) {
    quantize_with_recipe(recipe, a.get(), a_n, qa.get(), ra, st);
    quantize_with_recipe(recipe, b.get(), b_n, qb.get(), rbuf, st);
  });
  const double passes = recipe == "current" ? 5.0 : 3.0;  // bytes per element (BF16 in)
  report_bandwidth(state, env, passes * static_cast<double>(a_n + b_n), t);
  const double gemm = baseline_median_seconds(env, fp8_forward_case(s.m, s.n, s.k, true));
  state.counters["recipe_us"] = t.median * 1e6;
  state.counters["gemm_us"] = gemm * 1e6;
  state.counters["overhead_pct"] = 100.0 * t.median / gemm;
}

void add_overhead(const Env& env, const std::string& recipe, const Shape& s) {
  register_gpu_benchmark(
      env, gemm_name(kTopic, "overhead_" + recipe, Precision::fp8, s.m, s.n, s.k),
      [&env, recipe, s](benchmark::State& st) { run_overhead(st, env, recipe, s); });
}

// ---------------------------------------------------------------------------------------------
// The block: per-layer options, the selection, end-to-end error

// The options each layer can run in. FP8 with TE's forward default (fast accumulation) and each
// recipe, plus delayed scaling with split accumulation.
struct LayerOption {
  Precision precision;
  std::string variant;  // recipe for FP8
  bool fast_accum = true;
};
const LayerOption kOptions[] = {{Precision::bf16, ""},
                                {Precision::fp16, ""},
                                {Precision::fp8, "delayed", true},
                                {Precision::fp8, "current", true},
                                {Precision::fp8, "delayed_split", false}};

std::string recipe_of(const LayerOption& o) {
  return o.variant == "delayed_split" ? "delayed" : o.variant;
}

constexpr std::int64_t kErrorTokens = 256;  // columns the error chain computes (tokens are
                                            // independent in this block, so 256 represent all)

struct BlockResult {
  std::vector<tn::LayerMeasurements> layers;
  tn::Selection all_bf16, all_fp8, selected;
  double error_bf16 = 0, error_fp8 = 0, error_selected = 0;
};

// Time of one layer option at t tokens: the GEMM (verified, cached by the harness) plus, for FP8,
// quantizing the BF16 activation with the recipe (weights are quantized once per optimizer step, as
// Transformer Engine does, so they are not charged).
double layer_seconds(const Env& env, const LayerShape& l, std::int64_t t, const LayerOption& o) {
  if (o.precision != Precision::fp8) {
    GemmCase c = GemmCase::for_precision(o.precision, l.out, t, l.in);
    c.spec.problem.trans_a = true;
    return baseline_median_seconds(env, c);
  }
  return baseline_median_seconds(env, fp8_forward_case(l.out, t, l.in, o.fast_accum)) +
         recipe_seconds(env, recipe_of(o), static_cast<std::size_t>(l.in * t));
}

// The error path: weights and activations as host/device FP32, products in FP64 as reference.
struct LayerWeights {
  DeviceBuffer<double> w64;
  DeviceBuffer<float> w32;
  DeviceBuffer<__nv_bfloat16> wbf;
  DeviceBuffer<__half> wh;
  DeviceBuffer<__nv_fp8_storage_t> w8;
  DeviceScalar w8_scale, w8_scale_inv;
};

// W stored k x m with elements uniform(-a, a), a = sqrt(3 / k): activations keep unit variance
// through the chain (no layer norm in this block), so FP16 never overflows.
std::unique_ptr<LayerWeights> make_weights(const Env& env, const LayerShape& l,
                                           std::uint64_t seed) {
  const std::size_t n = static_cast<std::size_t>(l.in * l.out);
  require_memory(env, n * (8 + 4 + 2 + 2 + 1), "the weights of a " + l.name + " layer");
  const cudaStream_t s = env.stream();
  const float a = std::sqrt(3.0f / static_cast<float>(l.in));
  const Distribution d = Distribution::uniform(-a, a);
  auto w = std::make_unique<LayerWeights>();
  w->w64 = DeviceBuffer<double>(n);
  w->w32 = DeviceBuffer<float>(n);
  w->wbf = DeviceBuffer<__nv_bfloat16>(n);
  w->wh = DeviceBuffer<__half>(n);
  w->w8 = DeviceBuffer<__nv_fp8_storage_t>(n);
  fill_random(w->w64.get(), n, d, seed, s);
  fill_random(w->w32.get(), n, d, seed, s);
  fill_random(w->wbf.get(), n, d, seed, s);
  fill_random(w->wh.get(), n, d, seed, s);
  current_scale_on_device(w->w32.get(), n, tn::Fp8Format::e4m3, w->w8_scale, s);
  w->w8_scale_inv.set(1.0f / w->w8_scale.get(s), s);
  tk::scaled_cast(w->w32.get(), n, w->w8_scale.ptr(), tn::Fp8Format::e4m3,
                  tn::Saturation::satfinite, w->w8.get(), s);
  return w;
}

// D (m x n, FP32 or FP64 out) = W^T X through cuBLASLt with spec `spec` (TN).
void run_gemm(const Env& env, GemmSpec spec, const void* w, const void* x, void* d) {
  const GpuSpec& g = env.device().spec;
  const GemmPlan plan(env.lt(), spec, g.cc_major, g.cc_minor);
  plan.run(env.stream(), w, x, nullptr, d);
  TCB_CUDA(cudaStreamSynchronize(env.stream()));
}

GemmSpec tn_spec(Precision p, const LayerShape& l, cudaDataType_t out) {
  GemmSpec s = GemmSpec::for_precision(p, l.out, kErrorTokens, l.in);
  s.problem.trans_a = true;
  s.c_type = s.d_type = out;
  return s;
}

// The FP64 reference of one layer on an FP64 input (k x 256), on the device.
std::vector<double> reference_layer(const Env& env, const LayerShape& l, const LayerWeights& w,
                                    const std::vector<double>& x) {
  DeviceBuffer<double> dx(x.size()), dd(static_cast<std::size_t>(l.out * kErrorTokens));
  dx.upload(x, env.stream());
  run_gemm(env, tn_spec(Precision::fp64, l, CUDA_R_64F), w.w64.get(), dx.get(), dd.get());
  return dd.download(env.stream());
}

// One layer in option `o` on an FP32 input (k x 256): FP32 output, so the error is the inputs'
// rounding and the accumulation, the same footing for every option.
std::vector<float> candidate_layer(const Env& env, const LayerShape& l, const LayerWeights& w,
                                   const LayerOption& o, const std::vector<float>& x) {
  const cudaStream_t s = env.stream();
  DeviceBuffer<float> dx(x.size()), dd(static_cast<std::size_t>(l.out * kErrorTokens));
  dx.upload(x, s);
  if (o.precision == Precision::bf16) {
    DeviceBuffer<__nv_bfloat16> xb(x.size());
    tk::convert(dx.get(), x.size(), xb.get(), s);
    run_gemm(env, tn_spec(Precision::bf16, l, CUDA_R_32F), w.wbf.get(), xb.get(), dd.get());
  } else if (o.precision == Precision::fp16) {
    DeviceBuffer<__half> xh(x.size());
    tk::convert(dx.get(), x.size(), xh.get(), s);
    run_gemm(env, tn_spec(Precision::fp16, l, CUDA_R_32F), w.wh.get(), xh.get(), dd.get());
  } else {
    // The activation's scale: current scaling from its amax; delayed scaling in steady state (last
    // step's amax equal to this one's) gives the same scale. Drift is fp8_drift's study.
    DeviceBuffer<__nv_fp8_storage_t> x8(x.size());
    DeviceScalar scale, inv;
    current_scale_on_device(dx.get(), x.size(), tn::Fp8Format::e4m3, scale, s);
    inv.set(1.0f / scale.get(s), s);
    tk::scaled_cast(dx.get(), x.size(), scale.ptr(), tn::Fp8Format::e4m3, tn::Saturation::satfinite,
                    x8.get(), s);
    GemmSpec spec = tn_spec(Precision::fp8, l, CUDA_R_32F);
    spec.a_scale = w.w8_scale_inv.ptr();
    spec.b_scale = inv.ptr();
    spec.fast_accum = o.fast_accum;
    run_gemm(env, spec, w.w8.get(), x8.get(), dd.get());
  }
  return dd.download(s);
}

template <typename T>
double rel_error(const std::vector<T>& got, const std::vector<double>& want) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double g = static_cast<double>(got[i]);
    num += (g - want[i]) * (g - want[i]);
    den += want[i] * want[i];
  }
  return std::isfinite(num) && den > 0 ? std::sqrt(num / den)
                                       : std::numeric_limits<double>::infinity();
}

// The input of the next layer: attention out reads the V third of QKV's output (this block has no
// attention mixing: tokens stay independent), the others read the whole previous output.
template <typename T>
std::vector<T> next_input(const LayerShape& from, const LayerShape& to, const std::vector<T>& y) {
  if (from.name != "qkv") return y;
  std::vector<T> v(static_cast<std::size_t>(to.in * kErrorTokens));
  const std::int64_t h = to.in;
  for (std::int64_t j = 0; j < kErrorTokens; ++j)
    for (std::int64_t i = 0; i < h; ++i)
      v[static_cast<std::size_t>(j * h + i)] = y[static_cast<std::size_t>(j * 3 * h + 2 * h + i)];
  return v;
}

std::uint64_t weight_seed(std::size_t layer) {
  return 0xB10C0 + layer;
}

BlockResult compute_block(const Env& env, std::int64_t h, std::int64_t t) {
  require_fp8(env);
  const std::vector<LayerShape> layers = block_layers(h);
  BlockResult r;
  // Timings.
  for (const LayerShape& l : layers) {
    tn::LayerMeasurements lm;
    lm.layer = l.name;
    for (const LayerOption& o : kOptions)
      lm.options.push_back({o.precision, o.variant, layer_seconds(env, l, t, o), 0.0});
    r.layers.push_back(std::move(lm));
  }
  // Errors of each layer alone, on the reference chain's input, and the reference chain.
  std::vector<double> x64(static_cast<std::size_t>(h * kErrorTokens));
  fill_random_host(std::span<double>(x64), Distribution::uniform(-1.0f, 1.0f), kSeedB);
  std::vector<std::vector<double>> reference_out;
  for (std::size_t li = 0; li < layers.size(); ++li) {
    const LayerShape& l = layers[li];
    const auto w = make_weights(env, l, weight_seed(li));
    const std::vector<double> in =
        li == 0 ? x64 : next_input(layers[li - 1], l, reference_out.back());
    const std::vector<double> out = reference_layer(env, l, *w, in);
    const std::vector<float> in32(in.begin(), in.end());
    for (std::size_t oi = 0; oi < std::size(kOptions); ++oi)
      r.layers[li].options[oi].rel_error =
          rel_error(candidate_layer(env, l, *w, kOptions[oi], in32), out);
    reference_out.push_back(out);
  }
  r.selected = tn::select_precisions(r.layers);
  r.all_bf16 = tn::uniform_selection(r.layers, Precision::bf16);
  r.all_fp8 = tn::uniform_selection(r.layers, Precision::fp8, "delayed");
  // End to end: each mix run through the whole chain from the same input.
  auto chain_error = [&](const tn::Selection& sel) {
    std::vector<float> x(x64.begin(), x64.end());
    for (std::size_t li = 0; li < layers.size(); ++li) {
      const auto w = make_weights(env, layers[li], weight_seed(li));
      const std::vector<float> y =
          candidate_layer(env, layers[li], *w, kOptions[sel.layers[li].option], x);
      if (li + 1 < layers.size())
        x = next_input(layers[li], layers[li + 1], y);
      else
        return rel_error(y, reference_out.back());
    }
    return std::numeric_limits<double>::infinity();
  };
  r.error_bf16 = chain_error(r.all_bf16);
  r.error_fp8 = chain_error(r.all_fp8);
  r.error_selected = chain_error(r.selected);
  return r;
}

// Every layer and block row reads the same measurement, made once per (h, t) and process.
const BlockResult& block_result(const Env& env, std::int64_t h, std::int64_t t) {
  static std::mutex mutex;
  static std::map<std::pair<std::int64_t, std::int64_t>, BlockResult> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find({h, t});
  if (it == cache.end()) it = cache.emplace(std::pair{h, t}, compute_block(env, h, t)).first;
  return it->second;
}

std::string block_args(std::int64_t h, std::int64_t t) {
  return "/h:" + std::to_string(h) + "/t:" + std::to_string(t);
}

void report_time(benchmark::State& state, double seconds) {
  for (auto _ : state) state.SetIterationTime(seconds);
}

void add_layer_rows(const Env& env, std::int64_t h, std::int64_t t) {
  const std::vector<LayerShape> layers = block_layers(h);
  for (std::size_t li = 0; li < layers.size(); ++li)
    for (std::size_t oi = 0; oi < std::size(kOptions); ++oi) {
      const LayerOption& o = kOptions[oi];
      const std::string name = std::string(kTopic) + "/layer_" + layers[li].name + "/" +
                               std::string(tcbench::name(o.precision)) + block_args(h, t) +
                               (o.variant.empty() ? "" : "/recipe:" + o.variant);
      register_gpu_benchmark(env, name, [&env, h, t, li, oi](benchmark::State& st) {
        const BlockResult& r = block_result(env, h, t);
        const tn::PrecisionOption& opt = r.layers[li].options[oi];
        const double bf16 = r.layers[li].options[0].seconds;
        report_time(st, opt.seconds);
        st.counters["time_us"] = opt.seconds * 1e6;
        st.counters["rel_error_unquantized"] = opt.rel_error;
        st.counters["speedup_vs_bf16"] = bf16 / opt.seconds;
        st.counters["selected"] = r.selected.layers[li].option == oi ? 1.0 : 0.0;
        st.SetLabel(opt.label());
      });
    }
}

std::string mix_label(const tn::Selection& sel) {
  std::string s;
  for (const tn::LayerChoice& c : sel.layers)
    s += (s.empty() ? "" : " ") + c.layer + "=" + c.chosen.label();
  return s;
}

void add_block_rows(const Env& env, std::int64_t h, std::int64_t t) {
  for (std::string_view mix : {"bf16", "fp8", "selected"}) {
    register_gpu_benchmark(
        env, std::string(kTopic) + "/block/" + std::string(mix) + block_args(h, t),
        [&env, h, t, mix](benchmark::State& st) {
          const BlockResult& r = block_result(env, h, t);
          const tn::Selection& sel = mix == "bf16"  ? r.all_bf16
                                     : mix == "fp8" ? r.all_fp8
                                                    : r.selected;
          const double err = mix == "bf16"  ? r.error_bf16
                             : mix == "fp8" ? r.error_fp8
                                            : r.error_selected;
          int fp8_layers = 0;
          for (const tn::LayerChoice& c : sel.layers)
            fp8_layers += c.chosen.precision == Precision::fp8;
          report_time(st, sel.total_seconds);
          st.counters["block_time_us"] = sel.total_seconds * 1e6;
          st.counters["speedup_vs_bf16"] = r.all_bf16.total_seconds / sel.total_seconds;
          st.counters["block_rel_error"] = err;
          st.counters["fp8_layers"] = fp8_layers;
          st.counters["within_budget"] = sel.within_budget() ? 1.0 : 0.0;
          st.counters["budget"] = sel.budget;
          st.SetLabel(mix_label(sel));
        });
  }
}

}  // namespace

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
  std::vector<std::int64_t> squares =
      quick ? std::vector<std::int64_t>{4096, 8192}
            : std::vector<std::int64_t>{1024, 2048, 4096, 8192, 16384};
  for (std::int64_t n : squares) {
    const Shape s{n, n, n, ""};
    add_16bit_gemm(env, Precision::bf16, s);
    add_16bit_gemm(env, Precision::fp16, s);
    for (const Fp8Variant& v : variants) {
      if (n != variant_size && v.name() != kHeadline.name()) continue;
      add_fp8_gemm(env, v, true, s);
      if (!quick || v.name() == kHeadline.name()) add_fp8_gemm(env, v, false, s);
    }
  }

  // A transformer block's GEMMs.
  const std::vector<std::int64_t> hiddens =
      quick ? std::vector<std::int64_t>{4096} : std::vector<std::int64_t>{4096, 8192};
  const std::vector<std::int64_t> tokens =
      quick ? std::vector<std::int64_t>{4096} : std::vector<std::int64_t>{4096, 8192, 16384};
  for (std::int64_t h : hiddens)
    for (std::int64_t t : tokens)
      for (const LayerShape& l : block_layers(h)) {
        Shape s{l.out, t, l.in, l.name};
        add_16bit_gemm(env, Precision::bf16, s);
        add_fp8_gemm(env, kHeadline, true, s);
        if (!quick) add_fp8_gemm(env, kHeadline, false, s);
      }

  // Scaling kernels and their overhead.
  const std::vector<std::size_t> sizes =
      quick ? std::vector<std::size_t>{std::size_t{1} << 24}
            : std::vector<std::size_t>{std::size_t{1} << 20, std::size_t{1} << 22,
                                       std::size_t{1} << 24, std::size_t{1} << 26,
                                       std::size_t{1} << 28};
  for (std::size_t n : sizes)
    for (RecipeKernel k :
         {RecipeKernel::amax, RecipeKernel::cast, RecipeKernel::cast_record_amax}) {
      add_recipe_kernel<__nv_bfloat16>(env, k, n, "bf16");
      if (!quick) add_recipe_kernel<float>(env, k, n, "fp32");
    }
  const std::vector<std::int64_t> overhead_sizes =
      quick ? std::vector<std::int64_t>{8192} : std::vector<std::int64_t>{4096, 8192, 16384};
  for (std::int64_t n : overhead_sizes)
    for (const char* recipe : {"delayed", "current"}) add_overhead(env, recipe, {n, n, n, ""});

  // Precision per layer.
  for (std::int64_t h : hiddens)
    for (std::int64_t t : tokens) {
      add_layer_rows(env, h, t);
      add_block_rows(env, h, t);
    }
}

}  // namespace tcbench::bench
