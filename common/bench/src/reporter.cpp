#include "tcbench/bench/reporter.hpp"

#include "tcbench/bench/registry.hpp"
#include "tcbench/json.hpp"

#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <sstream>

namespace tcbench::bench {
namespace {

// The display Google Benchmark would have made for this command line (its CreateReporter is
// internal): console, with colour only on a terminal, or json or csv.
std::unique_ptr<benchmark::BenchmarkReporter> display_reporter(const CommandLine& line) {
  if (line.display_format == "json") return std::make_unique<benchmark::JSONReporter>();
  if (line.display_format == "csv") {
    BENCHMARK_DISABLE_DEPRECATED_WARNING  // still Google Benchmark's --benchmark_format=csv
        return std::make_unique<benchmark::CSVReporter>();
    BENCHMARK_RESTORE_DEPRECATED_WARNING
  }
  int options = benchmark::ConsoleReporter::OO_None;
  const bool on_terminal = isatty(STDOUT_FILENO) != 0;
  if (line.color == "true" || line.color == "yes" || line.color == "1" ||
      (line.color == "auto" && on_terminal))
    options |= benchmark::ConsoleReporter::OO_Color;
  if (line.counters_tabular) options |= benchmark::ConsoleReporter::OO_Tabular;
  return std::make_unique<benchmark::ConsoleReporter>(
      static_cast<benchmark::ConsoleReporter::OutputOptions>(options));
}

// The display, and every finished benchmark appended to the row file and flushed at once.
class RowFileReporter final : public benchmark::BenchmarkReporter {
 public:
  RowFileReporter(std::unique_ptr<benchmark::BenchmarkReporter> display, std::FILE* rows,
                  std::vector<std::string> planned)
      : display_(std::move(display)), rows_(rows), planned_(std::move(planned)) {
    json_.SetOutputStream(&text_);
    json_.SetErrorStream(&text_);
  }
  RowFileReporter(const RowFileReporter&) = delete;  // owns the row file
  RowFileReporter& operator=(const RowFileReporter&) = delete;
  ~RowFileReporter() override { std::fclose(rows_); }

  bool ReportContext(const Context& context) override {
    const bool go_on = display_->ReportContext(context);
    // Google Benchmark's JSON header: {"context": {...}, "benchmarks": [  -> the context object.
    text_.str("");
    json_.ReportContext(context);
    const std::string header = text_.str() + "]}";
    const std::vector<std::string> values = split_json_values(header);
    std::string line = values.empty() ? std::string("{\"context\":{}}") : values.front();
    const std::string tail = ",\"benchmarks\":[]}";
    if (line.size() >= tail.size() &&
        line.compare(line.size() - tail.size(), tail.size(), tail) == 0)
      line.resize(line.size() - tail.size());
    else
      line.pop_back();  // the closing brace
    line += ",\"tcbench_planned\":[";
    for (std::size_t i = 0; i < planned_.size(); ++i)
      line += (i ? "," : "") + json_string(planned_[i]);
    write_line(line + "]}");
    return go_on;
  }

  void ReportRuns(const std::vector<Run>& runs) override {
    display_->ReportRuns(runs);
    text_.str("");
    json_.ReportRuns(runs);
    for (const std::string& row : split_json_values(text_.str())) write_line(row);
  }

  void Finalize() override {
    display_->Finalize();
    write_line("{\"tcbench_finished\":true}");
  }

 private:
  void write_line(const std::string& line) {
    // One write and a flush per line: a kill between two benchmarks leaves whole lines, and a
    // kill in the middle of one leaves a last line the reader drops.
    std::fputs((line + "\n").c_str(), rows_);
    std::fflush(rows_);
  }

  std::unique_ptr<benchmark::BenchmarkReporter> display_;
  std::FILE* rows_;
  std::vector<std::string> planned_;
  benchmark::JSONReporter json_;  // formats each row exactly as --benchmark_out's JSON does
  std::ostringstream text_;
};

}  // namespace

std::string row_file_path(std::string_view out) {
  constexpr std::string_view json = ".json";
  if (out.size() > json.size() && out.substr(out.size() - json.size()) == json)
    return std::string(out) + "l";
  return std::string(out) + ".jsonl";
}

std::vector<std::string> split_json_values(std::string_view text) {
  std::vector<std::string> out;
  std::string current;
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      current += c;
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') continue;
    if (depth == 0 && c != '{' && c != '[') continue;  // the commas between values
    current += c;
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) {
        out.push_back(std::move(current));
        current.clear();
      }
    }
  }
  return out;
}

std::size_t run_benchmarks(const CommandLine& line) {
  if (!line.out_path) return benchmark::RunSpecifiedBenchmarks();
  const std::string path = row_file_path(*line.out_path);
  std::FILE* rows = std::fopen(path.c_str(), "w");
  if (rows == nullptr) {
    std::fprintf(stderr,
                 "tcbench: cannot write the row file %s; results are only in %s (lost if the run "
                 "is cut short).\n",
                 path.c_str(), line.out_path->c_str());
    return benchmark::RunSpecifiedBenchmarks();
  }
  RowFileReporter reporter(display_reporter(line), rows, registered_names());
  return benchmark::RunSpecifiedBenchmarks(&reporter);
}

}  // namespace tcbench::bench
