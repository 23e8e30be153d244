#!/usr/bin/env bash
# Usage:
#   scripts/gpu_check.sh --bundle [DIR]   on a build machine: make DIR (default
#                                         build/gpu-check-bundle) a self-contained bundle
#   scripts/gpu_check.sh [OUTDIR]         on a GPU machine: check everything, write OUTDIR
#
# The GPU boxes tcbench borrows have the driver, CUDA 13 (nvcc, cudart, cuBLASLt, CUPTI), CMake,
# Python with PyTorch, ncu and cuobjdump, but no Google Benchmark, no GoogleTest and no network.
# So the check runs in two steps (README, "On a GPU machine"):
#
# 1. --bundle, on a machine that has the build dependencies: a separate Release build for
#    TCBENCH_BUNDLE_ARCHS (default 90-real: H100/H200; *_sm90a.cu kernels get 90a by the build's
#    own rule) in TCBENCH_BUNDLE_BUILD_DIR (default build/gpu-check), with the install RPATH
#    ($ORIGIN/../lib) baked in, then DIR gets:
#      bin/       every bench_* and device_* binary of that build (by glob; not the bench_test_*
#                 host tests)
#      lib/       every shared library they need that is neither CUDA's own (cudart, cuBLAS,
#                 cuBLASLt, CUPTI, nvperf, the driver) nor the C/C++ runtime: e.g. libbenchmark
#      scripts/   tcbench and its Python tools, this script, gpu_check_torch.py
#      share/doc/ README and docs;  MANIFEST.txt: what was built, how, and every file's sha256
#    It fails (exit 1) when the bundle is over 60 MiB or a library would be missing.
#
# 2. On the GPU box, DIR/scripts/gpu_check.sh [OUTDIR] (no install, no network): runs every
#    device test binary, the whole suite in quick mode (scripts/tcbench run, which needs only
#    Python >= 3.11's standard library: without a .venv it uses the box's Python as it is; with no
#    such Python the binaries still run and write their JSON), and, when PyTorch with CUDA is
#    there (TCBENCH_TORCH_PYTHON, default python3), torch.matmul
#    bf16/fp16 at 8192^3 beside tcbench's cuBLASLt as a ratio (target >= 0.99x).
#    From a source tree (not a bundle), the tests step is `tcbench test --preset release`
#    instead, which needs the build dependencies.
#
# OUTDIR (default results/gpu-check-<stamp>/) gets nvidia-smi-before.txt and -after.txt (clocks,
# throttle reasons, power, PCI bus id, UUID), tests.log, device-tests/ (one GoogleTest XML per
# binary), run.log, results/ (one JSON per binary, merged results.json), torch/ and summary.txt,
# which says how long each step took. The whole check is meant to end in under 8 minutes on an
# H100-class GPU; the summary flags a longer one.
# Exit codes: 0 everything passed; 1 a test, a benchmark or the bundle step failed (a failed test
# is never hidden by a skip); 2 usage; 77 no GPU (and nothing failed).
set -uo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "${script_dir}/.." && pwd)"
bundle_limit_bytes=$((60 * 1024 * 1024))
check_budget_s=480
torch_size=8192

say() { printf 'gpu_check: %s\n' "$*" >&2; }

