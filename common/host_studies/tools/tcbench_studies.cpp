// tcbench_studies: the half of the five questions the CPU answers, without a GPU. Runs tcbench's
// host studies and writes their results as a result file in the schema the benchmarks write
// (Google Benchmark JSON: a context and one row per result, names from BenchName, counters from
// the schema), so `tcbench answers` and `tcbench report` read it like any run.
//
//   tcbench_studies [--out FILE] [--study NAME]... [--list] [--help]
//
// The studies run at once, one thread each (and Q2's training runs too): their results do not
// depend on it, and rows keep the plan's order. With --out, FILE is rewritten (a temporary file,
// then a rename) as each study finishes, so a run stopped part way (Ctrl-C) leaves the studies
// that finished; its context names them (tcbench_studies_done) beside the ones asked for
// (tcbench_studies_planned).
//
// Studies (progress on stderr, one line each):
//   int8          Q1: the MLP trained in FP32, PTQ with each calibrator and QAT, evaluated with
//                 the integer-exact INT8 forward pass (studies/int8_study)
//   loss_scaling  Q2: where FP16/BF16 gradients land at scales 2^0..2^24, and the five-mode
//                 training run on the host (studies/mixed_precision_training)
//   alignment     Q4: the GEMM time model's predictions for N = 32/33, 64/65, 128/129 on the
//                 reference GPUs (studies/alignment_model), also with B N-contiguous (fp16)
//   fp8           Q5: per-tensor delayed vs current scaling as a tensor's range drifts
//                 (studies/fp8_drift), and the error of the published FP8 accumulator models
//                 against FP64 as K grows, with and without promotion (studies/fp8_accumulation)
// Exit codes: 0 written, 2 usage error, 1 a study failed (the sentence says which).
#include "tcbench/build_info.hpp"
#include "tcbench/gemm_spec.hpp"
#include "tcbench/json.hpp"
#include "tcbench/numerics/loss_scaling.hpp"
#include "tcbench/schema.hpp"
#include "tcbench/studies/alignment_model.hpp"
#include "tcbench/studies/fp8_accumulation.hpp"
#include "tcbench/studies/fp8_drift.hpp"
#include "tcbench/studies/int8_study.hpp"
#include "tcbench/studies/mixed_precision_training.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <algorithm>
#include <cmath>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace tcbench;
namespace ts = tcbench::studies;

// One result row: a name, its typed arguments (tcbench_args) and its counters, plus the study's
// wall time (Google Benchmark's real_time, in seconds; the studies are not benchmarks, but the
// tools expect a time).
struct Row {
  std::string name;
  std::string args;
  std::vector<std::pair<Counter, double>> counters;
  std::string label;
};

class Rows {
 public:
  Row& add(const BenchName& name, std::string label) {
    rows_.push_back({name.str(), name.args_json(), {}, std::move(label)});
    return rows_.back();
  }
  std::vector<Row>& all() { return rows_; }

 private:
  std::vector<Row> rows_;
};

void set(Row& r, const Counter& c, double v) {
  r.counters.emplace_back(c, v);
}

// --- Q1: INT8 PTQ/QAT ------------------------------------------------------------------------

Precision variant_precision(const ts::Int8Variant& v) {
  if (v.method == "ptq" || v.method == "qat") return Precision::int8;
  return parse_precision(v.name).value_or(Precision::fp32);
}

void int8_study(Rows& out) {
  const ts::Int8StudyResult r = ts::run_int8_study();
  for (const ts::Int8Variant& v : r.variants) {
    Row& row = out.add(BenchName("int8_study", v.name, variant_precision(v)),
                       "host MLP " + std::to_string(r.widths.front()) + "-...-" +
                           std::to_string(r.widths.back()) + ", " + v.method);
    set(row, counters::top1_accuracy_pct, 100.0 * v.accuracy);
    set(row, counters::top1_agreement_pct, 100.0 * v.agreement);
  }
}

// --- Q2: loss scaling ------------------------------------------------------------------------

