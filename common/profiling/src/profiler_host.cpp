#include "tcbench/profiling/profiler_host.hpp"

#include "cupti_params.hpp"
#include "tcbench/error.hpp"
#include "tcbench/profiling/availability.hpp"

#include <utility>

namespace tcbench::profiling {
namespace {

std::string joined(std::span<const std::string> names) {
  std::string out;
  for (const std::string& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

std::vector<const char*> c_strings(std::span<const std::string> names) {
  std::vector<const char*> out;
  out.reserve(names.size());
  for (const std::string& n : names) out.push_back(n.c_str());
  return out;
}

}  // namespace

std::vector<std::string> supported_chips() {
  auto p = detail::cupti_params<CUpti_Profiler_Host_GetSupportedChips_Params>(
      CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE);
  TCB_CUPTI(cuptiProfilerHostGetSupportedChips(&p));
  return {p.ppChipNames, p.ppChipNames + p.numChips};
}

ProfilerHost::ProfilerHost(std::string chip, std::span<const std::uint8_t> counter_availability)
    : chip_(std::move(chip)),
      counter_availability_(counter_availability.begin(), counter_availability.end()) {
  auto p = detail::cupti_params<CUpti_Profiler_Host_Initialize_Params>(
      CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  p.pChipName = chip_.c_str();
  p.pCounterAvailabilityImage =
      counter_availability_.empty() ? nullptr : counter_availability_.data();
  const CUptiResult status = cuptiProfilerHostInitialize(&p);
  if (status == CUPTI_ERROR_INVALID_CHIP_NAME || status == CUPTI_ERROR_NOT_SUPPORTED)
    throw CountersUnavailable("CUPTI's profiler host cannot initialize chip " + chip_ + " (" +
                              status_name(status) + ")");
  TCB_CUPTI_CTX(status, "chip " + chip_);
  host_ = p.pHostObject;
}

ProfilerHost::ProfilerHost(ProfilerHost&& other) noexcept
    : chip_(std::move(other.chip_)),
      counter_availability_(std::move(other.counter_availability_)),
      host_(std::exchange(other.host_, nullptr)) {}

ProfilerHost& ProfilerHost::operator=(ProfilerHost&& other) noexcept {
  if (this != &other) {
    reset();
    chip_ = std::move(other.chip_);
    counter_availability_ = std::move(other.counter_availability_);
    host_ = std::exchange(other.host_, nullptr);
  }
  return *this;
}

ProfilerHost::~ProfilerHost() {
  reset();
}

void ProfilerHost::reset() noexcept {
  if (host_ == nullptr) return;
  auto p = detail::cupti_params<CUpti_Profiler_Host_Deinitialize_Params>(
      CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
  p.pHostObject = host_;
  TCB_CUPTI_NOEXCEPT(cuptiProfilerHostDeinitialize(&p));
  host_ = nullptr;
}

std::vector<std::string> ProfilerHost::base_metrics(CUpti_MetricType type) const {
  auto p = detail::cupti_params<CUpti_Profiler_Host_GetBaseMetrics_Params>(
      CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE);
  p.pHostObject = host_;
  p.metricType = type;
  TCB_CUPTI_CTX(cuptiProfilerHostGetBaseMetrics(&p), "chip " + chip_);
  return {p.ppMetricNames, p.ppMetricNames + p.numMetrics};
}

std::string ProfilerHost::description(const std::string& base_metric) const {
  auto p = detail::cupti_params<CUpti_Profiler_Host_GetMetricProperties_Params>(
      CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
  p.pHostObject = host_;
  p.pMetricName = base_metric.c_str();
  TCB_CUPTI_CTX(cuptiProfilerHostGetMetricProperties(&p),
                "chip " + chip_ + ", metric " + base_metric);
  return p.pDescription ? p.pDescription : "";
}

std::vector<std::uint8_t> ProfilerHost::config_image(std::span<const std::string> metrics) {
  std::vector<const char*> names = c_strings(metrics);
  auto add = detail::cupti_params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = host_;
  add.ppMetricNames = names.data();
  add.numMetrics = names.size();
  const std::string context = "chip " + chip_ + ", metrics " + joined(metrics);
  TCB_CUPTI_CTX(cuptiProfilerHostConfigAddMetrics(&add), context);

  auto size = detail::cupti_params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = host_;
  TCB_CUPTI_CTX(cuptiProfilerHostGetConfigImageSize(&size), context);

  std::vector<std::uint8_t> image(size.configImageSize);
  auto get = detail::cupti_params<CUpti_Profiler_Host_GetConfigImage_Params>(
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  get.pHostObject = host_;
  get.configImageSize = image.size();
  get.pConfigImage = image.data();
  TCB_CUPTI_CTX(cuptiProfilerHostGetConfigImage(&get), context);
  return image;
}

std::size_t ProfilerHost::passes(std::span<const std::uint8_t> config_image) {
  auto p = detail::cupti_params<CUpti_Profiler_Host_GetNumOfPasses_Params>(
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  p.configImageSize = config_image.size();
  // CUPTI reads the image only; its parameter is not const-qualified.
  p.pConfigImage = const_cast<std::uint8_t*>(config_image.data());
  TCB_CUPTI(cuptiProfilerHostGetNumOfPasses(&p));
  return p.numOfPasses;
}

std::vector<double> ProfilerHost::evaluate(std::span<const std::uint8_t> counter_data,
                                           std::size_t range_index,
                                           std::span<const std::string> metrics) const {
  std::vector<const char*> names = c_strings(metrics);
  std::vector<double> values(metrics.size());
  auto p = detail::cupti_params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
      CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
  p.pHostObject = host_;
  p.pCounterDataImage = counter_data.data();
  p.counterDataImageSize = counter_data.size();
  p.rangeIndex = range_index;
  p.ppMetricNames = names.data();
  p.numMetrics = names.size();
  p.pMetricValues = values.data();
  TCB_CUPTI_CTX(cuptiProfilerHostEvaluateToGpuValues(&p),
                "chip " + chip_ + ", range " + std::to_string(range_index));
  return values;
}

}  // namespace tcbench::profiling
