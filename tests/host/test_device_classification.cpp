// "No GPU" must mean no GPU: only a missing device or a missing driver is a skip (exit 77);
// every other failure to reach the GPU is a broken box and fails, with what to fix.
#include "tcbench/device_info.hpp"
#include "tcbench/error.hpp"

#include <gtest/gtest.h>

namespace tcbench {
namespace {

TEST(DeviceClassification, NoDeviceAndNoDriverAreSkips) {
  const DeviceCountFailure none = classify_device_count_failure(cudaErrorNoDevice, 13000);
  EXPECT_TRUE(none.skip);
  EXPECT_NE(none.sentence.find("no CUDA GPU"), std::string::npos) << none.sentence;
  // No driver loaded: the runtime says "insufficient driver" and the driver version is 0.
  const DeviceCountFailure no_driver =
      classify_device_count_failure(cudaErrorInsufficientDriver, 0);
  EXPECT_TRUE(no_driver.skip);
  EXPECT_NE(no_driver.sentence.find("no NVIDIA driver is loaded"), std::string::npos);
}

TEST(DeviceClassification, ADriverTooOldFailsAndSaysWhichVersionIsNeeded) {
  // Before, every failure of cudaGetDeviceCount became NoDevice (exit 77, "skipped").
  const DeviceCountFailure old = classify_device_count_failure(cudaErrorInsufficientDriver, 12080);
  EXPECT_FALSE(old.skip);
  EXPECT_NE(old.sentence.find("supports CUDA 12.8"), std::string::npos) << old.sentence;
  EXPECT_NE(old.sentence.find("R580"), std::string::npos) << old.sentence;
}

TEST(DeviceClassification, BrokenBoxesFailWithTheFix) {
  const std::pair<cudaError_t, const char*> cases[] = {
      {cudaErrorSystemDriverMismatch, "reboot"},
      {cudaErrorSystemNotReady, "fabric manager"},
      {cudaErrorCompatNotSupportedOnDevice, "R580"},
      {cudaErrorDevicesUnavailable, "exclusive"},
      {cudaErrorUnknown, "cannot use the GPU"}};
  for (const auto& [status, words] : cases) {
    const DeviceCountFailure f = classify_device_count_failure(status, 13000);
    EXPECT_FALSE(f.skip) << cudaGetErrorName(status);
    EXPECT_NE(f.sentence.find(words), std::string::npos) << f.sentence;
    EXPECT_NE(f.sentence.find(cudaGetErrorName(status)), std::string::npos) << f.sentence;
  }
}

TEST(StickyErrors, ContextKillingErrorsAreRecognised) {
  EXPECT_TRUE(is_sticky_cuda_error(cudaErrorIllegalAddress));
  EXPECT_TRUE(is_sticky_cuda_error(cudaErrorLaunchFailure));
  EXPECT_TRUE(is_sticky_cuda_error(cudaErrorAssert));
  EXPECT_FALSE(is_sticky_cuda_error(cudaErrorMemoryAllocation));  // recoverable
  EXPECT_FALSE(is_sticky_cuda_error(cudaErrorInvalidValue));
  EXPECT_FALSE(is_sticky_cuda_error(cudaSuccess));
}

TEST(RunContext, CarriesBuildIdentityAndThePhysicalGpu) {
  DeviceInfo info;
  info.spec = GpuSpec{"NVIDIA H100 80GB HBM3", 9, 0, 132, 1980.0, 2619.0, 5120};
  info.ordinal = 1;
  info.pci_bus_id = "00000000:17:00.0";
  info.uuid = "GPU-11111111-2222-3333-4444-555555555555";
  info.mig_mode = "disabled";
  std::map<std::string, std::string> kv;
  for (const auto& [k, v] : run_context(info, true)) kv[k] = v;
  EXPECT_EQ(kv["gpu_ordinal"], "1");
  EXPECT_EQ(kv["gpu_pci_bus_id"], "00000000:17:00.0");
  EXPECT_EQ(kv["gpu_uuid"], "GPU-11111111-2222-3333-4444-555555555555");
  EXPECT_EQ(kv["gpu_mig_mode"], "disabled");
  EXPECT_EQ(kv["tcbench_quick"], "true");
  EXPECT_FALSE(kv["tcbench_version"].empty());
  EXPECT_NE(kv["tcbench_version"], "unknown");
  EXPECT_FALSE(kv["git_sha"].empty());
}

}  // namespace
}  // namespace tcbench
