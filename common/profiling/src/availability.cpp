#include "tcbench/profiling/availability.hpp"

#include <cstdlib>
#include <string>

namespace tcbench::profiling {

std::optional<std::string> unavailable_reason(CUptiResult status) {
  switch (status) {
    // Since driver 418.43 GPU counters are admin-only by default (ERR_NVGPUCTRPERM):
    // developer.nvidia.com/nvidia-development-tools-solutions-ERR_NVGPUCTRPERM-permission-issue-performance-counters
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return "GPU performance counters are restricted to administrators on this machine "
             "(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES); run as root or load the driver with "
             "NVreg_RestrictProfilingToAdminUsers=0";
    // CUPTI has one subscriber per process; Nsight Compute/Systems, compute-sanitizer and
    // cuda-gdb take it (cupti_result.h, CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED).
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
      return "another profiler already owns CUPTI in this process (ncu, nsys, compute-sanitizer "
             "or cuda-gdb attached); it, not tcbench, reads the counters";
    case CUPTI_ERROR_HARDWARE_BUSY:
      return "the GPU's performance monitor is busy (another process is profiling this GPU, "
             "e.g. ncu or DCGM profiling metrics)";
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
      return "CUPTI cannot profile a MIG instance (CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED)";
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
      return "CUPTI cannot profile this virtualized GPU (vGPU profiling is not enabled)";
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
      return "CUPTI cannot profile a GPU in confidential-computing mode";
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
      return std::string("CUPTI cannot profile this GPU configuration (") + status_name(status) +
             ")";
    case CUPTI_ERROR_INVALID_CHIP_NAME:
      return "this CUPTI does not know the GPU's chip (CUPTI_ERROR_INVALID_CHIP_NAME); a newer "
             "CUDA toolkit may";
    default:
      return std::nullopt;
  }
}

CUptiResult available(CUptiResult status) {
  if (auto why = unavailable_reason(status)) throw CountersUnavailable(*why);
  return status;
}

std::optional<std::string> disabled_by_environment() {
  if (environment::counters_enabled()) return std::nullopt;
  return "in-process counters are turned off (" + std::string(kCountersEnv) + "=" +
         environment::value(kCountersEnv).value_or("") + ")";
}

std::string unknown_chip_reason(std::string_view chip) {
  return "chip " + std::string(chip) +
         " is not in tcbench's tensor-pipe metric table "
         "(common/profiling/src/metric_table.cpp), so its counter names are unknown";
}

}  // namespace tcbench::profiling
