#include "tcbench/bench/gemm_bench.hpp"

#include "tcbench/bench/registry.hpp"
#include "tcbench/cuda_owners.hpp"
#include "tcbench/gemm_verify.hpp"

#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <memory>
#include <mutex>

namespace tcbench::bench {
namespace {

std::size_t bytes_of(cudaDataType_t t, std::size_t count) {
  const std::size_t each = data_type_bytes(t);
  if (each == 0) throw InvalidArgument("no storage size for " + data_type_name(t));
  if (count > std::numeric_limits<std::size_t>::max() / each)
    throw InvalidArgument(std::to_string(count) + " elements of " + data_type_name(t) +
                          " overflow size_t");
  return count * each;
}

constexpr std::uint64_t kSeedA = 0x5EED0A, kSeedB = 0x5EED0B;

// Everything one GEMM configuration owns on the device.
struct Prepared {
  GemmSpec spec;  // with the scale pointers set
  DeviceBuffer<std::byte> a, b, d;
  DeviceBuffer<float> scales;  // a, b, d
  GemmOperands ops;
};

std::unique_ptr<Prepared> prepare(const Env& env, const GemmCase& gemm) {
  const DeviceInfo& dev = env.device();
  auto out = std::make_unique<Prepared>();
  out->spec = gemm.spec;
  GemmSpec& spec = out->spec;
  // Bad sizes are the caller's input, reported as a skip with the rule, never a crash.
  if (auto why = spec.why_invalid(dev.spec.cc_major, dev.spec.cc_minor)) throw Skipped(*why);
  GemmProblem p = spec.problem;
  p.resolve();
  const std::size_t a_bytes = bytes_of(spec.a_type, checked_elements(p.lda, p.a_cols()));
  const std::size_t b_bytes = bytes_of(spec.b_type, checked_elements(p.ldb, p.b_cols()));
  const std::size_t d_bytes = bytes_of(spec.d_type, checked_elements(p.ldd, p.n));
  require_memory(env, a_bytes + b_bytes + d_bytes + (std::size_t{64} << 20),
                 "a " + p.describe() + " " + std::string(name(gemm.precision)) + " GEMM");
  out->a = DeviceBuffer<std::byte>(a_bytes);
  out->b = DeviceBuffer<std::byte>(b_bytes);
  out->d = DeviceBuffer<std::byte>(d_bytes);
  out->ops = GemmOperands{p, out->a.get(), out->b.get(), out->d.get(), out->d.get()};

  const cudaStream_t stream = env.stream();
  if (gemm.prepare) {
    gemm.prepare(stream, out->ops);
  } else {
    fill_operand(spec.a_type, out->a.get(), a_bytes / data_type_bytes(spec.a_type),
                 gemm.input_a.value_or(default_input(spec.a_type)), kSeedA, stream);
    fill_operand(spec.b_type, out->b.get(), b_bytes / data_type_bytes(spec.b_type),
                 gemm.input_b.value_or(default_input(spec.b_type)), kSeedB, stream);
  }
  if (gemm.a_scale != 1.0f || gemm.b_scale != 1.0f || gemm.d_scale != 1.0f) {
    if (!spec.is_fp8())
      throw InvalidArgument("tensor scales are an FP8 feature; " + spec.describe() + " has none");
    out->scales = DeviceBuffer<float>(3);
    const std::vector<float> host = {gemm.a_scale, gemm.b_scale, gemm.d_scale};
    out->scales.upload(host, stream);
    spec.a_scale = out->scales.get();
    spec.b_scale = out->scales.get() + 1;
    spec.d_scale = out->scales.get() + 2;
  }
  return out;
}

// The Frobenius and per-element tolerances of a case: the precision's model, with the output
// rounding of the spec's D type when that is coarser than the precision's default output.
std::pair<double, double> tolerances(const GemmCase& gemm) {
  ErrorModel model = error_model(gemm.precision, gemm.spec.problem.k);
  const cudaDataType_t d = gemm.spec.d_type;
  if (d == CUDA_R_8I && !gemm.tolerance)
    throw InvalidArgument(
        "a GEMM that requantizes to INT8 needs an explicit tolerance (the "
        "rounding to 8 bits depends on the scale): " +
        gemm.spec.describe());
  if (!model.exact && unit_roundoff(d) > model.u_out) model.u_out = unit_roundoff(d);
  const double frob = gemm.tolerance.value_or(model.frobenius_tolerance());
  // An integer output rounds to whole numbers; the per-element bound relative to sum |a||b|
  // does not describe that, so only the aggregate is checked there.
  const double elem =
      d == CUDA_R_8I ? std::numeric_limits<double>::infinity() : model.element_tolerance();
  return {frob, elem};
}

std::string cache_key(const GemmCase& gemm, std::string_view path) {
  return std::string(path) + "|" + std::string(name(gemm.precision)) + "|" + gemm.label + "|" +
         gemm.spec.describe() + "|" + std::to_string(gemm.a_scale) + "," +
         std::to_string(gemm.b_scale) + "," + std::to_string(gemm.d_scale) + "|" +
         std::to_string(gemm.alpha) + (gemm.prepare ? "|custom inputs" : "");
}

// Google Benchmark calls a body once per repetition; inputs are deterministic, so each
// configuration is verified on its first call and the result reused. A failed verification is
// not cached (it throws, every time).
VerifyStats verify_once(const std::string& key, const std::function<VerifyStats()>& check) {
  static std::mutex mutex;
  static std::map<std::string, VerifyStats> done;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (auto it = done.find(key); it != done.end()) return it->second;
  }
  const VerifyStats stats = check();
  const std::lock_guard<std::mutex> lock(mutex);
  done.emplace(key, stats);
  return stats;
}

VerifyStats verify(const Env& env, const GemmCase& gemm, const Prepared& prep,
                   const std::function<void(cudaStream_t)>& run, std::string_view path) {
  const auto [frob, elem] = tolerances(gemm);
  return verify_once(cache_key(gemm, path), [&] {
    GemmOutputCheck c;
    c.problem = prep.ops.problem;
    c.a_type = prep.spec.a_type;
    c.b_type = prep.spec.b_type;
    c.d_type = prep.spec.d_type;
    c.a = prep.ops.a;
    c.b = prep.ops.b;
    c.d = prep.ops.d;
    c.scale = gemm.alpha * static_cast<double>(gemm.a_scale) * static_cast<double>(gemm.b_scale) *
              static_cast<double>(gemm.d_scale);
    const VerifyStats v = verify_gemm(c, run, elem, env.stream());
    if (!v.passes(frob))
      throw Error("verification failed for " + prep.spec.describe() + ": " + v.describe(frob));
    return v;
  });
}

GemmResult time_and_report(benchmark::State& state, const Env& env, const GemmCase& gemm,
                           const std::function<void(cudaStream_t)>& run, VerifyStats check) {
  GemmResult r;
  r.check = check;
  r.seconds = measure(state, env, run);
  report_compute(state, env, gemm.precision, gemm.spec.problem.flops(), r.seconds);
  state.counters["rel_error"] = check.rel_error();
  if (gemm.after_timing) gemm.after_timing(state, run);
  return r;
}

std::unique_ptr<GemmPlan> make_plan(const Env& env, const Prepared& prep) {
  const DeviceInfo& dev = env.device();
  return std::make_unique<GemmPlan>(env.lt(), prep.spec, dev.spec.cc_major, dev.spec.cc_minor);
}

}  // namespace

