"""Every Markdown output (report.md, answers.md, compare --markdown, for runs and for studies)
shows the text a result file brings (benchmark names, labels, --label, GPU names, context
values, messages) as text: no raw HTML, no link, no code span that a name closes early, and no
table row that a newline, a pipe or a backslash before a pipe breaks. Each document is read by
GitHub's own renderer (cmark-gfm, through cmarkgfm) with raw HTML let through, as a viewer
without a sanitizer shows it, and the HTML it gives is checked; the tables are checked in the
source, since cmark-gfm drops a row's excess cells instead of showing them."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from hypothesis import given, settings
from hypothesis import strategies as st

import answers_data as ad
from conftest import FIXTURES, load_doc, write
from tcbench_tools import mdtext
from tcbench_tools.printable import printable

IMG = "<img src=x onerror=alert(1)>"
SCRIPT = "</script><script>alert(2)</script>"
LINK = "[click](javascript:alert(3))"
TICKS = "a`b``c"
PIPES = "a\\|b|c\\"  # a backslash before a pipe, a pipe, a trailing backslash
GPU_NAME = f"Evil\n| GPU {IMG}"
LABEL = f"L {SCRIPT}\n|x"
HOSTILE = (IMG, SCRIPT, LINK, TICKS, PIPES, GPU_NAME, LABEL)

# What tcbench's own Markdown may render to; anything else came from a file.
ALLOWED_TAGS = {"h1", "h2", "h3", "h4", "h5", "h6", "p", "table", "thead", "tbody", "tr", "th",
                "td", "ul", "ol", "li", "code", "strong", "em", "a", "img", "blockquote", "br",
                "hr", "del"}


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def render(md: str) -> _Tags:
    """The HTML GitHub's renderer makes of ``md``, raw HTML passed through (CMARK_OPT_UNSAFE)."""
    parsed = _Tags()
    parsed.feed(cmarkgfm.github_flavored_markdown_to_html(md, options=Options.CMARK_OPT_UNSAFE))
    return parsed


def _separators(line: str) -> int:
    """Cell separators of a GFM table line: pipes a backslash does not escape."""
    count, i = 0, 0
    while i < len(line):
        if line[i] == "\\":
            i += 2
            continue
        count += line[i] == "|"
        i += 1
    return count


def assert_safe(md: str, shown: tuple[str, ...] = ()) -> None:
    """No raw HTML, no link out of the document, every table row as wide as its header, and each
    of ``shown`` (as printable() writes it) still there as text."""
    for raw in ("<img", "<script", "</script", "](javascript:", "[click]"):
        assert raw not in md.lower(), (raw, [ln for ln in md.splitlines() if raw in ln.lower()])
    html = render(md)
    for tag, attrs in html.tags:
        assert tag in ALLOWED_TAGS, (tag, attrs)
        assert not [a for a in attrs if a.startswith("on")], (tag, attrs)
        if tag == "img":
            assert re.fullmatch(r"[\w.-]+\.png", attrs.get("src", "")), attrs
        if tag == "a":
            href = attrs.get("href", "")
            assert re.fullmatch(r"#[\w-]+|[\w./-]+\.(png|md)", href), attrs
    lines = md.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("|") and (i == 0 or not lines[i - 1].startswith("|")):
            width = _separators(line)
            for row in lines[i:]:
                if not row.startswith("|"):
                    break
                assert _separators(row) == width, (line, row)
    text = "".join(html.text)
    for s in shown:
        assert printable(s) in text, (printable(s), text[:2000])


# ---------------------------------------------------------------------------------------------
# The escaper and the cell writer themselves


@pytest.mark.parametrize("s", [*HOSTILE, "plain fp16_acc16 int8->int32 x*y", "> quote", "#1",
                               "&lt;b&gt; &amp;", "tab\there", "\\", "``", "a\u2028b"])
def test_text_reads_back_as_itself(s):
    html = render(mdtext.text(s))
    assert [t for t, _ in html.tags] == ["p"]
    assert "".join(html.text).strip() == printable(s).strip()


# Texts made of what Markdown reads as structure, and any text at all.
TEXTS = st.one_of(st.text(alphabet="<>&`[]()*_~\\|#-+.1 !:/w@=\n\"x", max_size=30),
                  st.text(max_size=30))


