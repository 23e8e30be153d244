// What every benchmark of a binary shares: the options of the run and the process-wide GPU
// resources (one stream, one cuBLASLt handle, one cuBLAS handle with its workspace, one L2
// flusher), created once by the shared main after the device check and destroyed by it before
// the process ends. The cuBLAS handle is created at its first use, so binaries that never call
// cuBLAS never initialize it.
#pragma once

#include "tcbench/cuda_owners.hpp"
#include "tcbench/device_info.hpp"
#include "tcbench/error.hpp"
#include "tcbench/gemm_cublas.hpp"
#include "tcbench/gemm_lt.hpp"
#include "tcbench/timing.hpp"

#include <memory>
#include <optional>
#include <string>

namespace tcbench::bench {

// Thrown when a configuration cannot run here (precision the GPU lacks, size that does not fit,
// no cuBLASLt algorithm). Reported as an error whose message starts with "skipped: ", which the
// tools list as a skip (register_gpu_benchmark).
class Skipped : public Error {
 public:
  using Error::Error;
};

struct RunOptions {
  bool quick = false;  // --quick: the headline cases only, for CI smoke runs
  // Sampling: at least min_samples timed samples and at least min_seconds of them (the
  // --benchmark_min_time value, or the default: 0.5 s; 0.05 s with --quick, the value
  // scripts/tcbench_tools/runner.py and gpu_check.sh pass too).
  SamplingPolicy sampling;
};

class Env {
 public:
  // Listing mode (no GPU needed): registration only.
  explicit Env(RunOptions options);
  // Measuring mode: creates the shared resources on `device`.
  Env(RunOptions options, DeviceInfo device);
  ~Env();
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

  bool quick() const { return options_.quick; }
  const RunOptions& options() const { return options_; }
  bool has_device() const { return device_ != nullptr; }
  // Throw NoDevice in listing mode: a topic's register_topic() must not call them.
  const DeviceInfo& device() const;
  cudaStream_t stream() const;
  const LtHandle& lt() const;
  // Created on first use (cublasCreate and a kBlasWorkspaceBytes workspace); every cuBLAS GEMM
  // binds it to stream() before it runs (BlasGemm::run).
  const BlasHandle& blas() const;
  L2Flusher& flusher() const;
  const GpuSpec& gpu() const { return device().spec; }
  // Throws Skipped with the sentence when there is one: a support check in one line.
  void skip_unless(const std::optional<std::string>& why_not) const;
  // skip_unless(spec.why_invalid(...)) on this GPU's compute capability.
  void skip_unless_valid(const GemmSpec& spec) const;

 private:
  struct Resources;
  RunOptions options_;
  std::unique_ptr<DeviceInfo> device_;
  std::unique_ptr<Resources> resources_;
};

// Defined once per benchmark binary, by its topic file: registers the topic's benchmarks. It runs
// without a GPU too (for --benchmark_list_tests), so it must not touch the device: everything
// GPU-side happens inside the registered bodies.
void register_topic(const Env& env);

}  // namespace tcbench::bench
