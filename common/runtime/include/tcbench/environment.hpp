// The environment variables tcbench's binaries read: one table, each variable with the values it
// takes, all checked by the benchmarks' shared main before anything runs (exit 2 with one
// sentence, on a machine with or without a GPU). This file is the only reader of the process
// environment in common/, kernels/ and benchmarks/ (CTest environment.one_reader): a new variable
// is a row of kVariables and a typed reader here.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tcbench::environment {

struct Variable {
  std::string_view name;
  std::string_view takes;  // the values it takes, in words (for the error sentence)
  // Why `value` is not one of them (a clause), or nullopt when it is.
  std::optional<std::string> (*check)(std::string_view value);
};

inline constexpr std::string_view kAlignmentN = "TCBENCH_ALIGNMENT_N";
inline constexpr std::string_view kCounters = "TCBENCH_COUNTERS";
inline constexpr std::string_view kIdleLimit = "TCBENCH_IDLE_LIMIT_S";
inline constexpr std::string_view kNvmlLibrary = "TCBENCH_NVML_LIBRARY";
inline constexpr std::string_view kSustainedLimit = "TCBENCH_SUSTAINED_LIMIT_S";

// Every variable, in the order problem() checks them.
std::span<const Variable> variables();

// The value of `name` when it is set (empty values included), from the process environment.
std::optional<std::string> value(std::string_view name);

// The first variable of the table that is set to a value it does not take, as a sentence without
// its full stop: "TCBENCH_ALIGNMENT_N='33,0': '0' is not a positive dimension ... (it takes ...)".
std::optional<std::string> problem();

// TCBENCH_ALIGNMENT_N: extra N values, "33,100,1000"; empty when unset. Throws InvalidArgument
// with problem()'s sentence on a bad value (main has refused it already).
std::vector<std::int64_t> alignment_n();

// TCBENCH_COUNTERS: false when set to off, 0 or no (the in-process CUPTI counters are off).
bool counters_enabled();

// TCBENCH_NVML_LIBRARY: the NVML library to dlopen instead of the driver's; nullopt when unset
// or empty.
std::optional<std::string> nvml_library();

// TCBENCH_SUSTAINED_LIMIT_S: the longest a sustained row loads the GPU looking for its steady
// state, in seconds (4 to 3600; the default, 60, when unset). Throws InvalidArgument with
// problem()'s sentence on a bad value (main has refused it already).
inline constexpr double kDefaultSustainedLimitS = 60;
double sustained_limit_s();

// TCBENCH_IDLE_LIMIT_S: the longest a burst or sustained row waits for the GPU to idle before
// its load, in seconds (2, the idle rule's two 1 s windows, to 600; the default, 10, when unset).
// Throws InvalidArgument with problem()'s sentence on a bad value.
inline constexpr double kDefaultIdleLimitS = 10;
double idle_limit_s();

}  // namespace tcbench::environment
