"""Reading input files with bounds: only regular files, never more than a stated size.

``compare BASE /dev/zero`` used to read without end, and a FIFO blocked ``open()`` for ever. Every
file the tools read on a user's behalf (results, configs, fleet records, logs) goes through
``read_bytes``: the path is checked with ``stat`` first (which neither blocks on a FIFO nor reads
a device), opened non-blocking, checked again on the open descriptor (the path may have been
swapped in between), and read up to its limit; a larger file is refused with the limit in the
sentence. A symbolic link loop is said as such, not as a missing file. Standard library only:
``tcbench run`` imports this.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from tcbench_tools.errors import InputError
from tcbench_tools.printable import printable

MIB = 1 << 20
RESULTS_LIMIT = 256 * MIB  # a full suite with 10 repetitions is about 60 MiB of JSON
CONFIG_LIMIT = 1 * MIB
RECORD_LIMIT = 1 * MIB  # fleet manifests and task records, gpu_check's nvidia-smi tables
TAIL_BYTES = 64 * 1024  # how much of a log's end is read for its last line


def inside(root: Path, path: Path) -> bool:
    """Whether ``path``, every symbolic link resolved, lies inside the folder ``root`` (and is not
    ``root`` itself)."""
    try:
        base, real = Path(root).resolve(), Path(path).resolve()
    except (OSError, RuntimeError):
        return False
    return real != base and real.is_relative_to(base)


def limit_text(limit: int) -> str:
    return f"{limit // MIB} MiB" if limit >= MIB and limit % MIB == 0 else f"{limit} bytes"


def kind(mode: int) -> str:
    """What a file that is not a regular one is, in words: "a FIFO (named pipe)", ..."""
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def describe_error(path: Path, exc: OSError) -> str:
    """The sentence for an OSError about ``path`` (without the final full stop)."""
    if exc.errno == errno.ELOOP:
        return f"{path} is a symbolic link loop (a link that leads back to itself)"
    if exc.errno == errno.ENOENT:
        if os.path.islink(path):
            return f"{path} is a dangling symbolic link (to {os.readlink(path)})"
        return f"{path}: no such file or folder"
    if exc.errno == errno.EACCES:
        return f"cannot read {path}: permission denied"
    return f"cannot read {path}: {exc.strerror or exc}"


def path_stat(path: Path) -> os.stat_result:
    """``os.stat`` with the failure as an InputError that says what is wrong."""
    try:
        return os.stat(path)
    except OSError as exc:
        raise InputError(describe_error(path, exc) + ".") from None


def check_regular(path: Path, what: str = "file") -> os.stat_result:
    """The ``stat`` of ``path``, refusing anything but a regular file (following links)."""
    st = path_stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{path} is {kind(st.st_mode)}, not a regular {what}: the tools read "
                         "only regular files.")
    return st


def read_bytes(path: Path, limit: int, what: str = "file") -> bytes:
    """The content of the regular file ``path``, at most ``limit`` bytes (else an InputError)."""
    path = Path(path)
    st = check_regular(path, what)
    if st.st_size > limit:
        raise InputError(f"{path} is {st.st_size / MIB:.1f} MiB, more than the "
                         f"{limit_text(limit)} a {what} may be.")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputError(describe_error(path, exc) + ".") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # swapped for something else after the check
            raise InputError(f"{path} is {kind(st.st_mode)}, not a regular {what}.")
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise InputError(describe_error(path, exc) + ".") from None
    finally:
        os.close(fd)
    if total > limit:  # it grew while being read
        raise InputError(f"{path} grew beyond the {limit_text(limit)} a {what} may be while it "
                         "was read.")
    return b"".join(chunks)


def read_text(path: Path, limit: int, what: str = "file", errors: str = "strict") -> str:
    """``read_bytes`` decoded as UTF-8 (UnicodeDecodeError with ``errors="strict"``)."""
    return read_bytes(path, limit, what).decode("utf-8", errors=errors)


def last_line(path: Path) -> str:
    """The last non-empty line of a log (read from its last 64 KiB only), control characters
    escaped; "" when the log is absent, unreadable or not a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return ""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return ""
        os.lseek(fd, max(0, st.st_size - TAIL_BYTES), os.SEEK_SET)
        data = os.read(fd, TAIL_BYTES)
    except OSError:
        return ""
    finally:
        os.close(fd)
    # Lines end at "\n" only: a "\r" inside one (a progress bar, or a forged "PASS") is shown,
    # escaped, not taken for the start of a line.
    lines = [ln.strip() for ln in data.decode("utf-8", errors="replace").split("\n")
             if ln.strip()]
    return printable(lines[-1]) if lines else ""
