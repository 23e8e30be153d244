#include "tcbench/bench/gemm_bench.hpp"

#include "tcbench/bench/once.hpp"
#include "tcbench/bench/registry.hpp"
#include "tcbench/cuda_owners.hpp"
#include "tcbench/gemm_cublas.hpp"
#include "tcbench/gemm_verify.hpp"
#include "tcbench/schema.hpp"

#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>

namespace tcbench::bench {
namespace {

// Bytes of `count` elements, sub-byte types (FP4: two per byte) rounded up to whole bytes.
std::size_t bytes_of(cudaDataType_t t, std::size_t count) {
  const std::size_t bits = data_type_bits(t);
  if (bits == 0) throw InvalidArgument("no storage size for " + data_type_name(t));
  if (count > std::numeric_limits<std::size_t>::max() / bits)
    throw InvalidArgument(std::to_string(count) + " elements of " + data_type_name(t) +
                          " overflow size_t");
  return (count * bits + 7) / 8;
}

constexpr std::uint64_t kSeedA = 0x5EED0A, kSeedB = 0x5EED0B;

// Everything one GEMM configuration owns on the device.
struct Prepared {
  GemmSpec spec;  // with the scale pointers set
  DeviceBuffer<std::byte> a, b, d;
  DeviceBuffer<float> scales;  // a, b, d
  GemmOperands ops;
};

// Elements of a buffer holding `batch` matrices of `one` elements each, `stride` apart.
std::size_t batch_elements(std::size_t one, std::int64_t stride, std::int32_t batch) {
  if (batch <= 1) return one;
  return checked_elements(stride, batch - 1) + one;
}

// Allocates and fills the operands. The spec must have been validated by the caller against the
// library that will run it (cuBLASLt's rules, or cuBLAS's).
std::unique_ptr<Prepared> prepare(const Env& env, const GemmCase& gemm) {
  auto out = std::make_unique<Prepared>();
  out->spec = gemm.spec;
  GemmSpec& spec = out->spec;
  GemmProblem p = spec.problem;
  p.resolve();
  const std::int32_t batch = spec.batch_count;
  if (batch > 1 && (gemm.reference || gemm.extra_reference))
    throw InvalidArgument("reference operands are for single GEMMs; " + spec.describe() +
                          " is a batch of " + std::to_string(batch));
  GemmOperands& ops = out->ops;
  ops.problem = p;
  ops.batch_count = batch;
  ops.stride_a = spec.effective_stride_a();
  ops.stride_b = spec.effective_stride_b();
  ops.stride_d = spec.effective_stride_d();
  ops.a_count = batch_elements(checked_elements(p.lda, p.a_cols()), ops.stride_a, batch);
  ops.b_count = batch_elements(checked_elements(p.ldb, p.b_cols()), ops.stride_b, batch);
  ops.d_count = batch_elements(checked_elements(p.ldd, p.n), ops.stride_d, batch);
  const std::size_t a_bytes = bytes_of(spec.a_type, ops.a_count);
  const std::size_t b_bytes = bytes_of(spec.b_type, ops.b_count);
  const std::size_t d_bytes = bytes_of(spec.d_type, ops.d_count);
  require_memory(env, a_bytes + b_bytes + d_bytes + (std::size_t{64} << 20),
                 "a " + p.describe() + (batch > 1 ? " batch=" + std::to_string(batch) : "") + " " +
                     std::string(name(gemm.precision)) + " GEMM");
  out->a = DeviceBuffer<std::byte>(a_bytes);
  out->b = DeviceBuffer<std::byte>(b_bytes);
  out->d = DeviceBuffer<std::byte>(d_bytes);
  ops.a = out->a.get();
  ops.b = out->b.get();
  ops.c = ops.d = out->d.get();

  const cudaStream_t stream = env.stream();
  if (gemm.prepare) {
    gemm.prepare(stream, ops);
  } else {
    // One seeded fill over the whole buffer: every matrix of a batch holds different values, so
    // a GEMM that reads the wrong matrix fails verification.
    fill_operand(spec.a_type, out->a.get(), ops.a_count,
                 gemm.input_a.value_or(default_input(spec.a_type)), kSeedA, stream);
    fill_operand(spec.b_type, out->b.get(), ops.b_count,
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

// The Frobenius and per-element tolerances of a case: the precision's error model for the
// spec's depth, output type and accumulation mode, unless the case states its own.
std::pair<double, double> tolerances(const GemmCase& gemm) {
  const GemmSpec& spec = gemm.spec;
  const cudaDataType_t d = spec.d_type;
  if (d == CUDA_R_8I && !gemm.tolerance)
    throw InvalidArgument(
        "a GEMM that requantizes to INT8 needs an explicit tolerance (the "
        "rounding to 8 bits depends on the scale): " +
        spec.describe());
  const ErrorModel model = error_model(gemm.precision, spec.problem.k, d, spec.fast_accum);
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

VerifyStats verify(const Env& env, const GemmCase& gemm, const Prepared& prep,
                   const std::function<void(cudaStream_t)>& run, std::string_view path) {
  const auto [frob, elem] = tolerances(gemm);
  return once<VerifyStats>("verify|" + cache_key(gemm, path), [&] {
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
    c.batch_count = prep.ops.batch_count;
    c.stride_a = prep.ops.stride_a;
    c.stride_b = prep.ops.stride_b;
    c.stride_d = prep.ops.stride_d;
    if (gemm.reference) {  // block-scaled: the dequantized values the GEMM multiplies
      c.a_type = gemm.reference->a_type;
      c.b_type = gemm.reference->b_type;
      c.a = gemm.reference->a;
      c.b = gemm.reference->b;
    }
    const VerifyStats v = verify_gemm(c, run, elem, env.stream());
    if (!v.passes(frob))
      throw Error("verification failed for " + prep.spec.describe() + ": " + v.describe(frob));
    return v;
  });
}

// The error against the case's second reference (FP8: the unquantized FP32 originals), measured
// once per configuration with the same run, no tolerance: it is reported, not judged.
void report_extra_reference(benchmark::State& state, const Env& env, const GemmCase& gemm,
                            const Prepared& prep, const std::function<void(cudaStream_t)>& run,
                            std::string_view path) {
  const GemmCase::ExtraReference& x = *gemm.extra_reference;
  const double err = once<double>("extra_reference|" + cache_key(gemm, path), [&] {
    GemmOutputCheck c;
    c.problem = prep.ops.problem;
    c.a_type = x.a_type;
    c.b_type = x.b_type;
    c.d_type = prep.spec.d_type;
    c.a = x.a;
    c.b = x.b;
    c.d = prep.ops.d;
    c.scale = (x.alpha_dequantizes ? 1.0 : gemm.alpha) * static_cast<double>(gemm.d_scale);
    return verify_gemm(c, run, std::numeric_limits<double>::infinity(), env.stream()).rel_error();
  });
  set_counter(state, x.counter, err);
}

GemmResult time_and_report(benchmark::State& state, const Env& env, const GemmCase& gemm,
                           const Prepared& prep, const std::function<void(cudaStream_t)>& run,
                           VerifyStats check, std::string_view path) {
  GemmResult r;
  r.check = check;
  if (gemm.extra_reference) report_extra_reference(state, env, gemm, prep, run, path);
  const Window window = measure_window(state, env, run, gemm.timing);
  r.seconds = window.seconds;
  r.regime = window.regime;
  report_compute(state, env, gemm.precision, gemm.spec.flops(), r.seconds);
  set_counter(state, counters::rel_error, check.rel_error());
  for (Precision base : gemm.speedup_vs) {
    // The same precision is a baseline when this case is block-scaled: per-tensor scaling.
    if (base == gemm.precision && gemm.spec.scale_mode == ScaleMode::tensor) continue;
    const GemmCase b = baseline_case(gemm, base);
    const GpuSpec& gpu = env.device().spec;
    if (b.spec.why_invalid(gpu.cc_major, gpu.cc_minor)) continue;  // no such path here
    report_speedup(state, base, baseline_median_seconds(env, b), r.seconds.median);
  }
  if (gemm.after_timing) gemm.after_timing(state, run);
  return r;
}

std::unique_ptr<GemmPlan> make_plan(const Env& env, const Prepared& prep) {
  return std::make_unique<GemmPlan>(env.lt(), prep.spec, env.gpu().cc_major, env.gpu().cc_minor);
}

// vs_cublaslt: cuBLASLt's median on the very same problem over the cuBLAS case's median. Left out
// where cuBLASLt cannot run the problem (its rules, or no algorithm), never guessed.
void report_vs_cublaslt(benchmark::State& state, const Env& env, const GemmCase& gemm,
                        const SampleStats& seconds) {
  const GemmCase lt = baseline_case(gemm, gemm.precision);
  if (lt.spec.why_invalid(env.gpu().cc_major, env.gpu().cc_minor)) return;
  double lt_seconds = 0;
  try {
    lt_seconds = baseline_median_seconds(env, lt);
  } catch (const NoAlgorithm&) {
    return;
  }
  set_counter(state, counters::vs_cublaslt, lt_seconds / seconds.median);
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
  // Bad sizes are the caller's input, reported as a skip with the rule, never a crash.
  env.skip_unless_valid(gemm.spec);
  const std::unique_ptr<Prepared> prep = prepare(env, gemm);
  const std::unique_ptr<GemmPlan> plan = make_plan(env, *prep);
  const GemmOperands& o = prep->ops;
  const double alpha = gemm.alpha;
  const auto run = [&](cudaStream_t s) { plan->run(s, o.a, o.b, o.c, o.d, alpha); };
  const VerifyStats check = verify(env, gemm, *prep, run, "cublaslt");
  GemmResult r = time_and_report(state, env, gemm, *prep, run, check, "cublaslt");
  r.algo = plan->selected();
  set_counter(state, counters::waves, r.algo->waves_count);
  state.SetLabel(with_regime(gemm.label.empty() ? r.algo->impl.impl_name
                                                : gemm.label + " (" + r.algo->impl.impl_name + ")",
                             r.regime));
  return r;
}

GemmResult run_cublas_gemm(benchmark::State& state, const Env& env, const GemmCase& gemm) {
  env.skip_unless(why_cublas_invalid(gemm.spec, env.gpu().cc_major, env.gpu().cc_minor));
  const std::unique_ptr<Prepared> prep = prepare(env, gemm);
  const BlasGemm blas(env.blas(), prep->spec, env.gpu().cc_major, env.gpu().cc_minor);
  const GemmOperands& o = prep->ops;
  const double alpha = gemm.alpha;
  const auto run = [&](cudaStream_t s) { blas.run(s, o.a, o.b, o.c, o.d, alpha); };
  const VerifyStats check = verify(env, gemm, *prep, run, "cublas");
  GemmResult r = time_and_report(state, env, gemm, *prep, run, check, "cublas");
  report_vs_cublaslt(state, env, gemm, r.seconds);
  state.SetLabel(with_regime(
      gemm.label.empty() ? blas.label() : gemm.label + " (" + blas.label() + ")", r.regime));
  return r;
}

GemmResult run_kernel_gemm(benchmark::State& state, const Env& env, const GemmCase& gemm,
                           const GemmWork& work) {
  if (!work) throw InvalidArgument("run_kernel_gemm needs a kernel to run");
  if (gemm.spec.batch_count != 1)
    throw InvalidArgument("our kernels compute one GEMM per call; a batch of " +
                          std::to_string(gemm.spec.batch_count) +
                          " runs through cuBLAS or cuBLASLt [" + gemm.spec.describe() + "]");
  env.skip_unless_valid(gemm.spec);
  const std::unique_ptr<Prepared> prep = prepare(env, gemm);
  const GemmOperands& o = prep->ops;
  const auto run = [&](cudaStream_t s) { work(s, o); };
  const VerifyStats check = verify(env, gemm, *prep, run, "kernel");
  GemmResult r = time_and_report(state, env, gemm, *prep, run, check, "kernel");
  state.SetLabel(with_regime(gemm.label, r.regime));
  return r;
}

double baseline_median_seconds(const Env& env, const GemmCase& gemm) {
  return once<double>("baseline|" + cache_key(gemm, "cublaslt"), [&] {
    env.skip_unless_valid(gemm.spec);
    const std::unique_ptr<Prepared> prep = prepare(env, gemm);
    const std::unique_ptr<GemmPlan> plan = make_plan(env, *prep);
    const GemmOperands& o = prep->ops;
    const auto run = [&](cudaStream_t s) { plan->run(s, o.a, o.b, o.c, o.d, gemm.alpha); };
    verify(env, gemm, *prep, run, "cublaslt");
    return sample_work(env, run).median;
  });
}

GemmCase baseline_case(const GemmCase& c, Precision base) {
  GemmCase b;
  b.precision = base;
  b.spec = GemmSpec::for_precision(base, c.spec.problem.m, c.spec.problem.n, c.spec.problem.k);
  b.spec.problem = c.spec.problem;          // layout and leading dimensions: the case's own
  b.spec.batch_count = c.spec.batch_count;  // and its batch, strides in elements
  b.spec.stride_a = c.spec.stride_a;
  b.spec.stride_b = c.spec.stride_b;
  b.spec.stride_c = c.spec.stride_c;
  b.spec.stride_d = c.spec.stride_d;
  return b;
}

double baseline_seconds(const Env& env, const GemmCase& c, Precision base) {
  return baseline_median_seconds(env, baseline_case(c, base));
}

void report_speedup(benchmark::State& state, Precision base, double base_seconds, double seconds) {
  const bool timed =
      base_seconds > 0 && seconds > 0 && std::isfinite(base_seconds) && std::isfinite(seconds);
  if (timed) set_counter(state, counters::speedup_vs(base), base_seconds / seconds);
}

GemmCase default_case(Precision p, const GemmShape& s) {
  return GemmCase::for_precision(p, s.m, s.n, s.k);
}

MakeCase labelled_case(std::string label) {
  return [label = std::move(label)](Precision p, const GemmShape& s) {
    GemmCase c = default_case(p, s);
    c.label = label;
    return c;
  };
}

GemmResult run_cublaslt(benchmark::State& state, const Env& env, const GemmCase& gemm) {
  return run_cublaslt_gemm(state, env, gemm);
}

GemmResult run_cublas(benchmark::State& state, const Env& env, const GemmCase& gemm) {
  return run_cublas_gemm(state, env, gemm);
}

void add_gemms(const Env& env, std::string_view topic, std::string_view variant,
               std::span<const Precision> precisions, std::span<const GemmShape> shapes,
               MakeCase make_case, RunGemm run) {
  for (const GemmShape& shape : shapes)
    for (Precision p : precisions) {
      const GemmSpec spec = make_case(p, shape).spec;
      BenchName name = BenchName(topic, variant, p).gemm(spec.problem);
      if (spec.batch_count != 1) name.arg(Key::batch, spec.batch_count);
      register_gpu_benchmark(name, [&env, p, shape, make_case, run](benchmark::State& st) {
        run(st, env, make_case(p, shape));
      });
    }
}

RunGemm own_kernel(GemmWork work, KernelSupport unsupported) {
  return [work = std::move(work), unsupported = std::move(unsupported)](
             benchmark::State& st, const Env& env, const GemmCase& gemm) {
    if (unsupported) env.skip_unless(unsupported(env.gpu(), gemm));
    return run_kernel_gemm(st, env, gemm, work);
  };
}

}  // namespace tcbench::bench
