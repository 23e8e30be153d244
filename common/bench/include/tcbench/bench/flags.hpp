// The command line of a benchmark binary: tcbench's own flags, and the Google Benchmark flags
// tcbench checks itself, so a usage error is reported the same way (one sentence, exit 2) on a
// machine with or without a GPU, before anything is measured.
#pragma once

#include "tcbench/bench/name_filter.hpp"
#include "tcbench/clock_policy.hpp"
#include "tcbench/schema.hpp"

#include <optional>
#include <string>
#include <vector>

namespace tcbench::bench {

// The sampling budget per benchmark, in seconds, when --benchmark_min_time is not given: the
// run_options() default and what --help says (schema.hpp: the result file's schema states both).
using tcbench::kDefaultMinSeconds;
using tcbench::kQuickMinSeconds;  // --quick

struct CommandLine {
  bool quick = false;       // --quick
  bool help = false;        // --help or -h: tcbench's part, then GBench's
  bool list_tests = false;  // --benchmark_list_tests[=true]
  bool plan = false;  // --plan[=GPU]: each selected row's estimated seconds (plan.hpp), then exit
  std::optional<std::string> plan_gpu;     // --plan=GPU: a GPU named_gpu knows (no device needed)
  std::optional<double> min_time_seconds;  // --benchmark_min_time=X or Xs (seconds)
  ClockPolicy clock_policy = ClockPolicy::as_is;  // --clock-policy=as-is|base|max
  std::optional<NameFilter> filter;               // --benchmark_filter=REGEX (not passed on)
  long repetitions = 1;                           // --benchmark_repetitions=N (passed on)
  std::optional<std::string> out_path;            // --benchmark_out=FILE (passed on)
  std::string out_format = "json";                // --benchmark_out_format (passed on)
  std::string display_format = "console";         // --benchmark_format (passed on)
  std::string color = "auto";                     // --benchmark_color (passed on)
  bool counters_tabular = false;                  // --benchmark_counters_tabular (passed on)
  std::vector<std::string> passthrough;  // everything for benchmark::Initialize, argv[0] first
};

// The limits a usage error states.
inline constexpr long kMaxRepetitions = 100000;
inline constexpr double kMaxMinTimeSeconds = 1e6;

// Parses `args` (argv[0] first). Returns the usage error as a sentence, or the command line.
// Checked here: --benchmark_filter is a POSIX extended regular expression tcbench can match in
// linear time (NameFilter; it is taken out of Google Benchmark's argv, whose std::regex matcher
// backtracks), --benchmark_repetitions a whole number from 1 to 100000, --benchmark_min_time a
// number of seconds from 0 to 1e6 ("0.5" or "0.5s"; passed on in the form the linked Google
// Benchmark takes), the output formats are console, json or csv, --clock-policy is as-is, base or
// max, --benchmark_time_unit is ns, us, ms or s (1.7 prints its usage and exits 0 on any
// other). --help or -h anywhere wins over every other argument. Unknown flags are left to Google
// Benchmark, which rejects them.
struct ParseResult {
  std::optional<std::string> error;
  CommandLine line;
};
ParseResult parse_command_line(const std::vector<std::string>& args);

}  // namespace tcbench::bench
