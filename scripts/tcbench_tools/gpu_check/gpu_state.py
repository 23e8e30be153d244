"""What nvidia-smi says about the GPU: one record before and after the run, and a sample of the
SM clock and power once a second while it runs. Queries only: the check sets nothing
(docs/gpu-check.md, "It changes no GPU setting"). Standard library only."""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

from tcbench_tools import process

QUERY_TIMEOUT = 20.0  # seconds per nvidia-smi call: a wedged driver must not hang the check
# The only nvidia-smi arguments the check uses (tests/scripts/test_gpu_check_safety.py holds
# every call to them).
BASIC = ("index,name,pci.bus_id,uuid,driver_version,pstate,clocks.sm,clocks.mem,clocks.max.sm,"
         "clocks.max.mem,temperature.gpu,power.draw,power.limit")
SAMPLED = "clocks.sm,power.draw,power.limit,temperature.gpu,utilization.gpu"
SAMPLES_HEADER = ("epoch_s, clocks.sm [MHz], power.draw [W], power.limit [W], temperature.gpu, "
                  "utilization.gpu [%]")


def smi() -> str | None:
    return shutil.which("nvidia-smi")


def _query(args: list[str]) -> tuple[int | None, str]:
    tool = smi()
    if tool is None:
        return 127, "nvidia-smi not found"
    try:
        got = process.capture([tool, *args], QUERY_TIMEOUT)
    except OSError as exc:
        return 126, f"nvidia-smi cannot run: {exc.strerror or exc}"
    return got.code, got.output.decode("utf-8", errors="replace")


def record(path: Path) -> str:
    """The GPU's identity, clocks, clock-event reasons and power at one moment, into `path`;
    returns its CSV line (header and values) for the summary."""
    if smi() is None:
        path.write_text("nvidia-smi not found\n")
        return ""
    parts = [f"== {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}"]
    parts.append(_query([])[1])
    # clocks_event_reasons is the newer name of clocks_throttle_reasons: ask for the one there is.
    reasons = "clocks_event_reasons"
    if "clocks_event_reasons.active" not in _query(["--help-query-gpu"])[1]:
        reasons = "clocks_throttle_reasons"
    detail = ",".join(f"{reasons}.{r}" for r in (
        "active", "sw_power_cap", "hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown",
        "hw_power_brake_slowdown")) + ",mig.mode.current"
    code, csv = _query(["--format=csv", f"--query-gpu={BASIC},{detail}"])
    if code != 0:  # a driver that lacks one field refuses the whole query
        code, csv = _query(["--format=csv", f"--query-gpu={BASIC}"])
    parts.append(csv)
    parts.append(_query(["-q", "-d", "PERFORMANCE,CLOCK,POWER,TEMPERATURE"])[1])
    path.write_text("\n".join(parts) + "\n")
    lines = [ln for ln in csv.splitlines() if ln.strip()]
    return "\n".join(lines[:2]) if code == 0 and lines and lines[0].startswith("index") else ""


class Sampler:
    """nvidia-smi's SM clock and power once a second, appended to a CSV, in a thread."""

    def __init__(self, path: Path):
        self.path = path
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        device = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0] or "0"
        self.args = ["--query-gpu=" + SAMPLED, "--format=csv,noheader,nounits", "-i", device]

    def start(self) -> None:
        if smi() is None:
            return
        self.path.write_text(SAMPLES_HEADER + "\n")
        self._thread = threading.Thread(target=self._run, name="gpu-sampler", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                code, text = _query(self.args)
            except process.Interrupted:
                return  # the check is stopping: its main thread says so
            line = text.strip().splitlines()[0] if code == 0 and text.strip() else ""
            if line:
                with open(self.path, "a") as fh:
                    fh.write(f"{time.time():.0f}, {line}\n")
            self._stop.wait(1.0)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=QUERY_TIMEOUT + 2)
