"""The history's database URLs: their password is never printed.

Every failing (and succeeding) history command is run with URLs that carry a secret in each way
a user writes one: the user info, libpq's ``?password=`` and ``?sslpassword=``, a URL that does
not parse, an SQLite URL with user info, a password with an unencoded ``@`` (which libpq reads as
part of the host name and prints), a percent-encoded password, a URL that lost its scheme. Every
output stream (stdout, stderr, files written) is searched for every piece of the secret. Before
the fix, the unparsable URL and the ``?password=`` value were printed raw, the unencoded ``@``
leaked the password's second half as the host name, the SQLite URL was an internal error, and a
URL without ``//`` became a file of that name, printed in full.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest

import history_data as hd
from conftest import REPO, fixture

SECRET = "Zq7s3cretPW"
SPLIT = ("Zq7s3c", "retPWx9")  # a password with an unencoded '@': Zq7s3c@retPWx9
ENCODED = "Zq7s3c@et/PW"  # written percent-encoded in the URL
CLOSED = hd.free_port()


def secret_pieces() -> tuple[str, ...]:
    return (SECRET, "@".join(SPLIT), *SPLIT, ENCODED, quote(ENCODED, safe=""), "s3cret", "retPW")


def failing_urls(tmp: Path) -> list[str]:
    return [
        f"postgresql://bob:{SECRET}@localhost:notaport/db",  # does not parse
        f"postgresql://bob@127.0.0.1:{CLOSED}/db?password={SECRET}",  # libpq's query parameter
        f"postgresql://bob@127.0.0.1:{CLOSED}/db?sslmode=disable&sslpassword={SECRET}",
        f"postgresql://bob:{SECRET}@127.0.0.1:{CLOSED}/db",  # connection refused
        f"postgresql://bob:{'@'.join(SPLIT)}@127.0.0.1:{CLOSED}/db",  # unencoded @
        f"postgresql://bob:{quote(ENCODED, safe='')}@127.0.0.1:{CLOSED}/db",
        f"postgres://bob:{SECRET}@[::1/db",  # a broken IPv6 literal
        f"postgresql://bob:{SECRET}@127.0.0.1:{CLOSED}/db?connect_timeout=soon",
        f"sqlite://bob:{SECRET}@/{tmp}/h.sqlite",  # an SQLite URL with user info
        f"mysql://bob:{SECRET}@dbhost/history",
        f"bob:{SECRET}@dbhost/history",  # a URL without its scheme
        f"postgresql:/bob:{SECRET}@dbhost/history",  # ... or without its //
    ]


def leaks(text: str) -> list[str]:
    return [s for s in secret_pieces() if s in text]


def fleet_folder(root: Path) -> Path:
    """A fleet folder whose one task finished (its record says exit 0), and an squeue on PATH
    that lists nothing, so that collect needs no cluster."""
    (root / "_fleet" / "tasks").mkdir(parents=True)
    (root / "a100" / "node1-0").mkdir(parents=True)
    shutil.copy(fixture("gpu_c.json"), root / "a100" / "node1-0" / "results.json")
    (root / "_fleet" / "tasks" / "100_0").write_text(
        "partition=a100\nnode=node1\ngpu=0\ngpu_name=Fixture GPU C\nfolder=a100/node1-0\nexit=0\n")
    (root / "_fleet" / "manifest.json").write_text(json.dumps(
        {"version": 1, "settings": {}, "jobs": [{"partition": "a100", "job_id": "100",
                                                 "tasks": 1}]}))
    return root


@pytest.fixture
def quiet_slurm(tmp_path, monkeypatch):
    tools = tmp_path / "slurm-bin"
    tools.mkdir()
    (tools / "squeue").write_text("#!/bin/sh\nexit 0\n")
    (tools / "squeue").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")


def commands(tmp_path: Path, url: str) -> list[list[str]]:
    return [["history", "add", str(fixture("gpu_a.json")), "--db", url],
            ["history", "check", "--db", url],
            ["history", "check", "--json", "--db", url],
            ["history", "dashboard", "--db", url, "--out", str(tmp_path / "dash")]]


def test_fleet_collect_checks_the_history_url_before_it_writes_the_report(cli, tmp_path,
                                                                         quiet_slurm):
    fleet_folder(tmp_path / "fleet")
    code, out, err = cli("fleet", "collect", tmp_path / "fleet", "--out", tmp_path / "report",
                         "--history", f"postgresql://bob:{SECRET}@localhost:notaport/db")
    assert code == 2 and not (tmp_path / "report").exists() and not leaks(out + err)


def written(tmp_path: Path) -> str:
    """Every file the commands wrote (reports, dashboards, databases, stray files)."""
    out = []
    for path in tmp_path.rglob("*"):
        if path.is_file() and "fixtures" not in path.parts:
            out.append(str(path.relative_to(tmp_path)))
            out.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(out)


def test_no_failing_history_command_prints_the_secret(cli, tmp_path, quiet_slurm, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a URL taken for a path would land here
    fleet_folder(tmp_path / "fleet")
    before = written(tmp_path)
    for url in failing_urls(tmp_path):
        for args in commands(tmp_path, url):
            code, out, err = cli(*args)
            assert code == 2, (url, args, code, err)
            lines = err.strip().splitlines()
            assert lines and lines[-1].startswith("tcbench: ") and "internal error" not in err
            assert not leaks(out + err), (url, args, out, err)
        # The same through the environment variable (a CI secret), and --db not given.
        monkeypatch.setenv("TCBENCH_HISTORY_DB", url)
        for args in (["history", "add", str(fixture("gpu_a.json"))], ["history", "check"]):
            code, out, err = cli(*args)
            assert code == 2 and not leaks(out + err), (url, out, err)
        monkeypatch.delenv("TCBENCH_HISTORY_DB")
    # fleet collect --history: a URL that parses is used after the report is written (slow),
    # so two of them: a refused connection with ?password=, and the unencoded '@'.
    for url in (f"postgresql://bob@127.0.0.1:{CLOSED}/db?password={SECRET}",
                f"postgresql://bob:{'@'.join(SPLIT)}@127.0.0.1:{CLOSED}/db"):
        code, out, err = cli("fleet", "collect", tmp_path / "fleet", "--out",
                             tmp_path / "report", "--history", url)
        assert code == 2 and not leaks(out + err), (url, out, err)
    assert not leaks(written(tmp_path).replace(before, ""))
    assert not any(p.name.startswith(("bob", "postgresql")) for p in tmp_path.iterdir())


def test_the_masked_form_is_the_one_printed(cli, tmp_path):
    code, _, err = cli("history", "check", "--db",
                       f"postgresql://bob:{SECRET}@localhost:notaport/db")
    assert err.strip() == ("tcbench: postgresql://bob:***@localhost:notaport/db is not a "
                           "database URL (use sqlite:///PATH, postgresql://USER@HOST/DB or a "
                           "file path).")
    code, _, err = cli("history", "check", "--db",
                       f"postgresql://bob@127.0.0.1:{CLOSED}/db?sslmode=disable&password={SECRET}")
    assert err.startswith(f"tcbench: cannot use the history database postgresql://bob@127.0.0.1:"
                          f"{CLOSED}/db?sslmode=disable&password=***: ")
    code, _, err = cli("history", "check", "--db",
                       f"postgresql://bob:{'@'.join(SPLIT)}@127.0.0.1:{CLOSED}/db")
    assert err.strip() == (f"tcbench: postgresql://bob:***@127.0.0.1:{CLOSED}/db holds an '@' in "
                           "its user info that is not percent-encoded: write an '@' of the user "
                           "name or password as %40.")
    code, _, err = cli("history", "check", "--db", f"sqlite://bob:{SECRET}@/{tmp_path}/h.sqlite")
    assert code == 2 and "names a user or host, which an SQLite database has not" in err
    assert not (tmp_path / "h.sqlite").exists()


def test_a_mistyped_option_is_masked_too(tmp_path):
    """argparse quotes what it refuses: --dbb=URL is echoed, masked."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "scripts"))
    proc = subprocess.run([sys.executable, "-m", "tcbench_tools", "history", "check",
                           f"--dbb=postgresql://bob:{SECRET}@dbhost/h?password={SECRET}"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 2
    assert "--dbb=postgresql://bob:***@dbhost/h?password=***" in proc.stderr
    assert not leaks(proc.stdout + proc.stderr)


def test_the_secret_stays_out_of_a_real_servers_answers(cli, tmp_path, postgres, pg_url,
                                                        monkeypatch):
    """Against the real PostgreSQL the tests start (trust authentication: any password is
    taken): the successful commands print the masked URL, and the server's own refusals (an
    unknown database whose name is the password, an unknown role) are scrubbed of it."""
    monkeypatch.chdir(tmp_path)
    host = f"127.0.0.1:{postgres.port}"
    db = pg_url.rsplit("/", 1)[1]
    url = f"postgresql://tcbench:{SECRET}@{host}/{db}?sslmode=disable&password={SECRET}"
    code, out, err = cli("history", "add", fixture("gpu_a.json"), "--db", url)
    assert code == 0, err
    assert out.startswith("tcbench history: 1 run(s) added") and \
        f"in postgresql://tcbench:***@{host}/{db}?sslmode=disable&password=***." in out
    for args in (["check"], ["check", "--json"], ["dashboard", "--out", str(tmp_path / "d")]):
        code, out, err = cli("history", *args, "--db", url)
        assert code == 0 and not leaks(out + err), (args, out, err)
    refusals = [f"postgresql://tcbench:{SECRET}@{host}/{SECRET}",  # 'database "..." ...'
                f"postgresql://{SECRET}@{host}/{db}?password={SECRET}",  # no such role
                f"postgresql://tcbench:{'@'.join(SPLIT)}@{host}/{db}"]
    for bad in refusals:
        for args in (["add", str(fixture("gpu_b.json"))], ["check"]):
            code, out, err = cli("history", *args, "--db", bad)
            assert code == 2 and "internal error" not in err, (bad, err)
            assert not leaks(out + err), (bad, out, err)
    assert not leaks(written(tmp_path))


def test_in_a_separate_process_through_the_environment(tmp_path):
    """As CI runs it: the secret in TCBENCH_HISTORY_DB, the streams of a real process."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "scripts"),
               TCBENCH_HISTORY_DB=f"postgresql://bob:{'@'.join(SPLIT)}@127.0.0.1:{CLOSED}/h"
                                  f"?password={SECRET}")
    for args in (["history", "add", str(fixture("gpu_a.json"))], ["history", "check"]):
        proc = subprocess.run([sys.executable, "-m", "tcbench_tools", *args], capture_output=True,
                              text=True, env=env, cwd=tmp_path, timeout=60)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
        assert not leaks(proc.stdout + proc.stderr), proc.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("given, shown", [
    ("postgresql://u:p4ssword@h:5432/db", "postgresql://u:***@h:5432/db"),
    ("postgresql://u@h/db?sslmode=require&PassWord=x&pwd=y&token=z&sslpassword=w&application_name=a",
     "postgresql://u@h/db?sslmode=require&PassWord=***&pwd=***&token=***&sslpassword=***"
     "&application_name=a"),
    ("postgresql://u:a@b@h/db", "postgresql://u:***@h/db"),  # the last @ ends the user info
    ("postgresql://a@b@h/db", "postgresql://***@h/db"),  # user and password cannot be told apart
    ("postgresql:///db?host=/run/pg&password=x", "postgresql:///db?host=/run/pg&password=***"),
    ("sqlite:////tmp/a@b.sqlite", "sqlite:////tmp/a@b.sqlite"),  # no authority: a path
    ("/home/bob@corp/h.sqlite", "/home/bob@corp/h.sqlite"),
    ("u:secret@h/db", "u:***@h/db"),
    ("postgresql://u:p\x1b[2K@h/db", "postgresql://u:***@h/db"),
    ("postgresql://h/d\x1b[2Kx", "postgresql://h/d\\x1b[2Kx"),
])
def test_masked_forms(given, shown):
    from tcbench_tools.history import dburl

    assert dburl.masked(given) == shown
    assert dburl.masked(dburl.masked(given)) == shown  # masking a masked form changes nothing
