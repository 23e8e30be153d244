#include "tcbench/bench/help.hpp"

#include "tcbench/bench/flags.hpp"

#include <sstream>

namespace tcbench::bench {
namespace {

constexpr std::size_t kWidth = 100;

// `text` wrapped at word boundaries into lines of at most kWidth columns (a longer word stays
// whole on its own line), each starting with `indent`.
std::string wrap(std::string_view text, std::string_view indent) {
  std::string out, line;
  std::istringstream words{std::string(text)};
  for (std::string word; words >> word;) {
    if (!line.empty() && indent.size() + line.size() + 1 + word.size() > kWidth) {
      out += std::string(indent) + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += std::string(indent) + line + "\n";
  return out;
}

// "  NAME  meaning" with the meaning wrapped under itself (column kColumn).
constexpr std::size_t kColumn = 29;
std::string entry(std::string_view name, std::string_view meaning) {
  std::string head = "  " + std::string(name);
  const std::string indent(kColumn, ' ');
  const std::string body = wrap(meaning, indent);
  if (body.empty()) return head + "\n";
  if (head.size() + 2 > kColumn) return head + "\n" + body;
  return head + std::string(kColumn - head.size(), ' ') + body.substr(kColumn);
}

// "0.05 s": a budget as --help shows it, from the constant the harness uses.
std::string seconds(double s) {
  std::ostringstream out;
  out << s << " s";
  return out.str();
}

std::string_view base_name(std::string_view program) {
  const std::size_t slash = program.find_last_of('/');
  return slash == std::string_view::npos ? program : program.substr(slash + 1);
}

}  // namespace

std::string help_text(std::string_view program, const TopicHelp& topic) {
  std::string out = std::string(base_name(program)) + " (tcbench)\n";
  out += wrap(topic.shows, "  ");
  out += wrap("Concept page: " + std::string(topic.concept_page) +
                  " in the tcbench repository: what to expect, and why.",
              "  ") +
         "\n";
  out +=
      "tcbench flags (taken out before Google Benchmark sees the command line):\n" +
      entry("--quick", "the quick suite: a few sizes per question, " + seconds(kQuickMinSeconds) +
                           " per benchmark") +
      entry("--plan[=GPU]",
            "print each selected row's estimated seconds as JSON lines (its work over the "
            "GPU's datasheet peak and bandwidth, a bound, times the samples the harness takes), "
            "then exit; without a GPU, name one (--plan=H200)") +
      "  --clock-policy=as-is|base|max\n"
      "                             as-is (default) times the clocks the driver sets; base or max\n"
      "                             locks the SM clock for the run (needs root) and restores it "
      "on\n"
      "                             exit, error, SIGINT or SIGTERM\n"
      "Google Benchmark flags tcbench checks first:\n" +
      entry("--benchmark_min_time=S",
            "timing budget per benchmark in seconds, S or Ss (default " +
                seconds(kDefaultMinSeconds) + ", " + seconds(kQuickMinSeconds) +
                " with --quick); at least 10 samples are taken whatever S is") +
      "  --benchmark_repetitions=N  repetitions (1 to 100000); 5 or more for `tcbench compare`\n"
      "  --benchmark_filter=REGEX   run the benchmarks whose name matches (names:\n"
      "                             topic/variant/precision/key:value..., see "
      "--benchmark_list_tests)\n"
      "  --benchmark_list_tests     print the names and exit; works without a GPU\n"
      "  --benchmark_time_unit=ns|us|ms|s, --benchmark_format/_out_format=console|json|csv\n\n";
  out += "Environment:\n" +
         entry("TCBENCH_NVML_LIBRARY=PATH",
               "the NVML library to load instead of the driver's libnvidia-ml.so.1 (clocks, power, "
               "energy)");
  std::istringstream lines{std::string(topic.environment)};
  for (std::string line; std::getline(lines, line);) {
    const std::size_t gap = line.find("  ");
    if (gap == std::string::npos)
      out += entry(line, "");
    else
      out += entry(line.substr(0, gap), line.substr(line.find_first_not_of(' ', gap)));
  }
  out +=
      "\nExit codes: 0 every benchmark ran or was skipped with its reason; 1 a benchmark failed\n"
      "(verification or a CUDA/cuBLAS error; the others still ran) or the GPU is unusable;\n"
      "2 usage error (a flag or value tcbench or Google Benchmark rejects), before any GPU check;\n"
      "77 no CUDA GPU (one line on stderr, nothing measured).\n"
      "Results: --benchmark_out=FILE --benchmark_out_format=json, read by `scripts/tcbench "
      "compare`\n"
      "and `scripts/tcbench report`; `scripts/tcbench run` runs every topic this way. Each "
      "finished\n"
      "benchmark also goes to FILE's row file (.jsonl) at once, so a run cut short keeps it.\n\n"
      "Google Benchmark's own flags:\n";
  return out;
}

}  // namespace tcbench::bench
