#include "tcbench/studies/fp8_block.hpp"

#include "tcbench/cuda_owners.hpp"
#include "tcbench/error.hpp"
#include "tcbench/kernels/convert.hpp"
#include "tcbench/kernels/fp8_scaling.hpp"
#include "tcbench/random_fill.hpp"
#include "tcbench/verify.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cmath>
#include <limits>

namespace tcbench::studies {
namespace {

namespace tn = tcbench::numerics;
namespace tk = tcbench::kernels;

constexpr std::uint64_t kInputSeed = 0xF8B0;

const LayerOption kOptions[] = {{Precision::bf16, std::nullopt},
                                {Precision::fp16, std::nullopt},
                                {Precision::fp8, tn::Fp8Recipe::delayed},
                                {Precision::fp8, tn::Fp8Recipe::current},
                                {Precision::fp8, tn::Fp8Recipe::delayed_split}};

std::uint64_t weight_seed(std::size_t layer) {
  return 0xB10C0 + layer;
}

// One layer's weights in every format the options read.
struct LayerWeights {
  DeviceBuffer<double> w64;
  DeviceBuffer<float> w32;
  DeviceBuffer<__nv_bfloat16> wbf;
  DeviceBuffer<__half> wh;
  DeviceBuffer<__nv_fp8_storage_t> w8;
  tk::ScaleState w8_scale;
};

// W stored k x m with elements uniform(-a, a), a = sqrt(3 / k): activations keep unit variance
// through the chain (no layer norm in this block), so FP16 never overflows.
std::unique_ptr<LayerWeights> make_weights(const LayerShape& l, std::uint64_t seed,
                                           cudaStream_t s) {
  const std::size_t n = checked_elements(l.in, l.out);
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
  tk::current_scale(w->w32.get(), n, tn::Fp8Format::e4m3, w->w8_scale, s);
  tk::scaled_cast(w->w32.get(), n, w->w8_scale.scale.ptr(), tn::Fp8Format::e4m3,
                  tn::Saturation::satfinite, w->w8.get(), s);
  return w;
}

GemmSpec tn_spec(Precision p, const LayerShape& l, cudaDataType_t out) {
  GemmSpec s = GemmSpec::for_precision(p, l.out, kErrorTokens, l.in);
  s.problem.trans_a = true;
  s.c_type = s.d_type = out;
  return s;
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

double rel_error(const std::vector<float>& got, const std::vector<double>& want) {
  const std::vector<double> g(got.begin(), got.end());
  return compare_host(want, g).rel_error();
}

}  // namespace

struct Fp8BlockStudy::Impl {
  const LtHandle& lt;
  int cc_major, cc_minor;
  cudaStream_t stream;
  std::vector<double> x64;                         // the block's input, h x kErrorTokens
  std::vector<std::vector<double>> reference_out;  // each layer's FP64 output on the chain

  // D (m x n, FP32 or FP64 out) = W^T X through cuBLASLt with spec `spec` (TN).
  void run_gemm(const GemmSpec& spec, const void* w, const void* x, void* d) const {
    const GemmPlan plan(lt, spec, cc_major, cc_minor);
    plan.run(stream, w, x, nullptr, d);
    TCB_CUDA(cudaStreamSynchronize(stream));
  }

  std::vector<double> reference_layer(const LayerShape& l, const LayerWeights& w,
                                      const std::vector<double>& x) const {
    DeviceBuffer<double> dx(x.size()), dd(static_cast<std::size_t>(l.out * kErrorTokens));
    dx.upload(x, stream);
    run_gemm(tn_spec(Precision::fp64, l, CUDA_R_64F), w.w64.get(), dx.get(), dd.get());
    return dd.download(stream);
  }

