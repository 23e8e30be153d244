// --benchmark_filter, matched by tcbench in time linear in the name's length.
//
// Google Benchmark 1.7 matches its filter with std::regex (POSIX extended syntax), which
// backtracks: "(.*)*x" never returns on a benchmark name, and ".*.*.*x" takes minutes over one
// binary's names. tcbench therefore takes the filter out of Google Benchmark's argv and matches it
// itself when benchmarks are registered (register_gpu_benchmark registers only the names that
// match): the pattern is compiled into a Thompson automaton and run on every name in
// O(states x length), whatever the pattern. The syntax and meaning are Google Benchmark's: POSIX
// extended regular expressions (std::regex::extended), searched anywhere in the name Google
// Benchmark reports (which ends in "/manual_time"); "" and "all" match everything; a leading '-'
// keeps the names that do not match.
#pragma once

#include <bitset>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tcbench::bench {

class NameFilter {
 public:
  // At most this many automaton states: counted repetitions multiply ("(a{100}){100}").
  static constexpr std::size_t kMaxStates = 4000;
  static constexpr int kMaxCount = 1000;  // the largest {m,n} count

  // Everything matches.
  NameFilter() = default;
  // The filter `spec`, or the reason it is not one (a sentence fragment, no full stop).
  static std::variant<NameFilter, std::string> parse(std::string_view spec);

  bool matches(std::string_view name) const;
  bool matches_everything() const { return program_.empty() && !negate_; }
  const std::string& spec() const { return spec_; }

  // One automaton instruction (public for the compiler in name_filter.cpp).
  struct Instruction {
    enum class Op { byte_set, split, jump, line_begin, line_end, match } op;
    std::bitset<256> bytes;  // byte_set: the bytes it accepts
    int next = -1;           // split, jump: a target; byte_set, anchors: the next instruction
    int alternative = -1;    // split: the other target
  };

 private:
  std::string spec_;
  bool negate_ = false;
  std::vector<Instruction> program_;  // empty: matches every name
};

}  // namespace tcbench::bench
