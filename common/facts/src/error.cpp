#include "tcbench/error.hpp"

#include <cstdio>

namespace tcbench {

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto byte = static_cast<unsigned char>(ch);
    if (byte >= 0x20 && byte < 0x7f) {
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\r') {
      out += "\\r";
    } else if (ch == '\t') {
      out += "\\t";
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
  }
  return out;
}

const char* status_name(cudaError_t status) noexcept {
  return cudaGetErrorName(status);
}

const char* status_name(cublasStatus_t status) noexcept {
  return cublasLtGetStatusName(status);
}

bool is_sticky_cuda_error(cudaError_t status) noexcept {
  // CUDA Runtime API, cudaError enum: these "leave the process in an inconsistent state and any
  // further CUDA work will return the same error"; the context must be destroyed.
  switch (status) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorTensorMemoryLeak:
      return true;
    default:
      return false;
  }
}

const char* status_name(CUptiResult status) noexcept {
  switch (status) {
    case CUPTI_SUCCESS:
      return "CUPTI_SUCCESS";
    case CUPTI_ERROR_INVALID_PARAMETER:
      return "CUPTI_ERROR_INVALID_PARAMETER";
    case CUPTI_ERROR_INVALID_DEVICE:
      return "CUPTI_ERROR_INVALID_DEVICE";
    case CUPTI_ERROR_INVALID_CONTEXT:
      return "CUPTI_ERROR_INVALID_CONTEXT";
    case CUPTI_ERROR_INVALID_EVENT_DOMAIN_ID:
      return "CUPTI_ERROR_INVALID_EVENT_DOMAIN_ID";
    case CUPTI_ERROR_INVALID_EVENT_ID:
      return "CUPTI_ERROR_INVALID_EVENT_ID";
    case CUPTI_ERROR_INVALID_EVENT_NAME:
      return "CUPTI_ERROR_INVALID_EVENT_NAME";
    case CUPTI_ERROR_INVALID_OPERATION:
      return "CUPTI_ERROR_INVALID_OPERATION";
    case CUPTI_ERROR_OUT_OF_MEMORY:
      return "CUPTI_ERROR_OUT_OF_MEMORY";
    case CUPTI_ERROR_HARDWARE:
      return "CUPTI_ERROR_HARDWARE";
    case CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT:
      return "CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT";
    case CUPTI_ERROR_API_NOT_IMPLEMENTED:
      return "CUPTI_ERROR_API_NOT_IMPLEMENTED";
    case CUPTI_ERROR_MAX_LIMIT_REACHED:
      return "CUPTI_ERROR_MAX_LIMIT_REACHED";
    case CUPTI_ERROR_NOT_READY:
      return "CUPTI_ERROR_NOT_READY";
    case CUPTI_ERROR_NOT_COMPATIBLE:
      return "CUPTI_ERROR_NOT_COMPATIBLE";
    case CUPTI_ERROR_NOT_INITIALIZED:
      return "CUPTI_ERROR_NOT_INITIALIZED";
    case CUPTI_ERROR_INVALID_METRIC_ID:
      return "CUPTI_ERROR_INVALID_METRIC_ID";
    case CUPTI_ERROR_INVALID_METRIC_NAME:
      return "CUPTI_ERROR_INVALID_METRIC_NAME";
    case CUPTI_ERROR_QUEUE_EMPTY:
      return "CUPTI_ERROR_QUEUE_EMPTY";
    case CUPTI_ERROR_INVALID_HANDLE:
      return "CUPTI_ERROR_INVALID_HANDLE";
    case CUPTI_ERROR_INVALID_STREAM:
      return "CUPTI_ERROR_INVALID_STREAM";
    case CUPTI_ERROR_INVALID_KIND:
      return "CUPTI_ERROR_INVALID_KIND";
    case CUPTI_ERROR_INVALID_EVENT_VALUE:
      return "CUPTI_ERROR_INVALID_EVENT_VALUE";
    case CUPTI_ERROR_DISABLED:
      return "CUPTI_ERROR_DISABLED";
    case CUPTI_ERROR_INVALID_MODULE:
      return "CUPTI_ERROR_INVALID_MODULE";
    case CUPTI_ERROR_INVALID_METRIC_VALUE:
      return "CUPTI_ERROR_INVALID_METRIC_VALUE";
    case CUPTI_ERROR_HARDWARE_BUSY:
      return "CUPTI_ERROR_HARDWARE_BUSY";
    case CUPTI_ERROR_NOT_SUPPORTED:
      return "CUPTI_ERROR_NOT_SUPPORTED";
    case CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED:
      return "CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED";
    case CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_DEVICE:
      return "CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_DEVICE";
    case CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_NON_P2P_DEVICES:
      return "CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_NON_P2P_DEVICES";
    case CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_WITH_MPS:
      return "CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_WITH_MPS";
    case CUPTI_ERROR_CDP_TRACING_NOT_SUPPORTED:
      return "CUPTI_ERROR_CDP_TRACING_NOT_SUPPORTED";
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
      return "CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED";
    case CUPTI_ERROR_CUDA_COMPILER_NOT_COMPATIBLE:
      return "CUPTI_ERROR_CUDA_COMPILER_NOT_COMPATIBLE";
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
      return "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
      return "CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED";
    case CUPTI_ERROR_OPENACC_UNDEFINED_ROUTINE:
      return "CUPTI_ERROR_OPENACC_UNDEFINED_ROUTINE";
    case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
      return "CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED";
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      return "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return "CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES";
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
      return "CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED";
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
      return "CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED";
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
      return "CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED";
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
      return "CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED";
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
      return "CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED";
    case CUPTI_ERROR_INVALID_CHIP_NAME:
      return "CUPTI_ERROR_INVALID_CHIP_NAME";
    case CUPTI_ERROR_UNKNOWN:
      return "CUPTI_ERROR_UNKNOWN";
    default:
      break;
  }
  return "CUPTI_ERROR_<unknown>";
}

namespace detail {

static std::string format_api_error(std::string_view api, const char* status, std::string_view call,
                                    const std::source_location& where) {
  std::string msg;
  msg.append(api).append(" call failed with ").append(status ? status : "<unknown status>");
  msg.append(": ").append(call).append(" at ").append(where.file_name()).append(":");
  msg.append(std::to_string(where.line()));
  return msg;
}

void throw_api_error(std::string_view api, const char* status, std::string_view call,
                     const std::source_location& where, std::string_view context) {
  std::string msg = format_api_error(api, status, call, where);
  if (!context.empty()) msg.append(" (").append(context).append(")");
  throw ApiError(msg, std::string(api), status ? status : "<unknown status>", std::string(call));
}

void report_api_error(std::string_view api, const char* status, std::string_view call,
                      const std::source_location& where) noexcept {
  std::fprintf(stderr, "tcbench: %s\n", format_api_error(api, status, call, where).c_str());
}

}  // namespace detail
}  // namespace tcbench