def _autolink(tag: str, attrs: dict) -> bool:
    """GFM links a bare URL or e-mail address: a link out, never a script (no javascript:)."""
    return tag == "a" and attrs.get("href", "").startswith(("http://", "https://", "mailto:"))


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_any_text_reads_back_as_itself_in_a_paragraph_and_a_list_item(s):
    for prefix, container in (("x ", ["p"]), ("", ["p"]), ("- ", ["ul", "li"])):
        md = prefix + mdtext.text(s) + (" y" if prefix == "x " else "")
        html = render(md)
        shown = printable(s).strip() or prefix
        assert [t for t, a in html.tags if not _autolink(t, a)] == (container if shown else []), md
        if prefix == "x ":
            assert "".join(html.text).strip() == f"x {printable(s)} y".strip(), md


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_any_text_is_one_table_cell(s):
    html = render(mdtext.table(["a", "b"], [[mdtext.cell(s), "z"]]))
    assert [t for t, _ in html.tags].count("td") == 2
    body = "".join(html.text)
    assert body.rstrip().endswith("z") and printable(s).strip() in body


@pytest.mark.parametrize("s", [*HOSTILE, "", "-", "x | y", "\\\\|"])
def test_a_cell_is_one_cell_whatever_it_holds(s):
    md = mdtext.table(["a", "b"], [[mdtext.cell(s), mdtext.cell("z")]], set())
    assert_safe(md)
    html = render(md)
    cells = [t for t, _ in html.tags if t == "td"]
    assert len(cells) == 2
    body = "".join(html.text)
    assert printable(s).strip() in body and body.rstrip().endswith("z")


@pytest.mark.parametrize("s", ["fp16/cublaslt/m:1", IMG, TICKS, PIPES])
def test_code_is_code_when_it_can_be_and_text_otherwise(s):
    md = mdtext.code(s)
    html = render(md)
    assert "".join(html.text).strip() == printable(s)
    assert ("code" in [t for t, _ in html.tags]) == (s == "fp16/cublaslt/m:1")
    assert_safe(md)


def test_plain_text_is_written_as_it_is():
    """What a benchmark writes (names, units, arrows) needs no escape: outputs keep their text."""
    for s in ("fp16_vs_fp32/cublaslt/fp16/m:4096/n:4096/k:4096/layout:nn", "IMMA int8->int32",
              "x2.50 (p < 0.05)", "10M elements", "fp16_acc16 ptq_p99.9"):
        assert mdtext.text(s) == s.replace("<", "&lt;")


# ---------------------------------------------------------------------------------------------
# Every Markdown output


def _hostile_gpu_doc() -> dict:
    """A GPU run whose context, labels, names and messages carry markup."""
    rows = ad.int8_gpu(label=IMG) + ad.alignment_gpu() + ad.loss_gpu()
    rows.append(ad.row(f"fp16_vs_fp32/cublaslt/fp16/m:64/n:64/k:64/layout:nn/{IMG}", tflops=5.0,
                       label=LINK))
    rows.append(ad.row("fp16_vs_fp32/cublaslt/fp16/m:128/n:128/k:128/layout:nn",
                       error=f"verification failed {SCRIPT} | {PIPES}"))
    rows.append(ad.row("fp16_vs_fp32/cublaslt/bf16/m:128/n:128/k:128/layout:nn",
                       error=f"skipped: {IMG} {TICKS}"))
    rows.append(ad.row(f"{TICKS}/cublaslt/fp16/m:1/n:1/k:1/layout:nn", tflops=1.0))
    rows += ad.fp8_gpu(skip=True)
    rows[-1]["error_message"] = f"skipped: FP8 {IMG} {LINK}"
    context = {**ad.GPU_CONTEXT, "gpu_name": GPU_NAME, "driver_version": SCRIPT,
               "host_name": LINK, "cuda_runtime": PIPES, "nvml": f"unavailable {IMG}"}
    return ad.doc(context, rows)


@pytest.fixture
def hostile(tmp_path):
    return write(tmp_path, "hostile.json", _hostile_gpu_doc())


def test_the_report_markdown_shows_file_text_as_text(cli, tmp_path, hostile):
    other = load_doc("gpu_b.json")
    other["context"]["gpu_name"] = PIPES
    code, _, err = cli("report", hostile, write(tmp_path, "b.json", other), "--out",
                       tmp_path / "rep")
    assert code == 0, err
    md = (tmp_path / "rep" / "report.md").read_text()
    assert_safe(md, (SCRIPT, f"verification failed {SCRIPT} | {PIPES}", f"FP8 {IMG} {LINK}"))


def test_the_report_markdown_shows_labels_as_text(cli, tmp_path, hostile):
    code, _, err = cli("report", hostile, "--label", LABEL, "--out", tmp_path / "rep")
    assert code == 0, err
    md = (tmp_path / "rep" / "report.md").read_text()
    assert_safe(md, (LABEL,))


