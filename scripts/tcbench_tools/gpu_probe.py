"""Is there a CUDA GPU tcbench can use? Asked before anything is built, in a fraction of a second.

``tcbench run`` used to build every architecture (minutes) and only then learn from the first
binary that there is no GPU. This asks the NVIDIA driver directly, through its C library
(libcuda.so.1) with ctypes, and classifies the answer the way the binaries do
(classify_device_count_failure in common/runtime/src/device_info.cpp), so the two never disagree:

* no driver library, or the driver sees no device: **no GPU** (run the host studies, exit 77);
* a driver older than CUDA 13, a kernel module / library mismatch, a stopped fabric manager, a
  GPU every process is locked out of: **unusable** (exit 1, with the fix);
* otherwise: a GPU (the binaries make their own, fuller check).

The driver's status codes are cuda.h's CUresult values; tests/scripts/test_gpu_probe.py checks
them against the toolkit's cuda.h. ``TCBENCH_LIBCUDA`` points at another driver library (tests);
``TCBENCH_GPU_PROBE=skip`` leaves the decision to the binaries (a driver this probe cannot load
the usual way, or stand-in binaries). Standard library only.
"""

from __future__ import annotations

import ctypes
import os
import sys
from dataclasses import dataclass

from tcbench_tools.errors import EXIT_NO_GPU, EXIT_USAGE, InputError
from tcbench_tools.printable import printable

CUDA_SUCCESS = 0
CUDA_ERROR_DEVICE_UNAVAILABLE = 46
CUDA_ERROR_NO_DEVICE = 100
CUDA_ERROR_SYSTEM_NOT_READY = 802
CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803
CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804
REQUIRED_DRIVER = 13000  # CUDA 13.0, driver R580 or newer

GPU, NO_GPU, UNUSABLE, SKIPPED = "gpu", "no GPU", "unusable", "not probed"


@dataclass(frozen=True)
class Probe:
    state: str  # GPU, NO_GPU, UNUSABLE or SKIPPED
    sentence: str = ""  # why, for NO_GPU and UNUSABLE
    devices: int = 0
    driver_version: int = 0


def version_text(version: int) -> str:
    """13000 -> "13.0", 12090 -> "12.9" (format_cuda_version in device_info.cpp)."""
    return f"{version // 1000}.{(version % 1000) // 10}"


def classify(status: int, driver_version: int, devices: int) -> Probe:
    """What cuInit / cuDeviceGetCount's answer means (the binaries' rules, device_info.cpp)."""
    if status == CUDA_ERROR_NO_DEVICE or (status == CUDA_SUCCESS and devices == 0):
        return Probe(NO_GPU, "no CUDA GPU available: the driver sees no device (check "
                             "CUDA_VISIBLE_DEVICES)", 0, driver_version)
    if driver_version == 0:
        return Probe(NO_GPU, "no CUDA GPU available: no NVIDIA driver is loaded", 0, 0)
    if status == CUDA_SUCCESS and driver_version < REQUIRED_DRIVER:
        return Probe(UNUSABLE, f"the NVIDIA driver supports CUDA {version_text(driver_version)}; "
                               "tcbench needs CUDA 13.0 (driver R580 or newer): update the driver",
                     devices, driver_version)
    if status == CUDA_SUCCESS:
        return Probe(GPU, "", devices, driver_version)
    fixes = {
        CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
            "the NVIDIA kernel module and the user-space driver library have different versions "
            "(usually after a driver update without a reboot): reboot or reinstall the driver",
        CUDA_ERROR_SYSTEM_NOT_READY:
            "the GPU system is not ready; on NVSwitch systems start the NVIDIA fabric manager "
            "(systemctl start nvidia-fabricmanager)",
        CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
            "the CUDA forward-compatibility package does not support this GPU: install a driver "
            "of R580 or newer",
        CUDA_ERROR_DEVICE_UNAVAILABLE:
            "every GPU is busy or in exclusive-process mode held by another process",
    }
    return Probe(UNUSABLE, fixes.get(status, f"the NVIDIA driver cannot use the GPU (CUresult "
                                             f"{status})"), devices, driver_version)


# TCBENCH_GPU_PROBE's values: probe (unset, empty or one of PROBE_ON) or skip (PROBE_OFF).
PROBE_OFF = ("skip", "off", "0", "no")
PROBE_ON = ("", "on", "1", "yes")


def probe() -> Probe:
    """Ask the driver, once. A library that cannot be loaded is "no driver"; the one error raised
    (InputError) is a TCBENCH_GPU_PROBE that is neither on nor off, so that a typo never reads as
    either."""
    setting = os.environ.get("TCBENCH_GPU_PROBE", "")
    if setting.lower() in PROBE_OFF:
        return Probe(SKIPPED)
    if setting.lower() not in PROBE_ON:
        raise InputError(f"TCBENCH_GPU_PROBE={printable(setting)!r} is neither on nor off "
                         f"(it takes {', '.join(PROBE_OFF)} to skip the probe, or "
                         f"{', '.join(v for v in PROBE_ON if v)} or nothing to probe).")
    name = os.environ.get("TCBENCH_LIBCUDA") or "libcuda.so.1"
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        return Probe(NO_GPU, f"no CUDA GPU available: no NVIDIA driver is loaded "
                             f"({printable(name)} cannot be loaded)")
    version = ctypes.c_int(0)
    try:
        if lib.cuDriverGetVersion(ctypes.byref(version)) != CUDA_SUCCESS:
            version.value = 0
        status = lib.cuInit(0)
        count = ctypes.c_int(0)
        if status == CUDA_SUCCESS:
            status = lib.cuDeviceGetCount(ctypes.byref(count))
    except AttributeError:  # not a CUDA driver library
        return Probe(NO_GPU, f"no CUDA GPU available: {printable(name)} is not the NVIDIA "
                             "driver library")
    return classify(status, version.value, count.value)



def main() -> int:
    """``python -m tcbench_tools.gpu_probe``: one line, and exit 0 (a GPU, or not probed), 77 (no
    GPU) or 1 (a GPU that cannot be used). scripts/tcbench asks it before it builds the Python
    environment: without a GPU, ``run`` needs nothing outside the standard library."""
    try:
        p = probe()
    except InputError as exc:
        print(f"tcbench: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if p.state == GPU:
        print(f"gpu: {p.devices} device(s), driver CUDA {version_text(p.driver_version)}")
    else:
        print(f"{p.state}{': ' + p.sentence if p.sentence else ''}")
    return {GPU: 0, SKIPPED: 0, NO_GPU: EXIT_NO_GPU}.get(p.state, 1)


if __name__ == "__main__":
    raise SystemExit(main())
