// What was built: the version and the git commit, set by CMake for this library only.
#pragma once

#include <string_view>

namespace tcbench {

std::string_view tcbench_version();  // "0.1.0"
std::string_view git_sha();          // 12 hex digits, or "unknown" outside a git checkout

}  // namespace tcbench
