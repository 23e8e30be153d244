#!/bin/sh
# The GPU-run check (docs/gpu-check.md):
#   scripts/gpu_check.sh [OUTDIR] [--archive FILE] [--tier 1|2|3]   check this GPU box
#   scripts/gpu_check.sh --plan                                      the steps, predicted seconds
#   scripts/gpu_check.sh --bundle [DIR] [--arch 90a]                 make a bundle (build machine)
# A launcher: it refuses a box whose glibc is older than the bundle's binaries need, finds Python
# >= 3.11 (the box's own; the check needs only its standard library) and hands over to
# `python3 -m tcbench_tools.gpu_check` (scripts/tcbench_tools/gpu_check/cli.py has the rest).
here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd) || exit 2
need=$(sed -n 's/^needs_glibc: \([0-9.]*\).*/\1/p' "$here/../MANIFEST.txt" 2>/dev/null)
built=$(sed -n 's/^glibc: \([0-9.]*\).*/\1/p' "$here/../MANIFEST.txt" 2>/dev/null)
have=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
if [ -n "$need" ] && [ -n "$have" ] &&
   [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -n 1)" != "$need" ]; then
  echo "gpu_check: this box's glibc $have is older than the $need the bundle's binaries need (built on glibc $built): make the bundle on a distribution with glibc $have or older; nothing was run." >&2
  exit 2
fi
python=""
for py in "${TCBENCH_PYTHON:-}" "$here/../.venv/bin/python" python3 python3.13 python3.12 python3.11; do
  if [ -n "$py" ] && command -v "$py" >/dev/null 2>&1 &&
     "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    python=$py
    break
  fi
done
if [ -z "$python" ]; then
  echo "gpu_check: no Python >= 3.11 here (TCBENCH_PYTHON, python3), which the check needs (its standard library only); nothing was run." >&2
  exit 2
fi
PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" exec "$python" -m tcbench_tools.gpu_check "$@"
