"""Property-based tests of the other readers of outside input (issue 34 section 5): compare's
threshold files (TOML and JSON, with patterns that could backtrack for ever), history database
URLs (against nothing, and against the real PostgreSQL the tests start: the secret in them is
never printed), history database paths (what lies at the path and beside it: folders, sockets,
devices, link loops, damaged files, SQLite's side files of any kind), and the TCBENCH_*
variables the Python tools read. The C++ binaries' variables
and --benchmark_filter are in test_properties_binaries.py. The property is properties.check's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

import history_data as hd
import properties as p
from conftest import REPO, fixture

GOOD = fixture("gpu_a_single.json")

# ---------------------------------------------------------------------------------------------
# compare --config

PATTERNS = ["^fp16_vs_fp32/", "(a+)+$", "(.|x)*z", ".*.*.*x", "(a)\\1", "(?=x)", "[", "(",
            "\\", "a{1000000}", "(a{0,255}){255}", "x" * 1001, "(?P<n>a)(?P=n)", "\x00",
            "cublaslt/(fp16|bf16)/m:4096", "/m:[0-9]+/n:[0-9]+", "(" * 200 + ")" * 200,
            "[\\d]{1,3}", "(?i)FP16", "$^", "\\b\\B"]
KEYS = ["default", "alpha", "thresholds", "allow_missing", "allow_skipped",
        "allow_not_comparable", "allow_throttled"]


def toml_value(value) -> str:
    """A TOML literal for value (strings as basic strings, escaped as JSON does)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value) if value == value and abs(value) != float("inf") else "nan"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(str(value))


threshold_value = st.one_of(st.integers(-5, 2000), st.floats(allow_nan=True), st.sampled_from(
    ["5%", "5", "-1%", "0%", "1e999", "abc", "", "%"]) | p.hostile_text, st.booleans(),
    st.lists(st.integers(), max_size=2))


@st.composite
def config(draw):
    doc = {}
    for key in draw(st.lists(st.sampled_from(KEYS) | p.hostile_text, max_size=4)):
        if key == "thresholds":
            doc[key] = draw(st.dictionaries(st.sampled_from(PATTERNS) | p.hostile_text,
                                            threshold_value, max_size=4))
        else:
            doc[key] = draw(threshold_value | p.json_leaf)
    how = draw(st.sampled_from(["toml", "toml", "json", "text"]))
    if how == "text":
        return "gate.toml", draw(st.text(max_size=80)).encode("utf-8", "surrogatepass")
    if how == "json":
        return "gate.json", json.dumps(doc).encode()
    lines = []
    for key, value in doc.items():
        if isinstance(value, dict):
            lines.append(f"[{json.dumps(str(key))}]")
            lines += [f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in value.items()]
        else:
            lines.insert(0, f"{json.dumps(str(key))} = {toml_value(value)}")
    return "gate.toml", "\n".join(lines).encode("utf-8", "surrogatepass")


@settings(max_examples=p.examples(40))
@given(generated=config())
def test_compare_config(tmp_path, generated):
    name, data = generated
    path = p.workdir(tmp_path) / name
    path.write_bytes(data)
    o = p.run_cli("compare", GOOD, GOOD, "--config", path, seconds=20)
    p.check(o, {0, 1, 2}, data[:200])


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
# History database paths: whatever lies at the path (and beside it, as SQLite's journal, WAL and
# shared-memory files), history add and check end with a result or one sentence, at once.

_GOOD_DB: list[bytes] = []  # a real history (one run), made once


def good_history(tmp: Path) -> bytes:
    if not _GOOD_DB:
        db = tmp / "good.sqlite"
        o = p.run_cli("history", "add", GOOD, "--db", db)
        assert o.code == 0, o.err
        _GOOD_DB.append(db.read_bytes())
    return _GOOD_DB[0]


# What a path may hold. A FIFO is left to test_history_databases.py, which tries it in a
# separate process: a reader that opened one would wait in C code, where no time limit of this
# process reaches it.
MAIN_KINDS = ["none", "empty", "bytes", "header", "history", "damaged history", "folder",
              "socket", "device", "loop", "loop of two", "dangling link", "link to a history",
              "under a file", "under a loop"]
SIDE_KINDS = ["none", "none", "none", "bytes", "empty", "folder", "socket", "device", "loop"]


def make_kind(path: Path, kind: str, data: bytes, good: bytes) -> Path:
    """Something of ``kind`` at ``path``; the path --db should name (it may lie below)."""
    import socket

    if kind in ("bytes", "empty"):
        path.write_bytes(data if kind == "bytes" else b"")
    elif kind == "header":
        path.write_bytes(b"SQLite format 3\x00" + data)
    elif kind == "history":
        path.write_bytes(good)
    elif kind == "damaged history":
        raw = bytearray(good)
        for i, byte in enumerate(data[:64]):  # bytes overwritten past the 100-byte header
            raw[100 + (byte * 997 + i * 4099) % (len(raw) - 100)] = byte
        path.write_bytes(bytes(raw))
    elif kind == "folder":
        path.mkdir()
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        sock.close()
    elif kind == "device":
        path.symlink_to("/dev/zero" if len(data) % 2 else "/dev/null")
    elif kind == "loop":
        path.symlink_to(path)
    elif kind == "loop of two":
        path.symlink_to(path.with_name("other"))
        path.with_name("other").symlink_to(path)
    elif kind == "dangling link":
        path.symlink_to(path.with_name("missing") / "h.sqlite")
    elif kind == "link to a history":
        path.with_name("real.sqlite").write_bytes(good)
        path.symlink_to(path.with_name("real.sqlite"))
    elif kind == "under a file":
        path.write_bytes(data)
        return path / "h.sqlite"
    elif kind == "under a loop":
        path.symlink_to(path)
        return path / "h.sqlite"
    return path


@settings(max_examples=p.examples(60))
@given(main=st.sampled_from(MAIN_KINDS), sides=st.lists(st.sampled_from(SIDE_KINDS),
                                                          min_size=3, max_size=3),
       data=st.binary(max_size=300), as_url=st.booleans())
# What it found: before, a link loop was exit 70 (RuntimeError from Path.resolve).
@example(main="loop", sides=["none"] * 3, data=b"", as_url=False)
@example(main="history", sides=["device", "none", "none"], data=b"", as_url=False)
def test_history_database_paths(tmp_path, main, sides, data, as_url):
    work = p.workdir(tmp_path)
    db = make_kind(work / "h.sqlite", main, data, good_history(tmp_path))
    for end, kind in zip(("-journal", "-wal", "-shm"), sides):
        side = Path(f"{db}{end}")
        if kind != "none" and side.parent.is_dir() and not os.path.lexists(side):
            make_kind(side, kind, data, b"")
    given_db = f"sqlite:///{db}" if as_url else str(db)
    for command in (["check"], ["add", GOOD]):
        o = p.run_cli("history", *command, "--db", given_db, seconds=20)
        p.check(o, {0, 2}, (main, sides, command))


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
