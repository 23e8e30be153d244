// One move-only owner for every opaque library handle tcbench creates (CUDA streams and events,
// the cuBLASLt handle, matmul descriptors, layouts, preferences, CUPTI objects).
//
// Traits name the handle type and how to destroy it; destroy() must not throw (it reports
// failures on stderr), so destructors stay noexcept.
#pragma once

#include <utility>

namespace tcbench {

template <typename Traits>
class UniqueHandle {
 public:
  using handle_type = typename Traits::handle_type;

  UniqueHandle() = default;
  explicit UniqueHandle(handle_type h) noexcept : h_(h) {}
  UniqueHandle(const UniqueHandle&) = delete;  // two owners would destroy the handle twice
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  UniqueHandle(UniqueHandle&& o) noexcept : h_(std::exchange(o.h_, handle_type{})) {}
  UniqueHandle& operator=(UniqueHandle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, handle_type{});
    }
    return *this;
  }
  ~UniqueHandle() { reset(); }

  handle_type get() const noexcept { return h_; }
  explicit operator bool() const noexcept { return h_ != handle_type{}; }

 protected:
  void reset() noexcept {
    if (h_ != handle_type{}) Traits::destroy(h_);
    h_ = handle_type{};
  }
  handle_type h_{};
};

}  // namespace tcbench