def test_the_answers_markdown_shows_file_text_as_text(cli, tmp_path, hostile):
    doc = _hostile_gpu_doc()
    doc["benchmarks"] = [r for r in doc["benchmarks"] if "int8_gemm/cublaslt/int8" not in r["name"]]
    doc["benchmarks"].append(ad.row("int8_gemm/cublaslt/int8/m:8192/n:8192/k:8192/layout:tn",
                                    error=f"skipped: {SCRIPT} {LINK}"))
    skipped = write(tmp_path, "skipped.json", doc)
    code, _, err = cli("answers", hostile, skipped, "--out", tmp_path / "ans")
    assert code == 0, err
    md = (tmp_path / "ans" / "answers.md").read_text()
    assert_safe(md, (f"skipped: {SCRIPT} {LINK}"[len("skipped: "):],))
    assert "Evil" in md


def test_the_compare_markdown_shows_file_text_as_text(cli, tmp_path, hostile):
    cand = _hostile_gpu_doc()
    cand["context"]["driver_version"] = IMG
    cand["benchmarks"] = [r for r in cand["benchmarks"] if IMG not in r["name"]]
    for r in cand["benchmarks"]:
        if r["name"].startswith("int8_gemm/cublaslt/fp16/"):
            r.update(error_occurred=True, error_message=f"crashed {SCRIPT} | {TICKS}")
    out = tmp_path / "compare.md"
    code, _, err = cli("compare", hostile, write(tmp_path, "cand.json", cand), "--markdown", out,
                       "--allow-missing")
    assert code == 1, err
    md = out.read_text()
    assert_safe(md, (f"crashed {SCRIPT} | {TICKS}",))
    assert "FAILED" in md


def test_a_fixture_report_is_unchanged_by_escaping(cli, tmp_path):
    """The escaping touches only what markup could make of a text: a real run's report keeps
    every name, label and number as it was (tcbench's own links, code and bold included)."""
    code, _, err = cli("report", FIXTURES / "gpu_a.json", FIXTURES / "gpu_b.json", "--out",
                       tmp_path / "rep")
    assert code == 0, err
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "| A x B -> D |" in md
    assert "fp16_vs_fp32/cublaslt/fp16/m:4096/n:4096/k:4096/layout:nn" in md
    assert "error: cublasLtMatmul failed: CUBLAS_STATUS_" in md
    assert not [e for e in ("&lt;", "&gt;", "&amp;", "&#") if e in md]
    assert_safe(md)


@pytest.mark.parametrize("gpu_name", ["Evil\n| GPU a\\|b", "x\\", "x\\\\|y\r\n|z"])
def test_a_gpu_name_with_newlines_and_pipes_is_one_cell_of_every_table(cli, tmp_path, gpu_name):
    """Without markup characters at all: the name is one cell of every report and answers table
    (a backslash before a pipe used to end the cell), and every row keeps its width."""
    doc = load_doc("gpu_a.json")
    doc["context"]["gpu_name"] = gpu_name
    path = write(tmp_path, "a.json", doc)
    code, _, err = cli("report", path, "--out", tmp_path / "rep")
    assert code == 0, err
    assert_safe((tmp_path / "rep" / "report.md").read_text(), (gpu_name,))
    code, _, err = cli("answers", path, "--out", tmp_path / "ans")
    assert code == 0, err
    assert_safe((tmp_path / "ans" / "answers.md").read_text())


def test_a_label_cannot_make_a_link(cli, tmp_path):
    code, _, err = cli("report", FIXTURES / "gpu_a.json", "--label", LINK, "--out",
                       tmp_path / "rep")
    assert code == 0, err
    assert_safe((tmp_path / "rep" / "report.md").read_text(), (LINK,))


def test_the_study_compare_markdown_shows_file_text_as_text():
    from tcbench_tools import study_compare as sc

    hostile = f"int8_study/{IMG}/{LINK}\n| {TICKS} | {PIPES}"
    comp = sc.StudyComparison(2, 4, [sc.Change(hostile, "top1_accuracy_pct", 93.1, 92.0),
                                     sc.Change(hostile + "x", "", None, None)],
                              synthetic=[f"the baseline ({SCRIPT})"])
    md = sc.render_markdown(comp, f"base{IMG}", f"cand{TICKS}")
    assert_safe(md, (hostile, SCRIPT))
    assert "CHANGED: 2 of 4" in md
