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

#include <optional>
#include <string>

namespace tcbench::bench {
namespace {

constexpr std::string_view kTopic = "tensor_util";

struct Shape {
  std::int64_t m, n, k;
};

// The large problem every path runs; --quick keeps CI smoke runs short.
Shape large(bool quick) {
  return quick ? Shape{2048, 2048, 2048} : Shape{8192, 8192, 8192};
}
// 256^3 in 128x128 tiles is 4 CTAs: a few percent of any GPU's SMs, whatever the library does.
constexpr Shape kSmall{256, 256, 256};

// cuBLASLt sets the label after after_timing runs; the note is added once it returns.
GemmCase profiled(GemmCase c, const Env& env, const std::string& key,
                  std::optional<std::string>& skipped) {
  c.after_timing = [&env, key, &skipped](benchmark::State& st,
                                         const std::function<void(cudaStream_t)>& run) {
    skipped = add_tensor_counters(st, env, key, run);
  };
  return c;
}

void add_cublaslt(const Env& env, std::string_view variant, Precision p, Shape s) {
  const std::string name = gemm_name(kTopic, variant, p, s.m, s.n, s.k);
  register_gpu_benchmark(env, name, [&env, p, s, name](benchmark::State& st) {
    std::optional<std::string> skipped;
    const GemmResult r = run_cublaslt_gemm(
        st, env, profiled(GemmCase::for_precision(p, s.m, s.n, s.k), env, name, skipped));
    st.SetLabel(with_counter_note(r.algo ? r.algo->impl.impl_name : "", skipped));
  });
}

void add_simt(const Env& env, Shape s) {
  const std::string name = gemm_name(kTopic, "simt", Precision::fp32, s.m, s.n, s.k);
  register_gpu_benchmark(env, name, [&env, s, name](benchmark::State& st) {
    std::optional<std::string> skipped;
    GemmCase c = GemmCase::for_precision(Precision::fp32, s.m, s.n, s.k);
    c.label = "SIMT FFMA";
    run_kernel_gemm(st, env, profiled(c, env, name, skipped),
                    [](cudaStream_t stream, const GemmOperands& o) {
                      kernels::gemm_simt_fp32(o.problem, o.a_as<float>(), o.b_as<float>(),
                                              o.d_as<float>(), stream);
                    });
    st.SetLabel(with_counter_note(c.label, skipped));
  });
}

void add_wmma(const Env& env, Shape s) {
  const std::string name = gemm_name(kTopic, "wmma", Precision::fp16, s.m, s.n, s.k);
  register_gpu_benchmark(env, name, [&env, s, name](benchmark::State& st) {
    const DeviceInfo& dev = env.device();
    if (auto why =
            kernels::wmma_unsupported_reason(dev.spec.cc_major, dev.spec.cc_minor, Precision::fp16))
      throw Skipped(*why);
    std::optional<std::string> skipped;
    GemmCase c = GemmCase::for_precision(Precision::fp16, s.m, s.n, s.k);
    c.label = "WMMA (HMMA) fp32 acc";
    run_kernel_gemm(st, env, profiled(c, env, name, skipped),
                    [](cudaStream_t stream, const GemmOperands& o) {
                      kernels::gemm_wmma<__half>(o.problem, o.a_as<__half>(), o.b_as<__half>(),
                                                 o.d_as<__half>(), stream);
                    });
    st.SetLabel(with_counter_note(c.label, skipped));
  });
}

// The memory-bound point: the triad streams three arrays far larger than any L2.
void add_memory(const Env& env, bool quick) {
  const std::size_t n = quick ? (std::size_t{1} << 24) : (std::size_t{1} << 27);
  const std::string name = std::string(kTopic) + "/memory/fp32/n:" + std::to_string(n);
  register_gpu_benchmark(env, name, [&env, n, name](benchmark::State& st) {
    require_memory(env, 3 * n * sizeof(float), "three STREAM triad arrays");
    DeviceBuffer<float> a(n), b(n), c(n);
    // Inputs: a deterministic non-zero fill; the output is checked below, not assumed.
    fill_random(b.get(), n, Distribution::uniform(-1, 1), 21, env.stream());
    fill_random(c.get(), n, Distribution::uniform(-1, 1), 22, env.stream());
    const auto run = [&](cudaStream_t s) {
      kernels::stream_triad(b.get(), c.get(), a.get(), 3.0f, n, s);
    };
    TCB_CUDA(cudaMemsetAsync(a.get(), 0xFF, a.bytes(), env.stream()));  // poisoned: NaN
    run(env.stream());
    TCB_CUDA(cudaStreamSynchronize(env.stream()));  // the copies below use the default stream
    // Spot-check against the host element function (bit for bit) before timing.
    for (const std::size_t i : {std::size_t{0}, n / 3, n - 1}) {
      float got = 0, bi = 0, ci = 0;
      TCB_CUDA(cudaMemcpy(&got, a.get() + i, sizeof(float), cudaMemcpyDeviceToHost));
      TCB_CUDA(cudaMemcpy(&bi, b.get() + i, sizeof(float), cudaMemcpyDeviceToHost));
      TCB_CUDA(cudaMemcpy(&ci, c.get() + i, sizeof(float), cudaMemcpyDeviceToHost));
      if (!(got == kernels::triad(bi, ci, 3.0f)))
        throw Error("stream_triad element " + std::to_string(i) + " is " + std::to_string(got) +
                    ", expected " + std::to_string(kernels::triad(bi, ci, 3.0f)));
    }
    const SampleStats t = measure(st, env, run);
    report_bandwidth(st, env, kernels::stream_triad_bytes(n), t);
    st.SetLabel(with_counter_note("STREAM triad", add_tensor_counters(st, env, name, run)));
  });
}

}  // namespace

void register_topic(const Env& env) {
  const Shape s = large(env.quick());
  add_simt(env, s);
  add_wmma(env, s);
  for (Precision p :
       {Precision::tf32, Precision::fp16, Precision::bf16, Precision::int8, Precision::fp8})
    add_cublaslt(env, "cublaslt", p, s);
  add_cublaslt(env, "cublaslt_small", Precision::fp16, kSmall);
  add_memory(env, env.quick());
}

}  // namespace tcbench::bench
