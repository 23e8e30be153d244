// The whole results schema as one JSON document (`tcbench_context --schema`, mirrored by
// scripts/tcbench_tools/schema.py). Apart from schema.cpp because it also lists the throttle
// reasons, whose bits come from nvml.h: the host studies use the schema without NVML.
#include "tcbench/json.hpp"
#include "tcbench/schema.hpp"

#include <string>

namespace tcbench {

namespace {

std::string_view better_name(Better b) {
  switch (b) {
    case Better::higher:
      return "higher";
    case Better::lower:
      return "lower";
    case Better::none:
      break;
  }
  return "none";
}

}  // namespace

std::string schema_json() {
  std::string out = "{\n  \"schema_version\": 1,\n  \"names\": {\n";
  out += "    \"grammar\": \"topic/variant/precision[/key:value]...\",\n    \"keys\": [";
  const auto keys = all_keys();
  for (std::size_t i = 0; i < keys.size(); ++i)
    out += (i ? ", " : "") + json_string(key_name(keys[i]));
  out += "],\n    \"gemm_keys\": [";
  for (std::size_t i = 0; i < std::size(kGemmKeys); ++i)
    out += (i ? ", " : "") + json_string(key_name(kGemmKeys[i]));
  out += "],\n    \"layouts\": [\"nn\", \"nt\", \"tn\", \"tt\"]\n  },\n  \"precisions\": [\n";
  for (std::size_t i = 0; i < kNumPrecisions; ++i) {
    const PrecisionInfo& p = kPrecisionTable[i];
    out += "    {\"name\": " + json_string(p.name) +
           ", \"integer\": " + (p.integer ? "true" : "false") +
           ", \"rate_counter\": " + json_string(counters::rate(p.id).name) + "}" +
           (i + 1 < kNumPrecisions ? ",\n" : "\n");
  }
  out += "  ],\n  \"counters\": [\n";
  const auto defs = all_counter_defs();
  for (std::size_t i = 0; i < defs.size(); ++i) {
    const CounterDef& c = *defs[i];
    out += "    {\"name\": " + json_string(c.name) + ", \"pattern\": " + json_string(c.pattern) +
           ", \"unit\": " + json_string(c.unit) +
           ", \"better\": " + json_string(better_name(c.better)) +
           ", \"low\": " + json_number(c.low) +
           ", \"low_inclusive\": " + (c.low_inclusive ? "true" : "false") +
           ", \"high\": " + json_number(c.high) + ", \"doc\": " + json_string(c.doc) + "}" +
           (i + 1 < defs.size() ? ",\n" : "\n");
  }
  out += "  ],\n  \"throttle_reasons\": [\n";
  const auto reasons = throttle_reasons();
  for (std::size_t i = 0; i < reasons.size(); ++i)
    out += "    {\"name\": " + json_string(reasons[i].name) +
           ", \"bit\": " + std::to_string(reasons[i].bit) +
           ", \"doc\": " + json_string(reasons[i].doc) + "}" +
           (i + 1 < reasons.size() ? ",\n" : "\n");
  out += "  ]\n}\n";
  return out;
}

}  // namespace tcbench
