// tensor_util: sm__pipe_tensor_cycles_active beside TFLOP/s, from "no Tensor Cores" to
// "saturated", read in-process with CUPTI's range profiler after each configuration is timed.
//
// On one large problem: our SIMT FP32 kernel (FFMA only: the pipe should read ~0%), our WMMA
// FP16 kernel, cuBLASLt TF32/FP16/BF16/INT8/FP8; then a small GEMM that cannot fill the GPU and
// the STREAM triad (memory-bound, no tensor work). Each has tflops (tops, gbps), pct_of_peak and
// tensor_active_pct plus the chip's sub-pipes. See docs/concepts/tensor-util.md; cross-check
// with Nsight Compute: scripts/tcbench profile build/release/bin/bench_tensor_util.
//
//   build/release/bin/bench_tensor_util --benchmark_filter='cublaslt/fp16'
//   build/release/bin/bench_tensor_util --quick
#include "tcbench/bench/harness.hpp"
#include "tcbench/kernels/gemm_simt.hpp"
#include "tcbench/kernels/gemm_wmma.hpp"
#include "tcbench/kernels/stream_triad.hpp"
#include "tensor_counters.hpp"

#include <array>
#include <optional>
#include <string>

namespace tcbench::bench {
namespace {

constexpr std::string_view kTopic = "tensor_util";
using P = Precision;

// The large problem every path runs; --quick keeps CI smoke runs short.
GemmShape large(bool quick) {
  return quick ? GemmShape{2048, 2048, 2048} : GemmShape{8192, 8192, 8192};
}
// 256^3 in 128x128 tiles is 4 CTAs: a few percent of any GPU's SMs, whatever the library does.
constexpr GemmShape kSmall{256, 256, 256};

// A runner that reads the tensor-pipe counters of the timed GEMM (after timing, replayed inside
// one CUPTI range) and notes in the label when they could not be read.
RunGemm profiled(RunGemm run, std::string key) {
  return [run = std::move(run), key = std::move(key)](benchmark::State& st, const Env& env,
                                                      const GemmCase& gemm) {
    std::optional<std::string> skipped;
    GemmCase c = gemm;
    c.after_timing = [&env, &key, &skipped](benchmark::State& s,
                                            const std::function<void(cudaStream_t)>& run_once) {
      skipped = add_tensor_counters(s, env, key, run_once);
    };
    GemmResult r = run(st, env, c);
    st.SetLabel(with_counter_note(r.algo ? r.algo->impl.impl_name : c.label, skipped));
    return r;
  };
}

MakeCase labelled(std::string label) {
  return [label](P p, const GemmShape& s) {
    GemmCase c = default_case(p, s);
    c.label = label;
    return c;
  };
}

void add_profiled(const Env& env, std::string_view variant, P p, const GemmShape& s,
                  MakeCase make = default_case, RunGemm run = run_cublaslt) {
  const std::array<P, 1> one{p};
  const std::array<GemmShape, 1> shape{s};
  const std::string key = BenchName(kTopic, variant, p).gemm(make(p, s).spec.problem);
  add_gemms(env, kTopic, variant, one, shape, make, profiled(std::move(run), key));
}

// The memory-bound point: the triad streams three arrays far larger than any L2.
void add_memory(const Env& env, bool quick) {
  const std::size_t n = quick ? (std::size_t{1} << 24) : (std::size_t{1} << 27);
  const std::string name =
      BenchName(kTopic, "memory", P::fp32).arg(Key::elements, static_cast<std::int64_t>(n));
  register_gpu_benchmark(name, [&env, n, name](benchmark::State& st) {
    require_memory(env, 3 * n * sizeof(float), "three STREAM triad arrays");
    DeviceBuffer<float> a(n), b(n), c(n);
    // Inputs: a deterministic non-zero fill; the output is checked below, not assumed.
    fill_random(b.get(), n, Distribution::uniform(-1, 1), 21, env.stream());
    fill_random(c.get(), n, Distribution::uniform(-1, 1), 22, env.stream());
    KernelCase k;
    k.bytes_moved = kernels::stream_triad_bytes(n);
    k.reset = [&](cudaStream_t s) { TCB_CUDA(cudaMemsetAsync(a.get(), 0xFF, a.bytes(), s)); };
    k.work = [&](cudaStream_t s) { kernels::stream_triad(b.get(), c.get(), a.get(), 3.0f, n, s); };
    // Spot-check against the host element function (bit for bit) before timing.
    k.check = [&](cudaStream_t s) -> std::optional<std::string> {
      for (const std::size_t i : {std::size_t{0}, n / 3, n - 1}) {
        float got = 0, bi = 0, ci = 0;
        TCB_CUDA(cudaMemcpyAsync(&got, a.get() + i, sizeof(float), cudaMemcpyDeviceToHost, s));
        TCB_CUDA(cudaMemcpyAsync(&bi, b.get() + i, sizeof(float), cudaMemcpyDeviceToHost, s));
        TCB_CUDA(cudaMemcpyAsync(&ci, c.get() + i, sizeof(float), cudaMemcpyDeviceToHost, s));
        TCB_CUDA(cudaStreamSynchronize(s));
        if (!(got == kernels::triad(bi, ci, 3.0f)))
          return "element " + std::to_string(i) + " is " + std::to_string(got) + ", expected " +
                 std::to_string(kernels::triad(bi, ci, 3.0f));
      }
      return std::nullopt;
    };
    k.label = "STREAM triad";
    run_kernel(st, env, name, k);
    st.SetLabel(with_counter_note(k.label, add_tensor_counters(st, env, name, k.work)));
  });
}

}  // namespace

TopicHelp topic_help() {
  return {
      "Whether a high sm__pipe_tensor_cycles_active means the Tensor Cores are heavily used: "
      "the counter, read in-process through CUPTI after each GEMM is timed, beside TFLOP/s "
      "and % of peak, from a SIMT FP32 kernel (no tensor work) through WMMA to cuBLASLt "
      "TF32/FP16/BF16/INT8/FP8, a small GEMM and the STREAM triad.",
      "docs/concepts/tensor-util.md",
      "TCBENCH_COUNTERS=off  time without reading the tensor-pipe counters (tcbench profile "
      "sets it so that ncu owns them)"};
}

void register_topic(const Env& env) {
  const GemmShape s = large(env.quick());
  add_profiled(env, "simt", P::fp32, s, labelled("SIMT FFMA"),
               own_kernel(typed<P::fp32>(kernels::gemm_simt_fp32)));
  add_profiled(env, "wmma", P::fp16, s, labelled("WMMA (HMMA) fp32 acc"),
               own_kernel(typed<P::fp16>(kernels::gemm_wmma<__half>),
                          [](const GpuSpec& g, const GemmCase& c) {
                            return kernels::wmma_unsupported_reason(g.cc_major, g.cc_minor,
                                                                    c.precision, c.spec.problem);
                          }));
  for (P p : {P::tf32, P::fp16, P::bf16, P::int8, P::fp8}) add_profiled(env, "cublaslt", p, s);
  add_profiled(env, "cublaslt_small", P::fp16, kSmall);
  add_memory(env, env.quick());
}

}  // namespace tcbench::bench
