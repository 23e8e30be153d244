"""answers/render.py, what tcbench answers writes: two runs of one GPU model are two rows, labelled
as the report labels them; a synthetic input is marked in the console, Markdown, HTML and JSON;
"holds" carries notes, never caveats, in the JSON; answers.md's links work from the folder it is
written to, and answers.html links the concept pages. Synthetic result documents
(answers_data.py), not measurements."""

from __future__ import annotations

import json
import re
from pathlib import Path

import answers_data as ad
from conftest import FIXTURES, REPO, write
from tcbench_tools.answers import HOLDS, answer_all, render
from tcbench_tools.answers.model import unit_of
from tcbench_tools.results import load, parse_doc

REAL = {k: v for k, v in ad.GPU_CONTEXT.items() if k != "tcbench_synthetic"}


def two_runs_of_one_model(tmp_path: Path) -> list[Path]:
    paths = []
    for night, speedup in (("night-1", 1.8), ("night-2", 1.005)):
        folder = tmp_path / night
        folder.mkdir()
        paths.append(write(folder, "results.json", ad.doc(REAL, ad.int8_gpu(speedup=speedup))))
    return paths


def test_two_runs_of_one_gpu_model_are_two_rows_labelled_as_the_report_labels_them(cli,
                                                                                   tmp_path):
    """Before: both runs were "Answers GPU" and the second run's verdict disappeared."""
    a, b = two_runs_of_one_model(tmp_path)
    code, out, err = cli("answers", a, b, "--json", "--out", tmp_path / "out")
    assert code == 0, err
    q1 = [q for q in json.loads(out)["questions"] if q["id"] == "q1" and q["scope"] == "gpu"]
    assert [(q["label"], q["verdict"]) for q in q1] == [
        ("Answers GPU (night-1)", "holds"), ("Answers GPU (night-2)", "does not hold here")]
    assert all(q["gpu"] == "Answers GPU" for q in q1)
    md = (tmp_path / "out" / "answers.md").read_text()
    table = [line for line in md.splitlines() if line.startswith("| Answers GPU")]
    assert [line.split(" | ")[:2] for line in table] == [
        ["| Answers GPU (night-1)", "holds"], ["| Answers GPU (night-2)", "does not hold here"]]
    html = (tmp_path / "out" / "answers.html").read_text()
    assert "Answers GPU (night-1)" in html and "Answers GPU (night-2)" in html


def test_a_synthetic_input_is_marked_everywhere(cli, tmp_path):
    """D6: before, none of the console, answers.md, .html or .json said "synthetic"."""
    fixture = FIXTURES / "alignment_quick.json"
    code, out, err = cli("answers", fixture, "--out", tmp_path)
    assert code == 0, err
    assert out.startswith("SYNTHETIC DATA: the answers of ")
    assert "(synthetic data): " in out
    md = (tmp_path / "answers.md").read_text()
    assert md.splitlines()[2].startswith("> **SYNTHETIC DATA: ")
    assert "Fixture GPU H (synthetic data) |" in md.split("\n## Q1")[0]  # the source cell
    page = (tmp_path / "answers.html").read_text()
    assert 'id="synthetic-banner"' in page and "(synthetic data)" in page
    doc = json.loads((tmp_path / "answers.json").read_text())
    assert doc["synthetic"] is True and all(q["synthetic"] for q in doc["questions"]
                                            if q["scope"] == "gpu")


def test_a_real_input_carries_no_mark(cli, tmp_path):
    path = write(tmp_path, "results.json", ad.doc(REAL, ad.int8_gpu()))
    code, out, _ = cli("answers", path, "--json")
    doc = json.loads(out)
    assert code == 0 and doc["synthetic"] is False
    assert not any(q["synthetic"] for q in doc["questions"])
    code, out, _ = cli("answers", path)
    assert "SYNTHETIC" not in out and "(synthetic data)" not in out


def test_holds_has_notes_not_caveats_in_the_json(cli, tmp_path):
    """A JSON reader sees "holds" with an empty caveats list; what it says besides are notes."""
    path = write(tmp_path, "results.json",
                 ad.doc(REAL, ad.int8_gpu() + ad.alignment_gpu(t33=80.0) + ad.fp8_gpu()))
    code, out, _ = cli("answers", path, "--json")
    held = [q for q in json.loads(out)["questions"] if q["verdict"] == HOLDS]
    assert {q["id"] for q in held} >= {"q1", "q4", "q5"}
    for q in held:
        assert q["caveats"] == [] and q["notes"], q


def link_targets(markdown: str) -> list[str]:
    return re.findall(r"\]\(<?([^)>]+)>?\)", markdown)


