"""The child processes of ``tcbench run`` and of the GPU check (``tcbench_tools.gpu_check``): each
in its own process group, under a time limit, with the run's signals passed on. One
implementation for both.

A child (a benchmark binary, or the build: cmake and the ninja and compilers under it) starts as
the leader of a new session, so a signal for it reaches its whole group and nothing it started is
left behind:

- **Signals.** While ``forward_signals()`` is active, SIGINT, SIGTERM and SIGHUP sent to tcbench
  are passed on to the running child's group at once (a second signal SIGKILLs the group; one
  still alive ``STOP_GRACE`` s after the first is killed too); tcbench then stops at the next safe
  point by raising ``Interrupted``, never from inside the handler.
- **Time limit.** ``supervise(..., timeout=S)``: a child still running after S seconds gets
  SIGTERM for its group (a binary unlocks the GPU clocks on it), then SIGKILL ``TIMEOUT_GRACE``
  s later; ``Finished.timed_out`` says so and the caller goes on.
- **Leftovers.** When the leader has exited, whatever of its group is still alive (a compiler
  ninja started) is killed.
- **A supervisor killed itself.** With a time limit, the child runs under coreutils ``timeout``
  (when the machine has it) set a little past the limit: should tcbench itself be SIGKILLed (an
  outside time limit, an OOM kill), nothing can stop the group any more, and that watchdog still
  ends it instead of leaving a hung binary on the GPU. ``timeout`` passes the child's exit status
  and its death by a signal on unchanged.
- **Short captures** (``capture``): a listing or a query whose output is wanted, in its own
  group, killed with it at its limit; it does not count as the running child, but a signal that
  asked the run to stop kills its group at once and stops the run (``Interrupted``).

Standard library only: ``tcbench run`` imports this.
"""

from __future__ import annotations

import math
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

STOP_GRACE = 10.0  # seconds a signalled child gets to exit before its group is killed
TIMEOUT_GRACE = 10.0  # seconds between SIGTERM and SIGKILL for a child past its time limit
WATCHDOG_MARGIN = TIMEOUT_GRACE + 5.0  # the watchdog's limit past supervise's own
POLL = 0.5  # seconds between checks (progress, deadline)
CAPTURE_POLL = 0.2  # seconds between a short capture's checks for a signal
FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(Exception):
    """A signal asked the run to stop; raised by the run itself at a point where no child is
    left behind (never from inside the signal handler, which could land in the middle of
    subprocess' own bookkeeping)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@dataclass
class _StopRequest:
    """The first signal received (and when), and the child group running now: the handler
    forwards the signal to it at once, and SIGKILLs it on a second signal."""

    signum: int | None = None
    at: float = 0.0
    child: subprocess.Popen | None = None

    def check(self) -> None:
        if self.signum is not None:
            raise Interrupted(self.signum)


_stop = _StopRequest()


def stop_requested() -> int | None:
    """The signal that asked the run to stop, if one did."""
    return _stop.signum


def check_stop() -> None:
    """Raise ``Interrupted`` when a signal asked the run to stop."""
    _stop.check()


def signal_group(proc: subprocess.Popen, signum: int) -> None:
    """Send ``signum`` to the process group ``proc`` leads (started by ``supervise``)."""
    try:
        os.killpg(proc.pid, signum)
    except (ProcessLookupError, PermissionError):
        pass  # the group has gone


def _on_signal(signum: int, _frame) -> None:
    first = _stop.signum is None
    if first:
        _stop.signum, _stop.at = signum, time.monotonic()
    if _stop.child is not None:
        signal_group(_stop.child, signum if first else signal.SIGKILL)


@contextmanager
def forward_signals() -> Iterator[None]:
    """While the block runs, SIGINT, SIGTERM and SIGHUP go on to the running child's group
    instead of killing tcbench alone (which would orphan the child, still holding the GPU, or
    leave ninja compiling); the caller stops at its next ``check_stop()``."""
    _stop.signum, _stop.child = None, None
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _on_signal) for sig in FORWARDED_SIGNALS}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@dataclass
class Finished:
    code: int  # the child's exit status (negative: killed by that signal)
    seconds: float
    timed_out: bool = False  # it ran past its time limit and was stopped


def watchdog(cmd: list[str], limit: float) -> list[str]:
    """``cmd`` under coreutils ``timeout`` at ``limit`` + WATCHDOG_MARGIN seconds (see the module
    docstring), or ``cmd`` itself on a machine without it. The executable is checked first, so
    that a missing program is still an OSError, not timeout's exit 127."""
    tool = shutil.which("timeout")
    if tool is None or not cmd or (shutil.which(cmd[0]) is None and not os.access(cmd[0], os.X_OK)):
        return cmd
    seconds = f"{max(1, math.ceil(limit + WATCHDOG_MARGIN))}"
    return [tool, "--kill-after=5", seconds, *cmd]


