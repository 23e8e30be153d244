"""Work in forked processes, for the history's large inputs (docs/history.md, section 7): one
home for how the history forks, used by ``ingest`` (a run read, or its ids hashed, while the
parent imports SQLAlchemy), ``detect`` (series checked on every core) and ``dashboard`` (plots
drawn on every core).

Fork is used only where the platform has it (``can_fork``); the callers then do the same work in
their own process. A forked child inherits the parent's memory, so what it reads is the caller's
module state, set before the fork and cleared after; only results travel back, pickled.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from tcbench_tools.errors import InputError


def can_fork() -> bool:
    return hasattr(os, "fork")


def map_chunks(fn: Callable[[tuple[int, int]], object], count: int, workers: int) -> list:
    """``fn`` over (start, stop) chunks of range(count) in a pool of ``workers`` forked
    processes, about four chunks each so that uneven chunks even out; the results in order.
    ``fn`` must be a module-level function (the pool pickles its name, not the function)."""
    import multiprocessing  # only here: its import is not free, and most commands never fork

    step = -(-count // (workers * 4))
    chunks = [(i, min(i + step, count)) for i in range(0, count, step)]
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        return pool.map(fn, chunks)


class ChildFailed(RuntimeError):
    """A forked child raised something other than an InputError, or ended without an answer."""


class ForkedCall:
    """``fn(*args)`` in a forked child while this process goes on; ``result()`` waits for it.
    The child never prints. Its InputError comes back as itself (its one sentence); anything
    else it raised, or its death before it answered, as ChildFailed."""

    def __init__(self, fn: Callable, *args):
        import pickle

        read_end, write_end = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            try:
                os.close(read_end)
                try:
                    payload = ("ok", fn(*args))
                except InputError as exc:
                    payload = ("input", str(exc))
                except BaseException as exc:  # noqa: BLE001 - handed to the parent
                    payload = ("bug", f"{type(exc).__name__}: {exc}")
                data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
                while data:
                    data = data[os.write(write_end, data):]
            finally:
                os._exit(0)
        os.close(write_end)
        self.fd = read_end

    def result(self):
        import pickle

        chunks = []
        try:
            while chunk := os.read(self.fd, 1 << 20):
                chunks.append(chunk)
        finally:
            os.close(self.fd)
            os.waitpid(self.pid, 0)
        try:
            kind, value = pickle.loads(b"".join(chunks))
        except Exception:  # noqa: BLE001 - a child that died before it answered
            raise ChildFailed("the forked process ended without an answer") from None
        if kind == "input":
            raise InputError(value)
        if kind == "bug":
            raise ChildFailed(value)
        return value