Distribution default_input(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_8I:
      return Distribution::integers(-127, 127);
    case CUDA_R_8F_E4M3:
    case CUDA_R_8F_E5M2:
      return Distribution::integers(-8, 8);  // exact in both FP8 formats
    default:
      return Distribution::uniform(-1.0f, 1.0f);
  }
}

void fill_operand(cudaDataType_t t, void* p, std::size_t count, const Distribution& d,
                  std::uint64_t seed, cudaStream_t stream) {
  visit_data_type(
      t, [&]<typename T>(TypeTag<T>) { fill_random(static_cast<T*>(p), count, d, seed, stream); });
}

GemmResult run_cublaslt_gemm(benchmark::State& state, const Env& env, const GemmCase& gemm) {
  const std::unique_ptr<Prepared> prep = prepare(env, gemm);
  const std::unique_ptr<GemmPlan> plan = make_plan(env, *prep);
  const GemmOperands& o = prep->ops;
  const double alpha = gemm.alpha;
  const auto run = [&](cudaStream_t s) { plan->run(s, o.a, o.b, o.c, o.d, alpha); };
  const VerifyStats check = verify(env, gemm, *prep, run, "cublaslt");
  GemmResult r = time_and_report(state, env, gemm, run, check);
  r.algo = plan->selected();
  state.counters["waves"] = r.algo->waves_count;
  state.SetLabel(gemm.label.empty() ? r.algo->impl.impl_name
                                    : gemm.label + " (" + r.algo->impl.impl_name + ")");
  return r;
}

GemmResult run_kernel_gemm(benchmark::State& state, const Env& env, const GemmCase& gemm,
                           const GemmWork& work) {
  if (!work) throw InvalidArgument("run_kernel_gemm needs a kernel to run");
  const std::unique_ptr<Prepared> prep = prepare(env, gemm);
  const GemmOperands& o = prep->ops;
  const auto run = [&](cudaStream_t s) { work(s, o); };
  const VerifyStats check = verify(env, gemm, *prep, run, "kernel");
  GemmResult r = time_and_report(state, env, gemm, run, check);
  state.SetLabel(gemm.label);
  return r;
}

double baseline_median_seconds(const Env& env, const GemmCase& gemm) {
  static std::mutex mutex;
  static std::map<std::string, double> cache;
  const std::string key = cache_key(gemm, "baseline");
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  const std::unique_ptr<Prepared> prep = prepare(env, gemm);
  const std::unique_ptr<GemmPlan> plan = make_plan(env, *prep);
  const GemmOperands& o = prep->ops;
  const auto run = [&](cudaStream_t s) { plan->run(s, o.a, o.b, o.c, o.d, gemm.alpha); };
  verify(env, gemm, *prep, run, "cublaslt");
  const double median = sample_work(env, run).median;
  const std::lock_guard<std::mutex> lock(mutex);
  cache.emplace(key, median);
  return median;
}

}  // namespace tcbench::bench
