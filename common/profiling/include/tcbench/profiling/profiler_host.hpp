// RAII over CUPTI's profiler host object (cupti_profiler_host.h): the part of the Range
// Profiler that needs no GPU. It turns metric names into a configuration image, says how many
// replay passes that image needs, and evaluates collected counter data into metric values.
// Because it runs without a GPU, the per-chip metric table is tested on any build machine.
#pragma once

#include <cupti_profiler_host.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tcbench::profiling {

// The chips this CUPTI build knows (cuptiProfilerHostGetSupportedChips).
std::vector<std::string> supported_chips();

class ProfilerHost {
 public:
  // Throws CountersUnavailable for a chip CUPTI does not know (the chip is named).
  // `counter_availability` is the device's image (cuptiProfilerGetCounterAvailability); empty
  // on a machine without a GPU, where every counter of the chip is assumed available.
  explicit ProfilerHost(std::string chip, std::span<const std::uint8_t> counter_availability = {});
  ProfilerHost(const ProfilerHost&) = delete;  // owns the CUPTI host object
  ProfilerHost& operator=(const ProfilerHost&) = delete;
  ProfilerHost(ProfilerHost&& other) noexcept;
  ProfilerHost& operator=(ProfilerHost&& other) noexcept;
  ~ProfilerHost();

  const std::string& chip() const noexcept { return chip_; }

  // Base metric names of one type (counter, ratio, throughput) on this chip.
  std::vector<std::string> base_metrics(CUpti_MetricType type) const;

  // CUPTI's description of a base metric on this chip (cuptiProfilerHostGetMetricProperties):
  // for the tensor sub-pipes, the SASS instructions they count ("HMMA/UTCHMMA/UTCQMMA/UTCOMMA").
  std::string description(const std::string& base_metric) const;

  // The configuration image that collects `metrics` (full names with rollup and submetric).
  // Throws tcbench::Error naming the chip and the metric list if CUPTI rejects one.
  std::vector<std::uint8_t> config_image(std::span<const std::string> metrics);

  // Replay passes a configuration image needs (1 = the work runs once per collection).
  static std::size_t passes(std::span<const std::uint8_t> config_image);

  // Metric values of range `range_index` in decoded counter data, in the order of `metrics`.
  std::vector<double> evaluate(std::span<const std::uint8_t> counter_data, std::size_t range_index,
                               std::span<const std::string> metrics) const;

  CUpti_Profiler_Host_Object* get() const noexcept { return host_; }

 private:
  void reset() noexcept;
  std::string chip_;
  std::vector<std::uint8_t> counter_availability_;  // CUPTI reads it during the object's life
  CUpti_Profiler_Host_Object* host_ = nullptr;
};

}  // namespace tcbench::profiling