def test_answers_md_links_work_from_where_it_is_written(cli, tmp_path, monkeypatch):
    """D10: the links were relative to the repository's root, so every one was broken in a
    Markdown viewer of results/<stamp>/answers.md."""
    out = REPO / "results" / "test-links-answers33"
    try:
        code, _, _ = cli("answers", write(tmp_path, "results.json", ad.doc(REAL, ad.int8_gpu())),
                         "--out", out)
        assert code == 0
        md = (out / "answers.md").read_text()
        targets = link_targets(md)
        assert len(targets) == 6  # the rules page and the five concept pages
        for target in targets:
            assert (out / target).resolve().is_file(), target
        assert "../../docs/concepts/int8-calibration.md" in targets
        page = (out / "answers.html").read_text()
        hrefs = re.findall(r'<a href="([^"]+)"', page)
        assert len(hrefs) == 6
        assert all((out / h).resolve().is_file() for h in hrefs)
    finally:
        for name in ("answers.md", "answers.html", "answers.json"):
            (out / name).unlink(missing_ok=True)
        out.rmdir()


def test_the_report_keeps_its_labels_and_no_mark_in_its_table(tmp_path):
    """The report's first section shows the answers under the report's labels; it marks
    synthetic inputs with its own banner, not in the verdict table."""
    from tcbench_tools.answers import section

    a, b = two_runs_of_one_model(tmp_path)
    sources, got = section.answers_for([load(a), load(b)], ["first", "second"])
    assert sources == ["first", "second"]
    assert {render.source(x) for x in got} == {"first", "second"}


def test_the_host_half_says_what_it_rests_on_and_the_grid_has_one_host_row():
    host = parse_doc(ad.doc(ad.HOST_CONTEXT, ad.int8_study() + ad.loss_host()))
    got = answer_all([host])
    headers, rows = render.grid(got)
    assert [r[0] for r in rows] == ["without a GPU (synthetic data)", "GPU"]


def test_every_answer_says_what_its_numbers_are():
    """Measured on this GPU, host studies (CPU), model, published: a GPU half that measured
    nothing claims no basis."""
    host = parse_doc(ad.doc(ad.HOST_CONTEXT, ad.int8_study() + ad.alignment_model()))
    run = parse_doc(ad.doc(REAL, ad.int8_gpu()))
    by = {(a.id, a.scope): a for a in answer_all([host, run])}
    assert by[("q1", "gpu")].basis == "measured on this GPU"
    assert by[("q2", "gpu")].verdict == "not measured" and by[("q2", "gpu")].basis == ""
    assert by[("q1", "host")].basis == "host studies (CPU)"
    assert by[("q4", "host")].basis.startswith("model (no measurement) and published measurements")
    assert "host studies" not in by[("q4", "host")].basis


def _depth(text: str) -> int:
    deepest = depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        deepest = max(deepest, depth)
    return deepest


def _many_answers(tmp_path):
    """The answers of the nine fixtures, three generated GPUs and the host studies, and of no
    input at all: every rule's one-line reason, verdict by verdict."""
    import many_gpus

    host = parse_doc(ad.doc(ad.HOST_CONTEXT, ad.int8_study() + ad.loss_host()
                            + ad.alignment_model(nt=(65.6, 49.4)) + ad.fp8_study()))
    sets = [load(p) for p in [*many_gpus.nine(), *many_gpus.fleet(3, tmp_path)]]
    return answer_all(sets + [host]) + answer_all([])


def test_no_one_line_reason_nests_parentheses(tmp_path):
    """Before: Q4's line nested three deep, Q5's and most 'not measured' reasons two (issue 43
    §5). A console line holds at most one level: its source's, or its reason's."""
    lines = [line for line in render.console(_many_answers(tmp_path)).splitlines()
             if line.startswith("  ")]
    assert len(lines) > 40
    deep = [line for line in lines if _depth(line) > 1]
    assert not deep, deep[:3]
    q4 = next(line for line in lines if "leading dimension" in line)
    assert "33 loses where it is a leading dimension" in q4  # the half that supports it
    assert "as a batch in no leading dimension it does not" in q4  # and the half that limits it


def test_every_evidence_value_says_its_unit(tmp_path):
    """Before: Q4's 'share slower misaligned | 1' (a fraction) and Q5's current_error_mean
    0.02551 (a fraction) sat beside percentages with no unit (issue 43 §5)."""
    answers = _many_answers(tmp_path)
    units = {(e.metric, unit_of(e)) for a in answers for e in a.evidence}
    assert all(unit for _, unit in units), units
    assert ("share slower misaligned", "fraction") in units
    assert ("current_error_mean", "fraction") in units
    assert ("worst_saturated_pct", "%") in units
    md = render.markdown(answers)
    assert "| evidence | metric | value | unit |" in md
    assert "| share slower misaligned | 0.9899 | fraction |" in md
