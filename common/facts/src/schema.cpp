#include "tcbench/schema.hpp"

#include "tcbench/error.hpp"
#include "tcbench/json.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <regex>
#include <utility>

namespace tcbench {

// ---------------------------------------------------------------------------------------------
// Names

namespace {

constexpr std::array<std::pair<Key, std::string_view>, 18> kKeys{{
    {Key::m, "m"},
    {Key::n, "n"},
    {Key::k, "k"},
    {Key::layout, "layout"},
    {Key::batch, "batch"},
    {Key::tokens, "tokens"},
    {Key::hidden, "hidden"},
    {Key::elements, "elements"},
    {Key::steps, "steps"},
    {Key::scale_log2, "scale_log2"},
    {Key::accum, "accum"},
    {Key::layer, "layer"},
    {Key::in, "in"},
    {Key::recipe, "recipe"},
    {Key::history, "history"},
    {Key::margin, "margin"},
    {Key::promote, "promote"},
    {Key::regime, "regime"},
}};

constexpr std::array<Key, kKeys.size()> kAllKeys = [] {
  std::array<Key, kKeys.size()> out{};
  for (std::size_t i = 0; i < kKeys.size(); ++i) out[i] = kKeys[i].first;
  return out;
}();

// A name component: no separator, no blank, nothing a regular expression or a shell would read
// as syntax beyond '.', '-' and '_'.
bool is_plain(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

std::string checked(std::string_view what, std::string_view s) {
  if (!is_plain(s))
    throw InvalidArgument("benchmark name " + std::string(what) + " '" + std::string(s) +
                          "' must be letters, digits, '_', '-' or '.'");
  return std::string(s);
}

}  // namespace

std::string_view key_name(Key k) {
  for (const auto& [key, text] : kKeys)
    if (key == k) return text;
  return "?";
}

std::span<const Key> all_keys() {
  return kAllKeys;
}

std::string_view layout_name(const GemmProblem& p) {
  if (p.trans_a) return p.trans_b ? "tt" : "tn";
  return p.trans_b ? "nt" : "nn";
}

BenchName::BenchName(std::string_view topic, std::string_view variant, Precision p)
    : s_(checked("topic", topic) + "/" + checked("variant", variant) + "/" + std::string(name(p))) {
}

BenchName::BenchName(std::string_view topic, std::string_view variant, std::string_view mix)
    : s_(checked("topic", topic) + "/" + checked("variant", variant) + "/" + checked("mix", mix)) {}

BenchName& BenchName::arg(Key key, std::string_view value) {
  s_.append("/").append(key_name(key)).append(":").append(checked(key_name(key), value));
  return *this;
}

BenchName& BenchName::arg(Key key, std::int64_t value) {
  return arg(key, std::to_string(value));
}

BenchName& BenchName::gemm(const GemmProblem& p) {
  return arg(Key::m, p.m).arg(Key::n, p.n).arg(Key::k, p.k).arg(Key::layout, layout_name(p));
}

// ---------------------------------------------------------------------------------------------
// Counters

namespace {

bool is_family(const CounterDef& d) {
  return d.name.find('<') != std::string_view::npos;
}

bool matches(const CounterDef& d, const std::string& name) {
  return std::regex_match(name, std::regex(std::string(d.pattern), std::regex::ECMAScript));
}

}  // namespace

Counter::Counter(const CounterDef& d) : name_(d.name), def_(&d) {
  if (is_family(d))
    throw InvalidArgument("counter " + std::string(d.name) +
                          " is a family; name a member with family_member()");
}

Counter family_member(const CounterDef& family, std::string_view suffix) {
  const std::string_view stem = family.name.substr(0, family.name.find('<'));
  std::string name = std::string(stem) + std::string(suffix);
  if (!is_family(family) || !matches(family, name))
    throw InvalidArgument("'" + name + "' is not a member of the counter family " +
                          std::string(family.name));
  return Counter(family, std::move(name));
}

namespace counters {

Counter speedup_vs(Precision base) {
  return family_member(speedup_vs_family, name(base));
}
Counter accuracy(std::string_view variant) {
  return family_member(accuracy_family, variant);
}
Counter agreement(std::string_view variant) {
  return family_member(agreement_family, variant);
}
namespace {
std::string two_digits(int point) {
  if (point < 0 || point > 99)
    throw InvalidArgument("curve point " + std::to_string(point) + " is not in 0..99");
  char s[4];
  std::snprintf(s, sizeof s, "%02d", point);
  return s;
}
}  // namespace
Counter loss_at(int point) {
  return family_member(loss_at_family, two_digits(point));
}
Counter scale_at(int point) {
  return family_member(scale_at_family, two_digits(point));
}
Counter clock_at(int point) {
  return family_member(clock_at_family, two_digits(point));
}
Counter power_at(int point) {
  return family_member(power_at_family, two_digits(point));
}
Counter tensor_active_in(std::string_view phase) {
  return family_member(tensor_active_phase_family, phase);
}
Counter time_share(std::string_view phase) {
  return family_member(time_pct_family, phase);
}
const CounterDef& rate(Precision p) {
  return is_integer(p) ? tops : tflops;
}
const CounterDef& rate_per_w(Precision p) {
  return is_integer(p) ? tops_per_w : tflops_per_w;
}

}  // namespace counters

namespace {

using namespace counters;
constexpr std::array kCounterDefs = {
    &samples, &time_median_us, &time_p10_us, &time_p90_us, &spread_pct, &tflops, &tops, &gbps,
    &pct_of_peak, &rel_error, &waves, &vs_cublaslt,
    // FP8
    &rel_error_unquantized, &amax_d, &recipe_us, &gemm_us, &overhead_pct, &time_us, &selected,
    &block_time_us, &block_rel_error, &fp8_layers, &within_budget, &budget, &accumulator_bits,
    &accumulator_at_least, &accumulator_rounding, &accumulator_step, &promotion_interval,
    // block scaling
    &bytes_per_element,
    // alignment
    &model_efficiency, &model_tflops, &model_waves, &predicted_tflops, &model_ratio, &tile_m,
    &tile_n, &split_k, &align_m_bytes, &align_n_bytes, &align_k_bytes, &slowdown_vs_aligned,
    &padded_n, &copy_us, &unpadded_us, &padding_wins,
    // loss scaling
    &underflow_pct, &subnormal_pct, &overflow_pct, &normal_pct, &values, &final_loss,
    &skipped_steps, &final_scale, &time_per_step_us, &gemm_us_per_step, &steps_run, &curve_points,
    &step_gemm_ms, &unscale_pct_of_step, &tokens_per_step, &tensors,
    // clocks, power and energy
    &sm_clock_mhz, &power_w, &energy_j, &tflops_per_w, &tops_per_w, &gbps_per_w, &temp_c_max,
    &throttle, &pct_of_peak_at_clock,
    // burst and sustained
    &idle_s, &settle_s, &steady, &window_s, &trace_s,
    // tensor peak and tensor-pipe counters
    &clock_mhz_measured, &clock_mhz_attribute, &instructions, &pct_of_clock_model,
    &pct_of_max_clock_model, &pct_of_datasheet, &profile_passes, &counters_error,
    &tensor_active_pct, &tensor_hmma_pct, &tensor_imma_pct, &tensor_dmma_pct,
    &tensor_hmma_hgmma_qgmma_pct, &sm_throughput_pct, &dram_throughput_pct,
    // a whole training step
    &step_tensor_mix_pct, &gemm_phases_ceiling_pct, &step_gflop,
    // host studies
    &top1_accuracy_pct, &top1_agreement_pct, &final_loss_vs_fp32, &saturated_steps,
    &worst_saturated_pct, &underflow_steps, &delayed_error_mean, &delayed_error_worst,
    &current_error_mean,
    // families
    &speedup_vs_family, &accuracy_family, &agreement_family, &loss_at_family, &scale_at_family,
    &tensor_active_phase_family, &time_pct_family, &clock_at_family, &power_at_family};

}  // namespace

std::span<const CounterDef* const> all_counter_defs() {
  return kCounterDefs;
}

}  // namespace tcbench
