#include "tcbench/studies/mlp.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "tcbench/numerics/quantization.hpp"
#include "tcbench/numerics/random.hpp"

namespace tcbench::studies {
namespace {

// Dot product with four partial sums: a single running sum is bound by the add latency, and
// this loop is most of the training time. The order is fixed, so results stay deterministic.
float dot(const float* a, const float* b, std::size_t n) {
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
  std::size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    s0 += a[k] * b[k];
    s1 += a[k + 1] * b[k + 1];
    s2 += a[k + 2] * b[k + 2];
    s3 += a[k + 3] * b[k + 3];
  }
  for (; k < n; ++k) s0 += a[k] * b[k];
  return (s0 + s1) + (s2 + s3);
}

// Per-channel fake quantization of a weight matrix (max calibration per row).
std::vector<float> fake_quant_weights(const DenseLayer& l) {
  std::vector<float> wq(l.w.size());
  for (std::size_t o = 0; o < l.out; ++o) {
    float amax_row = 0.0f;
    for (std::size_t i = 0; i < l.in; ++i)
      amax_row = std::max(amax_row, std::fabs(l.w[o * l.in + i]));
    for (std::size_t i = 0; i < l.in; ++i)
      wq[o * l.in + i] = fake_quant_int8(l.w[o * l.in + i], amax_row);
  }
  return wq;
}

}  // namespace

Dataset make_outlier_dataset(const OutlierDataSpec& spec, std::uint64_t split_seed,
                             std::size_t samples) {
  if (spec.outlier_channels >= spec.features || spec.classes < 2)
    throw std::invalid_argument(
        "make_outlier_dataset: need classes >= 2 and fewer outlier "
        "channels (" +
        std::to_string(spec.outlier_channels) + ") than features (" +
        std::to_string(spec.features) + ")");
  RandomStream task(spec.seed);
  const std::size_t informative = spec.features - spec.outlier_channels;
  std::vector<float> centroids(spec.classes * informative);
  for (float& c : centroids) c = static_cast<float>(task.normal() * spec.centroid_spread);

  Dataset d{spec.features, spec.classes, std::vector<float>(samples * spec.features),
            std::vector<int>(samples)};
  RandomStream rng(split_seed ^ (spec.seed * 0x2545f4914f6cdd1dull));
  for (std::size_t s = 0; s < samples; ++s) {
    const std::size_t c = rng.below(spec.classes);
    d.y[s] = static_cast<int>(c);
    float* x = d.x.data() + s * spec.features;
    for (std::size_t f = 0; f < informative; ++f)
      x[f] = centroids[c * informative + f] + static_cast<float>(rng.normal());
    for (std::size_t f = informative; f < spec.features; ++f) {
      double v = 0.3 * rng.normal();
      if (rng.uniform() < spec.spike_rate) {
        const double mag = spec.spike_min + (spec.spike_max - spec.spike_min) * rng.uniform();
        v = rng.uniform() < 0.5 ? -mag : mag;
      }
      x[f] = static_cast<float>(v);
    }
  }
  return d;
}

Mlp make_mlp(std::span<const std::size_t> widths, std::uint64_t seed) {
  if (widths.size() < 2) throw std::invalid_argument("make_mlp: need at least two widths");
  RandomStream rng(seed);
  Mlp m;
  for (std::size_t l = 0; l + 1 < widths.size(); ++l) {
    DenseLayer layer{widths[l], widths[l + 1], std::vector<float>(widths[l] * widths[l + 1]),
                     std::vector<float>(widths[l + 1], 0.0f)};
    const double std_dev = std::sqrt(2.0 / static_cast<double>(widths[l]));
    for (float& w : layer.w) w = static_cast<float>(rng.normal() * std_dev);
    m.layers.push_back(std::move(layer));
  }
  return m;
}

