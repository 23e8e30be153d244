"""study_compare.py, tcbench compare of host studies, and synthetic inputs to compare: two host-only
runs are compared by their values, never by the CPU time the studies took; a study file against a
GPU run is refused in one sentence; a synthetic input is said first, in text and Markdown.
Synthetic result documents (answers_data.py), not measurements."""

from __future__ import annotations

import copy

import answers_data as ad
from conftest import FIXTURES, write

REAL_HOST = {k: v for k, v in ad.HOST_CONTEXT.items() if k != "tcbench_synthetic"}


def studies(tmp_path, name: str, seconds: float, **changes) -> str:
    """A host-only run folder (results/<stamp>/studies.json) whose rows took ``seconds`` each;
    ``changes``: {row index: {counter: value}}."""
    rows = copy.deepcopy(ad.int8_study() + ad.loss_host() + ad.alignment_model())
    for r in rows:
        r["real_time"] = r["cpu_time"] = seconds
    for index, values in changes.get("rows", {}).items():
        rows[index].update(values)
    folder = tmp_path / name
    folder.mkdir()
    write(folder, "studies.json", ad.doc(REAL_HOST, rows))
    return str(folder)


def test_two_host_only_runs_compare_values_not_cpu_time(cli, tmp_path):
    """D2: before, 'FAIL: 54 REGRESSED' from the CPU time of deterministic studies."""
    a = studies(tmp_path, "a", 1e-3)
    b = studies(tmp_path, "b", 3e-3)  # three times the CPU time, the same values
    code, out, err = cli("compare", a, b)
    assert code == 0, (out, err)
    assert "REGRESSED" not in out
    assert out.strip().splitlines()[-1].startswith("tcbench compare: host studies: PASS: all ")
    assert "CPU time is not compared" in out


def test_a_changed_study_value_is_named_and_fails(cli, tmp_path):
    a = studies(tmp_path, "a", 1e-3)
    b = studies(tmp_path, "b", 1e-3, rows={1: {"top1_accuracy_pct": 92.0}})
    code, out, _ = cli("compare", a, b, "--markdown", tmp_path / "cmp.md")
    assert code == 1
    line = next(x for x in out.splitlines() if x.startswith("int8_study/ptq_max/int8"))
    assert "top1_accuracy_pct" in line and "93.1" in line and "92" in line
    assert "CHANGED: 1 of " in out
    assert "CHANGED: 1 of " in (tmp_path / "cmp.md").read_text()
    # A change below the relative tolerance (the last digits of another libm) is the same.
    c = studies(tmp_path, "c", 1e-3, rows={1: {"top1_accuracy_pct": 93.1 * (1 + 1e-9)}})
    assert cli("compare", a, c)[0] == 0


def test_a_study_file_against_a_gpu_run_is_refused_in_one_sentence(cli, tmp_path):
    a = studies(tmp_path, "a", 1e-3)
    code, out, err = cli("compare", a, FIXTURES / "gpu_a.json")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "holds host studies" in err and "a GPU run" in err


def test_compare_says_when_an_input_is_synthetic(cli, tmp_path):
    """§3: before, compare of the (synthetic) fixtures said nothing of it."""
    code, out, _ = cli("compare", FIXTURES / "gpu_a.json", FIXTURES / "gpu_a_single.json",
                       "--markdown", tmp_path / "cmp.md")
    assert out.startswith("SYNTHETIC DATA: the baseline (")
    assert "and the candidate (" in out.splitlines()[0]
    md = (tmp_path / "cmp.md").read_text()
    assert "> **SYNTHETIC DATA: the baseline" in md
    # Host studies too.
    fake = tmp_path / "fake"
    fake.mkdir()
    write(fake, "studies.json", ad.doc(ad.HOST_CONTEXT, ad.int8_study()))
    code, out, _ = cli("compare", fake, fake)
    assert code == 0 and out.startswith("SYNTHETIC DATA: the baseline")


def test_real_inputs_carry_no_banner(cli, tmp_path):
    a = studies(tmp_path, "a", 1e-3)
    assert "SYNTHETIC" not in cli("compare", a, a)[1]


def test_an_impossible_study_value_is_refused_by_the_reader(cli, tmp_path):
    """Issue 44 §2: a NaN or an infinity in a study result read as a value that went (when the
    candidate had it) and a file compared with itself passed on the values left (1 of 3); and an
    accuracy above 100 % (its physical range) passed as a change. Each is one sentence, exit 2."""
    import json

    acc = "top1_accuracy_pct"
    for bad in (float("nan"), float("inf"), -float("inf"), 250.0):
        folder = tmp_path / f"bad{bad}"
        folder.mkdir()
        rows = copy.deepcopy(ad.int8_study()[:3])
        rows[1][acc] = bad
        rows[2][acc] = bad
        (folder / "studies.json").write_text(json.dumps(ad.doc(REAL_HOST, rows)))
        good = studies(tmp_path, f"good{bad}", 1e-3)
        for pair in ((good, folder), (folder, good), (folder, folder)):
            code, out, err = cli("compare", *pair)
            assert code == 2 and out == "", (bad, pair, out, err)
            assert err.count("\n") == 1 and "int8_study/ptq_max/int8" in err, err
            assert "holds a value no study computes (top1_accuracy_pct of " in err, err
