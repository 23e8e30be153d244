// The Range Profiler call sequence (CUPTI docs, "Range Profiling API"; CUPTI's range_profiling
// sample): initialize the profiler, read the chip name and counter availability, build the
// configuration image on the host, enable the range profiler on the context, size and
// initialize the counter data for the plan's ranges, set the configuration (user range, user
// replay, the plan's nesting levels), run each pass inside Start ... Stop with the work pushing
// and popping the plan's ranges, until CUPTI says every pass is submitted, decode, and evaluate
// every range by its decoded name (cuptiRangeProfilerCounterDataGetRangeInfo).
#include "tcbench/profiling/range_profiler.hpp"

#include "cupti_params.hpp"
#include "tcbench/error.hpp"
#include "tcbench/profiling/metric_table.hpp"
#include "tcbench/profiling/profiler_host.hpp"
#include "tcbench/profiling/range_plan.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <cmath>
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

// One replay pass: Start on entry; Stop in finish(), or in the destructor when the work threw,
// so that a failure never leaves the profiler started.
class Pass {
 public:
  explicit Pass(CUpti_RangeProfiler_Object* object) : object_(object) {
    auto start = detail::cupti_params<CUpti_RangeProfiler_Start_Params>(
        CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    start.pRangeProfilerObject = object_;
    TCB_CUPTI(available(cuptiRangeProfilerStart(&start)));
  }
  Pass(const Pass&) = delete;  // stops exactly once
  Pass& operator=(const Pass&) = delete;
  ~Pass() {
    if (open_) {
      auto stop = detail::cupti_params<CUpti_RangeProfiler_Stop_Params>(
          CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
      stop.pRangeProfilerObject = object_;
      TCB_CUPTI_NOEXCEPT(cuptiRangeProfilerStop(&stop));
    }
  }

  // Ends the pass; true when CUPTI has every pass it needs.
  bool finish() {
    open_ = false;
    auto stop = detail::cupti_params<CUpti_RangeProfiler_Stop_Params>(
        CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    stop.pRangeProfilerObject = object_;
    TCB_CUPTI(cuptiRangeProfilerStop(&stop));
    return stop.isAllPassSubmitted != 0;
  }

 private:
  CUpti_RangeProfiler_Object* object_;
  bool open_ = true;
};

// The ranges of one pass, checked against the plan as the work pushes and pops them; the
// destructor pops whatever the work left open (after an exception).
class PassMarks final : public RangeMarks {
 public:
  PassMarks(CUpti_RangeProfiler_Object* object, const RangePlan& plan, std::size_t pass)
      : object_(object), plan_(plan), pass_(pass) {}
  PassMarks(const PassMarks&) = delete;  // pops its ranges exactly once
  PassMarks& operator=(const PassMarks&) = delete;
  ~PassMarks() {
    for (; depth_ > 0; --depth_) {
      auto pop = detail::cupti_params<CUpti_RangeProfiler_PopRange_Params>(
          CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
      pop.pRangeProfilerObject = object_;
      TCB_CUPTI_NOEXCEPT(cuptiRangeProfilerPopRange(&pop));
    }
  }

  void push(std::string_view name) override {
    const int level = depth_ + 1;
    if (next_ >= plan_.ranges.size())
      throw Error(where() + " pushed range '" + std::string(name) + "' after all " +
                  std::to_string(plan_.ranges.size()) + " ranges of the plan");
    const RangeSpec& want = plan_.ranges[next_];
    if (name != want.name || level != want.level)
      throw Error(where() + " pushed range '" + std::string(name) + "' at level " +
                  std::to_string(level) + " where the plan's range " + std::to_string(next_) +
                  " is '" + want.name + "' at level " + std::to_string(want.level));
    TCB_CUDA_CTX(cudaDeviceSynchronize(), "work before profiler range '" + want.name + "'");
    auto push = detail::cupti_params<CUpti_RangeProfiler_PushRange_Params>(
        CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
    push.pRangeProfilerObject = object_;
    push.pRangeName = want.name.c_str();  // the plan outlives the session
    TCB_CUPTI_CTX(available(cuptiRangeProfilerPushRange(&push)), "range '" + want.name + "'");
    ++next_;
    ++depth_;
  }

  void pop() override {
    if (depth_ == 0) throw Error(where() + " popped a range with none open");
    TCB_CUDA_CTX(cudaDeviceSynchronize(), "work inside a profiler range, " + where());
    auto pop = detail::cupti_params<CUpti_RangeProfiler_PopRange_Params>(
        CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
    pop.pRangeProfilerObject = object_;
    TCB_CUPTI(cuptiRangeProfilerPopRange(&pop));
    --depth_;
  }

  // After the work: every range of the plan pushed and popped.
  void finish() const {
    if (next_ != plan_.ranges.size() || depth_ != 0)
      throw Error(where() + " ended with " + std::to_string(next_) + " of the plan's " +
                  std::to_string(plan_.ranges.size()) + " ranges pushed and " +
                  std::to_string(depth_) + " still open");
  }

 private:
  std::string where() const { return "profiling pass " + std::to_string(pass_); }
  CUpti_RangeProfiler_Object* object_;
  const RangePlan& plan_;
  std::size_t pass_;
  std::size_t next_ = 0;
  int depth_ = 0;
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
                                             std::vector<const char*>& names, std::size_t ranges) {
  auto size = detail::cupti_params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pRangeProfilerObject = object;
  size.pMetricNames = names.data();
  size.numMetrics = names.size();
  size.maxNumOfRanges = ranges;
  size.maxNumRangeTreeNodes = range_tree_nodes(ranges);
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

// The decoded name of range `index` (its path, parents joined by kRangeDelimiter).
std::string decoded_range_name(const std::vector<std::uint8_t>& counter_data, std::size_t index) {
  auto p = detail::cupti_params<CUpti_RangeProfiler_CounterData_GetRangeInfo_Params>(
      CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE);
  p.pCounterDataImage = counter_data.data();
  p.counterDataImageSize = counter_data.size();
  p.rangeIndex = index;
  const std::string delimiter(kRangeDelimiter);
  p.rangeDelimiter = delimiter.c_str();
  TCB_CUPTI_CTX(cuptiRangeProfilerCounterDataGetRangeInfo(&p),
                "decoded range " + std::to_string(index));
  return p.rangeName != nullptr ? p.rangeName : "";
}

// Which plan range a decoded name is: its path, or (should CUPTI report the bare name) the one
// range of that name.
std::size_t plan_index(const RangePlan& plan, const std::string& decoded) {
  for (std::size_t i = 0; i < plan.paths.size(); ++i)
    if (plan.paths[i] == decoded) return i;
  std::size_t found = plan.ranges.size();
  for (std::size_t i = 0; i < plan.ranges.size(); ++i)
    if (plan.ranges[i].name == decoded) {
      if (found != plan.ranges.size())
        found = plan.ranges.size() + 1;  // ambiguous
      else
        found = i;
    }
  if (found < plan.ranges.size()) return found;
  std::string all;
  for (const std::string& path : plan.paths) all += (all.empty() ? "" : ", ") + path;
  throw Error("CUPTI decoded a range named '" + decoded + "', which is not one of the plan's (" +
              all + ") on chip " + plan.chip);
}

// Everything collect_counters and collect_range_counters share: one session over the plan.
RangeCounters collect(std::span<const RangeSpec> ranges,
                      const std::function<void(RangeMarks&)>& work) {
  if (auto why = disabled_by_environment()) throw CountersUnavailable(*why);
  (void)range_paths(ranges);  // a bad plan is the caller's error, whatever the device
  int ordinal = 0;
  TCB_CUDA(cudaGetDevice(&ordinal));
  const CUcontext ctx = current_context();

  ProfilerSession session;
  if (auto why = device_unsupported_reason(ordinal)) throw CountersUnavailable(*why);
  const std::string chip = device_chip(ordinal);
  if (!metrics_for_chip(chip)) throw CountersUnavailable(unknown_chip_reason(chip));

  ProfilerHost host(chip, counter_availability(ctx));
  const RangePlan plan = plan_ranges(host, ranges);
  const std::vector<std::string> metric_names = plan.metric_names();
  std::vector<const char*> c_names;
  for (const std::string& n : metric_names) c_names.push_back(n.c_str());

  RangeProfilerObject profiler(ctx);
  std::vector<std::uint8_t> counter_data =
      counter_data_image(profiler.get(), c_names, plan.ranges.size());

  auto set = detail::cupti_params<CUpti_RangeProfiler_SetConfig_Params>(
      CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  set.pRangeProfilerObject = profiler.get();
  set.configSize = plan.config_image.size();
  set.pConfig = plan.config_image.data();
  set.counterDataImageSize = counter_data.size();
  set.pCounterDataImage = counter_data.data();
  set.range = CUPTI_UserRange;
  set.replayMode = CUPTI_UserReplay;
  set.maxRangesPerPass = plan.ranges.size();
  set.numNestingLevels = static_cast<std::uint16_t>(plan.nesting_levels);
  set.minNestingLevel = 1;
  set.passIndex = 0;
  set.targetNestingLevel = 1;
  TCB_CUPTI(available(cuptiRangeProfilerSetConfig(&set)));

  std::size_t submitted = 0;
  for (bool all_submitted = false; !all_submitted;) {
    if (submitted > plan.passes())
      throw Error("CUPTI asked for more than the " + std::to_string(plan.passes()) +
                  " passes the plan needs (" + std::to_string(plan.config_passes) +
                  " for the metric set x " + std::to_string(plan.nesting_levels) +
                  " nesting level(s), chip " + chip + ")");
    Pass pass(profiler.get());
    {
      PassMarks marks(profiler.get(), plan, submitted);
      work(marks);
      marks.finish();
    }
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
  if (info.numTotalRanges != plan.ranges.size())
    throw Error("CUPTI decoded " + std::to_string(info.numTotalRanges) +
                " range(s) where the plan "
                "has " +
                std::to_string(plan.ranges.size()) + " on chip " + chip);

  RangeCounters out{chip, submitted, {}};
  out.ranges.resize(plan.ranges.size());
  std::vector<bool> filled(plan.ranges.size(), false);
  for (std::size_t r = 0; r < info.numTotalRanges; ++r) {
    const std::size_t i = plan_index(plan, decoded_range_name(counter_data, r));
    if (filled[i]) throw Error("CUPTI decoded range '" + plan.paths[i] + "' twice on chip " + chip);
    filled[i] = true;
    const std::vector<double> values = host.evaluate(counter_data, r, metric_names);
    RangeValues& v = out.ranges[i];
    v.path = plan.paths[i];
    for (std::size_t m = 0; m < values.size(); ++m) {
      if (!std::isfinite(values[m]))
        throw Error("CUPTI evaluated " + metric_names[m] + " of range '" + v.path + "' as " +
                    std::to_string(values[m]) + " on chip " + chip + " (did the range hold work?)");
      v.values.push_back({std::string(plan.metrics[m].counter), metric_names[m], values[m]});
    }
  }
  return out;
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
  const RangeSpec one[] = {{std::string(kRangeName), 1}};
  RangeCounters got = collect(one, [&](RangeMarks& marks) {
    marks.push(kRangeName);
    for (int r = 0; r < runs; ++r) work();
    marks.pop();
  });
  return {got.chip, got.passes, runs, std::move(got.ranges.front().values)};
}

std::optional<double> RangeValues::value(std::string_view counter) const {
  for (const CounterValue& v : values)
    if (v.counter == counter) return v.value;
  return std::nullopt;
}

const RangeValues& RangeCounters::at(std::string_view path) const {
  for (const RangeValues& r : ranges)
    if (r.path == path) return r;
  throw Error("no profiled range '" + std::string(path) + "' (chip " + chip + ")");
}

RangeCounters collect_range_counters(std::span<const RangeSpec> ranges,
                                     const std::function<void(RangeMarks&)>& work) {
  return collect(ranges, work);
}

}  // namespace tcbench::profiling
