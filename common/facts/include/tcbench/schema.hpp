// What a tcbench result file holds, defined once: the grammar of benchmark names (BenchName,
// the one name builder) and every counter a benchmark can write (namespace counters), with its
// unit, its physically possible range and which direction is better.
//
// It sits one floor below its writers (the harness in common/bench, the CUPTI metric table in
// common/profiling, tcbench_studies) so that all of them name counters from here. schema_json()
// is the whole vocabulary as JSON: every result file carries it once, as its context's
// tcbench_schema, and each row its name's parts as tcbench_args (BenchName::args_json()), so the
// Python tools read a file's meaning from the file (scripts/tcbench_tools/schema.py loads it).
// `tcbench_context --schema` prints it; scripts/tcbench_tools/schema.json is that output, which
// the tools use for files written before tcbench_schema existed (a test fails on drift).
#pragma once

#include "tcbench/gemm_problem.hpp"
#include "tcbench/precision.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tcbench {

// ---------------------------------------------------------------------------------------------
// Names: topic/variant/precision[/key:value]...

// The closed vocabulary of argument keys (a new key is a schema change, seen by the tools).
enum class Key {
  m,           // GEMM rows of D
  n,           // GEMM columns of D (only ever a GEMM dimension)
  k,           // GEMM depth
  layout,      // GEMM layout, op(A) op(B): nn, nt, tn, tt (after m, n, k)
  batch,       // batched GEMMs: matrices per call
  tokens,      // tokens (batch x sequence) of a layer
  hidden,      // hidden size of a transformer block
  elements,    // elements of a memory-bound kernel
  steps,       // training steps
  scale_log2,  // a loss scale 2^k
  accum,       // FP8 accumulation: fast or split
  layer,       // which layer of a block a GEMM shape is
  in,          // input type of a scaling kernel
  recipe,      // FP8 scaling recipe
  history,     // FP8 delayed scaling: amax history length
  margin,      // FP8 delayed scaling: margin (powers of two below the format's max)
  promote,     // FP8 accumulation: products of K per promotion to FP32 (0: none)
  regime,      // burst (the first launches after idle) or sustained (at the steady state)
};
// What a key's values are: whole numbers (written as JSON numbers in tcbench_args) or words.
enum class KeyType { integer, text };
struct KeyInfo {
  Key key;
  std::string_view name;
  KeyType type;
  std::string_view doc;
};
std::span<const KeyInfo> key_table();  // in enumerator order
const KeyInfo& info(Key k);
std::string_view key_name(Key k);
std::span<const Key> all_keys();
inline constexpr Key kGemmKeys[] = {Key::m, Key::n, Key::k, Key::layout};

// "nn", "nt", "tn" or "tt": op(A) then op(B), cuBLAS's column-major convention ("tn": both
// operands K-contiguous).
std::string_view layout_name(const GemmProblem& p);

// The one name builder, and the one writer of a row's typed arguments:
//   BenchName("fp16_vs_fp32", "cublaslt", Precision::fp16).gemm(problem)
//     -> "fp16_vs_fp32/cublaslt/fp16/m:4096/n:4096/k:4096/layout:nn"
//     -> args_json(): {"topic":"fp16_vs_fp32","variant":"cublaslt","precision":"fp16",
//                      "m":4096,"n":4096,"k":4096,"layout":"nn"}
//   BenchName("loss_scaling", "unscale", Precision::fp32).arg(Key::elements, 10000000)
// A value must suit its key's type (key_table()): a number for an integer key, a word (or the
// decimal text of a number) for the rest; anything else throws InvalidArgument.
class BenchName {
 public:
  BenchName(std::string_view topic, std::string_view variant, Precision p);
  // For the few rows whose third segment is not one precision: the FP8 block's mixes
  // ("bf16", "fp8", "selected").
  BenchName(std::string_view topic, std::string_view variant, std::string_view mix);
  BenchName& arg(Key key, std::int64_t value);
  BenchName& arg(Key key, std::string_view value);
  // m, n, k and the layout of `p`.
  BenchName& gemm(const GemmProblem& p);
  const std::string& str() const { return s_; }
  operator const std::string&() const { return s_; }  // NOLINT(google-explicit-constructor)

