#!/bin/sh
# Compiler launcher for the sm_90a kernel files (kernels/CMakeLists.txt): runs the compile command
# it is given (ccache and nvcc, or nvcc) and fails it when ptxas reports that it serialized wgmma
# instructions, e.g.
#   ptxas info : (C7515) Potential Performance Loss: wgmma.mma_async instructions are serialized
#   due to non wgmma instructions defining accumulator registers of a wgmma ...
# ptxas only informs (C7510-C7515 family), so -Werror never sees it; a serialized wgmma loop would
# report a tensor peak far below the hardware's with no error at all.
# Usage: ptxas_guard.sh COMMAND [ARG...]   (exit: the command's status, or 1 on serialization)
log=$(mktemp "${TMPDIR:-/tmp}/tcbench-ptxas.XXXXXX") || exit 1
"$@" 2>"${log}"
rc=$?
cat "${log}" >&2
if grep -E 'Potential Performance Loss: wgmma|wgmma[.a-z_]* instructions are serialized' \
    "${log}" >/dev/null 2>&1; then
  echo "tcbench: ptxas serialized wgmma instructions (above): the tensor-peak loop would not" \
       "pipeline; keep every accumulator access inside wgmma and fence each trip" \
       "(kernels/tensor_peak_wgmma_sm90a.cu)." >&2
  rm -f "${log}"
  exit 1
fi
rm -f "${log}"
exit "${rc}"
