"""Result files of an older tcbench still answer, report and compare.

fixtures/v1 holds a studies.json and a GPU file written at commit 5820cfe (tcbench 0.2), before
files carried tcbench_schema and tcbench_args (fixtures/v1/README.md). They are read by the
schema the tools ship and by their names, and must give what today's files give.
"""

from __future__ import annotations

import json

from conftest import FIXTURES, STORED
from tcbench_tools import schema
from tcbench_tools.results import load

OLD_STUDIES = STORED / "v1" / "studies.json"
OLD_GPU = STORED / "v1" / "gpu_a_single.json"


def test_they_carry_no_schema_and_read_by_the_shipped_one():
    for path in (OLD_STUDIES, OLD_GPU):
        doc = json.loads(path.read_text())
        assert schema.CONTEXT_KEY not in doc["context"]
        assert all(schema.ARGS_KEY not in row for row in doc["benchmarks"])
        rs = load(path)
        assert rs.schema is schema.shipped()
        assert all(b.args is None for b in rs.benchmarks.values())
        assert not [b.impossible() for b in rs.benchmarks.values() if b.impossible()]


def test_names_read_from_an_old_file_are_the_arguments_a_new_one_carries():
    """The same synthetic rows written by 5820cfe's generator and by today's writer: the old
    file's parsed names equal the new file's tcbench_args, row for row."""
    old, new = load(OLD_GPU), load(FIXTURES / "gpu_a_single.json")
    assert old.benchmarks.keys() == new.benchmarks.keys()
    for name, bench in new.benchmarks.items():
        assert bench.args is not None
        assert old.benchmarks[name].parsed == bench.parsed, name
        assert old.benchmarks[name].center() == bench.center() or bench.failed or \
            abs(old.benchmarks[name].center() / bench.center() - 1) < 1e-12


def test_they_answer(cli, tmp_path):
    code, out, err = cli("answers", OLD_STUDIES, OLD_GPU, "--out", tmp_path / "a")
    assert code == 0, err
    got = json.loads((tmp_path / "a" / "answers.json").read_text())
    assert got and "Traceback" not in err
    # The host half is the studies' own: what the real studies give today (test_answers.py).
    text = (tmp_path / "a" / "answers.md").read_text()
    assert "without a GPU" in text


def test_they_report(cli, tmp_path):
    code, _, err = cli("report", OLD_STUDIES, OLD_GPU, "--out", tmp_path / "r")
    assert code == 0, err
    assert "Fixture GPU A" in (tmp_path / "r" / "report.md").read_text()


def test_they_compare_with_themselves_and_with_a_new_file(cli):
    code, out, err = cli("compare", OLD_GPU, FIXTURES / "gpu_a_single.json")
    assert code == 0, err + out
    assert "REGRESSED" not in out and "missing" not in out.lower()
    code, out, err = cli("compare", OLD_STUDIES, OLD_STUDIES)
    assert code == 0, err + out
