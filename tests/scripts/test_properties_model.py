"""Property-based tests of `tcbench model`: the published-measurement data
folder's reader (published.py) on generated CSV files, `model check` on them, and `model
predict` (the C++ host tool's CSV reader) on generated rows. The property is properties.check's:
bad rows and files are one sentence and exit 2, nothing above a physical limit passes (a rate
above the GPU's dense datasheet peak is a problem `check` names). Before, a field longer than
the csv module's limit was exit 70, and sizes in other digits ("٤٠٩٦") read as numbers.
"""

from __future__ import annotations

import csv
import io

from hypothesis import example, given, settings
from hypothesis import strategies as st

import properties as p
from conftest import REPO, model_tool

DATA = REPO / "data" / "published" / "gemm.csv"
_LINES = DATA.read_text(encoding="utf-8").splitlines()
HEADER, ROWS = _LINES[0], _LINES[1:40]
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
    lines = [draw(p.mostly(st.just(HEADER), p.hostile_text))]
    for _ in range(draw(st.integers(0, 4))):
        line = draw(st.sampled_from(ROWS))
        changes = draw(st.lists(st.tuples(st.integers(0, 20), FIELD), max_size=3))
        lines.append(edit(line, changes) if changes else line)
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\r\n", "\x00"]))


@settings(max_examples=p.examples(150))
@given(text=published_csv())
@example(text=HEADER + "\n" + edit(ROWS[0], [(7, "٤٠٩٦")]) + "\n")  # read as 4096 before
@example(text=HEADER + "\n" + edit(ROWS[0], [(20, "x" * 140000)]) + "\n")  # exit 70 before
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

    text = HEADER + "\n" + edit(line, changes) + "\n"
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
