#include "tcbench/bench/kernel_bench.hpp"

#include "tcbench/bench/once.hpp"
#include "tcbench/error.hpp"

namespace tcbench::bench {

SampleStats run_kernel(benchmark::State& state, const Env& env, const std::string& key,
                       const KernelCase& kernel) {
  if (!kernel.work || !kernel.check)
    throw InvalidArgument("run_kernel(" + key + ") needs both the work and its check");
  once<bool>("kernel|" + key, [&] {
    const cudaStream_t s = env.stream();
    if (kernel.reset) kernel.reset(s);
    kernel.work(s);
    TCB_CUDA(cudaStreamSynchronize(s));
    if (auto wrong = kernel.check(s)) throw Error(key + ": " + *wrong);
    return true;
  });
  const SampleStats t = measure(state, env, kernel.work, kernel.options);
  report_bandwidth(state, env, kernel.bytes_moved, t);
  state.SetLabel(kernel.label);
  return t;
}

}  // namespace tcbench::bench
