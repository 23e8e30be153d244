"""Issue 34 section 4: dates, ids and counts that cannot be are one sentence, in every reader.

A context date in year 1 or 9999 was exit 70 (converting it to UTC overflowed); a manifest job
id of "²" passed ``str.isdigit()`` and the task was reported "lost"; a Slurm line or a task
record whose number was not ASCII either crashed (``int("²")``) or read as another number
(``int("٣")`` is 3); and the command line took "٣" for 3. Integers the tools read are ASCII
digits, and counts that cannot be zero are refused (--gres gpu:0: test_fleet_slurm.py).
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from conftest import load_doc, write
from tcbench_tools.errors import exit_text
from tcbench_tools.fleet import slurm
from tcbench_tools.fleet.state import PartitionJob, recorded_exit, write_manifest

NOT_ASCII = ["²", "٣", "３", "1_000", " 7", "+7", "-1", "7\n", "", "1" * 19]


@pytest.mark.parametrize("date, words", [
    ("0001-01-01T00:00:00", "lies outside the years 2000-2099 (UTC)"),
    ("0001-01-01T00:00:00+05:00", "lies outside the years a date can hold once converted to UTC"),
    ("9999-12-31T23:59:59-05:00", "lies outside the years a date can hold once converted to UTC"),
    ("9999-12-31T23:59:59", "lies outside the years 2000-2099 (UTC)"),
    ("1999-12-31T23:30:00-01:00", None),  # 2000-01-01 00:30 UTC: stored
    ("1999-12-31T23:30:00+00:00", "lies outside the years 2000-2099 (UTC)"),
    ("2100-01-01T00:00:00", "lies outside the years 2000-2099 (UTC)"),
    ("2026-13-01T00:00:00", "is not an ISO 8601 time"),
    ("2026-01-01T00:00:00+24:00", "is not an ISO 8601 time"),
])
def test_a_date_is_one_sentence_or_a_stored_run(cli, tmp_path, date, words):
    doc = load_doc("gpu_a.json")
    doc["context"]["date"] = date
    db = tmp_path / "h.sqlite"
    code, out, err = cli("history", "add", write(tmp_path, "d.json", doc), "--db", db)
    if words is None:
        assert code == 0, err
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT time FROM runs").fetchone()[0].startswith(
                "2000-01-01 00:30:00")
        return
    assert code == 2 and err.count("\n") == 1, err
    assert words in err and repr(date) in err
    assert not db.exists()


@pytest.mark.parametrize("text", NOT_ASCII)
def test_integers_are_ascii_digits(text):
    from tcbench_tools.arguments import ascii_int

    assert ascii_int(text) is None
    assert recorded_exit({"exit": text}) is None or text.strip() != text
    assert ascii_int("0") == 0 and ascii_int("41") == 41 and ascii_int("1" * 18) == int("1" * 18)


@pytest.mark.parametrize("job_id", ["²", "٣", "0", " 41", "41\n", "4_1", -41, 0, "", "x"])
def test_a_manifest_job_id_that_is_not_a_slurm_job_id_is_refused(cli, tmp_path, job_id):
    root = tmp_path / "fleet"
    (root / "_fleet").mkdir(parents=True)
    write_manifest(root, [PartitionJob("a100", "41", 1)], {})
    path = root / "_fleet" / "manifest.json"
    doc = json.loads(path.read_text())
    doc["jobs"][0]["job_id"] = job_id
    path.write_text(json.dumps(doc))
    for action in ("status", "collect"):
        code, out, err = cli("fleet", action, root)
        assert code == 2 and err.count("\n") == 1, (job_id, err)
        assert "is not a Slurm job id (a whole number from 1, in digits 0-9)" in err


@pytest.mark.parametrize("partition", ["a100\n", "a100\nx", "a 100"])
def test_a_partition_name_with_a_newline_is_refused(cli, tmp_path, partition):
    """"$" matches before a final newline: "a100\\n" passed the partition pattern."""
    if partition.strip() != "a100":  # submit strips the names it is given
        code, out, err = cli("fleet", "submit", "--partition", partition, "--out",
                             tmp_path / "f")
        assert code == 2 and "is not a Slurm partition name" in err and "\n" not in err.strip()
    root = tmp_path / "fleet"
    (root / "_fleet").mkdir(parents=True)
    write_manifest(root, [PartitionJob(partition, "41", 1)], {})
    code, out, err = cli("fleet", "status", root)
    assert code == 2 and "is not a Slurm partition name" in err


def test_slurm_output_with_numbers_that_are_not_ascii_is_not_a_task():
    assert slurm.parse_sacct("٤١_٠|COMPLETED|0:0|n1\n41_²|FAILED|1:0|n1\n41_0|FAILED|٣:0|n1\n") \
        == {("41", 0): slurm.FinalRecord("FAILED", None, None, "n1", "sacct")}
    text = "JobId=1 ArrayJobId=41 ArrayTaskId=² JobState=FAILED ExitCode=1:0 NodeList=n1\n"
    assert slurm.parse_scontrol(text) == {}


def test_squeue_lines_with_numbers_that_are_not_ascii_are_skipped(cli, tmp_path, monkeypatch):
    """Before: int("²") in the queue reader, exit 70."""
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "squeue").write_text("#!/bin/sh\necho '41|²|RUNNING|n1|None'\n"
                                  "echo '41|٣|RUNNING|n1|None'\necho '41|0|PENDING||Priority'\n")
    (tools / "squeue").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:/usr/bin:/bin")
    root = tmp_path / "fleet"
    (root / "_fleet").mkdir(parents=True)
    write_manifest(root, [PartitionJob("a100", "41", 1)], {})
    code, out, err = cli("fleet", "status", root)
    assert code == 0, err
    assert "1 task(s): 1 pending." in out


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


def test_a_device_index_in_other_digits_is_refused(cli, tmp_path):
    code, out, err = cli("run", "--no-build", "--bin-dir", tmp_path, "--device", "٣",
                         "--out", tmp_path / "o")
    assert code == 2 and "is neither a GPU index (0, 1, ...) nor a UUID" in err


def test_a_recorded_exit_in_other_digits_is_not_a_number():
    assert exit_text("٣") == "exit ٣" and exit_text("-9") == "killed by signal 9 (SIGKILL)"
    assert exit_text("3") == "exit 3"


def test_a_task_record_whose_exit_is_not_ascii_is_a_failure_not_done(tmp_path):
    from tcbench_tools.fleet.state import FAILED, Manifest, resolve

    job = PartitionJob("a100", "41", 1)
    (tmp_path / "_fleet" / "logs").mkdir(parents=True)
    m = Manifest(tmp_path, [job])
    t = resolve(m, job, 0, {"partition": "a100", "folder": "a100/n-0", "exit": "٠"}, None, None)
    assert t.state == FAILED and t.exit_code is None  # "٠" read as 0 before: "done"


def test_a_context_number_in_other_digits_is_not_a_run_value(cli, tmp_path):
    doc = load_doc("gpu_a.json")
    doc["context"].update({"sm_count": "١٣٢", "fans": "1_000", "clock": "nan", "ok": "1.5e3"})
    db = tmp_path / "h.sqlite"
    assert cli("history", "add", write(tmp_path, "c.json", doc), "--db", db)[0] == 0
    with sqlite3.connect(db) as conn:
        values = dict(conn.execute("SELECT key, value FROM run_values"))
    assert values["ok"] == 1500.0
    assert "sm_count" not in values and "fans" not in values and "clock" not in values


@pytest.mark.parametrize("field", ["iterations", "repetitions", "threads"])
def test_a_count_of_zero_in_a_results_row_is_refused(cli, tmp_path, field):
    """Before: a measured row with 0 iterations (or 0 repetitions, 0 threads) was compared as
    any other; an error or skip row may still say 0 iterations, as Google Benchmark writes it."""
    doc = load_doc("gpu_a_single.json")
    doc["benchmarks"][0][field] = 0
    code, out, err = cli("compare", write(tmp_path, "z.json", doc), write(tmp_path, "z.json", doc))
    assert code == 2 and f"has {field} 0, which no run of a benchmark gives" in err, err
    assert err.count("\n") == 1
    ok = load_doc("gpu_a_single.json")
    assert any(r.get("error_occurred") and r["iterations"] == 0 for r in ok["benchmarks"])
    assert cli("compare", write(tmp_path, "ok.json", ok), write(tmp_path, "ok.json", ok))[0] == 0
