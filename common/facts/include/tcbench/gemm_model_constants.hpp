// The GEMM time model's constants as data: data/model/gemm_model.csv, embedded in the build (so
// the benchmarks, the host studies and `tcbench model` read the same numbers) and replaceable
// by another file of the same form (the fit, `tcbench_model --constants`).
//
// The file has the columns scope,name,value,provenance. A scope is an architecture family
// (turing, ampere, ada, hopper, blackwell, blackwell_rtx), a GPU by its peak-table name
// ("H100 SXM"), or "all". Family rows hold numerics::TimeModelConstants' fields under their own
// names (align_inputs_2 is align_inputs for 2-byte alignment; tiles is "256x128 128x128 ...");
// a family's "inherit" row names the family its missing fields come from. GPU rows hold
// ceiling_best_<precision>: the fraction of the datasheet rate reached at the best published
// shape (the best-shape table), solved through the model. "all" holds typical_over_best: what a
// typical aligned shape reaches relative to that best one (fitted on A100). "measurement" rows
// (host_overhead_us:<series>) are for `tcbench model check` only: the per-call host overhead of
// a source timed with the host's clock, added to the model's device time. Every row says in
// `provenance` what it was fitted on, solved from, or why it is assumed.
#pragma once

#include "tcbench/numerics/gemm_time_model.hpp"
#include "tcbench/precision.hpp"

#include <map>
#include <string>
#include <string_view>
#include <utility>

namespace tcbench {

// data/model/gemm_model.csv's text as it was embedded at build time.
std::string_view embedded_model_constants_text();

enum class ArchFamily { turing, ampere, ada, hopper, blackwell, blackwell_rtx };
std::string_view name(ArchFamily f);
// The family of a compute capability; InvalidArgument for one the model has no family for.
ArchFamily family_of(int cc_major, int cc_minor);

class ModelConstants {
 public:
  // Parses the CSV text; InvalidArgument naming `origin` and the line for a malformed row, an
  // unknown scope or name, a value that is not a number, or an inherit cycle.
  static ModelConstants parse(std::string_view csv, std::string_view origin);
  // data/model/gemm_model.csv as it was when tcbench was built.
  static const ModelConstants& embedded();

  // The family's constants, missing fields taken from its inherit chain. `basis` (optional)
  // gets "fitted on ampere" or "ampere's constants (no hopper data in the fit set)".
  numerics::TimeModelConstants family(ArchFamily f, std::string* basis = nullptr) const;

  struct Ceiling {
    double best = 0;     // ceiling_best found for the GPU or borrowed
    double typical = 0;  // best x typical_over_best: what the model uses
    std::string basis;   // where `best` came from, in words
  };
  // The GPU's ceiling for p: its own row for p (fp16 and fp16_acc16 read bf16's), else its
  // bf16 row, else its family's rows the same way (through the inherit chain); the basis says
  // which. InvalidArgument when none has one.
  Ceiling ceiling(std::string_view gpu, ArchFamily f, Precision p) const;

  std::string_view origin() const { return origin_; }

 private:
  struct Value {
    std::string text;
    std::string provenance;
  };
  std::map<std::pair<std::string, std::string>, Value> rows_;  // (scope, name) -> value
  std::string origin_;
  const Value* find(std::string_view scope, std::string_view name) const;
};

}  // namespace tcbench
