#!/usr/bin/env bash
# Usage: scripts/gpu_check.sh [OUTDIR]
#
# The check to run on a machine with a GPU: builds (release preset: the GPU's native
# architecture), runs every test including the device tests that skip elsewhere, runs the whole
# suite in quick mode, and writes everything to OUTDIR (default results/gpu-check-<stamp>/):
#   nvidia-smi.txt   the GPU, driver and clocks before the run
#   test.log         configure, build, ctest and pytest output
#   run.log          the quick suite's progress and summary
#   results/         one Google Benchmark JSON per binary and the merged results.json
#   summary.txt      the short table printed at the end
# Designed to finish in well under 5 minutes on an H100-class GPU. Exit code: 0 when tests and
# suite passed, 1 otherwise, 77 when no GPU is visible.
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-${repo}/results/gpu-check-$(date +%Y%m%d-%H%M%S)}"
preset="${TCBENCH_PRESET:-release}"
mkdir -p "${out}"
out="$(cd "${out}" && pwd)"
begin=$(date +%s)

if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi >"${out}/nvidia-smi.txt" 2>&1
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv >>"${out}/nvidia-smi.txt" 2>&1
else
  echo "nvidia-smi not found" >"${out}/nvidia-smi.txt"
fi

elapsed() { echo $(( $(date +%s) - begin )); }

echo "gpu_check: tests (${preset} preset) -> ${out}/test.log"
"${repo}/scripts/tcbench" test --preset "${preset}" >"${out}/test.log" 2>&1
test_rc=$?
echo "gpu_check: tests finished with exit ${test_rc} after $(elapsed) s"

echo "gpu_check: quick suite -> ${out}/run.log"
"${repo}/scripts/tcbench" run --quick --preset "${preset}" --no-build --out "${out}/results" \
  >"${out}/run.log" 2>&1
run_rc=$?
echo "gpu_check: suite finished with exit ${run_rc} after $(elapsed) s"

{
  echo "== tcbench gpu_check: $(head -n 1 "${out}/nvidia-smi.txt" 2>/dev/null)"
  grep -E '^(NVIDIA|name)' "${out}/nvidia-smi.txt" | tail -n 1
  echo "-- tests (exit ${test_rc}):"
  grep -E 'tests passed|tests failed|tcbench test \(|check_sass:' "${out}/test.log" | tail -n 4
  grep -E '\(Skipped\)' "${out}/test.log" | sed 's/^/   skipped: /' | head -n 20
  echo "-- quick suite (exit ${run_rc}):"
  # The runner's own summary table: per topic and precision, best TFLOP/s and % of peak.
  tail -n 40 "${out}/run.log"
  echo "-- total $(elapsed) s; files in ${out}"
} | tee "${out}/summary.txt"

if [ "${run_rc}" -eq 77 ]; then exit 77; fi
if [ "${test_rc}" -ne 0 ] || [ "${run_rc}" -ne 0 ]; then exit 1; fi
exit 0
