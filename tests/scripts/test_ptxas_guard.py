"""cmake/ptxas_guard.sh, the compiler launcher of the sm_90a kernel files: a compile whose ptxas
reports serialized wgmma instructions fails, although ptxas only calls it "info" and nvcc's
-Werror=all-warnings lets it pass; every other compile keeps its status and its messages.

With nvcc at hand, a real sm_90a kernel that ptxas serializes (C7511: a non-wgmma instruction
writes the accumulator inside the wgmma pipeline) proves the guard matches ptxas's own words.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GUARD = REPO / "cmake" / "ptxas_guard.sh"
NVCC = Path(os.environ.get("CUDACXX", "/usr/local/cuda/bin/nvcc"))

SERIALIZED = ("ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions "
              "are serialized due to non wgmma instructions defining accumulator registers of a "
              "wgmma between start and end of the pipeline stage in the function 'k'")
INJECTED = ("ptxas info    : (C7519) warpgroup.arrive is injected in around line 60 by compiler to "
            "allow use of registers in GMMA in function 'k'")


def guarded(script: str) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", str(GUARD), "sh", "-c", script], capture_output=True, text=True)


def test_serialized_wgmma_fails_the_compile():
    proc = guarded(f"echo \"{SERIALIZED}\" >&2; exit 0")
    assert proc.returncode == 1
    assert SERIALIZED in proc.stderr  # ptxas's own message is kept
    assert "tcbench: ptxas serialized wgmma instructions" in proc.stderr


def test_other_messages_and_exit_codes_pass_through():
    proc = guarded(f"echo \"{INJECTED}\" >&2; echo compiled; exit 0")
    assert proc.returncode == 0
    assert INJECTED in proc.stderr and proc.stdout == "compiled\n"
    assert guarded("echo 'error: bad' >&2; exit 3").returncode == 3


BAD_KERNEL = r"""
#include <cstdint>
__global__ void serialized(float* out, std::uint64_t da, std::uint64_t db, int n) {
  float d[4] = {0, 0, 0, 0};
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  for (int i = 0; i < n; ++i) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, p,"
                 " 1, 1, 0, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "l"(da), "l"(db), "r"(1));
    d[0] += 1.0f;  // a CUDA-core write to an accumulator register inside the wgmma pipeline
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  for (int i = 0; i < 4; ++i) out[threadIdx.x * 4 + i] = d[i];
}
"""


@pytest.mark.skipif(not NVCC.is_file(), reason="needs nvcc")
def test_a_kernel_ptxas_serializes_fails_only_through_the_guard(tmp_path: Path):
    source = tmp_path / "serialized.cu"
    source.write_text(BAD_KERNEL)
    command = [str(NVCC), "--generate-code=arch=compute_90a,code=[sm_90a]", "-O3",
               "-Werror=all-warnings", "-c", str(source), "-o", str(tmp_path / "serialized.o")]
    plain = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert plain.returncode == 0, plain.stderr  # -Werror does not see it: ptxas only informs
    assert "instructions are serialized" in plain.stderr
    proc = subprocess.run(["sh", str(GUARD), *command], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert "tcbench: ptxas serialized wgmma instructions" in proc.stderr
