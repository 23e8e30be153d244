"""Every input error: one sentence on stderr, exit code 2, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import FIXTURES, assert_one_line_error, fixture, tcbench
from tcbench_tools.fleet.state import recorded_exit

GOOD = str(fixture("gpu_a.json"))


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("bad")
    files = {
        "not_json": FIXTURES / "bad" / "not_json.json",
        "not_gbench": FIXTURES / "bad" / "not_gbench.json",
        "empty": FIXTURES / "bad" / "empty.json",
        "list": d / "list.json",
        "no_name": d / "no_name.json",
        "binary": d / "binary.json",
        "empty_dir": d / "empty_dir",
    }
    files["list"].write_text("[1, 2]")
    files["no_name"].write_text(json.dumps({"context": {}, "benchmarks": [{"real_time": 1}]}))
    files["binary"].write_bytes(b"\xff\xfe\x00garbage")
    files["empty_dir"].mkdir()
    return files


@pytest.mark.parametrize("command", ["compare-baseline", "compare-candidate", "report"])
@pytest.mark.parametrize("case,needle", [
    ("missing", "no such file or folder"),
    ("not_json", "is not JSON (Expecting value at line 2"),
    ("not_gbench", "is not Google Benchmark output (no 'benchmarks' list)"),
    ("empty", "holds no benchmarks"),
    ("list", "is not Google Benchmark output"),
    ("no_name", "has no name"),
    ("binary", "is not JSON (it is not UTF-8 text)"),
    ("empty_dir", "no results.json and no *.json files"),
])
def test_bad_input_files(bad_files, tmp_path, command, case, needle):
    path = str(tmp_path / "absent.json") if case == "missing" else str(bad_files[case])
    if command == "compare-baseline":
        proc = tcbench("compare", path, GOOD)
    elif command == "compare-candidate":
        proc = tcbench("compare", GOOD, path)
    else:
        proc = tcbench("report", GOOD, path, "--out", str(tmp_path / "r"))
    assert_one_line_error(proc, needle)


@pytest.mark.parametrize("name,text,needle", [
    ("bad_regex.json", json.dumps({"thresholds": {"fp16[": 5}}),
     "is not a valid regular expression"),
    ("bad_value.json", json.dumps({"thresholds": {"fp16": "fast"}}), "is not a percentage"),
    ("negative.json", json.dumps({"thresholds": {"fp16": -3}}), "must be a percentage above 0"),
    ("bad.json", "{nope", "is not valid JSON"),
    ("bad.toml", "[thresholds\n", "is not valid TOML"),
    ("unknown.json", json.dumps({"thresholds": {}, "limit": 3}), "unknown key(s) 'limit'"),
    ("alpha.json", json.dumps({"thresholds": {}, "alpha": 2}), "alpha must be a number"),
])
def test_bad_config_files(tmp_path, name, text, needle):
    config = tmp_path / name
    config.write_text(text)
    assert_one_line_error(tcbench("compare", GOOD, GOOD, "--config", str(config)), needle)


def test_missing_config_and_bad_threshold(tmp_path):
    assert_one_line_error(tcbench("compare", GOOD, GOOD, "--config", str(tmp_path / "x.json")),
                          "cannot read the config file")
    proc = tcbench("compare", GOOD, GOOD, "--threshold", "abc")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "argument --threshold: 'abc' is not a percentage" in proc.stderr
    assert "usage: tcbench compare" in proc.stderr


def test_usage_errors_exit_2_without_traceback():
    for args in (["compare", GOOD], ["frobnicate"], ["run", "--repetitions", "0"], []):
        proc = tcbench(*args)
        assert proc.returncode == 2
        assert "Traceback" not in proc.stderr
        assert "usage: tcbench" in proc.stderr


def test_duplicate_benchmarks_in_a_folder(tmp_path):
    (tmp_path / "a.json").write_text(fixture("gpu_a.json").read_text())
    (tmp_path / "b.json").write_text(fixture("gpu_a.json").read_text())
    assert_one_line_error(tcbench("compare", str(tmp_path), GOOD), "appears in both")


def test_markdown_to_unwritable_place(tmp_path):
    assert_one_line_error(tcbench("compare", GOOD, GOOD, "--markdown",
                                  str(tmp_path / "no" / "such" / "dir.md")), "cannot write")


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
