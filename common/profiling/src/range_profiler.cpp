// The Range Profiler call sequence (CUPTI docs, "Range Profiling API"; CUPTI's range_profiling
// sample): initialize the profiler, read the chip name and counter availability, build the
// configuration image on the host, enable the range profiler on the context, size and
// initialize the counter data, set the configuration (user range, user replay), run each pass
// inside Start/PushRange ... PopRange/Stop until CUPTI says every pass is submitted, decode, and
// evaluate the single range.
#include "tcbench/profiling/range_profiler.hpp"

#include "cupti_params.hpp"
#include "tcbench/error.hpp"
#include "tcbench/profiling/metric_table.hpp"
#include "tcbench/profiling/profiler_host.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tcbench::profiling {
namespace {

constexpr const char* kRangeName = "tcbench";

// The runtime's current context without linking libcuda (a build machine has no driver):
// the driver entry point is looked up through the runtime.
CUcontext current_context() {
  TCB_CUDA(cudaFree(nullptr));  // makes the device's primary context current
  using GetCurrent = CUresult (*)(CUcontext*);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  TCB_CUDA(
      cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || fn == nullptr)
    throw Error("the driver does not export cuCtxGetCurrent; cannot find the CUDA context");
  CUcontext ctx = nullptr;
  if (reinterpret_cast<GetCurrent>(fn)(&ctx) != CUDA_SUCCESS || ctx == nullptr)
    throw Error("cuCtxGetCurrent returned no context after cudaFree(0)");
  return ctx;
}

// cuptiProfilerInitialize / cuptiProfilerDeInitialize.
class ProfilerSession {
 public:
  ProfilerSession() {
    auto p = detail::cupti_params<CUpti_Profiler_Initialize_Params>(
        CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    TCB_CUPTI(available(cuptiProfilerInitialize(&p)));
  }
  ProfilerSession(const ProfilerSession&) = delete;  // one de-initialization per initialization
  ProfilerSession& operator=(const ProfilerSession&) = delete;
  ~ProfilerSession() {
    auto p = detail::cupti_params<CUpti_Profiler_DeInitialize_Params>(
        CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
    TCB_CUPTI_NOEXCEPT(cuptiProfilerDeInitialize(&p));
  }
};

// cuptiRangeProfilerEnable / cuptiRangeProfilerDisable.
class RangeProfilerObject {
 public:
  explicit RangeProfilerObject(CUcontext ctx) {
    auto p = detail::cupti_params<CUpti_RangeProfiler_Enable_Params>(
        CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    p.ctx = ctx;
    TCB_CUPTI(available(cuptiRangeProfilerEnable(&p)));
    object_ = p.pRangeProfilerObject;
  }
  RangeProfilerObject(const RangeProfilerObject&) = delete;  // owns the enabled profiler
  RangeProfilerObject& operator=(const RangeProfilerObject&) = delete;
  ~RangeProfilerObject() {
    auto p = detail::cupti_params<CUpti_RangeProfiler_Disable_Params>(
        CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = object_;
    TCB_CUPTI_NOEXCEPT(cuptiRangeProfilerDisable(&p));
  }
  CUpti_RangeProfiler_Object* get() const noexcept { return object_; }

 private:
  CUpti_RangeProfiler_Object* object_ = nullptr;
};

// One replay pass: Start + PushRange on entry; PopRange + Stop in finish(), or in the destructor
// when the work threw, so that a failure never leaves a range open.
class Pass {
 public:
  explicit Pass(CUpti_RangeProfiler_Object* object) : object_(object) {
    auto start = detail::cupti_params<CUpti_RangeProfiler_Start_Params>(
        CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    start.pRangeProfilerObject = object_;
    TCB_CUPTI(available(cuptiRangeProfilerStart(&start)));
    auto push = detail::cupti_params<CUpti_RangeProfiler_PushRange_Params>(
        CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
    push.pRangeProfilerObject = object_;
    push.pRangeName = kRangeName;
    const CUptiResult pushed = cuptiRangeProfilerPushRange(&push);
    if (pushed != CUPTI_SUCCESS) {
      stop_noexcept();
      TCB_CUPTI(available(pushed));
    }
  }
  Pass(const Pass&) = delete;  // ends its range exactly once
  Pass& operator=(const Pass&) = delete;
  ~Pass() {
    if (open_) {
      pop_noexcept();
      stop_noexcept();
    }
  }

  // Ends the pass; true when CUPTI has every pass it needs.
  bool finish() {
    open_ = false;
    auto pop = detail::cupti_params<CUpti_RangeProfiler_PopRange_Params>(
        CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
    pop.pRangeProfilerObject = object_;
    const CUptiResult popped = cuptiRangeProfilerPopRange(&pop);
    if (popped != CUPTI_SUCCESS) {
      stop_noexcept();
      TCB_CUPTI(popped);
    }
    auto stop = detail::cupti_params<CUpti_RangeProfiler_Stop_Params>(
        CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    stop.pRangeProfilerObject = object_;
    TCB_CUPTI(cuptiRangeProfilerStop(&stop));
    return stop.isAllPassSubmitted != 0;
  }

 private:
  void pop_noexcept() noexcept {
    auto pop = detail::cupti_params<CUpti_RangeProfiler_PopRange_Params>(
        CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
    pop.pRangeProfilerObject = object_;
    TCB_CUPTI_NOEXCEPT(cuptiRangeProfilerPopRange(&pop));
  }
  void stop_noexcept() noexcept {
    auto stop = detail::cupti_params<CUpti_RangeProfiler_Stop_Params>(
        CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    stop.pRangeProfilerObject = object_;
    TCB_CUPTI_NOEXCEPT(cuptiRangeProfilerStop(&stop));
  }
  CUpti_RangeProfiler_Object* object_;
  bool open_ = true;
};

// Why CUPTI says this device cannot be profiled at all, or nullopt when it can.
std::optional<std::string> device_unsupported_reason(int ordinal) {
  auto p = detail::cupti_params<CUpti_Profiler_DeviceSupported_Params>(
      CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
  p.cuDevice = ordinal;
  p.api = CUPTI_PROFILER_RANGE_PROFILING;
  TCB_CUPTI(available(cuptiProfilerDeviceSupported(&p)));
  if (p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return std::nullopt;
  if (p.architecture != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
    return "CUPTI's range profiler does not support this GPU architecture";
  if (p.vGpu == CUPTI_PROFILER_CONFIGURATION_DISABLED)
    return "profiling is disabled on this virtual GPU (enable it in the vGPU configuration)";
  if (p.vGpu != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
    return "CUPTI cannot profile this virtual GPU";
  if (p.confidentialCompute != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
    return "CUPTI cannot profile a GPU in confidential-computing mode";
  if (p.sli != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
    return "CUPTI cannot profile a GPU in an SLI group";
  if (p.cmp != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
    return "CUPTI cannot profile a crypto-mining (CMP) GPU";
  if (p.wsl != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
    return "CUPTI cannot profile this GPU under WSL";
  return "CUPTI reports this device as not supported for range profiling";
}

std::string device_chip(int ordinal) {
  auto p = detail::cupti_params<CUpti_Device_GetChipName_Params>(
      CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  p.deviceIndex = static_cast<std::size_t>(ordinal);
  TCB_CUPTI(available(cuptiDeviceGetChipName(&p)));
  return p.pChipName != nullptr ? p.pChipName : "";
}

std::vector<std::uint8_t> counter_availability(CUcontext ctx) {
  auto p = detail::cupti_params<CUpti_Profiler_GetCounterAvailability_Params>(
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  p.ctx = ctx;
  TCB_CUPTI(available(cuptiProfilerGetCounterAvailability(&p)));
  std::vector<std::uint8_t> image(p.counterAvailabilityImageSize);
  p.pCounterAvailabilityImage = image.data();
  TCB_CUPTI(available(cuptiProfilerGetCounterAvailability(&p)));
  return image;
}

std::vector<std::uint8_t> counter_data_image(CUpti_RangeProfiler_Object* object,
                                             std::vector<const char*>& names) {
  auto size = detail::cupti_params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pRangeProfilerObject = object;
  size.pMetricNames = names.data();
  size.numMetrics = names.size();
  size.maxNumOfRanges = 1;
  size.maxNumRangeTreeNodes = 1;
  TCB_CUPTI(cuptiRangeProfilerGetCounterDataSize(&size));
  std::vector<std::uint8_t> image(size.counterDataSize);
  auto init = detail::cupti_params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pRangeProfilerObject = object;
  init.counterDataSize = image.size();
  init.pCounterData = image.data();
  TCB_CUPTI(cuptiRangeProfilerCounterDataImageInitialize(&init));
  return image;
}

}  // namespace

std::string current_device_chip() {
  int ordinal = 0;
  TCB_CUDA(cudaGetDevice(&ordinal));
  TCB_CUDA(cudaFree(nullptr));
  return device_chip(ordinal);
}

std::optional<double> Counters::value(std::string_view counter) const {
  for (const CounterValue& v : values)
    if (v.counter == counter) return v.value;
  return std::nullopt;
}

Counters collect_counters(const std::function<void()>& work, int runs) {
  if (runs < 1)
    throw InvalidArgument("collect_counters needs at least one run, got " + std::to_string(runs));
  if (auto why = disabled_by_environment()) throw CountersUnavailable(*why);
  int ordinal = 0;
  TCB_CUDA(cudaGetDevice(&ordinal));
  const CUcontext ctx = current_context();

  ProfilerSession session;
  if (auto why = device_unsupported_reason(ordinal)) throw CountersUnavailable(*why);
  const std::string chip = device_chip(ordinal);
  const std::optional<ChipMetrics> table = metrics_for_chip(chip);
  if (!table) throw CountersUnavailable(unknown_chip_reason(chip));

  std::vector<std::string> metric_names;
  for (const Metric& m : table->metrics) metric_names.emplace_back(m.name);
  std::vector<const char*> c_names;
  for (const std::string& n : metric_names) c_names.push_back(n.c_str());

  ProfilerHost host(chip, counter_availability(ctx));
  const std::vector<std::uint8_t> config = host.config_image(metric_names);
  const std::size_t passes = ProfilerHost::passes(config);

  RangeProfilerObject profiler(ctx);
  std::vector<std::uint8_t> counter_data = counter_data_image(profiler.get(), c_names);

  auto set = detail::cupti_params<CUpti_RangeProfiler_SetConfig_Params>(
      CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  set.pRangeProfilerObject = profiler.get();
  set.configSize = config.size();
  set.pConfig = config.data();
  set.counterDataImageSize = counter_data.size();
  set.pCounterDataImage = counter_data.data();
  set.range = CUPTI_UserRange;
  set.replayMode = CUPTI_UserReplay;
  set.maxRangesPerPass = 1;
  set.numNestingLevels = 1;
  set.minNestingLevel = 1;
  set.passIndex = 0;
  set.targetNestingLevel = 1;
  TCB_CUPTI(available(cuptiRangeProfilerSetConfig(&set)));

  std::size_t submitted = 0;
  for (bool all_submitted = false; !all_submitted;) {
    if (submitted > passes)
      throw Error("CUPTI asked for more than the " + std::to_string(passes) +
                  " passes its configuration image declares (chip " + chip + ")");
    Pass pass(profiler.get());
    for (int r = 0; r < runs; ++r) work();
    TCB_CUDA_CTX(cudaDeviceSynchronize(), "profiled work, pass " + std::to_string(submitted));
    all_submitted = pass.finish();
    ++submitted;
  }

  auto decode = detail::cupti_params<CUpti_RangeProfiler_DecodeData_Params>(
      CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = profiler.get();
  TCB_CUPTI(cuptiRangeProfilerDecodeData(&decode));
  if (decode.numOfRangeDropped != 0)
    throw Error("CUPTI dropped " + std::to_string(decode.numOfRangeDropped) +
                " profiled range(s) on chip " + chip);

  auto info = detail::cupti_params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = counter_data.data();
  info.counterDataImageSize = counter_data.size();
  TCB_CUPTI(cuptiRangeProfilerGetCounterDataInfo(&info));
  if (info.numTotalRanges < 1) throw Error("CUPTI decoded no range on chip " + chip);

  const std::vector<double> values = host.evaluate(counter_data, 0, metric_names);
  Counters out{chip, submitted, runs, {}};
  for (std::size_t i = 0; i < values.size(); ++i)
    out.values.push_back({std::string(table->metrics[i].counter), metric_names[i], values[i]});
  return out;
}

}  // namespace tcbench::profiling
