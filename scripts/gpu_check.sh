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
# 2. On the GPU box, DIR/scripts/gpu_check.sh [OUTDIR] (no install, no network): refuses at
#    once, with one sentence, a box whose glibc is older than the binaries need or that cannot
#    load them; then runs, each as a step under its own time limit (see "Step 2" below), every
#    device test binary, every benchmark binary in quick mode (their JSON in results/), and,
#    when PyTorch with CUDA is there (TCBENCH_TORCH_PYTHON, default python3), torch.matmul
#    bf16/fp16 at 8192^3 beside tcbench's cuBLASLt as a ratio (target >= 0.99x); the wgmma and
#    CUPTI binaries last; then the five answers (tcbench_tools.answers.gpu_check: the bundle's
#    tcbench_studies plus these results, outside the budget, never the check's verdict). Python
#    >= 3.11 (the box's own, standard library only) makes the tables and the answers.
#    From a source tree (not a bundle), the tests step is `tcbench test --preset release`
#    instead, which needs the build dependencies (and is not part of the time budget).
#
# OUTDIR (default results/gpu-check-<stamp>/) gets nvidia-smi-before.txt and -after.txt (clocks,
# throttle reasons, power, PCI bus id, UUID), gpu-samples.csv (SM clock and power once a second),
# logs/ (one per step), device-tests/ (one GoogleTest XML per binary), plan/ (each benchmark
# binary's quick list), results/ (one JSON per benchmark binary: compare and report take the
# folder), torch/, studies/ and answers.{md,html,json}, steps.tsv and summary.txt: the plan (benchmark counts and least times), every
# step with its seconds and outcome, then per topic run / verified / skipped / failed, the torch
# ratios, the peaks' % of the datasheet and the clock and power during the heaviest step. It is
# rewritten after every step. The whole check stays within TCBENCH_CHECK_BUDGET_S (480 s).
# Exit codes: 0 everything passed; 1 a test, a benchmark, a step (timeout, crash) or the bundle
# step failed, or steps did not fit the budget (a failed test is never hidden by a skip); 2 usage,
# or a box that cannot run the bundle; 77 no GPU (and nothing failed); 128 + N killed by signal N.
set -uo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "${script_dir}/.." && pwd)"
bundle_limit_bytes=$((60 * 1024 * 1024))

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

build_glibc_version() {
  getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}' ||
    ldd --version 2>/dev/null | head -n 1 | awk '{print $NF}'
}

