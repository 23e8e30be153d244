// fp16_vs_fp32: what tensor cores add over CUDA cores, per precision.
//
// cuBLASLt FP32 (SIMT FFMA), TF32, FP16 (FP32 and FP16 accumulate) and BF16, the same five
// through cuBLAS's cublasGemmEx (the API most users call; vs_cublaslt: cuBLASLt's time over
// cuBLAS's on the same problem), beside our own SIMT and WMMA kernels, on square sizes and real
// layer shapes, all NN. The harness verifies each configuration against an FP64 reference before
// timing it. See docs/concepts/fp16-vs-fp32.md.
//
//   build/release/bin/bench_fp16_vs_fp32 --benchmark_filter='cublaslt/.*/m:8192/'
//   build/release/bin/bench_fp16_vs_fp32 --benchmark_filter='/cublas(lt)?/fp16/m:8192/'
//   build/release/bin/bench_fp16_vs_fp32 --quick
#include "tcbench/bench/harness.hpp"
#include "tcbench/kernels/gemm_simt.hpp"
#include "tcbench/kernels/gemm_wmma.hpp"

#include <vector>

namespace tcbench::bench {
namespace {

constexpr std::string_view kTopic = "fp16_vs_fp32";
using P = Precision;

std::vector<GemmShape> shapes(bool quick) {
  if (quick) return {{256, 256, 256}, {1024, 1024, 1024}, {2048, 2048, 2048}};
  std::vector<GemmShape> s;
  for (std::int64_t n = 256; n <= 16384; n *= 2) s.push_back({n, n, n});
  // Transformer layer GEMMs, column-major D (features x tokens) = W (features x hidden) * X:
  // hidden 4096, 8192 tokens (batch x sequence): the fused QKV projection (3 x 4096 outputs)
  // and the MLP down projection (16384 -> 4096).
  s.push_back({12288, 8192, 4096});
  s.push_back({4096, 8192, 16384});
  return s;
}

KernelSupport wmma_support() {
  return [](const GpuSpec& g, const GemmCase& c) {
    return kernels::wmma_unsupported_reason(g.cc_major, g.cc_minor, c.precision, c.spec.problem);
  };
}

}  // namespace

TopicHelp topic_help() {
  return {
      "What Tensor Cores add over CUDA cores: cuBLASLt GEMMs in FP32 (SIMT FFMA), TF32, "
      "FP16 (FP32 and FP16 accumulation) and BF16 beside tcbench's own SIMT and WMMA kernels, "
      "on square sizes and two transformer-layer shapes (NN), each checked against an FP64 "
      "reference before it is timed.",
      "docs/concepts/fp16-vs-fp32.md"};
}

void register_topic(const Env& env) {
  const std::vector<GemmShape> s = shapes(env.quick());
  // The same precisions, shapes and NN layouts through both library APIs.
  constexpr P library[] = {P::fp32, P::tf32, P::fp16, P::fp16_acc16, P::bf16};
  add_gemms(env, kTopic, "cublaslt", library, s);
  add_gemms(env, kTopic, "cublas", library, s, default_case, run_cublas);
  add_gemms(env, kTopic, "simt", std::array{P::fp32}, s, labelled_case("SIMT FFMA"),
            own_kernel(typed<P::fp32>(kernels::gemm_simt_fp32)));
  add_gemms(env, kTopic, "wmma", std::array{P::fp16}, s, labelled_case("WMMA (HMMA) fp32 acc"),
            own_kernel(typed<P::fp16>(kernels::gemm_wmma<__half>), wmma_support()));
  add_gemms(env, kTopic, "wmma", std::array{P::bf16}, s, labelled_case("WMMA (HMMA) fp32 acc"),
            own_kernel(typed<P::bf16>(kernels::gemm_wmma<__nv_bfloat16>), wmma_support()));
}

}  // namespace tcbench::bench
