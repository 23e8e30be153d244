"""What a user names as input to ``answers`` and ``report``, read as result sets.

- a result file: itself;
- a run folder (``tcbench run``'s ``results/<stamp>/``): its results.json and its studies.json;
- a folder of run folders, such as ``results/``: the newest run in it, said on stderr;
- the archive ``scripts/gpu_check.sh --archive`` writes (``gpu-check.tgz``): its results/ as one
  GPU run (read as any run folder is: ``results.load``) and its studies/studies.json, read
  without unpacking anything to its own paths.

The archive is read safely: a file of at most ARCHIVE_LIMIT bytes, read as a stream, at most
ARCHIVE_EXPANDED bytes uncompressed and ARCHIVE_MEMBERS members. Only regular files named like
result files are copied, each at most files.RESULTS_LIMIT, into a private temporary folder, under
names of our own making (never the archive's paths, links or modes). Standard library only:
``answers`` uses it.
"""

from __future__ import annotations

import dataclasses
import gzip
import re
import sys
import tarfile
import tempfile
import zlib
from pathlib import Path

from tcbench_tools import files, results, runfile
from tcbench_tools.errors import InputError

STUDIES_FILE = "studies.json"
RUN_FILES = (runfile.MERGED, STUDIES_FILE)
ARCHIVE_SUFFIXES = (".tgz", ".tar.gz")
ARCHIVE_LIMIT = files.RESULTS_LIMIT  # the .tgz itself
ARCHIVE_EXPANDED = 2 << 30  # a check's folder is a few MiB; logs are capped at 8 MiB each
ARCHIVE_MEMBERS = 100_000
_RESULT_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:+-]*\.jsonl?")


def is_run(folder: Path) -> bool:
    return any((folder / name).is_file() for name in RUN_FILES)


def newest_run(folder: Path) -> tuple[Path, int] | None:
    """(the newest run folder in ``folder``, how many there are), by the time of its run files
    (a folder's name, such as --out's, need not be a date); None when it holds none."""
    try:
        runs = [p for p in Path(folder).iterdir() if p.is_dir() and is_run(p)]
    except OSError:
        return None

    def written(run: Path) -> float:
        return max((run / n).stat().st_mtime for n in RUN_FILES if (run / n).is_file())

    return (max(runs, key=lambda p: (written(p), p.name)), len(runs)) if runs else None


def resolve(path: Path, command: str) -> Path:
    """``path``, or for a folder of runs its newest run, said on stderr."""
    path = Path(path)
    if not path.is_dir() or is_run(path) or any(path.glob("*.json")):
        return path
    found = newest_run(path)
    if found is None:
        return path  # results.load says what the folder lacks
    run, count = found
    said = (f"{count} runs: reading the newest, {run} (name a run folder to read another)"
            if count > 1 else f"one run: reading {run}")
    print(f"tcbench {command}: {path} holds {said}.", file=sys.stderr, flush=True)
    return run


def is_archive(path: Path) -> bool:
    return Path(path).name.endswith(ARCHIVE_SUFFIXES) and Path(path).is_file()


class _Bounded:
    """A file object that refuses to give more than ``limit`` bytes (a gzip bomb)."""

    def __init__(self, raw, limit: int, archive: Path):
        self.raw, self.left, self.archive = raw, limit, archive

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size if size is not None and size >= 0 else 1 << 20)
        self.left -= len(data)
        if self.left < 0:
            raise InputError(f"{self.archive} expands to more than "
                             f"{files.limit_text(ARCHIVE_EXPANDED)}: not a GPU check's archive.")
        return data


def _copy_members(archive: Path, into: Path) -> bool:
    """Copy the archive's <top>/results/*.json(l) and <top>/studies/studies.json into ``into``
    (results/, studies/); whether any was found."""
    files.check_regular(archive, "archive")
    size = files.path_stat(archive).st_size
    if size > ARCHIVE_LIMIT:
        raise InputError(f"{archive} is {size / files.MIB:.1f} MiB, more than the "
                         f"{files.limit_text(ARCHIVE_LIMIT)} an archive may be.")
    top, found = None, False
    try:
        with gzip.open(archive, "rb") as raw, tarfile.open(
                fileobj=_Bounded(raw, ARCHIVE_EXPANDED, archive), mode="r|") as tar:
            for count, member in enumerate(tar, start=1):
                if count > ARCHIVE_MEMBERS:
                    raise InputError(f"{archive} holds more than {ARCHIVE_MEMBERS} files: not a "
                                     "GPU check's archive.")
                parts = member.name.split("/")
                if len(parts) != 3 or not member.isreg():
                    continue
                top = top or parts[0]
                where = ("results" if parts[1] == "results" and _RESULT_NAME.fullmatch(parts[2])
                         else "studies" if parts[1:] == ["studies", STUDIES_FILE] else None)
                if parts[0] != top or where is None:
                    continue
                if member.size > files.RESULTS_LIMIT:
                    raise InputError(f"{archive}: {member.name} is {member.size / files.MIB:.1f} "
                                     f"MiB, more than the {files.limit_text(files.RESULTS_LIMIT)}"
                                     " a result file may be.")
                source = tar.extractfile(member)
                (into / where).mkdir(exist_ok=True)
                (into / where / parts[2]).write_bytes(source.read() if source else b"")
                found = True
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise InputError(f"{archive} is not a readable .tgz archive ({exc}).") from None
    return found


def read_archive(archive: Path) -> list[results.ResultSet]:
    """The GPU run (the check's results/, a run folder) and the host studies of a
    ``gpu_check.sh --archive`` file, each with the archive as its path."""
    archive = Path(archive)
    with tempfile.TemporaryDirectory(prefix="tcbench-archive-") as tmp:
        into = Path(tmp)
        if not _copy_members(archive, into):
            raise InputError(f"{archive} holds no results/*.json and no studies/{STUDIES_FILE}: "
                             "it is not the archive of scripts/gpu_check.sh --archive.")
        sets = []
        if (into / "results").is_dir():
            try:
                sets.append(results.load(into / "results"))
            except InputError:
                pass  # no readable result: nothing ran on a GPU; the host half may still answer
        if (into / "studies" / STUDIES_FILE).is_file():
            sets.append(results.load(into / "studies" / STUDIES_FILE))
    if not sets:
        raise InputError(f"{archive} holds no readable result file: nothing to read.")
    return [dataclasses.replace(rs, path=str(archive)) for rs in sets]


def load(path: Path, command: str) -> list[results.ResultSet]:
    """One input as result sets: the GPU run first, then the host studies when it has them."""
    path = resolve(Path(path), command)
    if is_archive(path):
        return read_archive(path)
    if path.is_dir() and (path / STUDIES_FILE).is_file():
        gpu = [results.load(path)] if (path / runfile.MERGED).is_file() else []
        return gpu + [results.load(path / STUDIES_FILE)]
    return [results.load(path)]


def load_all(paths: list[Path], command: str) -> list[results.ResultSet]:
    return [rs for path in paths for rs in load(path, command)]
