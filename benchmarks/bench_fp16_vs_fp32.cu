// fp16_vs_fp32: what tensor cores add over CUDA cores, per precision.
//
// cuBLASLt FP32 (SIMT FFMA), TF32, FP16 (FP32 and FP16 accumulate) and BF16, beside our own
// SIMT and WMMA kernels, on square sizes and real layer shapes. The harness verifies each
// configuration against an FP64 reference before timing it. See docs/concepts/fp16-vs-fp32.md.
//
//   build/release/bin/bench_fp16_vs_fp32 --benchmark_filter='cublaslt/.*/m:8192/'
//   build/release/bin/bench_fp16_vs_fp32 --quick
#include "tcbench/bench/harness.hpp"
#include "tcbench/kernels/gemm_simt.hpp"
#include "tcbench/kernels/gemm_wmma.hpp"

#include <vector>

namespace tcbench::bench {
namespace {

constexpr std::string_view kTopic = "fp16_vs_fp32";

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

GemmCase gemm_case(Precision p, Shape s, std::string label = {}) {
  GemmCase c = GemmCase::for_precision(p, s.m, s.n, s.k);
  c.label = std::move(label);
  return c;
}

void add_cublaslt(const Env& env, Precision p, Shape s) {
  register_gpu_benchmark(
      env, gemm_name(kTopic, "cublaslt", p, s.m, s.n, s.k),
      [&env, p, s](benchmark::State& st) { run_cublaslt_gemm(st, env, gemm_case(p, s)); });
}

void add_simt(const Env& env, Shape s) {
  register_gpu_benchmark(env, gemm_name(kTopic, "simt", Precision::fp32, s.m, s.n, s.k),
                         [&env, s](benchmark::State& st) {
                           run_kernel_gemm(st, env, gemm_case(Precision::fp32, s, "SIMT FFMA"),
                                           [](cudaStream_t stream, const GemmOperands& o) {
                                             kernels::gemm_simt_fp32(o.problem, o.a_as<float>(),
                                                                     o.b_as<float>(),
                                                                     o.d_as<float>(), stream);
                                           });
                         });
}

template <Precision P>
void add_wmma(const Env& env, Shape s) {
  using T = typename GemmTypes<P>::A;
  register_gpu_benchmark(
      env, gemm_name(kTopic, "wmma", P, s.m, s.n, s.k), [&env, s](benchmark::State& st) {
        const DeviceInfo& dev = env.device();
        if (auto why = kernels::wmma_unsupported_reason(dev.spec.cc_major, dev.spec.cc_minor, P))
          throw Skipped(*why);
        run_kernel_gemm(st, env, gemm_case(P, s, "WMMA (HMMA) fp32 acc"),
                        [](cudaStream_t stream, const GemmOperands& o) {
                          kernels::gemm_wmma<T>(o.problem, o.a_as<T>(), o.b_as<T>(), o.d_as<T>(),
                                                stream);
                        });
      });
}

}  // namespace

void register_topic(const Env& env) {
  for (const Shape& s : shapes(env.quick())) {
    for (Precision p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::fp16_acc16,
                        Precision::bf16})
      add_cublaslt(env, p, s);
    add_simt(env, s);
    add_wmma<Precision::fp16>(env, s);
    add_wmma<Precision::bf16>(env, s);
  }
}

}  // namespace tcbench::bench
