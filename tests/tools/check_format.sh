#!/bin/sh
# CTest format.clang_format: every C++ and CUDA source of the repository is as clang-format
# (.clang-format: Google style, 100 columns) writes it. `clang-format -i FILE` fixes one.
#
#   check_format.sh SOURCE_DIR
#
# The files are those git tracks (the sources of a checkout without .git when there is no git).
# Without clang-format it skips (exit 77), naming why, unless TCBENCH_REQUIRE_FORMAT=1 (.ci/run,
# where it must run): then that is a failure.
set -eu
cd "$1"
if ! command -v clang-format >/dev/null 2>&1; then
  if [ "${TCBENCH_REQUIRE_FORMAT:-}" = 1 ]; then
    echo "clang-format is not installed and TCBENCH_REQUIRE_FORMAT=1 (apt-get install clang-format)"
    exit 1
  fi
  echo "clang-format is not installed (apt-get install clang-format): the format check skips"
  exit 77
fi
list=$(mktemp)
trap 'rm -f "$list"' EXIT
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -z -- '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h' '*.c' >"$list"
else
  find benchmarks common kernels tests -type f \
    \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' -o -name '*.h' \
       -o -name '*.c' \) -print0 >"$list"
fi
count=$(tr -cd '\0' <"$list" | wc -c)
if [ "$count" -eq 0 ]; then
  echo "no C++ or CUDA source found under $1"
  exit 1
fi
# --Werror: a file clang-format would change is an error, named with the first line it changes.
xargs -0 clang-format --style=file --dry-run --Werror <"$list"
echo "clang-format: $count files as .clang-format writes them ($(clang-format --version))"