# The newest GLIBC_x.y version any ELF file of DEST needs (readelf's version-needs section).
needed_glibc() {
  local file
  for file in "$1"/bin/* "$1"/lib/*; do
    is_elf "${file}" && readelf -V --wide "${file}" 2>/dev/null
  done | grep -o 'Name: GLIBC_[0-9.]*' | sed 's/Name: GLIBC_//' | sort -V | tail -n 1
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
    # The box must have a glibc at least as new as the newest symbol version the binaries use
    # (the check refuses an older one); the build machine's own version is the upper bound.
    echo "glibc: $(build_glibc_version) (the build machine's)"
    echo "needs_glibc: $(needed_glibc "${dest}") (the newest GLIBC_ symbol version the bundled binaries use)"
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
#
# The check is a list of steps, planned first and run in order: cheap and safe ones first, the
# code most likely to hang or fault on its first GPU last (risky_binaries: the wgmma kernels and
# CUPTI profiling). Every step runs under `timeout` in its own process group with a time limit
# (TCBENCH_STEP_TIMEOUT_S, default 120 s; 30 s for nvidia-smi), so a hang costs one step: the
# group is sent SIGTERM at the limit and SIGKILL kill_grace_s later, the step is recorded as
# TIMEOUT with its last output, and the check goes on. A step starts only when its least
# duration fits in what is left of the overall budget (TCBENCH_CHECK_BUDGET_S, default 480 s),
# and runs at most until the budget's end; steps that do not fit are named as not started.
# summary.txt is rewritten (atomically) when each step starts and ends, so a check killed from
# outside leaves a true partial summary; SIGINT/SIGTERM/SIGHUP stop the running step's group,
# record it as INTERRUPTED and end the check with 128 + the signal.

# Run last, in this order (a name not listed is safe): wgmma device tests, CUPTI, then the two
# benchmarks that use both.
risky_binaries="device_test_tensor_peak device_profiling_test_range_profiler bench_tensor_util bench_tensor_peak"
kill_grace_s=10
state_limit_s=30
answers_limit_s=180  # the host studies and the answers, after the GPU steps (outside the budget)
reserve_s=15  # kept back from the budget for the last nvidia-smi record

# One row per planned step (parallel arrays).
plan_name=()    # what the summary calls it
plan_kind=()    # state | tests | device | bench | cublaslt | torch | answers
plan_target=()  # binary path, or the state file
plan_status=()  # pending | RUNNING | ok | skipped | FAILED ... | TIMEOUT ... | NOT STARTED ...
plan_seconds=()
plan_note=()

plan_step() {  # KIND NAME TARGET
  plan_kind+=("$1"); plan_name+=("$2"); plan_target+=("$3")
  plan_status+=(pending); plan_seconds+=(""); plan_note+=("")
}

is_risky() { case " ${risky_binaries} " in *" $1 "*) return 0 ;; esac; return 1; }

# Binaries of BIN_DIR matching PREFIX*, safe ones first (by name), then risky ones in the order
# of risky_binaries.
ordered_binaries() {
  local bin_dir="$1" prefix="$2" binary name
  for binary in "${bin_dir}/${prefix}"*; do
    [ -f "${binary}" ] && [ -x "${binary}" ] || continue
    name=$(basename "${binary}")
    case "${name}" in bench_test_* | *.json | *.log) continue ;; esac
    is_risky "${name}" || echo "${binary}"
  done
  for name in ${risky_binaries}; do
    case "${name}" in "${prefix}"*) [ -x "${bin_dir}/${name}" ] && echo "${bin_dir}/${name}" ;; esac
  done
}

# A step's log file name: its name with every run of other characters than [A-Za-z0-9_.^-]
# made one '-' ("GPU state before" -> GPU-state-before; binaries keep their names).
step_file() { printf '%s' "$1" | tr -c 'A-Za-z0-9_.^-' '-' | tr -s '-'; }

now_s() { date +%s; }
elapsed_s() { echo $(( $(now_s) - check_begin )); }

# nvidia-smi: the GPU's identity, clocks, throttle reasons and power at one moment.
record_gpu_state() {
  local file="$1"
  if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "nvidia-smi not found" >"${file}"
    return 0
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

# Samples the SM clock and power once a second into FILE while the check runs (one nvidia-smi
# call per sample, so it ends with the check: it stops when the check's shell is gone).
start_sampler() {
  local file="$1" parent=$$ gpu="${CUDA_VISIBLE_DEVICES:-0}"
  gpu="${gpu%%,*}"  # the device the binaries use first (an index or a UUID nvidia-smi takes)
  command -v nvidia-smi >/dev/null 2>&1 || return 0
  echo "epoch_s, clocks.sm [MHz], power.draw [W], power.limit [W], temperature.gpu, utilization.gpu [%]" >"${file}"
  (
    trap - INT TERM HUP
    while kill -0 "${parent}" 2>/dev/null; do
      line=$(timeout 5 nvidia-smi --query-gpu=clocks.sm,power.draw,power.limit,temperature.gpu,utilization.gpu \
        --format=csv,noheader,nounits -i "${gpu}" 2>/dev/null | head -n 1)
      [ -n "${line}" ] && printf '%s, %s\n' "$(date +%s)" "${line}" >>"${file}"
      sleep 1
    done
  ) </dev/null >/dev/null 2>&1 &
  sampler_pid=$!
}

# The last lines of a step's log, on one line, for the summary.
last_output() {
  local text
  text=$(grep -v '^[[:space:]]*$' "$1" 2>/dev/null | tail -n "${2:-3}" | tr '\n' ' ' | tr -s ' ')
  printf '%s' "${text:0:300}"
}

# GoogleTest's totals in a device test's log: "P passed, F failed, S skipped".
gtest_counts() {
  local log="$1" p f s
  p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "${log}" | awk '{s += $1} END {print s + 0}')
  f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "${log}" | awk '{s += $1} END {print s + 0}')
  s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "${log}" | awk '{s += $1} END {print s + 0}')
  echo "${p} passed, ${f} failed, ${s} skipped"
}

signal_name() { kill -l "$1" 2>/dev/null || echo "signal $1"; }

# Runs plan step I: "${@:2}" under a time limit in its own process group (coreutils timeout
# without --foreground), output to LOG. Sets step_rc and the step's status and seconds.
run_limited() {
  local i="$1" log="$2" limit="$3" cut="$4"
  shift 4
  local begin
  begin=$(now_s)
  plan_status[i]=RUNNING
  plan_note[i]="started $(date -u +%H:%M:%SZ), limit ${limit} s"
  write_summary
  timeout --signal=TERM --kill-after="${kill_grace_s}" "${limit}" "$@" >"${log}" 2>&1 </dev/null &
  current_pid=$!
  current_step=${i}
  wait "${current_pid}"
  step_rc=$?
  current_pid=""
  current_step=""
  local seconds=$(( $(now_s) - begin ))
  plan_seconds[i]=${seconds}
  # When each step ran, for the clock and power of the heaviest one (gpu_check_summary.py).
  printf '%s\t%s\t%s\n' "${plan_name[i]}" "${begin}" "$(now_s)" >>"${out}/steps.tsv"
  if [ "${step_rc}" -eq 124 ] || { [ "${step_rc}" -eq 137 ] && [ "${seconds}" -ge "${limit}" ]; }; then
    plan_status[i]="TIMEOUT"
    local why="its ${limit} s limit"
    [ "${cut}" -eq 1 ] && why="the end of the ${budget_s} s budget (${limit} s left)"
    plan_note[i]="killed with its process group at ${why}; last output: $(last_output "${log}")"
    step_rc=124
  elif [ "${step_rc}" -gt 128 ]; then
    plan_status[i]="CRASHED"
    plan_note[i]="died of SIG$(signal_name $((step_rc - 128))); last output: $(last_output "${log}")"
  fi
}

# Whether plan step I may start with a least duration of ESTIMATE s; sets step_limit (the
# step's limit, cut to the budget left) and step_cut (1 when the budget cut it).
fits_budget() {
  local i="$1" estimate="$2" own_limit="$3" left
  left=$(( budget_s - $(elapsed_s) - reserve_s ))
  if [ "${left}" -lt "${estimate}" ] || [ "${left}" -lt 1 ]; then
    plan_status[i]="NOT STARTED"
    plan_note[i]="would not fit: needs at least ${estimate} s, ${left} s of the ${budget_s} s budget left"
    left_out+=("${plan_name[i]}")
    return 1
  fi
  step_limit=${own_limit}
  step_cut=0
  if [ "${left}" -lt "${own_limit}" ]; then step_limit=${left}; step_cut=1; fi
  return 0
}

# The quick suite's plan: each benchmark binary's count and least time, from the harness
# itself (--plan: its warm-up and sampling minimums). Fills bench_count/bench_least per binary
# and plan/<binary>.txt (the names, so a binary cut short says how far it got).
declare -A bench_count bench_least
plan_benchmarks() {
  local binary name line
  bench_total=0; bench_least_total=0
  for binary in $(ordered_binaries "${bin_dir}" bench_); do
    name=$(basename "${binary}")
    timeout 20 "${binary}" --quick --benchmark_min_time="${quick_min_time}" --benchmark_list_tests \
      >"${out}/plan/${name}.txt" 2>/dev/null </dev/null
    line=$(timeout 20 "${binary}" --quick --benchmark_min_time="${quick_min_time}" --plan 2>/dev/null </dev/null | tail -n 1)
    if [[ "${line}" =~ ^plan:\ ([0-9]+)\ benchmarks.*\ at\ least\ ([0-9.]+)\ s ]]; then
      bench_count[${name}]=${BASH_REMATCH[1]}
      bench_least[${name}]=${BASH_REMATCH[2]}
    else
      bench_count[${name}]=$(grep -c / "${out}/plan/${name}.txt" 2>/dev/null || echo 0)
      bench_least[${name}]="?"
    fi
    bench_total=$((bench_total + ${bench_count[${name}]:-0}))
    [ "${bench_least[${name}]}" != "?" ] &&
      bench_least_total=$(awk -v a="${bench_least_total}" -v b="${bench_least[${name}]}" 'BEGIN {print a + b}')
  done
}

# Whole seconds, rounded up, of a decimal number of seconds ("?" -> a default).
ceil_s() { awk -v x="$1" -v d="${2:-10}" 'BEGIN { if (x == "?") print d; else { y = int(x); if (y < x) y++; print y } }'; }

# Python >= 3.11 for the summary's tables (the box's own; no packages needed), or "".
summary_python() {
  local py
  for py in "${repo}/.venv/bin/python" "${TCBENCH_PYTHON:-python3}"; do
    if [ -x "${py}" ] || command -v "${py}" >/dev/null 2>&1; then
      if timeout 20 "${py}" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; then
        echo "${py}"; return
      fi
    fi
  done
}

write_summary() {
  local tmp="${out}/.summary.txt.tmp" i total verdict_line="${1:-}"
  total=$(elapsed_s)
  {
    echo "== tcbench gpu_check (${where_from}) -> ${out}"
    { gpu_state_csv "${out}/nvidia-smi-before.txt" || head -n 1 "${out}/nvidia-smi-before.txt"; } 2>/dev/null |
      tail -n 1 | sed 's/^/   GPU: /'
    echo "   limits: ${step_limit_s} s per step (TCBENCH_STEP_TIMEOUT_S), ${budget_s} s in all (TCBENCH_CHECK_BUDGET_S)"
    if [ -n "${bench_total:-}" ]; then
      echo "-- quick suite plan: ${bench_total} benchmarks, $(ordered_binaries "${bin_dir}" bench_ | wc -l) binaries; the harness spends at least ${bench_least_total} s on them (its warm-up and sampling minimums; verification and setup come on top):"
      local binary name
      for binary in $(ordered_binaries "${bin_dir}" bench_); do
        name=$(basename "${binary}")
        printf '   %-28s %4s benchmarks, at least %s s\n' "${name}" "${bench_count[${name}]:-?}" "${bench_least[${name}]:-?}"
      done
    fi
    echo "-- steps (seconds; cheap and safe first, wgmma and CUPTI last):"
    for i in "${!plan_name[@]}"; do
      printf '   %-38s %5s  %-11s %s\n' "${plan_name[i]}" "${plan_seconds[i]:--}" "${plan_status[i]}" "${plan_note[i]}"
    done
    printf '   %-38s %5s  %s\n' "total" "${total}" \
      "$([ "${total}" -gt "${budget_s}" ] && echo "OVER the ${budget_s} s budget" || echo "budget ${budget_s} s")"
    if [ "${#left_out[@]}" -gt 0 ]; then
      echo "   not started (budget): ${left_out[*]}"
    fi
    if [ "${#test_logs[@]}" -gt 0 ]; then
      # GoogleTest's failed tests (device binaries) and CTest's (a source tree's tests step).
      grep -hE '^\[  FAILED  \] [A-Za-z]|\(Failed\)' "${test_logs[@]}" 2>/dev/null | sort -u |
        sed 's/^/   /' | head -n 20
    fi
    if [ -f "${out}/nvidia-smi-after.txt" ]; then
      echo "-- GPU after the run:"
      { gpu_state_csv "${out}/nvidia-smi-after.txt" || head -n 1 "${out}/nvidia-smi-after.txt"; } |
        sed 's/^/   /'
    fi
    if [ -n "${py_for_summary}" ]; then
      timeout 60 "${py_for_summary}" "${script_dir}/gpu_check_summary.py" "${out}" 2>&1 ||
        echo "   (the tables could not be made: gpu_check_summary.py exit $?)"
    else
      echo "-- per binary (no Python >= 3.11 here for the tables): last line of each log"
      for i in "${!plan_name[@]}"; do
        case "${plan_kind[i]}" in bench | device) ;; *) continue ;; esac
        [ -f "${out}/logs/$(step_file "${plan_name[i]}").log" ] &&
          printf '   %s: %s\n' "${plan_name[i]}" "$(last_output "${out}/logs/$(step_file "${plan_name[i]}").log" 1)"
      done
    fi
    if [ -n "${verdict_line}" ]; then
      echo "${verdict_line}"
    else
      echo "-- (check in progress: this summary is rewritten after every step)"
    fi
  } >"${tmp}" 2>&1
  mv -f "${tmp}" "${out}/summary.txt"
}

# SIGINT/SIGTERM/SIGHUP from outside: stop the running step's process group, say so, and end.
on_signal() {
  local sig="$1" i
  trap '' INT TERM HUP
  if [ -n "${current_pid}" ]; then
    kill -TERM "${current_pid}" 2>/dev/null  # timeout passes it on to the step's group
    local waited=0
    while kill -0 "${current_pid}" 2>/dev/null && [ "${waited}" -lt $((kill_grace_s + 5)) ]; do
      sleep 1; waited=$((waited + 1))
    done
    kill -KILL "${current_pid}" 2>/dev/null
    i=${current_step}
    plan_status[i]="INTERRUPTED"
    plan_note[i]="by SIG${sig}; its process group was stopped; last output: $(last_output "${out}/logs/$(step_file "${plan_name[i]}").log")"
  fi
  for i in "${!plan_name[@]}"; do
    [ "${plan_status[i]}" = pending ] && { plan_status[i]="NOT STARTED"; plan_note[i]="the check was interrupted by SIG${sig}"; }
  done
  [ -n "${sampler_pid:-}" ] && kill "${sampler_pid}" 2>/dev/null
  local code=$((128 + $(kill -l "${sig}")))
  write_summary "-- INTERRUPTED by SIG${sig} (exit ${code}): the steps above are what ran"
  say "interrupted by SIG${sig}; partial summary in ${out}/summary.txt"
  exit "${code}"
}

# Every step after the build: the device tests (bundle: ctest ran them in a source tree), the
# quick suite, cuBLASLt and torch.matmul, the risky binaries, the last GPU record; and the quick
# suite's plan (plan_benchmarks), which goes into the summary before any benchmark runs.
plan_rest() {
  local binary name
  if [ "${bundle}" -eq 1 ]; then
    for binary in $(ordered_binaries "${bin_dir}" device_); do
      is_risky "$(basename "${binary}")" || plan_step device "$(basename "${binary}")" "${binary}"
    done
  fi
  for binary in $(ordered_binaries "${bin_dir}" bench_); do
    is_risky "$(basename "${binary}")" || plan_step bench "$(basename "${binary}")" "${binary}"
  done
  plan_step cublaslt "cuBLASLt ${torch_size}^3 (for torch)" "${bin_dir}/bench_fp16_vs_fp32"
  plan_step torch "torch.matmul ${torch_size}^3" ""
  for binary in $(ordered_binaries "${bin_dir}" device_) $(ordered_binaries "${bin_dir}" bench_); do
    name=$(basename "${binary}")
    is_risky "${name}" || continue
    [ "${bundle}" -eq 0 ] && [[ "${name}" == device_* ]] && continue  # ctest ran them
    case "${name}" in device_*) plan_step device "${name}" "${binary}" ;; *) plan_step bench "${name}" "${binary}" ;; esac
  done
  plan_step state "GPU state after" "${out}/nvidia-smi-after.txt"
  plan_step answers "the five questions (tcbench answers)" "${bin_dir}/tcbench_studies"
  plan_benchmarks
}

# The glibc version of this box and the one the bundle's binaries need (MANIFEST.txt), and
# every bundled ELF file's libraries: a box that cannot load the binaries is refused with one
# sentence, before any step (the driver's own libraries may be missing: that is "no GPU", 77).
preflight_refusal() {
  local need box file missing
  need=$(sed -n 's/^needs_glibc: \([0-9.]*\).*/\1/p' "${repo}/MANIFEST.txt")
  box=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
  [ -n "${box}" ] || box=$(ldd --version 2>/dev/null | head -n 1 | awk '{print $NF}')
  if [ -n "${need}" ] && [ -n "${box}" ] &&
      [ "$(printf '%s\n%s\n' "${need}" "${box}" | sort -V | head -n 1)" != "${need}" ]; then
    echo "this box's glibc ${box} is older than the ${need} the bundle's binaries need (built on glibc $(sed -n 's/^glibc: \([0-9.]*\).*/\1/p' "${repo}/MANIFEST.txt")): make the bundle on a distribution with glibc ${box} or older"
    return
  fi
  for file in "${repo}"/bin/* "${repo}"/lib/*; do
    is_elf "${file}" || continue
    missing=$(ldd "${file}" 2>&1 | grep -E 'not found' | grep -vE '^\s*lib(cuda|nvidia-ml)\.so' | head -n 1 | sed 's/^[[:space:]]*//')
    if [ -n "${missing}" ]; then
      echo "the bundle's ${file#"${repo}"/} cannot load on this box (${missing}): install what it names (CUDA 13's libraries: put their folder on LD_LIBRARY_PATH)"
      return
    fi
  done
}

