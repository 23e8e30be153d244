// Error checking for every CUDA-family API tcbench calls.
//
// One macro per API. Each stringizes the call, and the thrown tcbench::Error names the status
// (e.g. "CUBLAS_STATUS_NOT_SUPPORTED"), the call and file:line, so a failure on a user's GPU box
// can be diagnosed from the message alone. The _NOEXCEPT twins report to stderr instead of
// throwing; destructors use them.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cupti_result.h>

#include <source_location>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace tcbench {

// Every failure tcbench reports. what() is a complete sentence for a human.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// No usable CUDA device (no driver, no GPU, or CUDA_VISIBLE_DEVICES hides them all).
// Benchmarks turn this into one line on stderr and exit code 77; device tests into GTEST_SKIP.
class NoDevice : public Error {
 public:
  using Error::Error;
};

// Bad input from the user or the caller (sizes, shapes, an unsupported precision).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// A CUDA, cuBLAS or CUPTI call that failed (TCB_CUDA, TCB_CUBLAS, TCB_CUPTI): what() is the
// sentence; api(), status() and call() let a caller that recovers record which call and status
// (a row whose CUPTI counters failed keeps its timing and names them,
// benchmarks/tensor_counters.hpp).
class ApiError : public Error {
 public:
  ApiError(const std::string& what, std::string api, std::string status, std::string call)
      : Error(what), api_(std::move(api)), status_(std::move(status)), call_(std::move(call)) {}
  const std::string& api() const noexcept { return api_; }        // "CUDA", "cuBLAS", "CUPTI"
  const std::string& status() const noexcept { return status_; }  // "CUPTI_ERROR_UNKNOWN"
  const std::string& call() const noexcept { return call_; }      // the call as written

 private:
  std::string api_, status_, call_;
};

// `text` as a message may echo it: every byte outside printable ASCII (control characters,
// DEL, and each byte of a non-ASCII character) written as \xNN (\n, \r, \t by name), so that a
// value from the command line or the environment can neither move the terminal's cursor nor
// start a line of its own. Escaping twice changes nothing. (The Python tools' twin,
// scripts/tcbench_tools/printable.py, keeps printable non-ASCII characters.)
std::string printable(std::string_view text);

const char* status_name(cudaError_t status) noexcept;
const char* status_name(cublasStatus_t status) noexcept;
// A switch, not cuptiGetResultString: tcbench_facts must not need libcupti to name a status.
const char* status_name(CUptiResult status) noexcept;

// True for the CUDA errors that leave the context unusable ("sticky" errors: every later call
// in the process returns them), after which no further benchmark can run.
bool is_sticky_cuda_error(cudaError_t status) noexcept;

// A GPU is there (or a driver is), but tcbench cannot use it: a driver too old for CUDA 13, a
// driver/library mismatch, a stopped fabric manager. Unlike NoDevice this is a failure (exit 1),
// never a skip: a broken GPU box must not read as "nothing to test".
class DeviceUnusable : public Error {
 public:
  using Error::Error;
};

namespace detail {
[[noreturn]] void throw_api_error(std::string_view api, const char* status, std::string_view call,
                                  const std::source_location& where, std::string_view context);
void report_api_error(std::string_view api, const char* status, std::string_view call,
                      const std::source_location& where) noexcept;
}  // namespace detail

}  // namespace tcbench

// TCB_CUDA(cudaMalloc(&p, n)) throws with the status name, the call and file:line; the _CTX form
// adds one context string (the shapes, the sizes), e.g.
// TCB_CUDA_CTX(cudaMalloc(&p, n), "allocating " + std::to_string(n) + " bytes").
#define TCB_API_CHECK_(api, ok, expr, ctx)                                                \
  do {                                                                                    \
    auto tcb_status_ = (expr);                                                            \
    if (tcb_status_ != (ok)) {                                                            \
      ::tcbench::detail::throw_api_error(api, ::tcbench::status_name(tcb_status_), #expr, \
                                         std::source_location::current(), ctx);           \
    }                                                                                     \
  } while (false)

#define TCB_API_CHECK_NOEXCEPT_(api, ok, expr)                                             \
  do {                                                                                     \
    auto tcb_status_ = (expr);                                                             \
    if (tcb_status_ != (ok)) {                                                             \
      ::tcbench::detail::report_api_error(api, ::tcbench::status_name(tcb_status_), #expr, \
                                          std::source_location::current());                \
    }                                                                                      \
  } while (false)

#define TCB_CUDA(expr) TCB_API_CHECK_("CUDA", cudaSuccess, expr, "")
#define TCB_CUDA_CTX(expr, ctx) TCB_API_CHECK_("CUDA", cudaSuccess, expr, ctx)
#define TCB_CUDA_NOEXCEPT(expr) TCB_API_CHECK_NOEXCEPT_("CUDA", cudaSuccess, expr)
#define TCB_CUBLAS(expr) TCB_API_CHECK_("cuBLAS", CUBLAS_STATUS_SUCCESS, expr, "")
#define TCB_CUBLAS_CTX(expr, ctx) TCB_API_CHECK_("cuBLAS", CUBLAS_STATUS_SUCCESS, expr, ctx)
#define TCB_CUBLAS_NOEXCEPT(expr) TCB_API_CHECK_NOEXCEPT_("cuBLAS", CUBLAS_STATUS_SUCCESS, expr)
#define TCB_CUPTI(expr) TCB_API_CHECK_("CUPTI", CUPTI_SUCCESS, expr, "")
#define TCB_CUPTI_CTX(expr, ctx) TCB_API_CHECK_("CUPTI", CUPTI_SUCCESS, expr, ctx)
#define TCB_CUPTI_NOEXCEPT(expr) TCB_API_CHECK_NOEXCEPT_("CUPTI", CUPTI_SUCCESS, expr)

// A kernel launch is checked twice: the launch itself (bad configuration) here, execution errors
// at the next synchronizing call.
#define TCB_CUDA_LAUNCH(ctx) TCB_CUDA_CTX(cudaGetLastError(), ctx)