void loss_scaling_study(Rows& out) {
  namespace tn = tcbench::numerics;
  const ts::TrainingConfig cfg;
  const int at[] = {0, 100, 399};
  // The five training runs and the two gradient sets are independent: each on its own thread
  // (the results, and their order, are those of one thread).
  std::vector<std::pair<ts::TrainingMode, std::future<ts::TrainingRun>>> trained;
  for (ts::TrainingMode m : ts::kTrainingModes)
    trained.emplace_back(m, std::async(std::launch::async, ts::train_host, cfg, m));
  auto mlp = std::async(std::launch::async, [&] { return ts::fp32_backward_gradients(cfg, at); });
  const std::pair<const char*, std::vector<float>> sources[] = {
      {"landing_lognormal", tn::lognormal_gradients(1'000'000, 7)}, {"landing_mlp", mlp.get()}};
  for (const auto& [variant, grads] : sources)
    for (const tn::Format f : {tn::Format::fp16, tn::Format::bf16})
      for (int k : tn::kSweepScaleLog2) {
        const tn::LandingCounts c = tn::count_landings(grads, std::ldexp(1.0f, k), f);
        const double n = static_cast<double>(grads.size());
        auto pct = [&](tn::Landing l) {
          return 100.0 * static_cast<double>(c[static_cast<std::size_t>(l)]) / n;
        };
        Row& row = out.add(BenchName("loss_scaling_study", variant,
                                     f == tn::Format::fp16 ? Precision::fp16 : Precision::bf16)
                               .arg(Key::scale_log2, k),
                           "gradients scaled by 2^" + std::to_string(k));
        set(row, counters::underflow_pct, pct(tn::Landing::flushed_to_zero));
        set(row, counters::subnormal_pct, pct(tn::Landing::subnormal));
        set(row, counters::overflow_pct, pct(tn::Landing::overflow));
        set(row, counters::normal_pct, pct(tn::Landing::normal));
        set(row, counters::values, n);
      }
  std::map<ts::TrainingMode, ts::TrainingRun> runs;
  for (auto& [mode, run] : trained) runs.emplace(mode, run.get());
  const double fp32 = runs.at(ts::TrainingMode::fp32).final_loss();
  for (const auto& [mode, run] : runs) {
    const Precision p = ts::storage_of(mode) == numerics::Storage::fp32   ? Precision::fp32
                        : ts::storage_of(mode) == numerics::Storage::bf16 ? Precision::bf16
                                                                          : Precision::fp16;
    Row& row = out.add(BenchName("loss_scaling_study", "train_" + std::string(ts::name(mode)), p)
                           .arg(Key::steps, cfg.steps),
                       "host teacher-student regression, Adam");
    set(row, counters::final_loss, run.final_loss());
    set(row, counters::final_loss_vs_fp32, run.final_loss() / fp32);
    set(row, counters::underflow_pct, run.underflow_pct());
    set(row, counters::skipped_steps, run.skipped_steps());
    set(row, counters::final_scale, run.steps.back().scale_used);
  }
}

// --- Q4: alignment ---------------------------------------------------------------------------

void alignment_study(Rows& out) {
  namespace tn = tcbench::numerics;
  constexpr std::int64_t kBase = 4096;
  auto add = [&](const ts::ModelGpu& g, Precision p, std::int64_t n, bool b_transposed) {
    GemmSpec spec = GemmSpec::for_precision(p, kBase, n, kBase);
    spec.problem.trans_b = b_transposed;
    const ModelPrediction pred = ts::predict_as_run(g.spec, p, kBase, n, kBase, 1, b_transposed);
    if (!pred.not_covered.empty()) return;  // FP8 at N = 33: cuBLASLt refuses it
    Row& row =
        out.add(BenchName("alignment_model", g.slug, p).gemm(spec.problem),
                std::string(g.label) + ", GEMM time model (no measurement): " + pred.coverage);
    const tn::GemmTimePrediction& t = pred.time;
    set(row, counters::predicted_tflops, t.flops_per_s / 1e12);
    set(row, counters::model_waves, t.waves);
    set(row, counters::tile_m, static_cast<double>(t.tile.m));
    set(row, counters::tile_n, static_cast<double>(t.tile.n));
    set(row, counters::split_k, t.split_k);
    set(row, counters::align_n_bytes, tn::alignment_bytes(n, element_of(spec.b_type)));
  };
  for (const ts::ModelGpu& g : ts::model_gpus())
    for (Precision p :
         {Precision::fp16, Precision::bf16, Precision::tf32, Precision::int8, Precision::fp8}) {
      if (!(gpu_rates(g.spec, p).flops_per_s > 0)) continue;  // no such path (FP8 on A100)
      for (std::int64_t n : {32, 33, 64, 65, 128, 129}) {
        add(g, p, n, false);
        // B N-contiguous (bench_alignment's layout:nt): where N = 33 does break the 16-byte rule.
        if (p == Precision::fp16) add(g, p, n, true);
      }
    }
}

// --- Q5: FP8 scaling -------------------------------------------------------------------------

