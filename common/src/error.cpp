#include "tcbench/error.hpp"

#include <cstdio>

namespace tcbench {

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
  throw Error(msg);
}

void report_api_error(std::string_view api, const char* status, std::string_view call,
                      const std::source_location& where) noexcept {
  std::fprintf(stderr, "tcbench: %s\n", format_api_error(api, status, call, where).c_str());
}

}  // namespace detail
}  // namespace tcbench
