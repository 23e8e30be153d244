#include "tcbench/bench/flags.hpp"

#include <cerrno>
#include <cstdlib>
#include <regex>
#include <string_view>

namespace tcbench::bench {
namespace {

// The value of --name=value, or nullopt when `arg` is not that flag.
std::optional<std::string> flag_value(std::string_view arg, std::string_view flag) {
  if (arg.substr(0, flag.size()) != flag) return std::nullopt;
  if (arg.size() == flag.size()) return std::string();  // bare boolean flag
  if (arg[flag.size()] != '=') return std::nullopt;
  return std::string(arg.substr(flag.size() + 1));
}

constexpr double kMaxMinTime = 1e6;  // seconds
constexpr long kMaxRepetitions = 100000;

// "0.5" or "0.5s" (Google Benchmark >= 1.8 spells seconds with the suffix) without the suffix.
std::string without_seconds_suffix(std::string s) {
  if (!s.empty() && s.back() == 's') s.pop_back();
  return s;
}

std::optional<double> parse_seconds(const std::string& text) {
  const std::string s = without_seconds_suffix(text);
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || end != s.c_str() + s.size() || !(v >= 0) || v > kMaxMinTime)
    return std::nullopt;
  return v;
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
    if (arg == "--quick") {
      r.line.quick = true;
      continue;
    }
    if (arg == "--plan") {
      r.line.plan = true;
      continue;
    }
    std::optional<std::string> v;
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
      try {
        std::regex re(*v, std::regex::extended);
      } catch (const std::regex_error& e) {
        r.error =
            "--benchmark_filter='" + *v + "' is not a valid regular expression (" + e.what() + ").";
        return r;
      }
    } else if ((v = flag_value(arg, "--benchmark_repetitions"))) {
      char* end = nullptr;
      const long n = std::strtol(v->c_str(), &end, 10);
      if (v->empty() || end != v->c_str() + v->size() || n < 1 || n > kMaxRepetitions) {
        r.error = "--benchmark_repetitions=" + *v + " must be an integer from 1 to 100000.";
        return r;
      }
    } else if ((v = flag_value(arg, "--benchmark_min_time"))) {
      const auto seconds = parse_seconds(*v);
      if (!seconds) {
        r.error = "--benchmark_min_time=" + *v +
                  " must be a number of seconds from 0 to 1e6, written 0.5 or 0.5s.";
        return r;
      }
      r.line.min_time_seconds = *seconds;
      // The bundled Google Benchmark 1.7 parses the flag as a double: give it the plain number.
      r.line.passthrough.push_back("--benchmark_min_time=" + without_seconds_suffix(*v));
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
    } else if ((v = flag_value(arg, "--benchmark_format"))) {
      if (*v != "console" && *v != "json" && *v != "csv") {
        r.error = "--benchmark_format=" + *v + " must be console, json or csv.";
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
