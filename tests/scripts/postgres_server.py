"""A real PostgreSQL server in a temporary folder, for the history tests.

Debian's ``postgresql`` package brings the server binaries (/usr/lib/postgresql/<version>/bin);
``initdb`` makes a fresh cluster in a temporary folder (trust authentication, superuser
``tcbench``, no fsync: a throwaway cluster), and the server listens on a free TCP port on
127.0.0.1 only, with its Unix socket in the cluster's folder, so several test runs on one
machine never meet each other or the system's own cluster. PostgreSQL refuses to run as root:
as root the cluster belongs to the ``postgres`` user the package creates (or ``nobody``) and the
server runs as that user. ``stop`` ends the server it started (by its pid) and removes the folder.
For the tests of a server that fails mid-add: ``crash`` stops every server process at once, and
``small_tablespace`` puts a tablespace on a tiny tmpfs (where this process may mount one), a disk
that fills.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

START_TIMEOUT = 30.0
SUPERUSER = "tcbench"


class PostgresUnavailable(Exception):
    """The server cannot run here; the message says why (the tests skip with it)."""


def _bin_dir() -> Path:
    """The server binaries: initdb on PATH, else the newest /usr/lib/postgresql/*/bin."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(os.path.realpath(found)).parent
    def version(path: str) -> list[int]:
        return [int(x) if x.isdigit() else 0 for x in path.split("/")[4].split(".")]

    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=version)
    if not candidates:
        raise PostgresUnavailable("PostgreSQL is not installed here (no initdb on PATH or in "
                                  "/usr/lib/postgresql/*/bin): apt-get install postgresql")
    return Path(candidates[-1]).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    def __init__(self):
        self.bin = _bin_dir()
        self.user: pwd.struct_passwd | None = None
        if os.geteuid() == 0:
            for name in ("postgres", "nobody"):
                try:
                    self.user = pwd.getpwnam(name)
                    break
                except KeyError:
                    continue
            if self.user is None:
                raise PostgresUnavailable("running as root, and there is no 'postgres' or "
                                          "'nobody' user to run the server as")
        self.root = Path(tempfile.mkdtemp(prefix="tcbench-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = _free_port()
        self.pid: int | None = None

    # -- running the server's tools as its user --------------------------------------------------

    def _run(self, args: list[str], what: str, timeout: float = 60) -> str:
        kwargs = {}
        if self.user is not None:
            kwargs = {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []}
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
               "LC_ALL": "C.UTF-8", "HOME": str(self.root), "PGTZ": "UTC"}
        try:
            proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout,
                                  stdin=subprocess.DEVNULL, cwd=self.root, env=env, **kwargs)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PostgresUnavailable(f"{what} did not run: {exc}") from None
        if proc.returncode != 0:
            raise PostgresUnavailable(f"{what} exited {proc.returncode}: "
                                      f"{(proc.stderr or proc.stdout).strip()[-400:]}")
        return proc.stdout

    def start(self) -> None:
        if self.user is not None:
            os.chown(self.root, self.user.pw_uid, self.user.pw_gid)
        self._run([str(self.bin / "initdb"), "-D", str(self.data), "-U", SUPERUSER,
                   "--auth=trust", "--no-sync", "--encoding=UTF8", "--no-instructions"],
                  "initdb")
        options = (f"-c listen_addresses=127.0.0.1 -c port={self.port} "
                   f"-c unix_socket_directories={self.data} -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=40")
        self._run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.log),
                   "-o", options, "-w", "-t", str(int(START_TIMEOUT)), "start"],
                  "pg_ctl start", timeout=START_TIMEOUT + 10)
        try:
            self.pid = int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            self.pid = None
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        raise PostgresUnavailable(f"the server did not accept connections on port {self.port} "
                                  f"in {START_TIMEOUT:g} s; {self.log_tail()}")

    def log_tail(self) -> str:
        try:
            lines = [ln for ln in self.log.read_text(errors="replace").splitlines() if ln.strip()]
        except OSError:
            return "(no server log)"
        return " | ".join(lines[-3:])

    # -- use ---------------------------------------------------------------------------------

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A new, empty database; its URL."""
        import psycopg

        with psycopg.connect(host="127.0.0.1", port=self.port, user=SUPERUSER,
                             dbname="postgres", autocommit=True, connect_timeout=10) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    # -- failures ----------------------------------------------------------------------------

    def crash(self) -> None:
        """Every server process ends at once, as in a crash (pg_ctl's immediate mode)."""
        self._run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w",
                   "-t", "20", "stop"], "pg_ctl stop -m immediate", timeout=30)

    def small_tablespace(self, name: str, size: str) -> Path | None:
        """A tablespace ``name`` on a tmpfs of ``size`` (mount's size=, e.g. "1m"), for a disk
        that fills; None when this process may not mount one (it needs CAP_SYS_ADMIN)."""
        import psycopg

        folder = self.root / name
        folder.mkdir()
        owner = self.user or pwd.getpwuid(os.getuid())
        try:
            subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},uid={owner.pw_uid},"
                            f"gid={owner.pw_gid},mode=0700", "tmpfs", str(folder)],
                           check=True, capture_output=True, timeout=20)
        except (OSError, subprocess.SubprocessError):
            return None
        with psycopg.connect(self.url(), autocommit=True, connect_timeout=10) as conn:
            conn.execute(f"CREATE TABLESPACE {name} LOCATION '{folder}'")
        return folder

    def drop_tablespace(self, name: str, folder: Path) -> None:
        import psycopg

        try:
            with psycopg.connect(self.url(), autocommit=True, connect_timeout=10) as conn:
                conn.execute(f"DROP TABLESPACE IF EXISTS {name}")
        finally:
            subprocess.run(["umount", str(folder)], capture_output=True, timeout=20)

    # -- teardown ----------------------------------------------------------------------------

    def _alive(self) -> bool:
        if self.pid is None:
            return False
        try:
            os.kill(self.pid, 0)
        except OSError:
            return False
        return True

    def stop(self) -> None:
        if self.data.is_dir():
            try:
                self._run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w",
                           "-t", "20", "stop"], "pg_ctl stop", timeout=30)
            except PostgresUnavailable:
                pass
        # Only the server this fixture started, by its pid.
        for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 2.0)):
            if not self._alive():
                break
            os.kill(self.pid, sig)
            deadline = time.monotonic() + grace
            while self._alive() and time.monotonic() < deadline:
                time.sleep(0.1)
        for folder in self.root.iterdir() if self.root.is_dir() else ():
            if os.path.ismount(folder):  # a small_tablespace a failed test left mounted
                subprocess.run(["umount", str(folder)], capture_output=True, timeout=20)
        shutil.rmtree(self.root, ignore_errors=True)
