// Work a process does once per configuration: verification before timing, cached baselines,
// host studies, hardware counters. Google Benchmark calls a body once per repetition (and once
// more to size the run); the inputs are deterministic, so the first result stands for all.
#pragma once

#include <map>
#include <memory>
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

namespace tcbench::bench {

// The value `make()` returned for `key`, kept until another key is asked for: host-side setup
// (operands, their quantization and references) shared by every call of one benchmark's body
// (Google Benchmark's sizing calls and each repetition come one after another), made once per
// benchmark, while only one configuration's memory is held at a time (once() would keep every
// configuration of a sweep). Benchmarks run one at a time, on one thread.
template <typename T, typename Make>
const T& latest(const std::string& key, Make&& make) {
  static std::string held_key;
  static std::unique_ptr<T> held;
  if (!held || held_key != key) {
    held.reset();  // the old configuration's memory first
    held = std::make_unique<T>(std::forward<Make>(make)());
    held_key = key;
  }
  return *held;
}

}  // namespace tcbench::bench
