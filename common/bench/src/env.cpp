#include "tcbench/bench/env.hpp"

namespace tcbench::bench {

struct Env::Resources {
  Stream stream;
  LtHandle lt;
  std::optional<BlasHandle> blas;  // created by the first Env::blas()
  L2Flusher flusher;
  explicit Resources(const DeviceInfo& dev) : flusher(dev.l2_bytes) {}
};

Env::Env(RunOptions options) : options_(options) {}

Env::Env(RunOptions options, DeviceInfo device)
    : options_(options), device_(std::make_unique<DeviceInfo>(std::move(device))) {
  resources_ = std::make_unique<Resources>(*device_);
}

Env::~Env() = default;

const DeviceInfo& Env::device() const {
  if (!device_) throw NoDevice("no GPU in this run (benchmarks are only being listed)");
  return *device_;
}
cudaStream_t Env::stream() const {
  device();
  return resources_->stream.get();
}
const LtHandle& Env::lt() const {
  device();
  return resources_->lt;
}
const BlasHandle& Env::blas() const {
  device();
  if (!resources_->blas) resources_->blas.emplace();
  return *resources_->blas;
}
L2Flusher& Env::flusher() const {
  device();
  return resources_->flusher;
}
void Env::skip_unless(const std::optional<std::string>& why_not) const {
  if (why_not) throw Skipped(*why_not);
}
void Env::skip_unless_valid(const GemmSpec& spec) const {
  skip_unless(spec.why_invalid(gpu().cc_major, gpu().cc_minor));
}

}  // namespace tcbench::bench
