#include "tcbench/bench/reporter.hpp"

#include "tcbench/bench/registry.hpp"
#include "tcbench/json.hpp"
#include "tcbench/schema.hpp"

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

// Google Benchmark's JSON for one row with `"tcbench_args": {...}` after its name (the first
// member), when the row's benchmark was registered by the harness; `pretty` keeps the
// indentation of --benchmark_out's file.
std::string with_args(std::string row, const std::string& function_name, bool pretty) {
  const std::optional<std::string> args = registered_args(function_name);
  const std::size_t key = row.find("\"name\":");
  if (!args || key == std::string::npos) return row;
  // The end of the name's string value, then the comma after it.
  std::size_t i = row.find('"', key + 7);
  for (++i; i < row.size() && row[i] != '"'; ++i)
    if (row[i] == '\\') ++i;
  const std::size_t comma = row.find(',', i);
  if (comma == std::string::npos) return row;
  const std::string member =
      pretty ? "\n      \"tcbench_args\": " + *args + "," : "\"tcbench_args\":" + *args + ",";
  return row.insert(comma + 1, member);
}

// Google Benchmark's JSON header ({"context": {...}, "benchmarks": [) with tcbench_schema as the
// context's last member. `pretty`: --benchmark_out's indentation, else the schema on one line.
std::string with_schema(std::string header, bool pretty) {
  const std::size_t benchmarks = header.find("\"benchmarks\"");
  const std::size_t close = header.rfind('}', benchmarks);
  if (close == std::string::npos) return header;
  const std::size_t last = header.find_last_not_of(" \n\t\r", close - 1);
  const std::string schema =
      pretty ? json_nested(schema_json(), "    ") : split_json_values(schema_json()).front();
  const std::string sep = header[last] == '{' ? "" : ",";
  const std::string member =
      pretty ? sep + "\n    \"tcbench_schema\": " + schema : sep + "\"tcbench_schema\":" + schema;
  return header.insert(last + 1, member);
}

// --benchmark_out's JSON: Google Benchmark's own reporter, with tcbench_schema in the context
// and tcbench_args in each row (every other field as Google Benchmark writes it).
class FileReporter final : public benchmark::JSONReporter {
 public:
  bool ReportContext(const Context& context) override {
    std::ostringstream text;
    std::ostream& out = GetOutputStream();
    SetOutputStream(&text);
    const bool go_on = JSONReporter::ReportContext(context);
    SetOutputStream(&out);
    out << with_schema(text.str(), true);
    return go_on;
  }

  void ReportRuns(const std::vector<Run>& runs) override {
    std::ostream& out = GetOutputStream();
    for (const Run& run : runs) {
      std::ostringstream text;
      SetOutputStream(&text);
      JSONReporter::ReportRuns({run});
      SetOutputStream(&out);
      out << with_args(text.str(), run.run_name.function_name, true);
    }
  }
};

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
    const std::string header = with_schema(text_.str(), false) + "]}";
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
    for (const Run& run : runs) {
      text_.str("");
      json_.ReportRuns({run});
      for (const std::string& row : split_json_values(text_.str()))
        write_line(with_args(row, run.run_name.function_name, false));
    }
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
  // tcbench's additions go into JSON only; console or csv files are Google Benchmark's own.
  FileReporter json_file;
  benchmark::BenchmarkReporter* file = line.out_format == "json" ? &json_file : nullptr;
  const std::string path = row_file_path(*line.out_path);
  std::FILE* rows = std::fopen(path.c_str(), "w");
  if (rows == nullptr) {
    std::fprintf(stderr,
                 "tcbench: cannot write the row file %s; results are only in %s (lost if the run "
                 "is cut short).\n",
                 path.c_str(), line.out_path->c_str());
    const auto display = display_reporter(line);
    return benchmark::RunSpecifiedBenchmarks(display.get(), file);
  }
  RowFileReporter reporter(display_reporter(line), rows, registered_names());
  return benchmark::RunSpecifiedBenchmarks(&reporter, file);
}

std::string listing_json() {
  std::string out = "{\n  \"context\": {\n  },\n  \"benchmarks\": [";
  out = with_schema(out, true);
  const std::vector<std::string>& names = registered_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    out += std::string(i ? "," : "") + "\n    {\"name\": " + json_string(names[i]) +
           ", \"tcbench_args\": " + registered_args(names[i]).value_or("{}") + "}";
  return out + "\n  ]\n}\n";
}

}  // namespace tcbench::bench