  // The parts as one JSON object (a row's tcbench_args): topic, variant and precision (the third
  // segment, a precision or a mix) as strings, then each key in order, integer keys as numbers.
  std::string args_json() const;
  // The third segment (a precision's name or a mix), and one key's value as the name writes it
  // (nullopt when the name lacks the key): what --plan reads a row's work from.
  const std::string& third() const { return third_; }
  std::optional<std::string_view> value(Key key) const;
  // The BenchName that builds `name` (which may end in Google Benchmark's "/manual_time"), or
  // nullopt when it does not follow the grammar: fewer than three segments, an unknown key, a
  // value its key's type refuses, or a number not written as BenchName writes it ("007").
  static std::optional<BenchName> parse(std::string_view name);

 private:
  std::string s_;
  std::string topic_, variant_, third_;
  std::vector<std::pair<Key, std::string>> args_;
};

// ---------------------------------------------------------------------------------------------
// Counters

enum class Better { higher, lower, none };

inline constexpr double kUnbounded = std::numeric_limits<double>::infinity();

// One counter, or one family of counters (name with a <placeholder>, pattern matching each).
struct CounterDef {
  std::string_view name;     // "tflops", or "speedup_vs_<precision>" for a family
  std::string_view pattern;  // full-match regular expression (ECMAScript and Python re)
  std::string_view unit;
  Better better;
  // The physically possible range: a value outside it is not a measurement (the tools refuse it).
  double low;
  bool low_inclusive;
  double high;  // inclusive; kUnbounded when there is no upper limit
  std::string_view doc;
};

// A counter name a benchmark may write: only the definitions below make one.
class Counter {
 public:
  const std::string& name() const { return name_; }
  const CounterDef& def() const { return *def_; }
  // A fixed (non-family) counter.
  Counter(const CounterDef& d);  // NOLINT(google-explicit-constructor)

 private:
  Counter(const CounterDef& d, std::string name) : name_(std::move(name)), def_(&d) {}
  friend Counter family_member(const CounterDef& family, std::string_view suffix);
  std::string name_;
  const CounterDef* def_;
};
// "speedup_vs_" + "fp16" for the family "speedup_vs_<precision>"; throws InvalidArgument when the
// result does not match the family's pattern.
Counter family_member(const CounterDef& family, std::string_view suffix);

namespace detail {
// "^speedup_vs_(fp64|fp32|...)$" from kPrecisionTable, as a constant.
template <std::size_t N>
struct FixedText {
  std::array<char, N> chars{};
  constexpr std::string_view view() const { return {chars.data(), N}; }
};
constexpr std::size_t speedup_pattern_size() {
  std::size_t n = std::string_view("^speedup_vs_()$").size() + kNumPrecisions - 1;
  for (const PrecisionInfo& row : kPrecisionTable) n += row.name.size();
  return n;
}
inline constexpr FixedText<speedup_pattern_size()> kSpeedupPattern = [] {
  FixedText<speedup_pattern_size()> out;
  std::size_t i = 0;
  const auto put = [&](std::string_view s) {
    for (char c : s) out.chars[i++] = c;
  };
  put("^speedup_vs_(");
  for (std::size_t r = 0; r < kNumPrecisions; ++r) {
    if (r > 0) put("|");
    put(kPrecisionTable[r].name);
  }
  put(")$");
  return out;
}();
}  // namespace detail

