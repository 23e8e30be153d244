#include "tcbench/studies/training_step_phases.hpp"

#include <stdexcept>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace tcbench::studies {
namespace {

std::string ms(double seconds) {
  char text[48];
  std::snprintf(text, sizeof text, "%.4g ms", seconds * 1e3);
  return text;
}

std::string where(std::size_t step, StepPhase p) {
  return "step " + std::to_string(step) + ", phase " + std::string(name(p));
}

void check_pct(const PerPhase<double>& pct, const char* what) {
  for (StepPhase p : kStepPhases) {
    const double v = pct[index(p)];
    if (!std::isfinite(v) || v < 0.0 || v > 200.0)
      throw std::invalid_argument(std::string(what) + ": phase " + std::string(name(p)) + " is " +
                                  std::to_string(v) + ", not a percentage of 0..200");
  }
}

}  // namespace

TrainingConfig small_mlp_config() {
  return TrainingConfig{};
}

TrainingConfig block_sized_config(int width, int tokens) {
  TrainingConfig cfg;
  cfg.inputs = cfg.hidden = cfg.outputs = width;
  cfg.batch = tokens;
  cfg.teacher_targets = false;
  cfg.target_scale = 1.0f;
  cfg.validate();
  return cfg;
}

PhaseShares phase_shares(std::span<const StepTimeline> steps) {
  if (steps.empty()) throw std::invalid_argument("phase_shares needs at least one measured step");
  PhaseShares out;
  out.steps = steps.size();
  double total = 0;
  PerPhase<double> phase_total{};
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const StepTimeline& t = steps[s];
    if (!std::isfinite(t.step.begin) || !std::isfinite(t.step.end) || !(t.step.end > t.step.begin))
      throw std::invalid_argument("step " + std::to_string(s) + " spans " + ms(t.step.begin) +
                                  " to " + ms(t.step.end) + ": not a positive, finite time");
    double last_end = t.step.begin;
    for (StepPhase p : kStepPhases) {
      const Interval& i = t.phases[index(p)];
      if (!std::isfinite(i.begin) || !std::isfinite(i.end) || i.end < i.begin)
        throw std::invalid_argument(where(s, p) + " spans " + ms(i.begin) + " to " + ms(i.end) +
                                    ": it ends before it begins or is not finite");
      if (i.begin < last_end)
        throw std::invalid_argument(where(s, p) + " begins at " + ms(i.begin) +
                                    ", before the previous phase (or the step) " +
                                    (p == StepPhase::forward ? "begins" : "ends") + " at " +
                                    ms(last_end));
      last_end = i.end;
      phase_total[index(p)] += i.end - i.begin;
    }
    if (last_end > t.step.end)
      throw std::invalid_argument(where(s, StepPhase::optimizer) + " ends at " + ms(last_end) +
                                  ", after its step ends at " + ms(t.step.end));
    total += t.step.end - t.step.begin;
  }
  const auto n = static_cast<double>(steps.size());
  out.step_seconds = total / n;
  double in_phases = 0;
  for (StepPhase p : kStepPhases) {
    out.seconds[index(p)] = phase_total[index(p)] / n;
    out.pct[index(p)] = 100.0 * phase_total[index(p)] / total;
    in_phases += out.pct[index(p)];
  }
  out.gaps_pct = std::max(0.0, 100.0 - in_phases);
  return out;
}

double time_weighted_mix(const PhaseShares& shares, const PerPhase<double>& pct) {
  check_pct(pct, "time_weighted_mix");
  double mix = 0;
  for (StepPhase p : kStepPhases) mix += shares.pct[index(p)] * pct[index(p)] / 100.0;
  return mix;
}

double gemm_phases_ceiling(const PhaseShares& shares, const PerPhase<double>& pct) {
  check_pct(pct, "gemm_phases_ceiling");
  double weighted = 0, share = 0;
  for (StepPhase p : kStepPhases) {
    if (!has_gemms(p)) continue;
    weighted += shares.pct[index(p)] * pct[index(p)];
    share += shares.pct[index(p)];
  }
  if (!(share > 0))
    throw std::invalid_argument(
        "gemm_phases_ceiling: the GEMM phases (forward, backward) took no time");
  return weighted / share;
}