  // One layer in option `o` on an FP32 input (k x 256): FP32 output, so the error is the inputs'
  // rounding and the accumulation, the same footing for every option.
  std::vector<float> candidate_layer(const LayerShape& l, const LayerWeights& w,
                                     const LayerOption& o, const std::vector<float>& x) const {
    DeviceBuffer<float> dx(x.size()), dd(static_cast<std::size_t>(l.out * kErrorTokens));
    dx.upload(x, stream);
    if (o.precision == Precision::bf16) {
      DeviceBuffer<__nv_bfloat16> xb(x.size());
      tk::convert(dx.get(), x.size(), xb.get(), stream);
      run_gemm(tn_spec(Precision::bf16, l, CUDA_R_32F), w.wbf.get(), xb.get(), dd.get());
    } else if (o.precision == Precision::fp16) {
      DeviceBuffer<__half> xh(x.size());
      tk::convert(dx.get(), x.size(), xh.get(), stream);
      run_gemm(tn_spec(Precision::fp16, l, CUDA_R_32F), w.wh.get(), xh.get(), dd.get());
    } else {
      // The activation's scale: current scaling from its amax; delayed scaling in steady state
      // (last step's amax equal to this one's) gives the same scale. Drift is fp8_drift's study.
      DeviceBuffer<__nv_fp8_storage_t> x8(x.size());
      tk::ScaleState scale;
      tk::quantize(tk::ScaleRule::current, dx.get(), x.size(), tn::Fp8Format::e4m3, x8.get(), scale,
                   stream);
      GemmSpec spec = tn_spec(Precision::fp8, l, CUDA_R_32F);
      spec.a_scale = w.w8_scale.scale_inv.ptr();
      spec.b_scale = scale.scale_inv.ptr();
      spec.fast_accum = o.fast_accum();
      run_gemm(spec, w.w8.get(), x8.get(), dd.get());
    }
    return dd.download(stream);
  }
};

std::vector<LayerShape> block_layers(std::int64_t h) {
  return {{"qkv", 3 * h, h}, {"attn_out", h, h}, {"mlp_up", 4 * h, h}, {"mlp_down", h, 4 * h}};
}

std::span<const LayerOption> layer_options() {
  return kOptions;
}

std::size_t Fp8BlockStudy::bytes_needed(std::int64_t hidden) {
  // The largest layer (4h x h) in FP64, FP32, BF16, FP16 and FP8, plus the activations.
  return checked_elements(4 * hidden, hidden) * (8 + 4 + 2 + 2 + 1) +
         checked_elements(4 * hidden, kErrorTokens) * 16;
}

Fp8BlockStudy::Fp8BlockStudy(const LtHandle& lt, int cc_major, int cc_minor, std::int64_t hidden,
                             cudaStream_t stream)
    : impl_(std::make_unique<Impl>(Impl{lt, cc_major, cc_minor, stream, {}, {}})),
      layers_(block_layers(hidden)) {
  if (hidden <= 0)
    throw InvalidArgument("Fp8BlockStudy: hidden = " + std::to_string(hidden) +
                          " must be positive");
  Impl& m = *impl_;
  m.x64.resize(static_cast<std::size_t>(hidden * kErrorTokens));
  fill_random_host(std::span<double>(m.x64), Distribution::uniform(-1.0f, 1.0f), kInputSeed);
  for (std::size_t li = 0; li < layers_.size(); ++li) {
    const LayerShape& l = layers_[li];
    const auto w = make_weights(l, weight_seed(li), stream);
    const std::vector<double> in =
        li == 0 ? m.x64 : next_input(layers_[li - 1], l, m.reference_out.back());
    const std::vector<double> out = m.reference_layer(l, *w, in);
    const std::vector<float> in32(in.begin(), in.end());
    std::vector<double> errors;
    for (const LayerOption& o : kOptions)
      errors.push_back(rel_error(m.candidate_layer(l, *w, o, in32), out));
    errors_.push_back(std::move(errors));
    m.reference_out.push_back(out);
  }
}

Fp8BlockStudy::~Fp8BlockStudy() = default;

double Fp8BlockStudy::layer_error(std::size_t layer, std::size_t option) const {
  return errors_.at(layer).at(option);
}

double Fp8BlockStudy::chain_error(std::span<const std::size_t> options) const {
  if (options.size() != layers_.size())
    throw InvalidArgument("chain_error: " + std::to_string(options.size()) + " options for " +
                          std::to_string(layers_.size()) + " layers");
  const Impl& m = *impl_;
  std::vector<float> x(m.x64.begin(), m.x64.end());
  for (std::size_t li = 0; li < layers_.size(); ++li) {
    const auto w = make_weights(layers_[li], weight_seed(li), m.stream);
    const std::vector<float> y = m.candidate_layer(layers_[li], *w, kOptions[options[li]], x);
    if (li + 1 == layers_.size()) return rel_error(y, m.reference_out.back());
    x = next_input(layers_[li], layers_[li + 1], y);
  }
  return std::numeric_limits<double>::infinity();
}

BlockSelection Fp8BlockStudy::select(const std::function<double(std::size_t, std::size_t)>& seconds,
                                     double budget) const {
  BlockSelection r;
  for (std::size_t li = 0; li < layers_.size(); ++li) {
    LayerMeasurements lm;
    lm.layer = layers_[li].name;
    for (std::size_t oi = 0; oi < std::size(kOptions); ++oi)
      lm.options.push_back(
          {kOptions[oi].precision, kOptions[oi].recipe, seconds(li, oi), errors_[li][oi]});
    r.layers.push_back(std::move(lm));
  }
  r.selected = select_precisions(r.layers, budget);
  r.all_bf16 = uniform_selection(r.layers, Precision::bf16, std::nullopt, budget);
  r.all_fp8 = uniform_selection(r.layers, Precision::fp8, tn::Fp8Recipe::delayed, budget);
  const auto chain = [this](const Selection& sel) {
    std::vector<std::size_t> options;
    for (const LayerChoice& c : sel.layers) options.push_back(c.option);
    return chain_error(options);
  };
  r.error_bf16 = chain(r.all_bf16);
  r.error_fp8 = chain(r.all_fp8);
  r.error_selected = chain(r.selected);
  return r;
}

}  // namespace tcbench::studies
