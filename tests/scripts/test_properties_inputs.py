"""Property-based tests of the Python tools' URLs and variables: history database URLs (dburl.py;
against nothing, and against the real PostgreSQL the tests start: the secret in them is never
printed), and the TCBENCH_* variables the tools and the wrapper read. Compare's threshold files
are in test_gate.py, history database paths in test_history_databases.py, the C++ binaries'
variables and --benchmark_filter in test_properties_binaries.py. The property is properties.check's.
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

import history_data as hd
import properties as p
from conftest import REPO, fixture

GOOD = fixture("gpu_a_single.json")

# ---------------------------------------------------------------------------------------------
# History database URLs

SECRET = "Pw9Zq"  # every generated password and secret parameter holds it: grep for it
CLOSED = hd.free_port()


@st.composite
def database_url(draw, host_port: str) -> tuple[str, bool]:
    """(a URL, whether it carries SECRET as a password: then no output may show SECRET, not
    even as the database name the server says does not exist)."""
    scheme = draw(st.sampled_from(["postgresql", "postgres", "postgresql+psycopg", "sqlite",
                                   "mysql", "", "Postgresql", "postgresql+asyncpg"])
                  | p.hostile_text)
    slashes = draw(st.sampled_from(["://", "://", ":/", ":", "///"]))
    user = draw(st.sampled_from(["tcbench", "bob", "", "b@b", "a:b"]) | p.hostile_text)
    password = SECRET + draw(st.sampled_from(["", "@x", "@", ":", "/", "%40", "?", "#"])
                             | p.hostile_text)
    userinfo = draw(st.sampled_from([f"{user}:{password}@", f"{user}@", "", f":{password}@"]))
    secret = password in userinfo
    # Mostly hosts that need no name lookup (a resolver that does not answer would make every
    # example wait for it).
    where = draw(p.mostly(st.sampled_from([host_port, "127.0.0.1:notaport", "[::1",
                                           "localhost:99999", f"127.0.0.1:{CLOSED}", ""]),
                          p.hostile_text))
    db = draw(st.sampled_from(["/postgres", "/missing", "/", "", f"/{password}"])
              | p.hostile_text)
    query = draw(st.lists(st.sampled_from(
        [f"password={password}", "sslmode=disable", "sslmode=bogus", f"sslpassword={SECRET}",
         "connect_timeout=abc", "connect_timeout=1", f"token={SECRET}", "options=-c%20x=y",
         f"PassWord={SECRET}"]) | p.hostile_text, max_size=3))
    secret = secret or any(SECRET in q and "=" in q for q in query)
    url = f"{scheme}{slashes}{userinfo}{where}{db}" + ("?" + "&".join(query) if query else "")
    return url, secret


def check_url(o: p.Outcome, url: str, secret: bool) -> None:
    p.check(o, {0, 1, 2}, url)
    if secret:
        assert SECRET not in o.out + o.err, (url, o.out, o.err)


@settings(max_examples=p.examples(40))
@given(generated=database_url(f"127.0.0.1:{CLOSED}"))
# What this test found (each was exit 70): a host IDNA cannot encode, a value that is not UTF-8
# (a command line's bytes), a user's home folder that does not exist; and the password shown
# as the database name.
@example(generated=(f"postgresql://tcbench:{SECRET}@\x85/postgres", True))
@example(generated=(f"\udcff:/tcbench:{SECRET}@127.0.0.1:{CLOSED}/postgres", True))
@example(generated=("~nosuchuser0/h.sqlite", False))
@example(generated=(f"postgresql://tcbench:{SECRET}\x00@127.0.0.1:{CLOSED}/{SECRET}\x00", True))
def test_history_urls(tmp_path, monkeypatch, generated):
    monkeypatch.chdir(p.workdir(tmp_path))  # a URL taken for a path lands here
    check_url(p.run_cli("history", "check", f"--db={generated[0]}"), *generated)
    check_url(p.run_cli("history", "add", GOOD, f"--db={generated[0]}"), *generated)


@settings(max_examples=p.examples(20))
@given(data=st.data())
def test_history_urls_against_the_real_postgresql(tmp_path, postgres, monkeypatch, data):
    """The server answers: unknown roles and databases, a database whose name is the
    password, parameters it refuses, and (trust authentication) a successful add that prints
    the URL, masked."""
    url, secret = data.draw(database_url(f"127.0.0.1:{postgres.port}"))
    monkeypatch.chdir(p.workdir(tmp_path))
    check_url(p.run_cli("history", "add", GOOD, f"--db={url}"), url, secret)
    check_url(p.run_cli("history", "check", f"--db={url}"), url, secret)


# ---------------------------------------------------------------------------------------------
# The TCBENCH_* variables the Python tools read

variable_value = st.one_of(p.hostile_text, st.sampled_from(
    ["skip", "off", "0", "no", "on", "1", "yes", "", "SKIP", "/nonexistent/libcuda.so.1",
     "/dev/null", "/etc/passwd", "/tmp", "libcuda.so.1", "libc.so.6", "x" * 5000,
     f"postgresql://u:{SECRET}@127.0.0.1:{CLOSED}/h"]))


@settings(max_examples=p.examples(30))
@given(probe=variable_value, libcuda=variable_value, repo=variable_value,
       history=variable_value)
@example(probe="", libcuda="\x1b[2K\r", repo="", history="~0")  # found: printed raw; exit 70
def test_tcbench_variables(tmp_path, monkeypatch, probe, libcuda, repo, history):
    """TCBENCH_GPU_PROBE and TCBENCH_LIBCUDA (run's GPU probe), TCBENCH_REPO (where the
    default folders are) and TCBENCH_HISTORY_DB, set at random for run, history and compare."""
    work = p.workdir(tmp_path)
    monkeypatch.chdir(work)
    for name, value in (("TCBENCH_GPU_PROBE", probe), ("TCBENCH_LIBCUDA", libcuda),
                        ("TCBENCH_REPO", repo), ("TCBENCH_HISTORY_DB", history)):
        monkeypatch.delenv(name, raising=False)
        if environment_can_hold(value):
            monkeypatch.setenv(name, value)
    bins = work / "bin"
    bins.mkdir()
    o = p.run_cli("run", "--no-build", "--bin-dir", bins, "--out", work / "out")
    p.check(o, {0, 1, 2, 77}, (probe, libcuda, repo))
    o = p.run_cli("history", "check")
    check_url(o, history, SECRET in history)
    p.check(p.run_cli("compare", GOOD, GOOD), {0})
    assert not any(Path(work).glob("postgres*"))


wrapper_value = st.one_of(p.hostile_text, st.sampled_from(
    ["system", "System", "venv ", "python3", "python2", "/bin/false", "/nonexistent/python",
     "py\x1b[2Kx", "-c", "--version"])).filter(lambda v: environment_can_hold(v))


def environment_can_hold(value: str) -> bool:
    """No NUL, and no surrogate but those that stand for a byte (surrogateescape)."""
    try:
        value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return False
    return "\x00" not in value


@settings(max_examples=p.examples(8))
@given(python=wrapper_value, mode=wrapper_value)
def test_the_wrappers_variables(python, mode):
    """TCBENCH_PYTHON and TCBENCH_PYTHON_ENV, read by scripts/tcbench itself (bash). The mode is
    never 'venv' here: that would (re)build the checkout's environment. Before, the wrapper
    printed a value's escape sequences raw."""
    import subprocess

    if mode in ("venv", ""):
        mode = "system"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TCBENCH_PYTHON")}
    env.update(TCBENCH_PYTHON=python, TCBENCH_PYTHON_ENV=mode)
    encoded = {k: v.encode("utf-8", "surrogateescape") for k, v in env.items()}
    proc = subprocess.run([str(REPO / "scripts" / "tcbench"), "--version"], env=encoded,
                          capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    err = proc.stderr.decode("utf-8", "replace")
    o = p.Outcome(proc.returncode, proc.stdout.decode("utf-8", "replace"), err, [])
    p.check(o, {0, 2}, (python, mode))


@settings(max_examples=p.examples(300))
@given(user=st.sampled_from(["bob", "", "a@b", "x:y"]) | p.hostile_text,
       extra=st.sampled_from(["", "@x", "@", ":", "/", "?", "#", "%40", "&", "="]) | p.hostile_text,
       where=st.sampled_from(["h", "127.0.0.1:5432", "[::1]:1", "", "h/db"]) | p.hostile_text,
       query=st.sampled_from(["", "?sslmode=disable", "?a=1&"]) | p.hostile_text,
       place=st.sampled_from(["userinfo", "password", "sslpassword", "Token", "both"]))
def test_the_masked_url_never_shows_the_password(user, extra, where, query, place):
    """The one masked form, and the scrubbed driver message, never hold the password, whatever
    surrounds it (pure functions: many examples in little time)."""
    from tcbench_tools.history import dburl

    password = SECRET + extra
    url = f"postgresql://{user}:{password}@{where}/db{query}"
    if place != "userinfo":
        url = f"postgresql://{user}@{where}/db?sslmode=disable&{place}={password}"
        if place == "both":
            url = f"postgresql://{user}:{password}@{where}/db?password={password}"
    shown = dburl.masked(url)
    assert SECRET not in shown, (url, shown)
    message = f'connection to "{where}" failed: FATAL: role "{password}" / "{extra}" refused'
    assert SECRET not in dburl.scrub(message, dburl.secrets(url)), url
    assert dburl.masked(shown) == shown  # masking is idempotent
