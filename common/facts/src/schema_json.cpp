// The whole results schema as one JSON document: `tcbench_context --schema`, and the
// tcbench_schema every result file's context carries (the harness's reporters and
// tcbench_studies write it). Read by scripts/tcbench_tools/schema.py; its layout is
// kSchemaVersion's (schema.hpp).
#include "tcbench/json.hpp"
#include "tcbench/numerics/element.hpp"
#include "tcbench/scale_modes.hpp"
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

// One operand of a precision row: its element format's name and storage bits (element.hpp's
// row for the cudaDataType_t; TF32's operands are stored as FP32).
std::string operand(std::string_view which, cudaDataType_t t) {
  const auto e = numerics::find_element(t);
  const std::string name = e ? std::string(numerics::name(*e)) : "unknown";
  const int bits = e ? numerics::element_info(*e).bits : 0;
  return ", " + json_string(which) + ": " + json_string(name) + ", " +
         json_string(std::string(which) + "_bits") + ": " + std::to_string(bits);
}

const char* boolean(bool b) {
  return b ? "true" : "false";
}

}  // namespace

std::string schema_json() {
  std::string out =
      "{\n  \"schema_version\": " + std::to_string(kSchemaVersion) + ",\n  \"names\": {\n" +
      "    \"grammar\": \"topic/variant/precision[/key:value]...\",\n" + "    \"keys\": [\n";
  const auto keys = key_table();
  for (std::size_t i = 0; i < keys.size(); ++i)
    out += "      {\"name\": " + json_string(keys[i].name) +
           ", \"type\": " + json_string(keys[i].type == KeyType::integer ? "integer" : "text") +
           ", \"doc\": " + json_string(keys[i].doc) + "}" + (i + 1 < keys.size() ? ",\n" : "\n");
  out += "    ],\n    \"gemm_keys\": [";
  for (std::size_t i = 0; i < std::size(kGemmKeys); ++i)
    out += (i ? ", " : "") + json_string(key_name(kGemmKeys[i]));
  out += "],\n    \"layouts\": [\"nn\", \"nt\", \"tn\", \"tt\"]\n  },\n  \"precisions\": [\n";
  for (std::size_t i = 0; i < kNumPrecisions; ++i) {
    const PrecisionInfo& p = kPrecisionTable[i];
    out += "    {\"name\": " + json_string(p.name) + ", \"integer\": " + boolean(p.integer) +
           ", \"rate_counter\": " + json_string(counters::rate(p.id).name) + operand("a", p.a) +
           operand("b", p.b) + operand("c", p.c) + operand("d", p.d) +
           ", \"a_k_major\": " + boolean(p.a_k_major) +
           ", \"halved_on_geforce\": " + boolean(p.halved_on_geforce) + "}" +
           (i + 1 < kNumPrecisions ? ",\n" : "\n");
  }
  out += "  ],\n  \"scale_modes\": [";
  for (std::size_t i = 0; i < std::size(kScaleModeTable); ++i)
    out += (i ? ", " : "") + json_string(kScaleModeTable[i].name);
  out += "],\n  \"counters\": [\n";
  const auto defs = all_counter_defs();
  for (std::size_t i = 0; i < defs.size(); ++i) {
    const CounterDef& c = *defs[i];
    out += "    {\"name\": " + json_string(c.name) + ", \"pattern\": " + json_string(c.pattern) +
           ", \"unit\": " + json_string(c.unit) +
           ", \"better\": " + json_string(better_name(c.better)) +
           ", \"low\": " + json_number(c.low) + ", \"low_inclusive\": " + boolean(c.low_inclusive) +
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
  out += "  ],\n  \"sampling\": {\"min_seconds\": " + json_number(kDefaultMinSeconds) +
         ", \"quick_min_seconds\": " + json_number(kQuickMinSeconds) + "}\n}\n";
  return out;
}

}  // namespace tcbench
