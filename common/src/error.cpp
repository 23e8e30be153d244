#include "tcbench/error.hpp"

#include <cstdio>

namespace tcbench {

const char* status_name(cudaError_t status) noexcept {
  return cudaGetErrorName(status);
}

const char* status_name(cublasStatus_t status) noexcept {
  return cublasLtGetStatusName(status);
}

const char* status_name(curandStatus_t status) noexcept {
  switch (status) {
    case CURAND_STATUS_SUCCESS:
      return "CURAND_STATUS_SUCCESS";
    case CURAND_STATUS_VERSION_MISMATCH:
      return "CURAND_STATUS_VERSION_MISMATCH";
    case CURAND_STATUS_NOT_INITIALIZED:
      return "CURAND_STATUS_NOT_INITIALIZED";
    case CURAND_STATUS_ALLOCATION_FAILED:
      return "CURAND_STATUS_ALLOCATION_FAILED";
    case CURAND_STATUS_TYPE_ERROR:
      return "CURAND_STATUS_TYPE_ERROR";
    case CURAND_STATUS_OUT_OF_RANGE:
      return "CURAND_STATUS_OUT_OF_RANGE";
    case CURAND_STATUS_LENGTH_NOT_MULTIPLE:
      return "CURAND_STATUS_LENGTH_NOT_MULTIPLE";
    case CURAND_STATUS_DOUBLE_PRECISION_REQUIRED:
      return "CURAND_STATUS_DOUBLE_PRECISION_REQUIRED";
    case CURAND_STATUS_LAUNCH_FAILURE:
      return "CURAND_STATUS_LAUNCH_FAILURE";
    case CURAND_STATUS_PREEXISTING_FAILURE:
      return "CURAND_STATUS_PREEXISTING_FAILURE";
    case CURAND_STATUS_INITIALIZATION_FAILED:
      return "CURAND_STATUS_INITIALIZATION_FAILED";
    case CURAND_STATUS_ARCH_MISMATCH:
      return "CURAND_STATUS_ARCH_MISMATCH";
    case CURAND_STATUS_INTERNAL_ERROR:
      return "CURAND_STATUS_INTERNAL_ERROR";
  }
  return "CURAND_STATUS_<unknown>";
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