usage() {
  sed -n '2,5p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# ---------------------------------------------------------------------------------------------
# Libraries: which ones a bundle may leave to the box
# ---------------------------------------------------------------------------------------------

# CUDA's own libraries come from the GPU box's CUDA installation and driver.
is_cuda_library() {
  [[ "$1" =~ ^lib(cudart|cublas|cublasLt|cupti|nvperf_[a-z_]+|cuda|nvidia-ml)\.so ]]
}
# The C and C++ runtime every Linux box has.
is_system_library() {
  [[ "$1" =~ ^(linux-vdso|linux-gate|ld-linux[-a-z0-9_.]*|libc|libm|libdl|librt|libpthread|libutil|libstdc\+\+|libgcc_s)\.so ]]
}

# Prints "soname<TAB>resolved path or 'not found'" for each dependency of an ELF file.
dependencies() {
  ldd "$1" 2>/dev/null | awk '
    /=>/ { name = $1; path = $3; if ($3 == "not") path = "not found"; print name "\t" path; next }
    NF >= 1 && $1 ~ /^\// { n = split($1, parts, "/"); print parts[n] "\t" $1 }'
}

is_elf() { [ -f "$1" ] && [ "$(head -c 4 "$1" 2>/dev/null | od -An -c | tr -d ' \n')" = '177ELF' ]; }

# Copies into DEST/lib every library a bundled ELF needs that is not CUDA's or the runtime's and
# does not already resolve inside DEST; repeats until nothing new is needed. Fails on a library
# that cannot be found. Prints one line per library copied.
collect_libraries() {
  local dest="$1" changed=1 file soname path missing=0
  mkdir -p "${dest}/lib"
  while [ "${changed}" -eq 1 ]; do
    changed=0
    for file in "${dest}"/bin/* "${dest}"/lib/*; do
      is_elf "${file}" || continue
      while IFS=$'\t' read -r soname path; do
        if is_cuda_library "${soname}" || is_system_library "${soname}"; then continue; fi
        case "${path}" in
          "${dest}"/*) continue ;;
          "not found")
            if [ ! -e "${dest}/lib/${soname}" ]; then
              say "${file#"${dest}"/} needs ${soname}, which is not found on this machine"
              missing=1
            fi
            continue ;;
        esac
        [ -e "${dest}/lib/${soname}" ] && continue
        cp -L "${path}" "${dest}/lib/${soname}" || return 1
        chmod 0755 "${dest}/lib/${soname}"
        say "bundled ${soname} (from ${path})"
        changed=1
      done < <(dependencies "${file}")
    done
  done
  return "${missing}"
}

# ---------------------------------------------------------------------------------------------
# Step 1: the bundle
# ---------------------------------------------------------------------------------------------

make_bundle() {
  local dest="${1:-${repo}/build/gpu-check-bundle}"
  local build="${TCBENCH_BUNDLE_BUILD_DIR:-${repo}/build/gpu-check}"
  local archs="${TCBENCH_BUNDLE_ARCHS:-90-real}"
  local nvcc="${CUDACXX:-/usr/local/cuda/bin/nvcc}"
  local jobs="${TCBENCH_BUNDLE_JOBS:-$(nproc 2>/dev/null || echo 2)}"
  if [ ! -f "${repo}/CMakeLists.txt" ]; then
    say "--bundle needs the source tree; ${repo} is a bundle already."
    return 2
  fi
  mkdir -p "$(dirname "${dest}")" && dest="$(cd "$(dirname "${dest}")" && pwd)/$(basename "${dest}")"
  case "${build}/" in
    "${dest}/"*) say "the bundle folder ${dest} must not contain the build folder ${build}."; return 2 ;;
  esac
  local begin=${SECONDS}
  mkdir -p "$(dirname "${build}")"

  say "configure ${build} (Release, CUDA architectures ${archs})"
  cmake -S "${repo}" -B "${build}" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_COMPILER="${nvcc}" -DCMAKE_CUDA_ARCHITECTURES="${archs}" \
    -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON -DTCBENCH_BUILD_TESTS=ON -DTCBENCH_BUILD_BENCHMARKS=ON \
    >"${build}.configure.log" 2>&1 || {
    say "configure failed, see ${build}.configure.log"; tail -n 20 "${build}.configure.log" >&2
    return 1
  }
  # Every benchmark and device-test target, by name, so new topics are bundled without edits
  # (bench_test_* are the harness's host tests, not benchmarks), and the tools that cmake
  # --install installs (tcbench_metrics: the metric list `tcbench profile` hands to ncu;
  # tcbench_studies: the host studies `tcbench run` and `answers` read).
  local targets
  targets=$(ninja -C "${build}" -t targets all 2>/dev/null |
    sed -n 's/^\(\(bench\|device\)_[A-Za-z0-9_]*\|tcbench_metrics\|tcbench_studies_tool\): phony$/\1/p' |
    grep -v '^bench_test_' | sort -u)
  if [ -z "${targets}" ]; then
    say "the build defines no bench_* or device_* target."; return 1
  fi
  say "build $(echo "${targets}" | wc -w) targets with ${jobs} jobs: $(echo ${targets})"
  # shellcheck disable=SC2086  # one word per target
  cmake --build "${build}" --parallel "${jobs}" --target ${targets} >"${build}.build.log" 2>&1 || {
    say "build failed, see ${build}.build.log"; grep -E 'error|FAILED' "${build}.build.log" | head -n 20 >&2
    return 1
  }

  rm -rf "${dest}"
  cmake --install "${build}" --prefix "${dest}" >"${build}.install.log" 2>&1 || {
    say "cmake --install failed, see ${build}.install.log"; tail -n 20 "${build}.install.log" >&2
    return 1
  }
  local file copied=0
  for file in "${build}"/bin/bench_* "${build}"/bin/device_*; do
    [ -f "${file}" ] && [ -x "${file}" ] || continue
    case "$(basename "${file}")" in bench_test_*) continue ;; esac
    cp -p "${file}" "${dest}/bin/" && copied=$((copied + 1))
  done
  collect_libraries "${dest}" || { say "a library the binaries need is missing (above)."; return 1; }

  write_manifest "${dest}" "${build}" "${archs}" "${nvcc}"
  local bytes
  bytes=$(du -sb "${dest}" | cut -f1)
  printf 'size_bytes: %s\n' "${bytes}" >>"${dest}/MANIFEST.txt"
  say "bundle ${dest}: ${copied} binaries, $((bytes / 1024 / 1024)) MiB ($(( SECONDS - begin )) s)"
  if [ "${bytes}" -gt "${bundle_limit_bytes}" ]; then
    say "the bundle is ${bytes} bytes, over the 60 MiB limit (${bundle_limit_bytes} bytes)."
    return 1
  fi
  say "on the GPU box: copy ${dest} there and run $(basename "${dest}")/scripts/gpu_check.sh [OUTDIR]"
}

write_manifest() {
  local dest="$1" build="$2" archs="$3" nvcc="$4" version sha
  version=$(sed -n 's/^project(tcbench VERSION \([0-9.]*\).*/\1/p' "${repo}/CMakeLists.txt")
  sha=$(git -C "${repo}" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
  if [ "${sha}" != unknown ] && [ -n "$(git -C "${repo}" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    sha="${sha}-dirty"
  fi
  {
    echo "# tcbench bundle for scripts/gpu_check.sh, made by scripts/gpu_check.sh --bundle"
    echo "tcbench_version: ${version:-unknown}"
    echo "git_sha: ${sha}"
    echo "made_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "build_dir: ${build}"
    echo "cuda_architectures: ${archs}"
    echo "nvcc: $("${nvcc}" --version 2>/dev/null | grep -o 'release [0-9.]*, V[0-9.]*' | head -n 1)"
    echo "cmake: $(cmake --version | head -n 1)"
    echo "needs_on_the_box: NVIDIA driver for CUDA 13 (R580+); CUDA 13 libcudart, libcublas, libcublasLt (and libcupti, libnvperf_* for profiling) on the loader path or in /usr/local/cuda; Python >= 3.11 for the summary (optional)"
    echo "files: sha256 bytes path"  # regular files; lib/ also holds the SONAME links to them
    (cd "${dest}" && find . -type f ! -name MANIFEST.txt -printf '%P\n' | LC_ALL=C sort |
      while read -r f; do
        printf '%s %s %s\n' "$(sha256sum "${f}" | cut -d' ' -f1)" "$(stat -c %s "${f}")" "${f}"
      done)
  } >"${dest}/MANIFEST.txt"
}

# ---------------------------------------------------------------------------------------------
# Step 2: the check on a GPU machine
# ---------------------------------------------------------------------------------------------

step_names=()
step_seconds=()
step_notes=()
record_step() { step_names+=("$1"); step_seconds+=("$2"); step_notes+=("$3"); }

# nvidia-smi: the GPU's identity, clocks, throttle reasons and power at one moment.
record_gpu_state() {
  local file="$1"
  if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "nvidia-smi not found" >"${file}"
    return
  fi
  {
    echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    nvidia-smi 2>&1
    # clocks_event_reasons is the newer name of clocks_throttle_reasons; ask for whichever exists.
    local reasons=clocks_event_reasons
    nvidia-smi --help-query-gpu 2>/dev/null | grep -q 'clocks_event_reasons.active' ||
      reasons=clocks_throttle_reasons
    local basic="index,name,pci.bus_id,uuid,driver_version,pstate,clocks.sm,clocks.mem,clocks.max.sm"
    basic="${basic},clocks.max.mem,temperature.gpu,power.draw,power.limit,${reasons}.active"
    local detail="${reasons}.sw_power_cap,${reasons}.hw_slowdown,${reasons}.sw_thermal_slowdown"
    detail="${detail},${reasons}.hw_thermal_slowdown,${reasons}.hw_power_brake_slowdown,mig.mode.current"
    # A driver that lacks one field refuses the whole query: then ask for the basic set.
    nvidia-smi --format=csv --query-gpu="${basic},${detail}" 2>/dev/null ||
      nvidia-smi --format=csv --query-gpu="${basic}" 2>&1
    nvidia-smi -q -d PERFORMANCE,CLOCK,POWER,TEMPERATURE 2>&1
  } >"${file}"
}

# The CSV line of a recorded state (header and values), for the summary.
gpu_state_csv() { grep -A1 '^index, name, pci.bus_id' "$1" 2>/dev/null | head -n 2; }

# Runs every device_* binary of BIN_DIR; sets tests_rc (0 all passed or skipped, 1 a failure)
# and tests_note.
run_device_tests() {
  local bin_dir="$1" log="$2" xml_dir="$3" binary name rc passed=0 failed=0 skipped=0 n=0
  mkdir -p "${xml_dir}"
  : >"${log}"
  tests_rc=0
  for binary in "${bin_dir}"/device_*; do
    [ -x "${binary}" ] || continue
    name=$(basename "${binary}")
    n=$((n + 1))
    echo "=== ${name}" >>"${log}"
    "${binary}" --gtest_output="xml:${xml_dir}/${name}.xml" >>"${log}" 2>&1
    rc=$?
    echo "=== ${name}: exit ${rc}" >>"${log}"
    [ "${rc}" -ne 0 ] && tests_rc=1
  done
  if [ "${n}" -eq 0 ]; then
    tests_rc=1
    tests_note="no device_* binary in ${bin_dir}"
    return
  fi
  passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "${log}" | awk '{s += $1} END {print s + 0}')
  failed=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "${log}" | awk '{s += $1} END {print s + 0}')
  skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "${log}" | awk '{s += $1} END {print s + 0}')
  tests_note="${n} binaries: ${passed} passed, ${failed} failed, ${skipped} skipped"
  [ "${tests_rc}" -ne 0 ] && tests_note="${tests_note}; a binary exited non-zero (see device tests log)"
}

