// --benchmark_filter as tcbench matches it (name_filter.hpp): the same answers as
// std::regex_search with std::regex::extended (what Google Benchmark 1.7 runs, here as the
// independent reference), in time linear in the name whatever the pattern, and the command line
// that takes the filter out of Google Benchmark's argv.
//
// Checked before the fix: Google Benchmark's matcher on "(.*)*x" did not return within 20 s on
// bench_alignment's 1795 names, ".*.*.*x" took over a minute (the CTest filter_bounded.* tests
// time out on that build); here NameFilter answers both in milliseconds.
#include "tcbench/bench/flags.hpp"
#include "tcbench/bench/name_filter.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <string>
#include <vector>

namespace tcbench::bench {
namespace {

NameFilter filter(const std::string& spec) {
  auto parsed = NameFilter::parse(spec);
  if (const auto* why = std::get_if<std::string>(&parsed)) {
    ADD_FAILURE() << spec << " was refused: " << *why;
    return NameFilter();
  }
  return std::get<NameFilter>(std::move(parsed));
}

std::string refusal(const std::string& spec) {
  auto parsed = NameFilter::parse(spec);
  const auto* why = std::get_if<std::string>(&parsed);
  return why ? *why : std::string();
}

const std::vector<std::string> kNames = {
    "alignment/cublaslt/fp16/m:4096/n:33/k:4096/layout:nn/manual_time",
    "alignment/cublaslt/fp16/m:4096/n:32/k:4096/layout:tn/manual_time",
    "alignment/wmma/bf16/m:4096/n:4096/k:4095/layout:tn/manual_time",
    "int8_gemm/cublaslt/int8/m:8192/n:8192/k:8192/layout:tn/manual_time",
    "fp8/recipe_delayed/fp8/m:4096/n:4096/k:4096/layout:tn/history:16/margin:0/manual_time",
    "loss_scaling/unscale/fp32/elements:10000000/manual_time",
    "tensor_peak/mma_sync/fp16_acc16/manual_time",
    "fp16_vs_fp32/simt/fp32/m:1024/n:1024/k:1024/layout:nn/manual_time",
    "x",
    "",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab",
    "a.b[c]d(e)f|g*h+i?j{k}l^m$n\\o",
};

// Every pattern here is small enough for std::regex to answer quickly on these names.
const std::vector<std::string> kPatterns = {
    "fp16",
    "^alignment/",
    "^alignment/.*k:4095",
    "layout:tn$",
    "layout:tn/manual_time$",
    "cublaslt/(fp16|bf16)/m:4096",
    "/m:[0-9]+/n:[0-9]+/",
    "/n:3[23]/",
    "/n:3[^2]/",
    "m:[[:digit:]]{4}/n",
    "m:[[:digit:]]{5}",
    "n:(32|33){1,2}/",
    "k:4096/layout:(nn|tn)",
    "fp(8|16)(_acc16)?/",
    "^(int8|fp8)_?",
    "a{3,}b$",
    "a{2,4}b",
    "^x$",
    "^$",
    "",
    "e?$",
    "\\.b\\[c]d\\(e\\)f\\|g\\*h\\+i\\?j\\{k}l\\^m\\$n\\\\o",
    "a]b",
    "a}b",
    "a**",
    "a{2}{3}",
    "a{0}b",
    "(|a)",
    "[\\d]",
    "[[=a=]]",
    "[]]d",
    "[a-]b",
    "[-a]b",
    "[^a-z0-9/:_]",
    "[[:upper:]]",
    "[[.a.]-c]",
    "(a|b|c)(d|e|f)",
    "(fp16|bf16|tf32|int8|fp8)/m:4096/n:33/",
    "((a))((b))",
    "a^b",
    "a$b",
    "()a",
    "a|",
    "|a",
    "(.*)x",
    "simt.*fp32",
    "t.*t.*t",
};

TEST(NameFilter, AnswersAsStdRegexExtended) {
  for (const std::string& pattern : kPatterns) {
    const NameFilter f = filter(pattern);
    const std::regex reference(pattern, std::regex::extended);
    for (const std::string& name : kNames)
      EXPECT_EQ(f.matches(name), std::regex_search(name, reference))
          << "pattern '" << pattern << "' on '" << name << "'";
  }
}

TEST(NameFilter, GoogleBenchmarksSpecialForms) {
  EXPECT_TRUE(filter("").matches_everything());
  EXPECT_TRUE(filter("all").matches_everything());
  const NameFilter negative = filter("-fp16");
  EXPECT_FALSE(negative.matches(kNames[0]));
  EXPECT_TRUE(negative.matches(kNames[3]));
  EXPECT_FALSE(filter("-").matches(kNames[0]));    // "-" keeps nothing
  EXPECT_TRUE(filter("-all").matches(kNames[0]));  // "-all": names without "all"
  EXPECT_FALSE(filter("-all").matches("small/x/fp32"));
}

TEST(NameFilter, PathologicalPatternsTakeLinearTime) {
  // Each of these makes a backtracking matcher take time exponential (or of a high power) in
  // the length of a name it fails to match.
  const std::vector<std::string> patterns = {"(.*)*x",    "(a|a)*c",       "(a+)+c",
                                             "(x+x+)+y",  ".*.*.*.*.*.*x", "(a|aa)*c",
                                             "((a*)*)*c", "(.?){60}.{60}z"};
  std::vector<std::string> names;
  for (int i = 0; i < 2000; ++i)
    names.push_back(std::string(60, 'a') + "/m:" + std::to_string(i) + "/manual_time");
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& p : patterns) {
    const NameFilter f = filter(p);
    for (const std::string& n : names) EXPECT_FALSE(f.matches(n)) << p;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 10.0) << "16000 matches took " << seconds << " s";
}

TEST(NameFilter, RefusalsAreSentences) {
  EXPECT_NE(refusal("(").find("unclosed '('"), std::string::npos) << refusal("(");
  EXPECT_NE(refusal("a)").find("')' without a matching '('"), std::string::npos);
  EXPECT_NE(refusal("[ab").find("never closed"), std::string::npos);
  EXPECT_NE(refusal("*a").find("nothing before it"), std::string::npos);
  EXPECT_NE(refusal("a{2").find("repetition count"), std::string::npos);
  EXPECT_NE(refusal("a{3,2}").find("maximum below its minimum"), std::string::npos);
  EXPECT_NE(refusal("a{1001}").find("more than 1000 times"), std::string::npos);
  EXPECT_NE(refusal("(a{1000}){1000}").find("more than 4000 automaton states"), std::string::npos)
      << refusal("(a{1000}){1000}");
  EXPECT_NE(refusal("\\d+").find("not POSIX extended syntax"), std::string::npos);
  EXPECT_NE(refusal("a\\]").find("not POSIX extended syntax"), std::string::npos);
  EXPECT_NE(refusal("[[:digits:]]").find("not a character class"), std::string::npos);
  EXPECT_NE(refusal("^*").find("repeats an anchor"), std::string::npos);
  EXPECT_NE(refusal(std::string(200, '(') + std::string(200, ')')).find("nested more than"),
            std::string::npos);
  EXPECT_NE(refusal("a*********").find("stacks more than 8"), std::string::npos);
  EXPECT_NE(refusal("z-a").find(""), std::string::npos);  // a '-' outside brackets: a byte
  EXPECT_EQ(refusal("z-a"), "");
}

CommandLine parse_ok(std::vector<std::string> args) {
  args.insert(args.begin(), "bench_x");
  const ParseResult r = parse_command_line(args);
  EXPECT_FALSE(r.error) << *r.error;
  return r.line;
}

TEST(NameFilter, TheCommandLineKeepsTheFilterFromGoogleBenchmark) {
  const CommandLine line = parse_ok({"--benchmark_filter=(.*)*x", "--benchmark_repetitions=3"});
  ASSERT_TRUE(line.filter);
  EXPECT_EQ(line.filter->spec(), "(.*)*x");
  EXPECT_EQ(line.passthrough, (std::vector<std::string>{"bench_x", "--benchmark_repetitions=3"}));
}

TEST(CommandLine, MinTimeIsPassedOnInTheLinkedGoogleBenchmarksForm) {
  // Google Benchmark 1.7 rejects "0.25s"; tcbench accepts both spellings and passes on the one
  // the linked version reads.
  for (const std::string given : {"0.25", "0.25s"}) {
    const CommandLine line = parse_ok({"--benchmark_min_time=" + given});
    ASSERT_TRUE(line.min_time_seconds);
    EXPECT_DOUBLE_EQ(*line.min_time_seconds, 0.25);
#if TCBENCH_GBENCH_MIN_TIME_SUFFIX
    EXPECT_EQ(line.passthrough.back(), "--benchmark_min_time=0.25s");
#else
    EXPECT_EQ(line.passthrough.back(), "--benchmark_min_time=0.25");
#endif
  }
}

TEST(CommandLine, RefusedLimitsAreStated) {
  const auto error = [](const std::string& flag) {
    const ParseResult r = parse_command_line({"bench_x", flag});
    return r.error.value_or("");
  };
  EXPECT_EQ(error("--benchmark_repetitions=100001"),
            "--benchmark_repetitions=100001 must be a whole number from 1 to 100000.");
  EXPECT_EQ(error("--benchmark_repetitions=99999999999999999999"),
            "--benchmark_repetitions=99999999999999999999 must be a whole number from 1 to "
            "100000.");
  EXPECT_EQ(error("--benchmark_min_time=2e6"),
            "--benchmark_min_time=2e6 must be a number of seconds from 0 to 1000000, written "
            "like 0.5 or 0.5s.");
  EXPECT_NE(error("--benchmark_filter=(a{1000}){1000}").find("is not a filter tcbench accepts"),
            std::string::npos);
}

}  // namespace
}  // namespace tcbench::bench
