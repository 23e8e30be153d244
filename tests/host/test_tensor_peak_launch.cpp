// What runs between bench_tensor_peak's timing events: enqueue_tensor_peak must only launch.
// prepare_tensor_peak asks the runtime everything before the first event (the compute
// capability, tcgen05's shared-memory size and cudaFuncSetAttribute); a query inside the timed
// pair leaves the GPU idle while the host waits, which biases a 2 ms launch low.
//
// The CUDA runtime calls the launchers make are replaced here by stand-ins that count them: this
// executable's definitions win over libcudart's at link time, so no GPU is needed. The kernel
// stubs nvcc writes for <<<>>> end in __cudaLaunchKernel (CUDA 13; cudaLaunchKernel before), and
// cudaLaunchKernelEx in cudaLaunchKernelExC: each counts as a launch.
#include "tcbench/error.hpp"
#include "tcbench/kernels/tensor_peak.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

std::map<std::string, int> g_calls;
int g_major = 9, g_minor = 0;

}  // namespace

extern "C" {

cudaError_t cudaGetDevice(int* device) {
  ++g_calls["cudaGetDevice"];
  *device = 0;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, enum cudaDeviceAttr attr, int) {
  ++g_calls["cudaDeviceGetAttribute"];
  switch (attr) {
    case cudaDevAttrComputeCapabilityMajor:
      *value = g_major;
      break;
    case cudaDevAttrComputeCapabilityMinor:
      *value = g_minor;
      break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
      *value = 228 * 1024;  // B200's (CUDA programming guide, compute capability 10.0)
      break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
      *value = 227 * 1024;
      break;
    default:
      *value = 0;
  }
  return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void*, enum cudaFuncAttribute, int) {
  ++g_calls["cudaFuncSetAttribute"];
  return cudaSuccess;
}

// What nvcc's <<<>>> becomes (crt/host_runtime.h, CUDA 13): push the configuration, pop it in the
// stub, look the kernel up once, launch it.
unsigned __cudaPushCallConfiguration(dim3, dim3, size_t, struct CUstream_st*) {
  return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3* grid, dim3* block, size_t* shared, void* stream) {
  *grid = dim3(1);
  *block = dim3(1);
  *shared = 0;
  *static_cast<cudaStream_t*>(stream) = nullptr;
  return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void*) {
  *kernel = nullptr;
  return cudaSuccess;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t) {
  ++g_calls["launch"];
  return cudaSuccess;
}

cudaError_t cudaLaunchKernel(const void*, dim3, dim3, void**, size_t, cudaStream_t) {
  ++g_calls["launch"];  // the legacy form (__NV_LEGACY_LAUNCH)
  return cudaSuccess;
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t*, const void*, void**) {
  ++g_calls["launch"];
  return cudaSuccess;
}

cudaError_t cudaGetLastError(void) {
  ++g_calls["cudaGetLastError"];
  return cudaSuccess;
}

}  // extern "C"

namespace tcbench::kernels {
namespace {

// A compute capability on which `instr` runs, or nullopt (this build has no code for it).
std::optional<std::pair<int, int>> runs_on(PeakInstr instr) {
  if (peak_build_reason(instr)) return std::nullopt;
  for (const auto& [major, minor] :
       std::vector<std::pair<int, int>>{{8, 0}, {8, 9}, {9, 0}, {10, 0}, {12, 0}})
    if (!peak_unsupported_reason(instr, major, minor)) return std::make_pair(major, minor);
  return std::nullopt;
}

TEST(TensorPeakLaunch, ATimedLaunchOnlyEnqueuesEveryFamily) {
  int families = 0;
  bool wgmma = false;
  for (PeakInstr instr : kAllPeakInstrs) {
    const auto cc = runs_on(instr);
    if (!cc) continue;
    std::tie(g_major, g_minor) = *cc;
    const PeakInstrInfo& i = info(instr);
    g_calls.clear();
    const PeakPrepared p = prepare_tensor_peak(instr, {2 * i.cta_group, 64});
    EXPECT_GE(g_calls["cudaDeviceGetAttribute"], 2) << i.ptx;  // the stand-ins do see queries
    if (i.family == PeakFamily::tcgen05) {
      EXPECT_EQ(g_calls["cudaFuncSetAttribute"], 1) << i.ptx;
      EXPECT_GT(p.dynamic_smem_bytes, 114 * 1024) << i.ptx;  // one CTA per SM
    }
    g_calls.clear();
    for (int run = 0; run < 3; ++run) enqueue_tensor_peak(p, {}, nullptr);
    EXPECT_EQ(g_calls["launch"], 3) << i.ptx;
    EXPECT_EQ(g_calls["cudaGetLastError"], 3) << i.ptx;  // the launch's own check
    g_calls.erase("launch");
    g_calls.erase("cudaGetLastError");
    for (const auto& [call, n] : g_calls) EXPECT_EQ(n, 0) << i.ptx << " calls " << call;
    families |= 1 << static_cast<int>(i.family);
    wgmma = wgmma || i.family == PeakFamily::wgmma;
  }
  EXPECT_TRUE(families & (1 << static_cast<int>(PeakFamily::mma_sync)));
  EXPECT_TRUE(wgmma);  // every build holds the sm_90a kernels (kernels/CMakeLists.txt)
}

TEST(TensorPeakLaunch, LaunchingUnpreparedAsksTheRuntimeEachTime) {
  // The one-call form, kept for launches that are not timed, prepares every time: what the
  // benchmark's timed launches did before prepare_tensor_peak existed.
  std::tie(g_major, g_minor) = std::make_pair(9, 0);
  g_calls.clear();
  for (int run = 0; run < 3; ++run)
    launch_tensor_peak(PeakInstr::wgmma_f16_f32, {2, 64}, {}, nullptr);
  EXPECT_EQ(g_calls["launch"], 3);
  EXPECT_EQ(g_calls["cudaGetDevice"], 3);
}

TEST(TensorPeakLaunch, PrepareRefusesWhatCannotRun) {
  std::tie(g_major, g_minor) = std::make_pair(8, 0);
  EXPECT_THROW(prepare_tensor_peak(PeakInstr::wgmma_f16_f32, {2, 64}), InvalidArgument);
  EXPECT_THROW(prepare_tensor_peak(PeakInstr::mma_f16_f32, {0, 64}), InvalidArgument);
}

}  // namespace
}  // namespace tcbench::kernels