# The Python the tools will use on this box: an existing .venv, else the system Python as it is
# (TCBENCH_PYTHON_ENV=system: `run` needs only the standard library), else none ("" -> the
# binaries run without the tools).
choose_python_env() {
  if [ -n "${TCBENCH_PYTHON_ENV:-}" ] || [ -x "${repo}/.venv/bin/python" ]; then
    echo "${TCBENCH_PYTHON_ENV:-venv}"
  elif "${TCBENCH_PYTHON:-python3}" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
      >/dev/null 2>&1; then
    echo system
  elif [ "${bundle}" -eq 0 ]; then
    echo venv  # a source tree: scripts/tcbench builds .venv from PyPI as usual
  fi
}

# Without the Python tools: each bench_* binary in quick mode, its JSON and log in OUT. Sets
# run_rc like `tcbench run` (0 ran, 1 a binary failed, 77 no GPU).
run_binaries_directly() {
  local bin_dir="$1" out="$2" binary name rc
  mkdir -p "${out}/logs"
  run_rc=0
  for binary in "${bin_dir}"/bench_*; do
    [ -x "${binary}" ] || continue
    name=$(basename "${binary}")
    echo "gpu_check: ${name} --quick" >&2
    # --benchmark_min_time as scripts/tcbench_tools/runner.py's QUICK_MIN_TIME.
    "${binary}" --quick --benchmark_min_time=0.05 --benchmark_out="${out}/${name}.json" \
      --benchmark_out_format=json >"${out}/logs/${name}.log" 2>&1
    rc=$?
    if [ "${rc}" -eq 77 ]; then run_rc=77; break; fi
    [ "${rc}" -ne 0 ] && run_rc=1
  done
}

