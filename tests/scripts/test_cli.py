"""The command line (cli.py, arguments.py): usage errors exit 2 in one sentence without a
traceback, every help lists its exit codes, a mistyped word gets a guess, and counts are ASCII."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import assert_one_line_error, fixture, make_fake, tcbench
from tcbench_tools.fleet.state import recorded_exit

GOOD = str(fixture("gpu_a.json"))


def test_usage_errors_exit_2_without_traceback():
    for args in (["compare", GOOD], ["frobnicate"], ["run", "--repetitions", "0"], []):
        proc = tcbench(*args)
        assert proc.returncode == 2
        assert "Traceback" not in proc.stderr
        assert "usage: tcbench" in proc.stderr


def _parsers():
    """Every command and sub-command's parser, by its command line."""
    import argparse

    from tcbench_tools.cli import build_parser

    todo = [("tcbench", build_parser())]
    while todo:
        name, parser = todo.pop()
        yield name, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo += [(f"{name} {sub}", p) for sub, p in action.choices.items()]


def test_every_help_lists_its_exit_codes():
    """Before: test, report and model listed none; history add listed check's exit 1."""
    seen = dict(_parsers())
    assert len(seen) == 18  # tcbench, 9 commands, 8 actions of model, fleet and history
    for name, parser in seen.items():
        help_text = parser.format_help()
        assert "Exit codes: 0 " in help_text, name
        if name in ("tcbench history add", "tcbench history dashboard"):
            assert "1 (check)" not in help_text, name
    dashboard = seen["tcbench history dashboard"].format_help()
    assert "--out DIR  folder for index.html" in " ".join(dashboard.split()).replace(
        "DIR folder", "DIR  folder")


@pytest.mark.parametrize("argv,hint", [
    (["rnu"], "invalid choice: 'rnu' (choose from 'test', 'run', "),
    (["run", "--qiuck"], "tcbench run: error: unrecognized arguments: --qiuck (did you mean "
                         "'--quick'?)"),
    (["history", "ad"], "(did you mean 'add'?)"),
    (["history", "add", "r", "--bd", "x"], "tcbench history add: error: unrecognized arguments: "
                                           "--bd x (did you mean '--db'?)"),
    (["fleet", "colect", "d"], "(did you mean 'collect'?)"),
    (["run", "--clock-policy", "mx"], "(did you mean 'max'?)"),
    (["compare", "a", "b", "--treshold=3"], "(did you mean '--threshold'?)"),
])
def test_a_mistyped_command_or_option_gets_did_you_mean(capsys, argv, hint):
    from tcbench_tools.cli import main

    with pytest.raises(SystemExit) as stop:
        main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and hint in err, err
    assert err.count("did you mean") == 1 and err.startswith(f"usage: tcbench {argv[0]}"
                                                               if argv[0] != "rnu" else "usage:")


def test_an_option_nothing_resembles_gets_no_guess(capsys):
    from tcbench_tools.cli import main

    with pytest.raises(SystemExit):
        main(["run", "--zzzz"])
    assert capsys.readouterr().err.endswith("tcbench run: error: unrecognized arguments: --zzzz\n")


# Integers the tools read are ASCII digits (the command line took "٣" for 3), and counts that
# cannot be zero are refused (--gres gpu:0: test_fleet_slurm.py).
NOT_ASCII = ["²", "٣", "３", "1_000", " 7", "+7", "-1", "7\n", "", "1" * 19]


@pytest.mark.parametrize("text", NOT_ASCII)
def test_integers_are_ascii_digits(text):
    from tcbench_tools.arguments import ascii_int

    assert ascii_int(text) is None
    assert recorded_exit({"exit": text}) is None or text.strip() != text
    assert ascii_int("0") == 0 and ascii_int("41") == 41 and ascii_int("1" * 18) == int("1" * 18)


@pytest.mark.parametrize("args", [
    ["fleet", "submit", "--partition", "a", "--nodes-per-partition", "٣"],
    ["fleet", "submit", "--partition", "a", "--nodes-per-partition", "0"],
    ["history", "check", "--window", "３"],
    ["history", "check", "--window", "0"],
    ["run", "--repetitions", "٣"],
    ["profile", "x", "--launch-count", "²"],
])
def test_counts_on_the_command_line_are_ascii_and_not_zero(cli, capsys, args):
    with pytest.raises(SystemExit) as exc:
        cli(*args)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "is not a whole number (digits 0-9)" in err or "must be" in err


def unwritable_dir(tmp_path: Path) -> Path | None:
    """A folder this process cannot create files in (root ignores permission bits: /sys then)."""
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        return locked
    probe = Path("/sys/tcbench-probe")
    try:
        probe.mkdir()
    except OSError:
        return Path("/sys")
    probe.rmdir()
    return None


@pytest.mark.parametrize("command", ["report", "run"])
@pytest.mark.parametrize("where", ["a file", "under a file", "read-only"])
def test_an_unusable_out_folder_is_one_sentence(tmp_path, command, where):
    a_file = tmp_path / "taken"
    a_file.write_text("x")
    if where == "a file":
        out = a_file
    elif where == "under a file":
        out = a_file / "sub"
    else:
        parent = unwritable_dir(tmp_path)
        if parent is None:
            pytest.skip("no unwritable folder on this machine")
        out = parent / "out"
    if command == "report":
        proc = tcbench("report", GOOD, "--out", str(out))
        assert_one_line_error(proc, "cannot write the report into")
    else:
        bins = tmp_path / "bin"
        make_fake(bins, "bench_int8_gemm", topic="int8_gemm")
        proc = tcbench("run", "--bin-dir", str(bins), "--out", str(out))
        assert_one_line_error(proc, f"cannot use {out} as the output folder")