check() {
  out="${1:-${repo}/results/gpu-check-$(date +%Y%m%d-%H%M%S)}"
  mkdir -p "${out}" && out="$(cd "${out}" && pwd)"
  mkdir -p "${out}/logs" "${out}/plan" "${out}/results" "${out}/device-tests"
  rm -f "${out}/steps.tsv" "${out}/summary.txt" "${out}/nvidia-smi-after.txt"
  check_begin=$(now_s)
  budget_s=${TCBENCH_CHECK_BUDGET_S:-480}
  step_limit_s=${TCBENCH_STEP_TIMEOUT_S:-120}
  quick_min_time=0.05  # as scripts/tcbench_tools/runner.py's QUICK_MIN_TIME
  torch_size=8192
  local torch_python="${TCBENCH_TORCH_PYTHON:-python3}"
  local torch_script="${script_dir}/gpu_check_torch.py"
  for value in "${budget_s}" "${step_limit_s}"; do
    [[ "${value}" =~ ^[1-9][0-9]*$ ]] || {
      say "TCBENCH_CHECK_BUDGET_S and TCBENCH_STEP_TIMEOUT_S must be whole numbers of seconds, got '${value}'."
      return 2
    }
  done
  current_pid=""; current_step=""; sampler_pid=""; left_out=(); test_logs=(); torch_missing=""
  bundle=0
  [ -f "${repo}/MANIFEST.txt" ] && [ -d "${repo}/bin" ] && [ ! -f "${repo}/CMakeLists.txt" ] && bundle=1
  if [ "${bundle}" -eq 1 ]; then
    where_from="bundle $(sed -n 's/^git_sha: //p' "${repo}/MANIFEST.txt"), built for $(sed -n 's/^cuda_architectures: //p' "${repo}/MANIFEST.txt")"
    bin_dir="${repo}/bin"
  else
    where_from="source tree"
    bin_dir="${repo}/build/${TCBENCH_PRESET:-release}/bin"
  fi
  py_for_summary=$(summary_python)
  trap 'on_signal INT' INT
  trap 'on_signal TERM' TERM
  trap 'on_signal HUP' HUP

  # The box's CUDA libraries, wherever its toolkit is, for binaries built elsewhere.
  local nvcc_path cuda_root dir
  nvcc_path=$(command -v nvcc 2>/dev/null || true)
  cuda_root="${CUDA_HOME:-${nvcc_path:+$(dirname "$(dirname "${nvcc_path}")")}}"
  cuda_root="${cuda_root:-/usr/local/cuda}"
  for dir in "${cuda_root}/lib64" "${cuda_root}/lib" "${cuda_root}/extras/CUPTI/lib64"; do
    [ -d "${dir}" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+${LD_LIBRARY_PATH}:}${dir}"
  done

  # The plan: the GPU record, in a source tree the build and tests, then (planned once the
  # binaries exist) plan_rest.
  plan_step state "GPU state before" "${out}/nvidia-smi-before.txt"
  [ "${bundle}" -eq 0 ] && plan_step tests "tests (tcbench test --preset ${TCBENCH_PRESET:-release})" ""
  write_summary

  if [ "${bundle}" -eq 1 ]; then
    local refusal
    refusal=$(preflight_refusal)
    if [ -n "${refusal}" ]; then
      say "${refusal}"
      for i in "${!plan_name[@]}"; do plan_status[i]="NOT STARTED"; plan_note[i]="refused"; done
      write_summary "-- REFUSED (exit 2): ${refusal}"
      return 2
    fi
  fi

  local i no_gpu="" no_gpu_step="" tests_failed=0 bench_failed=0 timeouts=0 crashed=0 ran_gpu=0 rest_planned=0
  # The plan grows once: when its first part (the GPU record, a source tree's build) is done,
  # plan_rest adds the steps that need the binaries.
  for ((i = 0; ; i++)); do
    if [ "${i}" -ge "${#plan_name[@]}" ]; then
      [ "${rest_planned}" -eq 1 ] && break
      plan_rest
      rest_planned=1
      write_summary
    fi
    local kind="${plan_kind[i]}" name="${plan_name[i]}" target="${plan_target[i]}" log
    log="${out}/logs/$(step_file "${name}").log"
    if [ "${kind}" = state ]; then
      if [ "${name}" = "GPU state after" ]; then
        [ -n "${sampler_pid}" ] && kill "${sampler_pid}" 2>/dev/null
        sampler_pid=""
      fi
      # nvidia-smi itself can hang on a wedged driver: under its own short limit, outside the budget.
      run_limited "${i}" "${log}" "${state_limit_s}" 0 bash -c "$(declare -f record_gpu_state); record_gpu_state '${target}'"
      [ "${plan_status[i]}" = RUNNING ] && plan_status[i]=ok && plan_note[i]=$(basename "${target}")
      [ "${name}" = "GPU state before" ] && start_sampler "${out}/gpu-samples.csv"
      write_summary
      continue
    fi
    if [ -n "${no_gpu}" ] && [ "${kind}" != tests ]; then
      plan_status[i]="NOT STARTED"; plan_note[i]="no GPU visible (${no_gpu_step} exited 77)"
      continue
    fi
    case "${kind}" in
      tests)  # source tree: build and every test; not part of the budget (it compiles)
        run_limited "${i}" "${log}" "${TCBENCH_BUILD_TIMEOUT_S:-3600}" 0 "${repo}/scripts/tcbench" test --preset "${TCBENCH_PRESET:-release}"
        check_begin=$(now_s)  # the budget is for checking, not building
        test_logs+=("${log}")
        [ "${plan_status[i]}" = RUNNING ] && {
          plan_status[i]=$([ "${step_rc}" -eq 0 ] && echo ok || echo "FAILED")
          plan_note[i]="tcbench test exit ${step_rc}: $(grep -E '^tcbench test \(' "${log}" | tail -n 1)"
        }
        [ "${step_rc}" -ne 0 ] && tests_failed=1 ;;
      device)
        fits_budget "${i}" 5 "${step_limit_s}" || continue
        run_limited "${i}" "${log}" "${step_limit}" "${step_cut}" "${target}" --gtest_output="xml:${out}/device-tests/${name}.xml"
        test_logs+=("${log}")
        if [ "${plan_status[i]}" = RUNNING ]; then
          plan_note[i]="$(gtest_counts "${log}")"
          if [ "${step_rc}" -eq 0 ]; then plan_status[i]=ok
          else plan_status[i]="FAILED"; plan_note[i]="exit ${step_rc}: ${plan_note[i]}; $(last_output "${log}" 1)"; fi
        fi
        [ "${step_rc}" -ne 0 ] && tests_failed=1 ;;
      bench)
        local least
        least=$(ceil_s "${bench_least[${name}]:-?}" 5)
        fits_budget "${i}" "${least}" "${step_limit_s}" || continue
        run_limited "${i}" "${log}" "${step_limit}" "${step_cut}" "${target}" --quick --benchmark_min_time="${quick_min_time}" \
          --benchmark_out="${out}/results/${name}.json" --benchmark_out_format=json \
          --benchmark_report_aggregates_only=false
        if [ "${plan_status[i]}" = RUNNING ]; then
          case "${step_rc}" in
            0) plan_status[i]=ok; plan_note[i]="${bench_count[${name}]:-?} benchmarks; $(last_output "${log}" 1)"; ran_gpu=1 ;;
            77) plan_status[i]=skipped; no_gpu=$(last_output "${log}" 1); no_gpu=${no_gpu#"${bin_dir}/"}
                no_gpu_step=${name}; plan_note[i]="exit 77: ${no_gpu}" ;;
            *) plan_status[i]="FAILED"; plan_note[i]="exit ${step_rc}: $(last_output "${log}" 2)" ;;
          esac
        fi
        [ "${step_rc}" -ne 0 ] && [ "${step_rc}" -ne 77 ] && bench_failed=1 ;;
      cublaslt)
        # torch.matmul beside tcbench's cuBLASLt at the same shape, in the same run.
        if ! [ -x "${target}" ]; then
          torch_missing="no cuBLASLt result to compare with (no ${target##*/})"
          plan_status[i]=skipped; plan_note[i]="no ${target##*/} in ${bin_dir}"; continue
        fi
        if ! timeout 60 "${torch_python}" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' \
            >/dev/null 2>&1 </dev/null; then
          torch_missing="'${torch_python}' has no PyTorch with CUDA (TCBENCH_TORCH_PYTHON)"
          plan_status[i]=skipped; plan_note[i]="nothing to compare with: ${torch_missing}"; continue
        fi
        fits_budget "${i}" 5 "${step_limit_s}" || { torch_missing="no cuBLASLt result to compare with"; continue; }
        mkdir -p "${out}/torch"
        local filter
        filter=$(timeout 30 "${torch_python}" "${torch_script}" filter --size "${torch_size}" </dev/null)
        run_limited "${i}" "${log}" "${step_limit}" "${step_cut}" "${target}" --benchmark_filter="${filter}" \
          --benchmark_out="${out}/torch/tcbench.json" --benchmark_out_format=json
        if [ "${plan_status[i]}" = RUNNING ]; then
          case "${step_rc}" in
            0) plan_status[i]=ok; plan_note[i]="torch/tcbench.json" ;;
            77) plan_status[i]=skipped; no_gpu=$(last_output "${log}" 1); no_gpu=${no_gpu#"${bin_dir}/"}
                no_gpu_step=${name}; plan_note[i]="exit 77: ${no_gpu}" ;;
            *) plan_status[i]="FAILED"; plan_note[i]="exit ${step_rc}: $(last_output "${log}" 2)"; bench_failed=1 ;;
          esac
        fi ;;
      torch)
        if [ -n "${torch_missing}" ]; then plan_status[i]=skipped; plan_note[i]="${torch_missing}"; continue; fi
        fits_budget "${i}" 10 "${step_limit_s}" || continue
        mkdir -p "${out}/torch"
        run_limited "${i}" "${log}" "${step_limit}" "${step_cut}" "${torch_python}" "${torch_script}" time \
          --size "${torch_size}" --out "${out}/torch/torch.json"
        if [ "${plan_status[i]}" = RUNNING ]; then
          if [ "${step_rc}" -eq 0 ]; then
            plan_status[i]=ok; plan_note[i]="torch/torch.json"
            if [ -s "${out}/torch/tcbench.json" ]; then
              timeout 60 "${torch_python}" "${torch_script}" compare "${out}/torch/torch.json" "${out}/torch/tcbench.json" \
                --out "${out}/torch/ratio.json" >"${out}/torch/ratio.txt" 2>&1
            fi
          else
            plan_status[i]="FAILED"; plan_note[i]="exit ${step_rc}: $(last_output "${log}" 2)"
          fi
        fi ;;
      answers)
        # The five verdicts from what this check measured plus the host studies: host work after
        # the GPU is done, so outside the budget, under its own limit, and never the check's
        # verdict (the measurements stand without it); a failure shows in its row.
        if [ -z "${py_for_summary}" ]; then
          plan_status[i]=skipped; plan_note[i]="no Python 3 for tcbench_tools"; continue
        fi
        run_limited "${i}" "${log}" "${answers_limit_s}" 0 env PYTHONPATH="${script_dir}" \
          "${py_for_summary}" -m tcbench_tools.answers.gpu_check "${out}" "${bin_dir}"
        if [ "${plan_status[i]}" = RUNNING ]; then
          if [ "${step_rc}" -eq 0 ]; then
            plan_status[i]=ok; plan_note[i]="answers.md; $(last_output "${log}" 1)"
          else
            plan_status[i]="FAILED"; plan_note[i]="exit ${step_rc}: $(last_output "${log}" 1)"
          fi
        fi ;;
    esac
    [ "${kind}" = answers ] || case "${plan_status[i]}" in TIMEOUT) timeouts=$((timeouts + 1)) ;; CRASHED) crashed=$((crashed + 1)) ;; esac
    write_summary
  done

  local status verdict not_started=${#left_out[@]}
  if [ "${tests_failed}" -ne 0 ] || [ "${bench_failed}" -ne 0 ] || [ "${timeouts}" -ne 0 ] || [ "${crashed}" -ne 0 ]; then
    status=1; verdict="FAILED:"
    [ "${tests_failed}" -ne 0 ] && verdict="${verdict} tests failed;"
    [ "${bench_failed}" -ne 0 ] && verdict="${verdict} a benchmark binary failed;"
    [ "${timeouts}" -ne 0 ] && verdict="${verdict} ${timeouts} step(s) timed out;"
    [ "${crashed}" -ne 0 ] && verdict="${verdict} ${crashed} step(s) crashed;"
    verdict="${verdict%;}"
  elif [ -n "${no_gpu}" ] && [ "${ran_gpu}" -eq 0 ]; then
    status=77; verdict="SKIPPED: no GPU visible (device tests skipped, nothing measured): ${no_gpu}"
  elif [ "${not_started}" -gt 0 ]; then
    status=1; verdict="INCOMPLETE: ${not_started} step(s) did not fit the ${budget_s} s budget: ${left_out[*]}"
  else
    status=0; verdict="PASSED"
  fi
  trap - INT TERM HUP
  [ -n "${sampler_pid}" ] && kill "${sampler_pid}" 2>/dev/null
  write_summary "-- ${verdict} (exit ${status})"
  cat "${out}/summary.txt"
  return "${status}"
}

case "${1:-}" in
  --bundle) shift; [ $# -le 1 ] || usage; make_bundle "$@"; exit $? ;;
  -h | --help) sed -n '2,5p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) say "unknown option $1"; usage ;;
  *) [ $# -le 1 ] || usage; check "$@"; exit $? ;;
esac