void fp8_study(Rows& out) {
  const std::vector<float> base = ts::uniform_grid(8192);
  for (const ts::DriftScenario& sc : ts::drift_scenarios())
    for (const ts::DriftConfig c : ts::kDriftConfigs) {
      const ts::DriftSummary s = ts::summarize(ts::simulate_drift(
          base, sc.amplitude, {.amax_history_len = c.history, .margin = c.margin}));
      Row& row = out.add(BenchName("fp8_study", "drift_" + sc.slug, Precision::fp8)
                             .arg(Key::history, c.history)
                             .arg(Key::margin, c.margin),
                         sc.label + ": delayed vs current per-tensor E4M3 scaling");
      set(row, counters::saturated_steps, s.saturated_steps);
      set(row, counters::worst_saturated_pct, 100.0 * s.worst_saturated_fraction);
      set(row, counters::underflow_steps, s.underflow_steps);
      set(row, counters::delayed_error_mean, s.delayed_mean_error);
      set(row, counters::delayed_error_worst, s.delayed_worst_error);
      set(row, counters::current_error_mean, s.current_mean_error);
    }
  // The accumulator: 8 x 8 outputs of the block study's operands, K = 256 .. 16384.
  const auto cases = ts::accumulation_cases();
  const auto errors = ts::accumulation_errors(8, 8);
  for (std::size_t c = 0; c < cases.size(); ++c)
    for (const ts::AccumulationError& e : errors[c]) {
      BenchName name("fp8_study", cases[c].variant, Precision::fp8);
      name.arg(Key::k, e.k);
      if (cases[c].model) name.arg(Key::promote, cases[c].model->promotion);
      Row& row = out.add(name, std::string(cases[c].label) + "; CPU-computed, 8 x 8 outputs");
      set(row, counters::rel_error, e.rel_error);
      set(row, counters::rel_error_unquantized, e.rel_error_unquantized);
    }
}

struct Study {
  const char* name;
  const char* what;
  std::function<void(Rows&)> run;
};
const Study kStudies[] = {
    {"int8", "Q1 INT8: PTQ calibrators and QAT on the host MLP", int8_study},
    {"loss_scaling", "Q2 loss scaling: gradient landings and five-mode training",
     loss_scaling_study},
    {"alignment", "Q4 alignment: the GEMM time model at N = 32/33, 64/65, 128/129",
     alignment_study},
    {"fp8", "Q5 FP8: per-tensor scaling under drift; the accumulator's error as K grows",
     fp8_study},
};

std::string now_iso() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", std::localtime(&t));
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

// The studies a file holds and the ones the run was asked for (the last two context keys).
struct Progress {
  std::vector<std::string> done, planned;
};

void write_json(std::ostream& os, std::vector<Row>& rows, const std::vector<double>& seconds,
                const char* program, const Progress& progress) {
  const std::pair<std::string, std::string> context[] = {
      {"date", now_iso()},
      {"host_name", host_name()},
      {"executable", program},
      {"tcbench_version", std::string(tcbench_version())},
      {"git_sha", std::string(git_sha())},
      {"tcbench_quick", "false"},
      {"tcbench_kind", "host-studies"},
      {"tcbench_note", "no GPU: host studies only"},
      {"tcbench_studies_done", joined(progress.done)},
      {"tcbench_studies_planned", joined(progress.planned)}};
  os << "{\n  \"context\": {";
  bool first = true;
  for (const auto& [k, v] : context) {
    os << (first ? "\n" : ",\n") << "    " << json_string(k) << ": " << json_string(v);
    first = false;
  }
  // The vocabulary, once, as every result file carries it (schema.hpp).
  os << ",\n    \"tcbench_schema\": " << json_nested(schema_json(), "    ");
  os << "\n  },\n  \"benchmarks\": [";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    os << (i ? ",\n" : "\n") << "    {\"name\": " << json_string(r.name)
       << ", \"tcbench_args\": " << r.args << ", \"family_index\": " << i
       << ", \"per_family_instance_index\": 0"
       << ", \"run_name\": " << json_string(r.name)
       << ", \"run_type\": \"iteration\", \"repetitions\": 1, \"repetition_index\": 0"
       << ", \"threads\": 1, \"iterations\": 1, \"real_time\": " << json_number(seconds[i])
       << ", \"cpu_time\": " << json_number(seconds[i]) << ", \"time_unit\": \"s\"";
    for (const auto& [c, v] : r.counters)
      os << ", " << json_string(c.name()) << ": " << json_number(v);
    os << ", \"label\": " << json_string(r.label) << "}";
  }
  os << "\n  ]\n}\n";
}

constexpr const char* kUsage = "[--out FILE] [--study NAME]... [--list] [--help]";

int usage(const char* program, const std::string& why) {
  std::fprintf(stderr, "%s: %s\nusage: %s %s\n", program, why.c_str(), program, kUsage);
  return 2;
}

