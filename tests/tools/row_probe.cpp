// A benchmark binary that needs no GPU: the harness's command line, registration and reporters
// (--benchmark_out's JSON and the row file beside it, tcbench_schema and tcbench_args included),
// with bodies that report given numbers instead of measuring.
//
//   tcbench_row_probe --probe-rows=N --probe-ms=M [Google Benchmark / tcbench flags]
//       Row i is "probe/sleep/fp32/elements:<i>": it sleeps M ms once per body call, reports M ms
//       as its time and i + 1 as its gbps (tests/scripts/test_row_file.py stops it part way).
//   tcbench_row_probe --probe-spec=SPEC --benchmark_out=FILE [Google Benchmark flags]
//       The rows and context SPEC describes, written as a benchmark binary writes them: the
//       Python tests' result fixtures are made this way (tests/scripts/fixtures/gen/). SPEC is
//       text, one tab-separated record per line:
//         context <key> <value>     a custom context entry, in order (tcbench_context's keys)
//         row <name> <seconds,...> <label> <outcome> <counter>=<value,...>;...
//       one seconds value per repetition (--benchmark_repetitions: a row with fewer values
//       repeats its last, as does a counter); outcome empty (it ran), "skipped:<why>" or
//       "error:<what>". A name
//       must be one BenchName builds and a counter one the schema defines (exit 2 otherwise).
#include "tcbench/bench/flags.hpp"
#include "tcbench/bench/measure.hpp"
#include "tcbench/bench/registry.hpp"
#include "tcbench/bench/reporter.hpp"
#include "tcbench/error.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace tcbench;

// One row of a spec.
struct SpecRow {
  std::string name, label, outcome;
  std::vector<double> seconds;                                    // one per repetition
  std::vector<std::pair<Counter, std::vector<double>>> counters;  // per repetition
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) out.push_back(part);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

std::vector<double> numbers(const std::string& s) {
  std::vector<double> out;
  for (const std::string& v : split(s, ','))
    if (!v.empty()) out.push_back(std::stod(v));
  return out;
}

// Reads a spec; throws InvalidArgument naming the line for anything malformed.
void read_spec(const std::string& path, std::vector<std::pair<std::string, std::string>>& context,
               std::vector<SpecRow>& rows) {
  std::ifstream in(path);
  if (!in) throw InvalidArgument("cannot read the spec " + path);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::vector<std::string> f = split(line, '\t');
    try {
      if (f.size() == 3 && f[0] == "context") {
        context.emplace_back(f[1], f[2]);
      } else if (f.size() == 6 && f[0] == "row") {
        SpecRow r{f[1], f[3], f[4], numbers(f[2]), {}};
        for (const std::string& item : split(f[5], ';')) {
          if (item.empty()) continue;
          const std::size_t eq = item.find('=');
          const auto counter = counters::find_counter(item.substr(0, eq));
          if (eq == std::string::npos || !counter)
            throw InvalidArgument("'" + item.substr(0, eq) + "' is no counter of the schema");
          r.counters.emplace_back(*counter, numbers(item.substr(eq + 1)));
        }
        rows.push_back(std::move(r));
      } else if (!line.empty()) {
        throw InvalidArgument("not a context or row record");
      }
    } catch (const std::logic_error& e) {  // InvalidArgument, and stod's invalid_argument
      throw InvalidArgument(path + ":" + std::to_string(number) + ": " + e.what());
    }
  }
}

void register_spec(const std::string& path) {
  std::vector<std::pair<std::string, std::string>> context;
  static std::vector<SpecRow> rows;  // outlives the registered bodies
  read_spec(path, context, rows);
  for (const auto& [key, value] : context) benchmark::AddCustomContext(key, value);
  for (const SpecRow& row : rows) {
    bench::register_gpu_benchmark(row.name, [&row](benchmark::State& st) {
      // The harness writes "skipped: " + what() (or "error: "): the spec's text after the prefix.
      const auto after = [&](std::size_t n) {
        return row.outcome.substr(row.outcome.find_first_not_of(' ', n));
      };
      if (row.outcome.rfind("skipped:", 0) == 0) throw bench::Skipped(after(8));
      if (row.outcome.rfind("error:", 0) == 0) throw Error(after(6));
      // One window per repetition (measure()'s rule): the repetition's index.
      static std::map<std::string, std::size_t> begun;
      const bench::Window w = bench::detail::measure_window([&] {
        bench::Window x;
        x.seconds.count = begun[row.name]++;
        return x;
      });
      const auto at = [rep = w.seconds.count](const std::vector<double>& v) {
        return v.empty() ? 0.0 : v[std::min(rep, v.size() - 1)];
      };
      bench::report_precomputed(st, at(row.seconds));
      for (const auto& [counter, values] : row.counters)
        bench::set_counter(st, counter, at(values));
      if (!row.label.empty()) st.SetLabel(row.label);
    });
  }
}

}  // namespace

int main(int argc, char** argv) {
  int rows = 10, ms = 50;
  std::string spec;
  std::vector<std::string> args;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--probe-rows=", 0) == 0)
      rows = std::atoi(a.c_str() + 13);
    else if (a.rfind("--probe-ms=", 0) == 0)
      ms = std::atoi(a.c_str() + 11);
    else if (a.rfind("--probe-spec=", 0) == 0)
      spec = a.substr(13);
    else
      args.push_back(a);
  }
  const bench::ParseResult parsed = bench::parse_command_line(args);
  if (parsed.error) {
    std::fprintf(stderr, "tcbench_row_probe: %s\n", parsed.error->c_str());
    return 2;
  }
  std::vector<std::string> pass = parsed.line.passthrough;
  std::vector<char*> gbench_argv;
  for (std::string& a : pass) gbench_argv.push_back(a.data());
  int gbench_argc = static_cast<int>(gbench_argv.size());
  benchmark::Initialize(&gbench_argc, gbench_argv.data());
  if (parsed.line.filter) bench::set_name_filter(*parsed.line.filter);
  try {
    if (!spec.empty()) {
      register_spec(spec);
    } else {
      for (int i = 0; i < rows; ++i) {
        const std::string name = BenchName("probe", "sleep", Precision::fp32).arg(Key::elements, i);
        bench::register_gpu_benchmark(name, [i, ms](benchmark::State& st) {
          std::this_thread::sleep_for(std::chrono::milliseconds(ms));
          bench::report_precomputed(st, ms * 1e-3);
          bench::set_counter(st, counters::gbps, i + 1.0);
        });
      }
    }
  } catch (const InvalidArgument& e) {
    std::fprintf(stderr, "tcbench_row_probe: %s\n", e.what());
    return 2;
  }
  bench::run_benchmarks(parsed.line);
  benchmark::Shutdown();
  return 0;
}
