// Work a process does once per configuration: verification before timing, cached baselines,
// host studies, hardware counters. Google Benchmark calls a body once per repetition (and once
// more to size the run); the inputs are deterministic, so the first result stands for all.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace tcbench::bench {

// The value `make()` returned the first time `key` was asked for (keys are unique across users:
// prefix them with what they cache). A `make` that throws caches nothing, so a failed check fails
// every time. `make` may itself call once() (the lock is not held while it runs).
template <typename T, typename Make>
const T& once(const std::string& key, Make&& make) {
  static std::mutex mutex;
  static std::map<std::string, T> done;  // node-based: references stay valid
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (auto it = done.find(key); it != done.end()) return it->second;
  }
  T value = std::forward<Make>(make)();
  const std::lock_guard<std::mutex> lock(mutex);
  return done.try_emplace(key, std::move(value)).first->second;
}

}  // namespace tcbench::bench
