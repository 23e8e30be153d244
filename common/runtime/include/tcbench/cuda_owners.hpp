// Move-only owners for CUDA resources: device buffers, streams, events.
// Benchmarks never call cudaMalloc/cudaFree themselves; sizes are checked for overflow and a
// failed allocation names the byte count.
#pragma once

#include "tcbench/error.hpp"
#include "tcbench/unique_handle.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace tcbench {

// count * sizeof(T), throwing InvalidArgument instead of wrapping around.
template <typename T>
std::size_t checked_bytes(std::size_t count) {
  if (count > std::numeric_limits<std::size_t>::max() / sizeof(T))
    throw InvalidArgument("buffer of " + std::to_string(count) + " elements of " +
                          std::to_string(sizeof(T)) + " bytes overflows size_t");
  return count * sizeof(T);
}

// m * n elements with overflow checks; negative or zero dimensions are the caller's bug.
std::size_t checked_elements(std::int64_t rows, std::int64_t cols);

// Typed device allocation. Contents are uninitialized: callers fill or poison before use.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    const std::size_t bytes = checked_bytes<T>(count);
    if (bytes == 0) return;
    void* p = nullptr;
    TCB_CUDA_CTX(cudaMalloc(&p, bytes), "allocating " + std::to_string(bytes) + " bytes");
    ptr_ = static_cast<T*>(p);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;  // a copy would double-free the allocation
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  ~DeviceBuffer() { reset(); }

  T* get() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return count_; }
  std::size_t bytes() const noexcept { return count_ * sizeof(T); }

  void upload(std::span<const T> host, cudaStream_t stream = nullptr) {
    if (host.size() != count_)
      throw InvalidArgument("upload of " + std::to_string(host.size()) + " elements into a " +
                            std::to_string(count_) + "-element device buffer");
    TCB_CUDA(cudaMemcpyAsync(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice, stream));
    TCB_CUDA(cudaStreamSynchronize(stream));
  }
  std::vector<T> download(cudaStream_t stream = nullptr) const {
    std::vector<T> host(count_);
    TCB_CUDA(cudaMemcpyAsync(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost, stream));
    TCB_CUDA(cudaStreamSynchronize(stream));
    return host;
  }

 private:
  void reset() noexcept {
    if (ptr_) TCB_CUDA_NOEXCEPT(cudaFree(ptr_));
    ptr_ = nullptr;
    count_ = 0;
  }
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

// One value on the device (a scale, an amax, a flag): a one-element DeviceBuffer with typed
// set and get.
template <typename T>
class DeviceValue {
 public:
  DeviceValue() : buf_(1) {}
  explicit DeviceValue(T v, cudaStream_t stream = nullptr) : buf_(1) { set(v, stream); }
  void set(T v, cudaStream_t stream = nullptr) { buf_.upload(std::span<const T>(&v, 1), stream); }
  T get(cudaStream_t stream = nullptr) const { return buf_.download(stream)[0]; }
  T* ptr() const noexcept { return buf_.get(); }

 private:
  DeviceBuffer<T> buf_;
};

namespace detail {
struct StreamTraits {
  using handle_type = cudaStream_t;
  static void destroy(handle_type h) noexcept { TCB_CUDA_NOEXCEPT(cudaStreamDestroy(h)); }
};
struct EventTraits {
  using handle_type = cudaEvent_t;
  static void destroy(handle_type h) noexcept { TCB_CUDA_NOEXCEPT(cudaEventDestroy(h)); }
};
}  // namespace detail

class Stream : public UniqueHandle<detail::StreamTraits> {
 public:
  Stream() { TCB_CUDA(cudaStreamCreateWithFlags(&h_, cudaStreamNonBlocking)); }
  void synchronize() const { TCB_CUDA(cudaStreamSynchronize(h_)); }
};

class Event : public UniqueHandle<detail::EventTraits> {
 public:
  Event() { TCB_CUDA(cudaEventCreate(&h_)); }
  void record(cudaStream_t stream) { TCB_CUDA(cudaEventRecord(h_, stream)); }
  void synchronize() const { TCB_CUDA(cudaEventSynchronize(h_)); }
  // Milliseconds from `start` to this event; both must have completed.
  float elapsed_ms_since(const Event& start) const {
    float ms = 0.0f;
    TCB_CUDA(cudaEventElapsedTime(&ms, start.h_, h_));
    return ms;
  }
};

}  // namespace tcbench
