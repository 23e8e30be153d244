#include "tcbench/bench/plan.hpp"

#include "tcbench/json.hpp"
#include "tcbench/precision.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>

namespace tcbench::bench {
namespace {

double element_bytes(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_64F:
      return 8;
    case CUDA_R_32F:
    case CUDA_R_32I:
      return 4;
    case CUDA_R_16F:
    case CUDA_R_16BF:
      return 2;
    case CUDA_R_6F_E2M3:
      return 0.75;
    case CUDA_R_4F_E2M1:
      return 0.5;
    default:
      return 1;  // int8, fp8
  }
}

// A whole-number key of the name, or nullopt.
std::optional<double> number(const BenchName& name, Key key) {
  const auto text = name.value(key);
  if (!text) return std::nullopt;
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size() || v < 0) return std::nullopt;
  return static_cast<double>(v);
}

}  // namespace

NamedGpu plan_gpu_of(const GpuSpec& spec) {
  if (auto known = named_gpu(spec.name); known && known->sm_count == spec.sm_count) return *known;
  NamedGpu out{spec.name,     spec.cc_major,          spec.cc_minor,
               spec.sm_count, peak_memory_gbps(spec), "max-clock model"};
  for (const Precision p : kAllPrecisions) out.tflops[index_of(p)] = peak(spec, p).denominator();
  return out;
}

RowPlan plan_row(const BenchName& name, const NamedGpu& gpu, const SamplingPolicy& policy,
                 long repetitions) {
  RowPlan out;
  const double reps = static_cast<double>(std::max(1L, repetitions));
  out.seconds = reps * (policy.warmup_seconds + policy.min_seconds);  // no work named
  const auto p = parse_precision(name.third());
  if (!p) return out;
  const PrecisionInfo& e = info(*p);
  const auto m = number(name, Key::m), n = number(name, Key::n), k = number(name, Key::k);
  const auto elements = number(name, Key::elements);
  if (m && n && k) {
    const double batch = number(name, Key::batch).value_or(1.0);
    out.flops = 2.0 * *m * *n * *k * batch;
    out.bytes = (*m * *k * element_bytes(e.a) + *n * *k * element_bytes(e.b) +
                 *m * *n * element_bytes(e.d)) *
                batch;
  } else if (elements) {
    out.bytes = 2.0 * *elements * element_bytes(e.a);  // read once, written once
  } else {
    return out;
  }
  const double tflops = gpu.tflops[index_of(*p)];
  if (out.flops > 0 && !(tflops > 0)) return out;  // no published peak: no bound
  const double compute = out.flops > 0 ? out.flops / (tflops * 1e12) : 0.0;
  const double memory = gpu.dram_gbps > 0 ? out.bytes / (gpu.dram_gbps * 1e9) : 0.0;
  const double median = std::max(compute, memory);
  if (!(median > 0)) return out;
  out.median_s = median;
  const double wanted = std::ceil(policy.min_seconds / median);
  out.samples = static_cast<std::size_t>(std::clamp(wanted, static_cast<double>(policy.min_samples),
                                                    static_cast<double>(policy.max_samples)));
  out.seconds =
      reps * (std::max(policy.warmup_seconds, median) + static_cast<double>(out.samples) * median);
  return out;
}

std::string plan_jsonl(const std::vector<std::string>& names, const NamedGpu& gpu,
                       const SamplingPolicy& policy, long repetitions) {
  std::string rows;
  double total = 0;
  for (const std::string& name : names) {
    const auto parsed = BenchName::parse(name);
    if (!parsed) continue;  // registration refuses such a name before it gets here
    const RowPlan r = plan_row(*parsed, gpu, policy, repetitions);
    total += r.seconds;
    rows += "{\"name\": " + json_string(name) + ", \"flops\": " + json_number(r.flops) +
            ", \"bytes\": " + json_number(r.bytes) +
            ", \"median_s\": " + (r.median_s ? json_number(*r.median_s) : "null") +
            ", \"samples\": " + (r.samples ? std::to_string(r.samples) : "null") +
            ", \"seconds\": " + json_number(r.seconds) + "}\n";
  }
  std::string peaks;
  for (const Precision p : kAllPrecisions)
    peaks += std::string(peaks.empty() ? "" : ", ") + json_string(tcbench::name(p)) + ": " +
             json_number(gpu.tflops[index_of(p)]);
  return "{\"gpu\": " + json_string(gpu.canonical) + ", \"source\": " + json_string(gpu.source) +
         ", \"compute_capability\": \"" + std::to_string(gpu.cc_major) + "." +
         std::to_string(gpu.cc_minor) + "\", \"sm_count\": " + std::to_string(gpu.sm_count) +
         ", \"peak_gbps\": " + json_number(gpu.dram_gbps) + ", \"peak_tflops\": {" + peaks + "}" +
         ", \"warmup_s\": " + json_number(policy.warmup_seconds) +
         ", \"min_seconds\": " + json_number(policy.min_seconds) +
         ", \"repetitions\": " + std::to_string(std::max(1L, repetitions)) +
         ", \"rows\": " + std::to_string(names.size()) + ", \"seconds\": " + json_number(total) +
         "}\n" + rows;
}

}  // namespace tcbench::bench