int help(const char* program) {
  std::printf(
      "usage: %s %s\n\n"
      "The half of the five questions the CPU answers, without a GPU: runs tcbench's host\n"
      "studies and writes a result file that `tcbench answers` and `tcbench report` read.\n"
      "`scripts/tcbench run` runs it on a machine without a GPU.\n\n"
      "options:\n"
      "  --out FILE    write the results to FILE, rewritten after every study (default: stdout)\n"
      "  --study NAME  run only this study (repeatable; default: all)\n"
      "  --list        list the studies and exit\n"
      "  -h, --help    show this help and exit\n\n"
      "studies:\n",
      program, kUsage);
  for (const Study& s : kStudies) std::printf("  %-13s %s\n", s.name, s.what);
  std::printf("\nExit codes: 0 written; 1 a study failed (named); 2 usage error.\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* program = argc > 0 ? argv[0] : "tcbench_studies";
  std::string out_path;
  std::vector<std::string> chosen;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      return help(program);
    } else if (arg == "--list") {
      for (const Study& s : kStudies) std::printf("%-13s %s\n", s.name, s.what);
      return 0;
    } else if (arg == "--out" && i + 1 < argc) {
      out_path = argv[++i];
    } else if (arg == "--study" && i + 1 < argc) {
      chosen.emplace_back(argv[++i]);
    } else {
      return usage(program, "unknown or incomplete argument '" + arg + "'");
    }
  }
  std::vector<const Study*> todo;
  for (const Study& s : kStudies)
    if (chosen.empty() || std::find(chosen.begin(), chosen.end(), s.name) != chosen.end())
      todo.push_back(&s);
  for (const std::string& c : chosen) {
    bool known = false;
    for (const Study& s : kStudies) known = known || c == s.name;
    if (!known) return usage(program, "no study named '" + c + "' (--list names them)");
  }

  // The studies run at once, one thread each (their results do not depend on it); what is
  // written and said keeps the plan's order. --out is rewritten as each one finishes.
  std::vector<Rows> made(todo.size());
  std::vector<double> took(todo.size());
  std::vector<char> finished(todo.size(), 0);
  Rows rows;
  std::vector<double> seconds;
  Progress progress;
  for (const Study* s : todo) progress.planned.emplace_back(s->name);
  // The finished studies' rows in the plan's order; each row carries its study's time per row,
  // so sums over rows stay the study's.
  auto gather = [&] {
    rows = Rows();
    seconds.clear();
    progress.done.clear();
    for (std::size_t i = 0; i < todo.size(); ++i) {
      if (!finished[i]) continue;
      progress.done.emplace_back(todo[i]->name);
      const std::size_t n = made[i].all().size();
      for (const Row& r : made[i].all()) {
        rows.all().push_back(r);
        seconds.push_back(took[i] / static_cast<double>(n));
      }
    }
  };
  // Writes what finished so far: FILE whole or not at all (a temporary file, then a rename).
  auto save = [&]() -> int {
    const std::string partial = out_path + ".partial";
    {
      std::ofstream os(partial);
      if (!os) {
        std::fprintf(stderr, "%s: cannot write %s\n", program, partial.c_str());
        return 2;
      }
      write_json(os, rows.all(), seconds, program, progress);
      os.close();
      if (!os) {
        std::fprintf(stderr, "%s: writing %s failed (disk full?)\n", program, partial.c_str());
        return 1;
      }
    }
    if (std::rename(partial.c_str(), out_path.c_str()) != 0) {
      std::fprintf(stderr, "%s: cannot rename %s to %s\n", program, partial.c_str(),
                   out_path.c_str());
      return 1;
    }
    return 0;
  };
  std::mutex mu;  // guards made, took, finished, the file and stderr
  int code = 0;
  for (std::size_t i = 0; i < todo.size(); ++i)
    std::fprintf(stderr, "[%zu/%zu] %s: %s ...\n", i + 1, todo.size(), todo[i]->name,
                 todo[i]->what);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < todo.size(); ++i)
    threads.emplace_back([&, i] {
      const Study& s = *todo[i];
      const auto start = std::chrono::steady_clock::now();
      Rows mine;
      std::string failure;
      try {
        s.run(mine);
      } catch (const std::exception& e) {
        failure = e.what();
      } catch (...) {
        failure = "an unknown exception";
      }
      const double t =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const std::lock_guard<std::mutex> lock(mu);
      if (!failure.empty()) {
        std::fprintf(stderr, "%s: the %s study failed: %s\n", program, s.name, failure.c_str());
        code = code ? code : 1;
        return;
      }
      made[i] = std::move(mine);
      took[i] = t;
      finished[i] = 1;
      gather();
      if (!out_path.empty() && code == 0) {  // saved before it is reported
        if (const int c = save(); c != 0) code = c;
      }
      std::fprintf(stderr, "[%zu/%zu] %s: %zu results in %.1f s\n", i + 1, todo.size(), s.name,
                   made[i].all().size(), t);
    });
  for (std::thread& t : threads) t.join();
  if (code != 0) return code;
  if (out_path.empty()) {
    write_json(std::cout, rows.all(), seconds, program, progress);
    return std::cout.good() ? 0 : 1;
  }
  return 0;
}
