// fp16_vs_fp32: what tensor cores add over CUDA cores, per precision.
//
// cuBLASLt FP32 (SIMT FFMA), TF32, FP16 (FP32 and FP16 accumulate) and BF16, beside our own
// plain SIMT and WMMA kernels, on square sizes and real layer shapes. Each configuration is
// verified against an FP64 reference before it is timed; counters: tflops, pct_of_peak,
// rel_error. See docs/concepts/fp16-vs-fp32.md.
//
//   build/release/bin/bench_fp16_vs_fp32 --benchmark_filter='cublaslt/.*/m:8192/'
//   build/release/bin/bench_fp16_vs_fp32 --quick
#include "tcbench/bench.hpp"
#include "tcbench/gemm_check.hpp"
#include "tcbench/gemm_lt.hpp"
#include "tcbench/kernels/gemm_simt.hpp"
#include "tcbench/kernels/gemm_wmma.hpp"
#include "tcbench/random_fill.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <memory>
#include <type_traits>
#include <vector>

namespace tcbench::bench {
namespace {

constexpr std::string_view kTopic = "fp16_vs_fp32";
constexpr std::uint64_t kSeedA = 0x5EED0A, kSeedB = 0x5EED0B;

struct Shape {
  std::int64_t m, n, k;
};

std::vector<Shape> shapes(bool quick) {
  if (quick) return {{256, 256, 256}, {1024, 1024, 1024}, {2048, 2048, 2048}};
  std::vector<Shape> s;
  for (std::int64_t n = 256; n <= 16384; n *= 2) s.push_back({n, n, n});
  // Transformer layer GEMMs, column-major D (features x tokens) = W (features x hidden) * X:
  // hidden 4096, 8192 tokens (batch x sequence): the fused QKV projection (3 x 4096 outputs)
  // and the MLP down projection (16384 -> 4096).
  s.push_back({12288, 8192, 4096});
  s.push_back({4096, 8192, 16384});
  return s;
}

// Storage type of each precision's inputs and output: FP32 data for fp32 and tf32 (TF32 is a
// compute mode), 16-bit data otherwise.
template <Precision P>
using Element = std::conditional_t<P == Precision::fp32 || P == Precision::tf32, float,
                                   std::conditional_t<P == Precision::bf16, __nv_bfloat16, __half>>;

// Process-wide resources, created on first use (after the device check). Deliberately never
// destroyed: the CUDA runtime unloads at exit, and destroying handles after it would only print
// errors.
struct Shared {
  Stream stream;
  LtHandle lt;
  L2Flusher flusher;
  explicit Shared(const DeviceInfo& dev) : flusher(dev.l2_bytes) {}
};
Shared& shared(const DeviceInfo& dev) {
  static Shared* s = new Shared(dev);
  return *s;
}

enum class Impl { cublaslt, simt, wmma };

std::string_view impl_name(Impl i) {
  switch (i) {
    case Impl::cublaslt:
      return "cublaslt";
    case Impl::simt:
      return "simt";
    case Impl::wmma:
      return "wmma";
  }
  return "?";
}

template <Precision P>
void run_gemm(benchmark::State& state, const std::string& bench_name, const DeviceInfo& dev,
              Impl impl, Shape shape) {
  using In = Element<P>;
  using Out = Element<P>;
  // Support is decided by the path's own rules (cuBLASLt spec validation, the WMMA kernel's
  // requirements), not by the peak table, so a GPU newer than the table still gets measured,
  // only without pct_of_peak.
  if (impl == Impl::wmma) {
    if (auto why = kernels::wmma_unsupported_reason(dev.spec.cc_major, dev.spec.cc_minor, P))
      throw Skipped(*why);
  }
  Shared& sh = shared(dev);
  const cudaStream_t stream = sh.stream.get();

  // cuBLASLt's spec decides the layout; our kernels use the same NN column-major problem.
  GemmSpec spec = GemmSpec::for_precision(P, shape.m, shape.n, shape.k);
  if (auto why = spec.why_invalid(dev.spec.cc_major, dev.spec.cc_minor)) throw Skipped(*why);
  const GemmProblem problem = to_problem(spec);
  const std::size_t a_elems = checked_elements(problem.lda, problem.a_cols());
  const std::size_t b_elems = checked_elements(problem.ldb, problem.b_cols());
  const std::size_t d_elems = checked_elements(problem.ldd, problem.n);
  require_memory(dev,
                 checked_bytes<In>(a_elems) + checked_bytes<In>(b_elems) +
                     checked_bytes<Out>(d_elems) + (std::size_t{64} << 20),
                 "a " + problem.describe() + " " + std::string(name(P)) + " GEMM");

  DeviceBuffer<In> a(a_elems), b(b_elems);
  DeviceBuffer<Out> d(d_elems);
  fill_random(a.get(), a.size(), Distribution::uniform(-1.0f, 1.0f), kSeedA, stream);
  fill_random(b.get(), b.size(), Distribution::uniform(-1.0f, 1.0f), kSeedB, stream);

  std::unique_ptr<GemmPlan> plan;
  std::function<void(cudaStream_t)> work;
  switch (impl) {
    case Impl::cublaslt:
      plan = std::make_unique<GemmPlan>(sh.lt, spec, dev.spec.cc_major, dev.spec.cc_minor);
      work = [&](cudaStream_t s) { plan->run(s, a.get(), b.get(), d.get(), d.get()); };
      break;
    case Impl::simt:
      if constexpr (P == Precision::fp32) {
        work = [&](cudaStream_t s) {
          kernels::gemm_simt_fp32(problem, a.get(), b.get(), d.get(), s);
        };
      }
      break;
    case Impl::wmma:
      if constexpr (P == Precision::fp16 || P == Precision::bf16) {
        work = [&](cudaStream_t s) {
          kernels::gemm_wmma<In>(problem, a.get(), b.get(), d.get(), s);
        };
      }
      break;
  }
  if (!work)
    throw InvalidArgument(std::string(impl_name(impl)) + " has no " + std::string(name(P)) +
                          " kernel");

  // Correct first: a result that fails verification is reported as an error and never timed.
  const double tol = tolerance(P, problem.k);
  const VerifyStats check = verify_once(bench_name, [&] {
    VerifyStats v = verify_gemm(problem, a.get(), b.get(), d.get(), work, stream);
    if (!v.passes(tol))
      throw Error("verification failed for " + problem.describe() + ": " + v.describe(tol));
    return v;
  });

  const SampleStats seconds = time_loop(state, stream, &sh.flusher, TimingOptions{}, work);
  report_compute(state, dev, P, problem.flops(), seconds);
  state.counters["rel_error"] = check.rel_error();
  if (plan) {
    const AlgoCandidate& algo = plan->selected();
    state.counters["waves"] = algo.waves_count;
    state.SetLabel(algo.impl.impl_name);
  } else {
    state.SetLabel(impl == Impl::wmma ? "WMMA (HMMA) fp32 acc" : "SIMT FFMA");
  }
}

template <Precision P>
void add(const Env& env, Impl impl, Shape s) {
  const DeviceInfo& dev = env.device;
  const std::string bench_name = gemm_name(kTopic, impl_name(impl), P, s.m, s.n, s.k);
  register_gpu_benchmark(bench_name, [&dev, impl, s, bench_name](benchmark::State& st) {
    run_gemm<P>(st, bench_name, dev, impl, s);
  });
}

}  // namespace

void register_topic(const Env& env) {
  for (const Shape& s : shapes(env.quick)) {
    add<Precision::fp32>(env, Impl::cublaslt, s);
    add<Precision::tf32>(env, Impl::cublaslt, s);
    add<Precision::fp16>(env, Impl::cublaslt, s);
    add<Precision::fp16_acc16>(env, Impl::cublaslt, s);
    add<Precision::bf16>(env, Impl::cublaslt, s);
    add<Precision::fp32>(env, Impl::simt, s);
    add<Precision::fp16>(env, Impl::wmma, s);
    add<Precision::bf16>(env, Impl::wmma, s);
  }
}

}  // namespace tcbench::bench