namespace counters {
// clang-format off
// Every fixed counter, once: the constants below and all_counter_defs() are made from this list
// (one line is one counter: its id, unit, direction, physical range and doc).
#define TCB_COUNTERS_(X) \
  /* The harness (every timed benchmark). */ \
  X(samples,        "count",   none,   1, true,  kUnbounded, "timed samples behind the median (>= 10)") \
  X(time_median_us, "us",      lower,  0, false, kUnbounded, "median sample time") \
  X(time_p10_us,    "us",      lower,  0, false, kUnbounded, "10th percentile sample time") \
  X(time_p90_us,    "us",      lower,  0, false, kUnbounded, "90th percentile sample time") \
  X(spread_pct,     "%",       lower,  0, true,  kUnbounded, "(p90 - p10) / median") \
  X(tflops,         "TFLOP/s", higher, 0, false, kUnbounded, "useful FLOP / median time") \
  X(tops,           "TOP/s",   higher, 0, false, kUnbounded, "useful integer OP / median time") \
  X(gbps,           "GB/s",    higher, 0, false, kUnbounded, "bytes moved / median time (1e9 B/s)") \
  X(pct_of_peak,    "%",       higher, 0, false, 200,        "rate / the GPU's dense peak for the precision (or DRAM bandwidth)") \
  X(rel_error,      "",        lower,  0, true,  kUnbounded, "relative Frobenius error vs the FP64 reference, before timing") \
  X(waves,          "waves",   none,   0, true,  kUnbounded, "cuBLASLt's wave count for the chosen algorithm") \
  X(vs_cublaslt,    "x",       none,   0, false, kUnbounded, "cuBLASLt's time on the very same problem / this cuBLAS time (> 1: cuBLAS faster)") \
  /* FP8 (bench_fp8). */ \
  X(rel_error_unquantized, "",  lower,  0, true,  kUnbounded, "error vs the FP32 product of the unquantized originals") \
  X(amax_d,         "",        none,   0, true,  kUnbounded, "max |D| before the output scale (FP8 output)") \
  X(recipe_us,      "us",      lower,  0, false, kUnbounded, "quantizing A and B with the recipe") \
  X(gemm_us,        "us",      lower,  0, false, kUnbounded, "the GEMM alone") \
  X(overhead_pct,   "%",       lower,  0, true,  kUnbounded, "recipe time / GEMM time") \
  X(time_us,        "us",      lower,  0, false, kUnbounded, "a layer option's time (GEMM + activation quantization)") \
  X(selected,       "flag",    none,   0, true,  1,          "1 when the per-layer selector chose this option") \
  X(block_time_us,  "us",      lower,  0, false, kUnbounded, "the block's summed layer times") \
  X(block_rel_error, "",       lower,  0, true,  kUnbounded, "the block's end-to-end error vs FP64") \
  X(fp8_layers,     "count",   none,   0, true,  kUnbounded, "layers running in FP8") \
  X(within_budget,  "flag",    none,   0, true,  1,          "1 when every layer meets the error budget") \
  X(budget,         "",        none,   0, false, kUnbounded, "the per-layer error budget (relative)") \
  X(accumulator_bits, "bits",  none,   0, true,  64,         "fraction bits the accumulator keeps under a step's largest addend (bit detection)") \
  X(accumulator_at_least, "flag", none, 0, true, 1,          "1: the probes tell no more: the path keeps accumulator_bits or more") \
  X(accumulator_rounding, "code", none, 0, true, 2,          "dropped bits: 0 truncated toward zero, 1 floored (two's complement), 2 rounded to nearest even") \
  X(accumulator_step, "count", none,   1, true,  kUnbounded, "products added with the running sum in one step (not written when the probes cannot tell)") \
  X(promotion_interval, "count", none, 0, true,  kUnbounded, "products between promotions of the running sum to FP32 (0: none within the probes' K)") \
  /* Block scaling (bench_block_scaling). */ \
  X(bytes_per_element, "B",    lower,  0, false, kUnbounded, "storage of an operand per element, its scales included") \
  /* Alignment (bench_alignment). */ \
  X(model_efficiency, "",      none,   0, true,  1,          "tile x wave efficiency of cuBLASLt's tile (the quantization bound)") \
  X(model_tflops,   "TFLOP/s", none,   0, true,  kUnbounded, "the quantization bound: datasheet rate x model_efficiency under the roofline (a bound, not a prediction)") \
  X(model_waves,    "waves",   none,   0, true,  kUnbounded, "the quantization bound's exact wave count") \
  X(predicted_tflops, "TFLOP/s", none, 0, true, kUnbounded, "the GEMM time model's prediction (model, no measurement; docs/concepts/alignment.md)") \
  X(model_ratio,    "x",       none,   0, false, kUnbounded, "predicted_tflops / the measured rate (1 = exact; > 1: the model is optimistic)") \
  X(tile_m,         "rows",    none,   1, true,  kUnbounded, "the CTA tile's rows (cuBLASLt's choice)") \
  X(tile_n,         "columns", none,   1, true,  kUnbounded, "the CTA tile's columns") \
  X(split_k,        "count",   none,   1, true,  kUnbounded, "cuBLASLt's split-K factor") \
  X(align_m_bytes,  "B",       none,   1, true,  128,        "largest power of two <= 128 dividing m x element size") \
  X(align_n_bytes,  "B",       none,   1, true,  128,        "... of n") \
  X(align_k_bytes,  "B",       none,   1, true,  128,        "... of k") \
  X(slowdown_vs_aligned, "x",  lower,  0, false, kUnbounded, "time per unit of the swept dimension over the next 16-byte multiple's") \
  X(padded_n,       "columns", none,   1, true,  kUnbounded, "N after padding") \
  X(copy_us,        "us",      lower,  0, false, kUnbounded, "the pad copy alone") \
  X(unpadded_us,    "us",      lower,  0, false, kUnbounded, "the unpadded GEMM") \
  X(padding_wins,   "flag",    none,   0, true,  1,          "1 when copy + padded GEMM beat the unpadded GEMM") \
  /* Loss scaling (bench_loss_scaling). */ \
  X(underflow_pct,  "%",       lower,  0, true,  100,        "gradients flushed to zero") \
  X(subnormal_pct,  "%",       none,   0, true,  100,        "gradients landing subnormal") \
  X(overflow_pct,   "%",       lower,  0, true,  100,        "gradients overflowing to Inf") \
  X(normal_pct,     "%",       higher, 0, true,  100,        "gradients landing normal") \
  X(values,         "count",   none,   1, true,  kUnbounded, "gradients counted") \
  X(final_loss,     "",        lower,  0, true,  kUnbounded, "the training loss after the last step") \
  X(skipped_steps,  "count",   lower,  0, true,  kUnbounded, "steps skipped for Inf/NaN gradients") \
  X(final_scale,    "",        none,   0, true,  kUnbounded, "the loss scale at the last step") \
  X(time_per_step_us, "us",    lower,  0, false, kUnbounded, "one training step") \
  X(gemm_us_per_step, "us",    lower,  0, false, kUnbounded, "the GEMMs of one training step") \
  X(steps_run,      "count",   none,   1, true,  kUnbounded, "training steps run") \
  X(curve_points,   "count",   none,   1, true,  kUnbounded, "points of the row's curve: loss_at_NN / scale_at_NN, or clock_at_NN / power_at_NN") \
  X(step_gemm_ms,   "ms",      lower,  0, false, kUnbounded, "an FP16 training step's GEMMs for this many parameters") \
  X(unscale_pct_of_step, "%",  lower,  0, true,  kUnbounded, "check-and-unscale time / step GEMM time") \
  X(tokens_per_step, "count",  none,   1, true,  kUnbounded, "tokens of the modelled step") \
  X(tensors,        "count",   none,   1, true,  kUnbounded, "gradient tensors unscaled") \
  /* Tensor peak (bench_tensor_peak). */ \
  X(clock_mhz_measured,  "MHz", none,  0, false, kUnbounded, "SM clock measured in-kernel (clock64 / globaltimer), in the last timed launch") \
  X(clock_mhz_attribute, "MHz", none,  0, false, kUnbounded, "cudaDevAttrClockRate") \
  X(instructions,   "count",   none,   1, true,  kUnbounded, "tensor instructions issued per launch") \
  X(pct_of_clock_model, "%",   higher, 0, false, 200,        "rate / (SMs x measured clock x ops/clock)") \
  X(pct_of_max_clock_model, "%", higher, 0, false, 200,      "rate / (SMs x attribute clock x ops/clock)") \
  X(pct_of_datasheet, "%",     higher, 0, false, 200,        "rate / the datasheet figure") \
  /* Clocks, power and energy while timing (NVML, sampled every 10 ms by the harness). */ \
  X(sm_clock_mhz,   "MHz",     none,   0, false, kUnbounded, "median SM clock while timing (NVML)") \
  X(power_w,        "W",       none,   0, false, kUnbounded, "board power while timing: energy counter delta / time, else the mean of power samples") \
  X(energy_j,       "J",       lower,  0, false, kUnbounded, "energy of one run of the work: power_w x median time") \
  X(tflops_per_w,   "TFLOP/s/W", higher, 0, false, kUnbounded, "tflops / power_w (TFLOP per joule)") \
  X(tops_per_w,     "TOP/s/W", higher, 0, false, kUnbounded, "tops / power_w (TOP per joule)") \
  X(gbps_per_w,     "GB/s/W",  higher, 0, false, kUnbounded, "gbps / power_w") \
  X(temp_c_max,     "C",       lower,  -40, true, 150,       "hottest GPU temperature sample while timing") \
  X(throttle,       "mask",    none,   0, true,  kUnbounded, "union of the clock-event reasons seen while timing (bits: throttle_reasons)") \
  X(pct_of_peak_at_clock, "%", higher, 0, false, 200,        "rate / (SMs x sm_clock_mhz x ops/clock): by silicon, whatever the clock") \
  /* Burst and sustained (bench_sustained; regime:burst and regime:sustained rows). */ \
  X(idle_s,         "s",       none,   0, true,  kUnbounded, "the GPU's idle before the load: until NVML read its clock and power flat, or the idle limit") \
  X(settle_s,       "s",       none,   0, true,  kUnbounded, "back-to-back load before the steady state held (or before the limit, when steady is 0)") \
  X(steady,         "flag",    none,   0, true,  1,          "1: the steady-state rule held before the timed window; 0: no steady state within the limit (the label says so)") \
  X(window_s,       "s",       none,   0, false, kUnbounded, "length of the timed burst or sustained window") \
  X(trace_s,        "s",       none,   0, false, kUnbounded, "what the clock_at/power_at trace covers: the first launch to the end of the timed window") \
  /* Tensor-pipe counters (CUPTI; common/profiling's metric table names which chip has which). */ \
  X(profile_passes, "count",   none,   1, true,  kUnbounded, "CUPTI replay passes for the metric set") \
  X(counters_error, "flag",    none,   1, true,  1,          "1: reading this row's CUPTI counters failed (the label names the CUPTI status and call); its timing and rates stand") \
  X(tensor_active_pct, "%",    none,   0, true,  200,        "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active") \
  X(tensor_hmma_pct, "%",      none,   0, true,  200,        "HMMA (and HGMMA/QGMMA) sub-pipe, % of active cycles") \
  X(tensor_imma_pct, "%",      none,   0, true,  200,        "IMMA (and IGMMA) sub-pipe, % of active cycles") \
  X(tensor_dmma_pct, "%",      none,   0, true,  200,        "DMMA sub-pipe, % of active cycles") \
  X(tensor_hmma_hgmma_qgmma_pct, "%", none, 0, true, 200,    "Hopper's HMMA/HGMMA/QGMMA type sub-pipe") \
  X(sm_throughput_pct, "%",    none,   0, true,  200,        "sm__throughput.avg.pct_of_peak_sustained_elapsed") \
  X(dram_throughput_pct, "%",  none,   0, true,  200,        "dram__throughput.avg.pct_of_peak_sustained_elapsed") \
  /* A whole training step (bench_tensor_util train_step rows; the phases' own counters are the */ \
  /* families tensor_active_pct_<phase> and time_pct_<phase> below). */ \
  X(step_tensor_mix_pct, "%",  none,   0, true,  200,        "time-weighted mean of the phases' tensor_active_pct (time between phases counts as idle)") \
  X(gemm_phases_ceiling_pct, "%", none, 0, true, 200,        "that mean over forward and backward alone: the step if unscale, optimizer and gaps took no time") \
  X(step_gflop,     "GFLOP",   none,   0, false, kUnbounded, "useful FLOP of one step: its five GEMMs (1e9)") \
  /* Host studies (tcbench_studies: what the CPU answers without a GPU). */ \
  X(top1_accuracy_pct, "%",       higher, 0, true,  100,        "top-1 accuracy on the held-out split") \
  X(top1_agreement_pct, "%",       higher, 0, true,  100,        "top-1 agreement with the FP32 model") \
  X(final_loss_vs_fp32, "x",   lower,  0, true,  kUnbounded, "final training loss / the FP32 run's") \
  X(saturated_steps, "count",  lower,  0, true,  kUnbounded, "delayed scaling: steps with a saturated element") \
  X(worst_saturated_pct, "%",  lower,  0, true,  100,        "delayed scaling: the worst step's saturated elements") \
  X(underflow_steps, "count",  lower,  0, true,  kUnbounded, "delayed scaling: steps flushing more than current scaling") \
  X(delayed_error_mean, "",    lower,  0, true,  kUnbounded, "delayed scaling: mean relative cast error") \
  X(delayed_error_worst, "",   lower,  0, true,  kUnbounded, "delayed scaling: worst relative cast error") \
  X(current_error_mean, "",    lower,  0, true,  kUnbounded, "current scaling: mean relative cast error")
#define TCB_COUNTER_(id, unit, better, low, low_inclusive, high, doc) \
  inline constexpr CounterDef id{#id, "^" #id "$", unit, Better::better, low, low_inclusive, high, doc};
TCB_COUNTERS_(TCB_COUNTER_)
#undef TCB_COUNTER_

// Families: each member is the stem plus a suffix the pattern allows. The speed-up family's
// alternatives are the precision table's names (built below at compile time).
inline constexpr CounterDef speedup_vs_family{"speedup_vs_<precision>", detail::kSpeedupPattern.view(), "x", Better::higher, 0, false, kUnbounded, "the same problem in <precision> (same layout) / this time"};
inline constexpr CounterDef accuracy_family{"accuracy_<variant>", "^accuracy_[a-z0-9_.]+$", "%", Better::higher, 0, true, 100, "host-evaluated top-1 accuracy of an INT8 study variant"};
inline constexpr CounterDef agreement_family{"agreement_<variant>", "^agreement_[a-z0-9_.]+$", "%", Better::higher, 0, true, 100, "top-1 agreement of a variant with FP32"};
inline constexpr CounterDef loss_at_family{"loss_at_<NN>", "^loss_at_[0-9]{2}$", "", Better::lower, 0, true, kUnbounded, "the training loss at curve point NN"};
inline constexpr CounterDef tensor_active_phase_family{"tensor_active_pct_<phase>", "^tensor_active_pct_(forward|backward|unscale|optimizer)$", "%", Better::none, 0, true, 200, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active over one phase's CUPTI range"};
inline constexpr CounterDef time_pct_family{"time_pct_<phase>", "^time_pct_(forward|backward|unscale|optimizer|gaps)$", "%", Better::none, 0, true, 100, "share of the step's time in the phase (gaps: between phases, the GPU waiting for the host)"};
inline constexpr CounterDef scale_at_family{"scale_at_<NN>", "^scale_at_[0-9]{2}$", "", Better::none, 0, true, kUnbounded, "the loss scale at curve point NN"};
inline constexpr CounterDef clock_at_family{"clock_at_<NN>", "^clock_at_[0-9]{2}$", "MHz", Better::none, 0, false, kUnbounded, "the median SM clock in slice NN of trace_s (sustained rows)"};
inline constexpr CounterDef power_at_family{"power_at_<NN>", "^power_at_[0-9]{2}$", "W", Better::none, 0, false, kUnbounded, "the median board power in slice NN of trace_s (sustained rows)"};
// clang-format on

Counter speedup_vs(Precision base);
Counter accuracy(std::string_view variant);
Counter agreement(std::string_view variant);
Counter loss_at(int point);   // "loss_at_07"
Counter scale_at(int point);  // "scale_at_07"
Counter clock_at(int point);  // "clock_at_07"
Counter power_at(int point);  // "power_at_07"
// A training step phase's counters by the phase's name (studies::name(StepPhase)):
// "tensor_active_pct_forward"; "time_pct_forward", or "time_pct_gaps" for the time between.
Counter tensor_active_in(std::string_view phase);
Counter time_share(std::string_view phase);
// The counter of this name: a fixed counter, or a member of a family; nullopt for a name no
// definition makes (the fixture writer's check that it writes schema counters only).
std::optional<Counter> find_counter(std::string_view name);
// tflops, or tops for integer precisions.
const CounterDef& rate(Precision p);
// tflops_per_w, or tops_per_w for integer precisions.
const CounterDef& rate_per_w(Precision p);
}  // namespace counters

// ---------------------------------------------------------------------------------------------
// Clock-event ("throttle") reasons: the bits of the throttle counter

// One reason NVML gives for the SM clock being below its maximum. The throttle counter holds the
// union of the bits seen while a benchmark was timed; the names are what result files, the tools
// and the report call them. Bit values are nvml.h's nvmlClocksEventReason* constants (written
// here so that the schema needs no nvml.h; common/runtime/src/throttle_reasons.cpp checks each
// against nvml.h at compile time).
struct ThrottleReason {
  std::string_view name;  // "sw_power_cap"
  std::uint64_t bit;      // 0x4
  std::string_view doc;
};
// Every reason nvml.h defines, in bit order.
inline constexpr ThrottleReason kThrottleReasons[] = {
    {"gpu_idle", 0x1, "nothing runs: clocks idle"},
    {"applications_clocks_setting", 0x2, "clocks held at the application (or locked) setting"},
    {"sw_power_cap", 0x4, "the driver holds power under the enforced power limit"},
    {"hw_slowdown", 0x8,
     "hardware slowdown (clocks halved or worse): temperature, power brake or fast power "
     "trigger"},
    {"sync_boost", 0x10, "held to the slowest GPU of a sync-boost group"},
    {"sw_thermal", 0x20, "the driver keeps GPU or memory under its maximum operating temperature"},
    {"hw_thermal", 0x40, "hardware thermal slowdown (clocks halved or worse)"},
    {"hw_power_brake", 0x80, "external power brake (the system's power supply)"},
    {"display_clock_setting", 0x100, "limited by the display clock setting"},
    {"board_limit", 0x200, "the board's operating limit policy"},
    {"reliability", 0x400, "the reliability policy"},
};
std::span<const ThrottleReason> throttle_reasons();
// "sw_power_cap,hw_slowdown" for a mask, "none" for 0; a bit no reason names reads "bit_<n>".
std::string throttle_names(std::uint64_t mask);
// "gpu_idle:0x1,applications_clocks_setting:0x2,...": the context key throttle_reasons, so a
// result file says how to read its own throttle counters.
std::string throttle_reason_table();

// Every definition, fixed counters first, then families, in a stable order.
std::span<const CounterDef* const> all_counter_defs();

// ---------------------------------------------------------------------------------------------
// The sampling budget per benchmark, in seconds, when --benchmark_min_time is not given (the
// harness's default and --quick's); the schema states both, so the tools read them from here.
inline constexpr double kDefaultMinSeconds = 0.5;
inline constexpr double kQuickMinSeconds = 0.05;

// The version of schema_json()'s layout. 1: tcbench_context --schema before result files carried
// it (names, precisions without formats, counters, throttle reasons); 2: result files carry it as
// tcbench_schema, with key types, the precisions' element formats and bits, the scale modes and
// the sampling budgets.
inline constexpr int kSchemaVersion = 2;

// The whole schema as JSON: `tcbench_context --schema`, and every result file's tcbench_schema.
std::string schema_json();

}  // namespace tcbench