std::vector<KernelWork> step_kernels(const TrainingConfig& cfg, std::size_t storage_bytes) {
  cfg.validate();
  if (storage_bytes != 2 && storage_bytes != 4)
    throw std::invalid_argument(
        "step_kernels: storage is 2 (FP16, BF16) or 4 (FP32) bytes per element, "
        "got " +
        std::to_string(storage_bytes));
  const double s = static_cast<double>(storage_bytes);
  const double b = cfg.batch, in = cfg.inputs, hid = cfg.hidden, out = cfg.outputs;
  const double w1 = hid * in, w2 = out * hid, w = w1 + w2;
  using P = StepPhase;
  // GEMM m x n x k reading A (m x k) and B (k x n) in storage and writing D (m x n) in `d` bytes.
  const auto gemm = [&](P phase, std::string_view what, double m, double n, double k, double d) {
    return KernelWork{phase, what, true, 2.0 * m * n * k, s * (m * k + k * n) + d * m * n};
  };
  const auto other = [](P phase, std::string_view what, double bytes) {
    return KernelWork{phase, what, false, 0.0, bytes};
  };
  return {
      other(P::forward, "cast FP32 masters to storage", (4 + s) * w),
      gemm(P::forward, "Z = W1 X", hid, b, in, s),
      other(P::forward, "H = tanh(Z)", 2 * s * hid * b),
      gemm(P::forward, "Y = a W2 H", out, b, hid, s),
      other(P::forward, "loss and scaled dY", (2 * s + 4) * out * b),
      gemm(P::backward, "dW2 = a dY H^T", out, hid, b, 4),
      other(P::backward, "store dW2", 8 * w2),
      gemm(P::backward, "dH = a W2^T dY", hid, b, out, 4),
      other(P::backward, "dZ = tanh'(dH)", (4 + 2 * s) * hid * b),
      gemm(P::backward, "dW1 = dZ X^T", hid, in, b, 4),
      other(P::backward, "store dW1", 8 * w1),
      other(P::unscale, "check and unscale", 8 * w),
      other(P::optimizer, "Adam", 28 * w),
  };
}

double step_gemm_flops(const TrainingConfig& cfg) {
  double flops = 0;
  for (const KernelWork& k : step_kernels(cfg, 4)) flops += k.flops;
  return flops;
}

PerPhase<PhaseWork> phase_work(std::span<const KernelWork> kernels) {
  PerPhase<PhaseWork> out{};
  for (const KernelWork& k : kernels) {
    PhaseWork& p = out[index(k.phase)];
    if (k.gemm) {
      ++p.gemms;
      p.gemm_flops += k.flops;
      p.gemm_bytes += k.bytes;
    } else {
      ++p.other_kernels;
      p.other_bytes += k.bytes;
    }
  }
  return out;
}

StepPrediction predict_step(std::span<const KernelWork> kernels, const StepRates& rates) {
  if (!(rates.gemm_flops_per_s > 0) || !(rates.bytes_per_s > 0) ||
      !std::isfinite(rates.gemm_flops_per_s) || !std::isfinite(rates.bytes_per_s))
    throw std::invalid_argument("predict_step needs a positive GEMM rate and bandwidth, got " +
                                std::to_string(rates.gemm_flops_per_s) + " FLOP/s and " +
                                std::to_string(rates.bytes_per_s) + " B/s");
  StepPrediction out;
  PerPhase<double> busy{};
  double flops = 0;
  for (const KernelWork& k : kernels) {
    const double memory = k.bytes / rates.bytes_per_s;
    const double compute = k.gemm ? k.flops / rates.gemm_flops_per_s : 0.0;
    out.seconds[index(k.phase)] += std::max(memory, compute);
    if (k.gemm && rates.tensor_path) busy[index(k.phase)] += compute;
    flops += k.flops;
  }
  StepTimeline t;
  double at = 0;
  for (StepPhase p : kStepPhases) {
    t.phases[index(p)] = {at, at + out.seconds[index(p)]};
    at += out.seconds[index(p)];
    out.tensor_pct[index(p)] =
        out.seconds[index(p)] > 0 ? 100.0 * busy[index(p)] / out.seconds[index(p)] : 0.0;
  }
  t.step = {0.0, at};
  out.step_seconds = at;
  out.shares = phase_shares(std::span(&t, 1));
  out.step_tensor_pct = time_weighted_mix(out.shares, out.tensor_pct);
  out.ceiling_pct = gemm_phases_ceiling(out.shares, out.tensor_pct);
  out.flops_per_s = flops / at;
  return out;
}

}  // namespace tcbench::studies