int argmax(std::span<const float> logits) {
  return static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

std::vector<float> forward_fp32(const Mlp& model, std::span<const float> x,
                                std::vector<std::vector<float>>* inputs_of_layer) {
  std::vector<float> cur(x.begin(), x.end());
  if (inputs_of_layer) inputs_of_layer->clear();
  for (std::size_t li = 0; li < model.layers.size(); ++li) {
    const DenseLayer& l = model.layers[li];
    if (inputs_of_layer) inputs_of_layer->push_back(cur);
    std::vector<float> next(l.out);
    for (std::size_t o = 0; o < l.out; ++o) {
      const float acc = l.b[o] + dot(l.w.data() + o * l.in, cur.data(), l.in);
      next[o] = (li + 1 < model.layers.size() && acc < 0.0f) ? 0.0f : acc;
    }
    cur = std::move(next);
  }
  return cur;
}

double train(Mlp& model, const Dataset& data, const TrainOptions& opt) {
  const std::size_t L = model.layers.size();
  if (data.features != model.inputs() || data.classes != model.outputs())
    throw std::invalid_argument("train: data set (" + std::to_string(data.features) + " -> " +
                                std::to_string(data.classes) + ") does not fit the model (" +
                                std::to_string(model.inputs()) + " -> " +
                                std::to_string(model.outputs()) + ")");
  if (opt.fake_quant.active() && opt.fake_quant.activation_amax.size() != L)
    throw std::invalid_argument("train: fake quantization needs one activation amax per layer");

  std::vector<std::vector<float>> grad_w(L), grad_b(L), vel_w(L), vel_b(L);
  for (std::size_t l = 0; l < L; ++l) {
    grad_w[l].assign(model.layers[l].w.size(), 0.0f);
    vel_w[l].assign(model.layers[l].w.size(), 0.0f);
    grad_b[l].assign(model.layers[l].out, 0.0f);
    vel_b[l].assign(model.layers[l].out, 0.0f);
  }
  std::vector<std::size_t> order(data.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  RandomStream shuffle(opt.shuffle_seed);

  // Per-sample buffers: the input each layer saw (fake-quantized under QAT), its pre-activation.
  std::vector<std::vector<float>> in(L), pre(L), wq(L);
  const std::size_t steps_per_epoch = (data.size() + opt.batch - 1) / opt.batch;
  const double total_steps = static_cast<double>(steps_per_epoch) * opt.epochs;
  std::size_t step = 0;
  double epoch_loss = 0.0;
  for (int epoch = 0; epoch < opt.epochs; ++epoch) {
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[shuffle.below(i)]);
    epoch_loss = 0.0;
    for (std::size_t start = 0; start < order.size(); start += opt.batch, ++step) {
      const std::size_t end = std::min(order.size(), start + opt.batch);
      for (std::size_t l = 0; l < L; ++l) {
        std::fill(grad_w[l].begin(), grad_w[l].end(), 0.0f);
        std::fill(grad_b[l].begin(), grad_b[l].end(), 0.0f);
        wq[l] = opt.fake_quant.active() ? fake_quant_weights(model.layers[l]) : model.layers[l].w;
      }
      for (std::size_t s = start; s < end; ++s) {
        const std::size_t idx = order[s];
        std::vector<float> cur(data.row(idx).begin(), data.row(idx).end());
        for (std::size_t l = 0; l < L; ++l) {
          const DenseLayer& layer = model.layers[l];
          in[l] = cur;
          if (opt.fake_quant.active())
            for (float& v : in[l]) v = fake_quant_int8(v, opt.fake_quant.activation_amax[l]);
          pre[l].assign(layer.out, 0.0f);
          for (std::size_t o = 0; o < layer.out; ++o) {
            pre[l][o] = layer.b[o] + dot(wq[l].data() + o * layer.in, in[l].data(), layer.in);
          }
          cur = pre[l];
          if (l + 1 < L)
            for (float& v : cur) v = std::max(v, 0.0f);
        }
        // Softmax cross-entropy; gradient p - onehot.
        const float top = *std::max_element(cur.begin(), cur.end());
        double sum = 0.0;
        for (float v : cur) sum += std::exp(static_cast<double>(v - top));
        std::vector<float> delta(cur.size());
        for (std::size_t c = 0; c < cur.size(); ++c)
          delta[c] = static_cast<float>(std::exp(static_cast<double>(cur[c] - top)) / sum);
        const int label = data.y[idx];
        epoch_loss += -std::log(std::max(1e-30, static_cast<double>(delta[label])));
        delta[static_cast<std::size_t>(label)] -= 1.0f;
        for (std::size_t l = L; l-- > 0;) {
          const DenseLayer& layer = model.layers[l];
          if (l + 1 < L)
            for (std::size_t o = 0; o < layer.out; ++o)
              if (pre[l][o] <= 0.0f) delta[o] = 0.0f;  // ReLU
          std::vector<float> back(layer.in, 0.0f);
          for (std::size_t o = 0; o < layer.out; ++o) {
            const float d = delta[o];
            if (d == 0.0f) continue;
            grad_b[l][o] += d;
            float* gw = grad_w[l].data() + o * layer.in;
            const float* w = wq[l].data() + o * layer.in;
            for (std::size_t k = 0; k < layer.in; ++k) {
              gw[k] += d * in[l][k];  // weights: straight-through (per-row amax = max, no clip)
              back[k] += d * w[k];
            }
          }
          if (l == 0) break;
          if (opt.fake_quant.active()) {  // clipped STE on the activation quantizer
            const float amax = opt.fake_quant.activation_amax[l];
            const std::vector<float>& x_in = pre[l - 1];
            for (std::size_t k = 0; k < layer.in; ++k)
              back[k] *= ste_grad_mask(std::max(x_in[k], 0.0f), amax);
          }
          delta = std::move(back);
        }
      }
      const float lr =
          static_cast<float>(opt.learning_rate * (1.0 - static_cast<double>(step) / total_steps));
      const float inv_batch = 1.0f / static_cast<float>(end - start);
      for (std::size_t l = 0; l < L; ++l) {
        DenseLayer& layer = model.layers[l];
        for (std::size_t j = 0; j < layer.w.size(); ++j) {
          vel_w[l][j] = opt.momentum * vel_w[l][j] + grad_w[l][j] * inv_batch;
          layer.w[j] -= lr * vel_w[l][j];
        }
        for (std::size_t j = 0; j < layer.out; ++j) {
          vel_b[l][j] = opt.momentum * vel_b[l][j] + grad_b[l][j] * inv_batch;
          layer.b[j] -= lr * vel_b[l][j];
        }
      }
    }
  }
  return epoch_loss / static_cast<double>(data.size());
}

}  // namespace tcbench::studies