def supervise(cmd: list[str], *, timeout: float | None = None,
              on_tick: Callable[[float], None] | None = None, **popen) -> Finished:
    """Run ``cmd`` as the leader of a new process group (see the module docstring) and wait for
    it; ``on_tick(seconds)`` is called every ``POLL`` s while it runs normally. OSError when it
    cannot start; ``Interrupted`` when a signal arrived before it started or while it ran (the
    group is gone by then)."""
    _stop.check()
    begin = time.monotonic()
    if timeout is not None:
        cmd = watchdog(cmd, timeout)
    proc = subprocess.Popen(cmd, start_new_session=True, **popen)
    timed_out, kill_at = False, None
    _stop.child = proc
    try:
        if _stop.signum is not None:  # a signal that came while it started
            signal_group(proc, _stop.signum)
        while True:
            try:
                code = proc.wait(timeout=POLL)
                break
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            if _stop.signum is not None:
                if now - _stop.at > STOP_GRACE:
                    signal_group(proc, signal.SIGKILL)
            elif timeout is not None and not timed_out and now - begin > timeout:
                timed_out, kill_at = True, now + TIMEOUT_GRACE
                signal_group(proc, signal.SIGTERM)
            elif timed_out and now > kill_at:
                signal_group(proc, signal.SIGKILL)
            elif on_tick is not None and not timed_out:
                on_tick(now - begin)
    finally:
        _stop.child = None
        if proc.returncode is None:  # an exception in on_tick: leave nothing running
            signal_group(proc, signal.SIGKILL)
            proc.wait()
        signal_group(proc, signal.SIGKILL)  # what the leader left of its group
    _stop.check()
    return Finished(code, time.monotonic() - begin, timed_out)


@dataclass
class Captured:
    code: int | None  # exit status (negative: killed by that signal); None: past its limit
    output: bytes  # stdout and stderr together, at most ``limit_bytes``
    seconds: float


def capture(cmd: list[str], timeout: float, *, limit_bytes: int = 16 << 20, **popen) -> Captured:
    """Run ``cmd`` in its own process group and return its output; at ``timeout`` seconds the
    group is killed and ``code`` is None. OSError when it cannot start. Output goes to a file, not
    a pipe, so a child that writes a lot cannot block while nobody reads. A signal that asked the
    run to stop (``forward_signals``) kills the group within ``CAPTURE_POLL`` s and raises
    ``Interrupted``: a listing that hangs never holds a stop back for its whole limit."""
    begin = time.monotonic()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, start_new_session=True, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, **popen)
        code: int | None = None
        try:
            while _stop.signum is None:
                try:
                    code = proc.wait(timeout=min(CAPTURE_POLL, max(
                        0.0, timeout - (time.monotonic() - begin))))
                    break
                except subprocess.TimeoutExpired:
                    if time.monotonic() - begin >= timeout:
                        break
        finally:
            signal_group(proc, signal.SIGKILL)  # the group, or what the leader left of it
            if proc.returncode is None:
                proc.wait()
        _stop.check()
        out.seek(0)
        data = out.read(limit_bytes)
    return Captured(code, data, time.monotonic() - begin)
