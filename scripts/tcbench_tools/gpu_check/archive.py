"""--archive FILE: one .tar.gz of the whole output folder, rewritten atomically after every step
(a temporary file beside it, then a rename), so a kill from outside still leaves the last
complete step's; summary.txt is copied beside it. A box that copies back few files then needs
four: box.txt (box.py), the archive, summary.txt and the console log. A write that fails leaves
no temporary file behind. Standard library only."""

from __future__ import annotations

import io
import os
import shutil
import tarfile
from pathlib import Path

# A file larger than this (a binary that floods its log) goes in as its first and last halves
# of it, so that the archive stays small enough to copy back (docs/gpu-check.md).
FILE_LIMIT = 8 << 20


def _add(tar: tarfile.TarFile, path: Path, arcname: str) -> None:
    size = path.stat().st_size
    if size <= FILE_LIMIT:
        tar.add(path, arcname=arcname, recursive=False)
        return
    half = FILE_LIMIT // 2
    with open(path, "rb") as fh:
        head = fh.read(half)
        fh.seek(size - half)
        tail = fh.read(half)
    cut = f"\n[... {size - 2 * half} bytes left out of the archive by gpu_check ...]\n".encode()
    data = head + cut + tail
    info = tar.gettarinfo(path, arcname=arcname)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def write(out: Path, archive: Path) -> int:
    """Archive `out` (its folder name at the top) into `archive`; returns its size in bytes."""
    archive.parent.mkdir(parents=True, exist_ok=True)
    tmp = archive.with_name(f".{archive.name}.tmp-{os.getpid()}")
    skip = {archive.resolve(), tmp.resolve()}
    try:
        _pack(out, archive, tmp, skip)
        os.replace(tmp, archive)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return archive.stat().st_size


def _pack(out: Path, archive: Path, tmp: Path, skip: set[Path]) -> None:
    with tarfile.open(tmp, "w:gz", compresslevel=6) as tar:
        for path in sorted(out.rglob("*")):
            if path.resolve() in skip or path.name.startswith(f".{archive.name}.tmp"):
                continue
            rel = path.relative_to(out).as_posix()
            if path.is_dir() and not path.is_symlink():
                tar.add(path, arcname=f"{out.name}/{rel}", recursive=False)
            elif path.is_file() and not path.is_symlink():
                try:
                    _add(tar, path, f"{out.name}/{rel}")
                except OSError:
                    continue  # a file removed while the archive was written


def copy_summary(summary: Path, archive: Path) -> Path | None:
    """summary.txt beside the archive (unless it already is there)."""
    dest = archive.parent / "summary.txt"
    if not summary.is_file() or dest.resolve() == summary.resolve():
        return None
    tmp = dest.with_name(".summary.txt.tmp")
    shutil.copyfile(summary, tmp)
    os.replace(tmp, dest)
    return dest
