#include "tcbench/bench/flags.hpp"

#include "tcbench/error.hpp"
#include "tcbench/peaks.hpp"

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <regex>
#include <string_view>

// 1 when the linked Google Benchmark (>= 1.8) spells --benchmark_min_time with a unit ("0.5s");
// 1.7 takes a plain number and rejects "0.5s". Set by CMake from the package's version.
#ifndef TCBENCH_GBENCH_MIN_TIME_SUFFIX
#define TCBENCH_GBENCH_MIN_TIME_SUFFIX 0
#endif

namespace tcbench::bench {
namespace {

// The value of --name=value, or nullopt when `arg` is not that flag.
std::optional<std::string> flag_value(std::string_view arg, std::string_view flag) {
  if (arg.substr(0, flag.size()) != flag) return std::nullopt;
  if (arg.size() == flag.size()) return std::string();  // bare boolean flag
  if (arg[flag.size()] != '=') return std::nullopt;
  return std::string(arg.substr(flag.size() + 1));
}

// Seconds, written "0.5" or "0.5s" (Google Benchmark >= 1.8's spelling), from 0 to 1e6.
std::optional<double> parse_seconds(std::string s) {
  if (!s.empty() && s.back() == 's') s.pop_back();
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || end != s.c_str() + s.size() || !(v >= 0) || v > kMaxMinTimeSeconds)
    return std::nullopt;
  return v;
}

// --benchmark_min_time as the linked Google Benchmark reads it.
std::string min_time_flag(double seconds) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, seconds);
  std::string text(buf, ec == std::errc() ? end : buf);
  return "--benchmark_min_time=" + text + (TCBENCH_GBENCH_MIN_TIME_SUFFIX ? "s" : "");
}

bool parse_bool(const std::string& v, bool& out) {
  if (v.empty() || v == "true" || v == "1" || v == "yes") return out = true, true;
  if (v == "false" || v == "0" || v == "no") return out = false, true;
  return false;
}

}  // namespace

ParseResult parse_command_line(const std::vector<std::string>& args) {
  ParseResult r;
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") {
      // Help wins: what the binary is and how to call it, whatever else the line holds.
      r.line.help = true;
      r.line.passthrough = {args.empty() ? std::string("bench") : args[0], "--help"};
      return r;
    }
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (i == 0) {
      r.line.passthrough.push_back(arg);
      continue;
    }
    // Google Benchmark echoes a flag it does not know as it is: a control character in one
    // (an escape sequence, a newline) is refused here, where the message escapes it.
    for (const char ch : arg) {
      const auto byte = static_cast<unsigned char>(ch);
      if (byte < 0x20 || byte == 0x7f) {
        r.error = "argument " + std::to_string(i) + " ('" + printable(arg) +
                  "') holds a control character, which no flag or benchmark name has.";
        return r;
      }
    }
    if (arg == "--quick") {
      r.line.quick = true;
      continue;
    }
    std::optional<std::string> v;
    if ((v = flag_value(arg, "--plan"))) {
      if (!v->empty() && !named_gpu(*v)) {
        r.error = "--plan=" + *v + " names no GPU tcbench knows (" + named_gpu_names() + ").";
        return r;
      }
      r.line.plan = true;
      if (!v->empty()) r.line.plan_gpu = *v;
      continue;
    }
    if ((v = flag_value(arg, "--clock-policy"))) {
      const auto policy = parse_clock_policy(*v);
      if (!policy) {
        r.error = "--clock-policy=" + *v + " must be as-is, base or max.";
        return r;
      }
      r.line.clock_policy = *policy;
      continue;  // tcbench's own flag: not for Google Benchmark
    }
    if ((v = flag_value(arg, "--benchmark_filter"))) {
      // Parsed (and bounded) first: std::regex's own compiler could take the machine's memory
      // on "(a{1000}){1000}".
      auto filter = NameFilter::parse(*v);
      if (const auto* why = std::get_if<std::string>(&filter)) {
        r.error = "--benchmark_filter='" + *v + "' is not a filter tcbench accepts: " + *why + ".";
        return r;
      }
      try {  // and what Google Benchmark's std::regex would have refused, refused the same way
        std::regex re(*v, std::regex::extended);
      } catch (const std::regex_error& e) {
        r.error =
            "--benchmark_filter='" + *v + "' is not a valid regular expression (" + e.what() + ").";
        return r;
      }
      r.line.filter = std::get<NameFilter>(std::move(filter));
      continue;  // matched by tcbench at registration, never by Google Benchmark's backtracking
    } else if ((v = flag_value(arg, "--benchmark_repetitions"))) {
      char* end = nullptr;
      errno = 0;
      const long n = std::strtol(v->c_str(), &end, 10);
      if (v->empty() || errno != 0 || end != v->c_str() + v->size() || n < 1 ||
          n > kMaxRepetitions) {
        r.error = "--benchmark_repetitions=" + *v + " must be a whole number from 1 to " +
                  std::to_string(kMaxRepetitions) + ".";
        return r;
      }
      r.line.repetitions = n;
    } else if ((v = flag_value(arg, "--benchmark_min_time"))) {
      const auto seconds = parse_seconds(*v);
      if (!seconds) {
        r.error = "--benchmark_min_time=" + *v +
                  " must be a number of seconds from 0 to 1000000, written like 0.5 or 0.5s.";
        return r;
      }
      r.line.min_time_seconds = *seconds;
      r.line.passthrough.push_back(min_time_flag(*seconds));
      continue;
    } else if ((v = flag_value(arg, "--benchmark_time_unit"))) {
      if (*v != "ns" && *v != "us" && *v != "ms" && *v != "s") {
        r.error = "--benchmark_time_unit=" + *v + " must be ns, us, ms or s.";
        return r;
      }
    } else if ((v = flag_value(arg, "--benchmark_out_format"))) {
      if (*v != "console" && *v != "json" && *v != "csv") {
        r.error = "--benchmark_out_format=" + *v + " must be console, json or csv.";
        return r;
      }
      r.line.out_format = *v;
    } else if ((v = flag_value(arg, "--benchmark_format"))) {
      if (*v != "console" && *v != "json" && *v != "csv") {
        r.error = "--benchmark_format=" + *v + " must be console, json or csv.";
        return r;
      }
      r.line.display_format = *v;
    } else if ((v = flag_value(arg, "--benchmark_out"))) {
      if (v->empty()) {
        r.error = "--benchmark_out needs a file name (--benchmark_out=FILE).";
        return r;
      }
      r.line.out_path = *v;
    } else if ((v = flag_value(arg, "--benchmark_color"))) {
      r.line.color = *v;
    } else if ((v = flag_value(arg, "--benchmark_counters_tabular"))) {
      if (!parse_bool(*v, r.line.counters_tabular)) {
        r.error = "--benchmark_counters_tabular=" + *v + " must be true or false.";
        return r;
      }
    } else if ((v = flag_value(arg, "--benchmark_list_tests"))) {
      if (!parse_bool(*v, r.line.list_tests)) {
        r.error = "--benchmark_list_tests=" + *v + " must be true or false.";
        return r;
      }
    }
    r.line.passthrough.push_back(arg);
  }
  return r;
}

}  // namespace tcbench::bench