check() {
  local out="${1:-${repo}/results/gpu-check-$(date +%Y%m%d-%H%M%S)}"
  mkdir -p "${out}" && out="$(cd "${out}" && pwd)"
  local begin=${SECONDS} t bin_dir python_env
  bundle=0
  [ -f "${repo}/MANIFEST.txt" ] && [ -d "${repo}/bin" ] && [ ! -f "${repo}/CMakeLists.txt" ] && bundle=1

  # The box's CUDA libraries, wherever its toolkit is, for binaries built elsewhere.
  local nvcc_path cuda_root
  nvcc_path=$(command -v nvcc 2>/dev/null || true)
  cuda_root="${CUDA_HOME:-${nvcc_path:+$(dirname "$(dirname "${nvcc_path}")")}}"
  cuda_root="${cuda_root:-/usr/local/cuda}"
  for dir in "${cuda_root}/lib64" "${cuda_root}/lib" "${cuda_root}/extras/CUPTI/lib64"; do
    [ -d "${dir}" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+${LD_LIBRARY_PATH}:}${dir}"
  done

  t=${SECONDS}
  record_gpu_state "${out}/nvidia-smi-before.txt"
  record_step "GPU state before" $((SECONDS - t)) "nvidia-smi-before.txt"

  # Tests.
  t=${SECONDS}
  if [ "${bundle}" -eq 1 ]; then
    bin_dir="${repo}/bin"
    say "device tests -> ${out}/tests.log"
    run_device_tests "${bin_dir}" "${out}/tests.log" "${out}/device-tests"
  else
    bin_dir="${repo}/build/${TCBENCH_PRESET:-release}/bin"
    say "tests (${TCBENCH_PRESET:-release} preset) -> ${out}/tests.log"
    "${repo}/scripts/tcbench" test --preset "${TCBENCH_PRESET:-release}" >"${out}/tests.log" 2>&1
    tests_rc=$?
    tests_note="tcbench test exit ${tests_rc}: $(grep -E '^tcbench test \(' "${out}/tests.log" | tail -n 1)"
  fi
  record_step "tests" $((SECONDS - t)) "${tests_note}"
  say "tests: ${tests_note}"

  # The quick suite.
  t=${SECONDS}
  python_env=$(choose_python_env)
  local run_how
  if [ -n "${python_env}" ]; then
    run_how="scripts/tcbench run --quick (Python: ${python_env})"
    say "quick suite: ${run_how} -> ${out}/run.log"
    local run_args=(run --quick --out "${out}/results")
    [ "${bundle}" -eq 1 ] && run_args+=(--bin-dir "${bin_dir}")
    [ "${bundle}" -eq 0 ] && run_args+=(--preset "${TCBENCH_PRESET:-release}" --no-build)
    TCBENCH_PYTHON_ENV="${python_env}" "${repo}/scripts/tcbench" "${run_args[@]}" >"${out}/run.log" 2>&1
    run_rc=$?
  else
    run_how="binaries run directly: no Python >= 3.11 here, so no summary table"
    say "quick suite: ${run_how} -> ${out}/results"
    run_binaries_directly "${bin_dir}" "${out}/results" 2>"${out}/run.log"
  fi
  record_step "quick suite" $((SECONDS - t)) "exit ${run_rc}; ${run_how}"

  # torch.matmul beside tcbench's cuBLASLt, in the same run.
  t=${SECONDS}
  local torch_python="${TCBENCH_TORCH_PYTHON:-python3}" torch_note torch_script="${repo}/scripts/gpu_check_torch.py"
  if [ "${run_rc}" -eq 77 ]; then
    torch_note="not run: no GPU"
  elif ! "${torch_python}" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
    torch_note="not run: '${torch_python}' has no PyTorch with CUDA"
  elif [ ! -x "${bin_dir}/bench_fp16_vs_fp32" ]; then
    torch_note="not run: no bench_fp16_vs_fp32 in ${bin_dir}"
  else
    mkdir -p "${out}/torch"
    "${bin_dir}/bench_fp16_vs_fp32" --benchmark_filter="$("${torch_python}" "${torch_script}" filter --size "${torch_size}")" \
      --benchmark_out="${out}/torch/tcbench.json" --benchmark_out_format=json >"${out}/torch/tcbench.log" 2>&1
    local bench_rc=$?
    "${torch_python}" "${torch_script}" time --size "${torch_size}" --out "${out}/torch/torch.json" \
      >"${out}/torch/torch.log" 2>&1
    local torch_rc=$?
    if [ "${torch_rc}" -eq 0 ] && [ -s "${out}/torch/tcbench.json" ]; then
      "${torch_python}" "${torch_script}" compare "${out}/torch/torch.json" "${out}/torch/tcbench.json" \
        --out "${out}/torch/ratio.json" >"${out}/torch/ratio.txt" 2>&1
      torch_note="tcbench exit ${bench_rc}; see below"
    else
      torch_note="failed: tcbench exit ${bench_rc}, torch exit ${torch_rc} (logs in torch/)"
    fi
    [ "${bench_rc}" -ne 0 ] && [ "${bench_rc}" -ne 77 ] && run_rc=1
  fi
  record_step "torch vs tcbench ${torch_size}^3" $((SECONDS - t)) "${torch_note}"

  t=${SECONDS}
  record_gpu_state "${out}/nvidia-smi-after.txt"
  record_step "GPU state after" $((SECONDS - t)) "nvidia-smi-after.txt"

  local total=$((SECONDS - begin)) verdict status
  if [ "${tests_rc}" -ne 0 ] || { [ "${run_rc}" -ne 0 ] && [ "${run_rc}" -ne 77 ]; }; then
    status=1; verdict="FAILED"
    [ "${tests_rc}" -ne 0 ] && verdict="${verdict}: tests failed"
    [ "${run_rc}" -ne 0 ] && [ "${run_rc}" -ne 77 ] && verdict="${verdict}: the suite failed (exit ${run_rc})"
  elif [ "${run_rc}" -eq 77 ]; then
    status=77; verdict="SKIPPED: no GPU visible (device tests skipped, nothing measured)"
  else
    status=0; verdict="PASSED"
  fi

  {
    echo "== tcbench gpu_check ($([ "${bundle}" -eq 1 ] && echo "bundle $(sed -n 's/^git_sha: //p' "${repo}/MANIFEST.txt"), built for $(sed -n 's/^cuda_architectures: //p' "${repo}/MANIFEST.txt")" || echo "source tree")) -> ${out}"
    { gpu_state_csv "${out}/nvidia-smi-before.txt" || head -n 1 "${out}/nvidia-smi-before.txt"; } |
      tail -n 1 | sed 's/^/   GPU: /'
    echo "-- steps (seconds):"
    local i
    for i in "${!step_names[@]}"; do
      printf '   %-26s %5s  %s\n' "${step_names[$i]}" "${step_seconds[$i]}" "${step_notes[$i]}"
    done
    printf '   %-26s %5s  %s\n' "total" "${total}" \
      "$([ "${total}" -gt "${check_budget_s}" ] && echo "OVER the ${check_budget_s} s budget" || echo "budget ${check_budget_s} s")"
    if [ "${bundle}" -eq 1 ]; then
      grep -E '^\[  FAILED  \] [A-Za-z]' "${out}/tests.log" | sort -u | sed 's/^/   /' | head -n 20
    else
      grep -E '\(Failed\)|tests failed' "${out}/tests.log" | head -n 20 | sed 's/^/   /'
    fi
    echo "-- quick suite (exit ${run_rc}):"
    if [ -n "${python_env}" ]; then
      tail -n 40 "${out}/run.log"
    else  # each binary's last line: its summary, error or reason to skip
      for log in "${out}"/results/logs/*.log; do
        [ -f "${log}" ] && printf '   %s: %s\n' "$(basename "${log}" .log)" "$(grep -v '^$' "${log}" | tail -n 1)"
      done
    fi
    if [ -f "${out}/torch/ratio.txt" ]; then echo "--"; cat "${out}/torch/ratio.txt"; fi
    echo "-- GPU after the run:"
    { gpu_state_csv "${out}/nvidia-smi-after.txt" || head -n 1 "${out}/nvidia-smi-after.txt"; } |
      sed 's/^/   /'
    echo "-- ${verdict} (exit ${status})"
  } | tee "${out}/summary.txt"
  return "${status}"
}

case "${1:-}" in
  --bundle) shift; [ $# -le 1 ] || usage; make_bundle "$@"; exit $? ;;
  -h | --help) sed -n '2,5p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) say "unknown option $1"; usage ;;
  *) [ $# -le 1 ] || usage; check "$@"; exit $? ;;
esac
