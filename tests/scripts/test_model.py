"""`tcbench model predict` and `tcbench model check` (scripts/tcbench_tools/model_cmd.py) over the
C++ host tool, and the published measurements they read (data/published, published.py); then the
property-based tests of the same readers on generated CSV files and rows."""

from __future__ import annotations

import csv
import io
import time
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import properties as p
from conftest import REPO, assert_one_line_error, model_tool, tcbench
from tcbench_tools import model_cmd, published

HEADER = "gpu,precision,m,n,k,batch,layout_a,layout_b"


def predict(tmp_path: Path, text: str, *extra: str):
    src = tmp_path / "in.csv"
    src.write_text(text, encoding="utf-8")
    return tcbench("model", "predict", str(src), "--tool", str(model_tool()), *extra)


def rows_of(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_predict_writes_every_row_back_with_the_prediction(tmp_path):
    out = tmp_path / "out.csv"
    proc = predict(tmp_path, f"{HEADER}\nH100 SXM,bf16,8192,8192,8192,1,mk,nk\n"
                             "A100 SXM,fp16,4096,4096,4095,1,mk,kn\n", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    rows = rows_of(out.read_text())
    assert [r["gpu"] for r in rows] == ["H100 SXM", "A100 SXM"]
    h100, a100 = rows
    tflops, us = float(h100["predicted_tflops"]), float(h100["predicted_us"])
    assert tflops == pytest.approx(2 * 8192 ** 3 / (us * 1e-6) / 1e12, rel=1e-3)
    assert 500 < tflops < float(h100["bound_tflops"]) <= 989.4 + 1e-6
    assert h100["regime"] == "compute" and h100["alignment"] == "a16 b16 c16"
    assert h100["model_basis"] == "fitted"  # Hopper's own constants and ceiling
    # K = 4095: A's rows are 8190 bytes, 2-byte aligned: far slower per FLOP than 4096.
    assert a100["alignment"] == "a2 b16 c16" and a100["model_basis"] == "fitted"
    assert float(a100["predicted_tflops"]) < 150
    # Every row echoes its benchmark name: cuBLAS's column-major m and n, swapped.
    assert h100["benchmark"] == "alignment/cublaslt/bf16/m:8192/n:8192/k:8192/layout:tn"
    assert a100["benchmark"] == "alignment/cublaslt/fp16/m:4096/n:4096/k:4095/layout:nn"


def test_predict_header_is_optional_and_fields_forgiving(tmp_path):
    with_header = predict(tmp_path, f"{HEADER}\nH100 SXM,fp16,4096,4096,4096,1,mk,kn\n")
    bare = predict(tmp_path, " h100 sxm , FP16 ,4096, 4096 ,4096.0,, MK ,KN \n")
    assert with_header.returncode == 0 and bare.returncode == 0, bare.stderr
    a, b = rows_of(with_header.stdout)[0], rows_of(bare.stdout)[0]
    assert a["predicted_us"] == b["predicted_us"]
    # Columns in any order under a header, an optional c_type, extra columns passed through; an
    # input column named like an output column passes through as input_<name>, never dropped.
    proc = predict(tmp_path, "tag,layout_b,layout_a,batch,k,n,m,precision,gpu,c_type,"
                             "predicted_tflops,benchmark,input_benchmark\n"
                             "mine,kn,mk,1,4096,4096,4096,fp16,NVIDIA H100 80GB HBM3,fp32,123,"
                             "b1,b2\n")
    assert proc.returncode == 0, proc.stderr
    row = rows_of(proc.stdout)[0]
    assert row["tag"] == "mine"
    assert row["input_predicted_tflops"] == "123" and float(row["predicted_tflops"]) > 0
    assert row["input_benchmark"] == "b1" and row["input_input_benchmark"] == "b2"
    assert row["benchmark"].startswith("alignment/cublaslt/fp16/")
    header = proc.stdout.splitlines()[0].split(",")
    assert len(header) == len(set(header))
    # An FP32 output writes twice the bytes: a little slower.
    assert float(row["predicted_us"]) > float(a["predicted_us"])


def test_predict_says_what_it_does_not_cover(tmp_path):
    proc = predict(tmp_path, f"{HEADER}\nA100 SXM,fp8,4096,4096,4096,1,mk,nk\n"
                             "H100 SXM,fp8,4096,33,4096,1,mk,nk\n"
                             "H100 SXM,fp8,4096,4096,4096,1,mk,kn\n")
    assert proc.returncode == 0, proc.stderr
    a100, odd, kn = rows_of(proc.stdout)
    assert a100["predicted_tflops"] == "" and "no fp8 path" in a100["note"]
    assert odd["predicted_tflops"] == "" and "refuses fp8" in odd["note"]
    assert kn["predicted_tflops"] != "" and "K-contiguous" in kn["note"]


@pytest.mark.parametrize("row, needle", [
    ("H900,fp16,64,64,64,1,mk,kn", "unknown GPU 'H900'"),
    ("H100 SXM,fp12,64,64,64,1,mk,kn", "unknown precision 'fp12'"),
    ("H100 SXM,fp16,0,64,64,1,mk,kn", "m = '0'"),
    ("H100 SXM,fp16,64,6.5,64,1,mk,kn", "n = '6.5'"),
    ("H100 SXM,fp16,64,64,1e99,1,mk,kn", "k = '1e99'"),
    ("H100 SXM,fp16,64,64,64,-1,mk,kn", "batch = '-1'"),
    ("H100 SXM,fp16,64,64,64,1,row,kn", "layout_a = 'row'"),
    ("H100 SXM,fp16,64,64,64,1,mk,\"nk", "never closed"),
    # A NUL in a field is shown escaped, never ends the sentence early (it read "unknown
    # precision 'fp16" before: a known one).
    ("H100 SXM,fp16\x00x,64,64,64,1,mk,kn", "unknown precision 'fp16\\x00x'"),
])
def test_predict_refuses_a_bad_row_in_one_sentence(tmp_path, row, needle):
    proc = predict(tmp_path, f"{HEADER}\nH100 SXM,fp16,64,64,64,1,mk,kn\n{row}\n")
    assert_one_line_error(proc, needle, "line 3")


def test_predict_refuses_a_header_without_a_column_and_a_missing_file(tmp_path):
    assert_one_line_error(predict(tmp_path, "gpu,precision,m,n\nH100 SXM,fp16,1,1\n"),
                          "lacks k")
    assert_one_line_error(tcbench("model", "predict", str(tmp_path / "none.csv"), "--tool",
                                  str(model_tool())), "none.csv")


def test_predict_is_quick_on_thousands_of_rows(tmp_path):
    lines = [HEADER] + [f"H100 SXM,bf16,{64 * (i % 97 + 1)},{8 * (i % 61 + 1) + i % 3},"
                        f"{128 * (i % 31 + 1)},{1 + i % 4},mk,nk" for i in range(5000)]
    start = time.monotonic()
    proc = predict(tmp_path, "\n".join(lines) + "\n")
    assert proc.returncode == 0, proc.stderr
    assert len(rows_of(proc.stdout)) == 5000
    assert time.monotonic() - start < 20  # about a second on two cores, with Python's start-up


def test_published_data_is_well_formed_and_below_the_datasheet_peaks():
    rows = published.load()
    assert len(rows) > 2000
    tool = model_tool()
    assert not published.check(rows, model_cmd.peaks(tool), model_cmd.geforce_gpus(tool))
    assert {r.use for r in rows} == {"fit", "held_out"}
    for r in rows:
        assert r.source and r.summary
    # Every GPU the model is fitted on keeps at least one source out of the fit (issue 45), and
    # no source is both fitted and held out for one GPU.
    uses: dict[tuple[str, str], set[str]] = {}
    for r in rows:
        uses.setdefault((r.gpu, model_cmd.source_of(r)), set()).add(r.use)
    assert all(len(u) == 1 for u in uses.values()), uses
    for gpu in ("H100 SXM", "H200", "B200", "RTX 4090"):
        assert {"fit", "held_out"} <= {u for (g, _), us in uses.items() if g == gpu for u in us}


def test_the_vocabulary_is_the_cpp_tables():
    """data/model/vocabulary.csv, which published.py reads for element sizes and output types, is
    `tcbench_model vocabulary`'s output: no Python copy of the precision table."""
    text = model_cmd.run_tool(model_tool(), ["vocabulary"])
    assert published.VOCABULARY.read_text(encoding="utf-8") == text, (
        "data/model/vocabulary.csv is stale: build/<preset>/bin/tcbench_model vocabulary > "
        "data/model/vocabulary.csv")
    assert set(published.vocabulary()[0]) == {
        r["name"] for r in csv.DictReader(io.StringIO(text)) if r["kind"] == "precision"}


def test_predict_by_benchmark_name_is_the_studies_row(tmp_path):
    """A benchmark name (issue 43 section 3) gives what tcbench_studies' alignment_model row of
    that shape says, to the printed digit, and echoes the name."""
    import json
    import subprocess

    studies = model_tool().parent / "tcbench_studies"
    out = tmp_path / "studies.json"
    subprocess.run([str(studies), "--study", "alignment", "--out", str(out)], check=True,
                   capture_output=True, timeout=120)
    want = {r["name"]: r["predicted_tflops"] for r in json.loads(out.read_text())["benchmarks"]}
    names = [n for n in want if n.startswith("alignment_model/h100_sxm/")]
    assert len(names) > 10
    lines = ["gpu,name"] + [f"H100 SXM,{n.replace('alignment_model/h100_sxm', 'x/y')}"
                            for n in names]
    proc = predict(tmp_path, "\n".join(lines) + "\n")
    assert proc.returncode == 0, proc.stderr
    for name, row in zip(names, rows_of(proc.stdout)):
        assert float(row["predicted_tflops"]) == pytest.approx(want[name], abs=6e-4), name
        assert row["benchmark"].split("/", 2)[2] == name.split("/", 2)[2]
    # m:4096/n:33 as a name is the row-major 33 x 4096 query: the swap cannot surprise.
    by_name = predict(tmp_path, "gpu,name\nH100 SXM,alignment/cublaslt/fp16/m:4096/n:33/k:4096/"
                                "layout:nn\n")
    by_rows = predict(tmp_path, f"{HEADER}\nH100 SXM,fp16,33,4096,4096,1,mk,kn\n")
    assert rows_of(by_name.stdout)[0]["predicted_us"] == rows_of(by_rows.stdout)[0]["predicted_us"]
    assert_one_line_error(predict(tmp_path, "gpu,name\nH100 SXM,alignment/cublaslt/fp16/m:4\n"),
                          "line 2", "name 'alignment/cublaslt/fp16/m:4'")


def test_published_checks_name_what_is_wrong(tmp_path):
    good = (REPO / "data" / "published" / "gemm.csv").read_text().splitlines()
    header, first = good[0], good[1]
    fields = next(csv.reader([first]))
    fields[12] = "400"  # TFLOP/s above the A100's 312
    above = ",".join(f'"{f}"' if "," in f else f for f in fields)
    path = tmp_path / "bad.csv"
    path.write_text(f"{header}\n{first}\n{first}\n{above}\n")
    problems = published.check(published.load([path]), model_cmd.peaks(model_tool()))
    text = " ".join(problems)
    assert "also on" in text and "the same measurement" in text
    assert "above A100 SXM's dense fp16 datasheet peak" in text
    fields = next(csv.reader([first]))
    fields[18] = ""  # no source
    path.write_text(header + "\n" + ",".join(f'"{f}"' if "," in f else f for f in fields) + "\n")
    with pytest.raises(Exception, match="source is empty"):
        published.load([path])


def test_check_reports_fitted_and_held_out_apart_and_gates_on_the_held_out():
    proc = tcbench("model", "check", "--tool", str(model_tool()))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "| fit | all | all |" in proc.stdout and "| held_out | all | all |" in proc.stdout
    for gpu in ("H100 SXM", "H200", "B200", "RTX 4090"):
        assert f"| held_out | {gpu} |" in proc.stdout
    assert "Alignment pairs" in proc.stdout and "Gate: held-out" in proc.stdout
    assert ": pass." in proc.stdout
    rep = model_cmd.build_report(model_cmd.score(model_tool(), published.load()))
    assert rep.gate["pass"] and rep.gate["data"] == "held_out" and rep.gate["rows"] > 20
    fit_pairs = next(p for p in rep.pairs if p["data"] == "fit" and p["gpu"] == "A100 SXM")
    assert fit_pairs["pairs"] > 300 and fit_pairs["direction_right"] >= 0.99


def test_check_of_no_rows_is_an_input_error(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text(",".join(published.COLUMNS) + "\n")
    assert_one_line_error(tcbench("model", "check", str(empty), "--tool", str(model_tool())),
                          "no measurement rows")


def test_hostile_text_in_a_published_file_reaches_no_output_raw(tmp_path):
    """A source field with a terminal escape, HTML and a Markdown link (issue 44 section 2): the
    reader cleans the text once; the check's tables and sentences carry none of it raw."""
    good = (REPO / "data" / "published" / "gemm.csv").read_text().splitlines()
    fields = next(csv.reader([good[1]]))
    fields[18] = "\x1b[31mowner/repo@1:f#L1 <b>x</b> [click](javascript:alert(1))"
    fields[0] = "id\x1b]0;title\x07-1"
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(fields)
    path = tmp_path / "hostile.csv"
    path.write_text(good[0] + "\n" + buf.getvalue())
    rows = published.load([path])
    assert "\x1b" not in rows[0].source and "\x07" not in rows[0].id
    for args in ((), ("--json",)):
        proc = tcbench("model", "check", str(path), "--tool", str(model_tool()), *args)
        assert proc.returncode in (0, 1), proc.stderr
        for text in (proc.stdout, proc.stderr):
            assert "\x1b" not in text and "<b>" not in text and "](javascript" not in text
    path.write_text(good[0] + "\n" + good[1] + "\n" + good[1].replace("mk", "mk\x00", 1) + "\n")
    assert_one_line_error(tcbench("model", "check", str(path), "--tool", str(model_tool())),
                          "line 3 holds a NUL byte")


def test_the_python_alignment_rule_is_the_cpp_one():
    """published.Measurement.alignment (the pairs of tcbench answers, without the tool) gives
    what the C++ model's operand_alignment gives, on every published row."""
    rows = published.load()
    for r, pred in zip(rows, model_cmd.predict_rows(model_tool(), rows)):
        a, b, c = r.alignment
        assert pred["alignment"] == f"a{a} b{b} c{c}", r.id


# ---------------------------------------------------------------------------------------------
# Property-based tests of `tcbench model`: the published-measurement data
# folder's reader (published.py) on generated CSV files, `model check` on them, and `model
# predict` (the C++ host tool's CSV reader) on generated rows. The property is properties.check's:
# bad rows and files are one sentence and exit 2, nothing above a physical limit passes (a rate
# above the GPU's dense datasheet peak is a problem `check` names). Before, a field longer than
# the csv module's limit was exit 70, and sizes in other digits ("٤٠٩٦") read as numbers.

DATA = REPO / "data" / "published" / "gemm.csv"
_LINES = DATA.read_text(encoding="utf-8").splitlines()
CSV_HEADER, ROWS = _LINES[0], _LINES[1:40]
FIELD = st.one_of(p.hostile_text, st.sampled_from(
    ["4096", "٤٠٩٦", "4096.0", "0", "-1", "1e400", "nan", "inf", "1099511627777", "1_024",
     "H100 SXM", "A100 SXM", "fp16", "bf16", "fp8", "mk", "km", "kn", "nk", "fit", "held_out",
     "1e-300", "99999", '"', "\n", "x" * 140000]))


def edit(line: str, changes: list[tuple[int, str]]) -> str:
    fields = next(csv.reader([line]))
    for index, value in changes:
        fields[index % len(fields)] = value
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(fields)
    return out.getvalue().rstrip("\n")


@st.composite
def published_csv(draw) -> str:
    lines = [draw(p.mostly(st.just(CSV_HEADER), p.hostile_text))]
    for _ in range(draw(st.integers(0, 4))):
        line = draw(st.sampled_from(ROWS))
        changes = draw(st.lists(st.tuples(st.integers(0, 20), FIELD), max_size=3))
        lines.append(edit(line, changes) if changes else line)
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\r\n", "\x00"]))


@settings(max_examples=p.examples(150))
@given(text=published_csv())
@example(text=CSV_HEADER + "\n" + edit(ROWS[0], [(7, "٤٠٩٦")]) + "\n")  # read as 4096 before
@example(text=CSV_HEADER + "\n" + edit(ROWS[0], [(20, "x" * 140000)]) + "\n")  # exit 70 before
def test_the_published_reader(text):
    from tcbench_tools import published
    from tcbench_tools.errors import InputError

    with p.time_limit():
        try:
            rows = published.parse(text, "gen.csv")
        except InputError:
            return  # (the command line prints its sentence printable: test_model_check)
    for r in rows:
        assert all(isinstance(v, int) and 1 <= v <= 1 << 40 for v in (r.m, r.n, r.k, r.batch))
        assert r.measured_us > 0 and r.measured_tflops > 0


def _text_columns() -> tuple[int, ...]:
    from tcbench_tools import published

    return tuple(published.COLUMNS.index(c) for c in published.TEXT)


TEXT_COLUMNS = _text_columns()


@settings(max_examples=p.examples(100))
@given(line=st.sampled_from(ROWS),
       changes=st.lists(st.tuples(st.sampled_from(TEXT_COLUMNS), p.hostile_text), min_size=1,
                        max_size=4))
@example(line=ROWS[0], changes=[(18, "\x1b[31mowner/repo <b>x</b> [a](javascript:alert(1))")])
@example(line=ROWS[0], changes=[(20, "a\u202eb\u2028c\x85d")])
def test_the_published_readers_text_is_clean(line, changes):
    """Issue 44 section 2: whatever a text field holds, the reader gives it back printable (no
    control, separator or bidirectional character), once, for every writer; a NUL anywhere is
    one sentence."""
    from tcbench_tools import published
    from tcbench_tools.errors import InputError

    text = CSV_HEADER + "\n" + edit(line, changes) + "\n"
    try:
        rows = published.parse(text, "gen.csv")
    except InputError as exc:
        assert "\x00" not in str(exc) and str(exc).endswith(".")
        return
    for r in rows:
        for name in published.TEXT:
            value = getattr(r, name)
            assert value == value.strip() and p.printable_text(value) and "\n" not in value
    assert "\x00" not in text  # a NUL is never read


@settings(max_examples=p.examples(8))
@given(text=published_csv())
def test_model_check(tmp_path, text):
    path = p.workdir(tmp_path) / "data.csv"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    o = p.run_cli("model", "check", path, "--tool", model_tool(), "--json", seconds=120)
    p.check(o, {0, 1, 2}, text[:300])


PREDICT_HEADER = "gpu,precision,m,n,k,batch,layout_a,layout_b"
PREDICT_ROW = "H100 SXM,bf16,8192,8192,8192,1,mk,nk"


@st.composite
def predict_csv(draw) -> str:
    lines = [draw(p.mostly(st.just(PREDICT_HEADER), p.hostile_text | st.just(
        PREDICT_HEADER + ",tag")))]
    for _ in range(draw(st.integers(0, 3))):
        changes = draw(st.lists(st.tuples(st.integers(0, 8), FIELD), max_size=3))
        lines.append(edit(PREDICT_ROW, changes) if changes else PREDICT_ROW)
    return "\n".join(lines) + "\n"


@settings(max_examples=p.examples(10))
@given(text=predict_csv())
def test_model_predict(tmp_path, text):
    path = p.workdir(tmp_path) / "in.csv"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    o = p.run_cli("model", "predict", path, "--tool", model_tool(), seconds=120)
    p.check(o, {0, 2}, text[:300])


def test_the_tools_own_refusal_is_escaped(tmp_path):
    """tcbench_model's error quoted a row's field as it was (an escape sequence reached the
    terminal when the tool was run by hand)."""
    import subprocess

    path = tmp_path / "in.csv"
    path.write_text(f"{PREDICT_HEADER}\nH100 SXM,bf16,8192,8192,\x1b[2K\r,1,mk,nk\n")
    proc = subprocess.run([str(model_tool()), "predict", str(path)], capture_output=True,
                          timeout=60)
    assert proc.returncode == 2
    assert all(b == 0x0A or 0x20 <= b < 0x7F for b in proc.stderr), proc.stderr
    assert b"\\x1b[2K" in proc.stderr
