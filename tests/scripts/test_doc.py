"""doc.py, the one document writer: every block shows a text from a file as text in both
renderings, the tools' own markup (code, bold, links, commands) stays what it is, and no other
module of scripts/ writes an HTML page."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options

from conftest import REPO
from tcbench_tools import doc
from tcbench_tools.answers.model import CLASS, SHORT, VERDICTS
from tcbench_tools.doc import Cell, Code, Doc, Link, Strong

HOSTILE = "<img src=x onerror=alert(1)></td><script>alert(2)</script>[a](javascript:b)`c`|d\n# e"


class Tags(HTMLParser):
    def __init__(self, text: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def every_block(text: str) -> Doc:
    d = Doc()
    d.heading(1, text)
    d.banner(text, "incomplete-banner")
    d.contents()
    d.heading(2, text)
    d.para(text, Code(text), Strong(text), Link(text, "../docs/a b.md"))
    d.table([text, "n"], [[Cell(text, title=text, anchor="x", ident="y"), "1"],
                          [Cell(text, code=True), text]], {1})
    d.bullets([text, (Code(text), ": ", text)])
    with d.details(text, level=3, note="2 rows") as inner:
        inner.para(text)
    d.pre([text, "```"])
    return d


def test_every_block_shows_a_files_text_as_text_in_html():
    page = every_block(HOSTILE).html(HOSTILE)
    parsed = Tags(page)
    names = [t for t, _ in parsed.tags]
    assert "img" not in names and names.count("script") == 1  # doc.py's own script
    assert not [a for _, attrs in parsed.tags for a in attrs if a.startswith("on")]
    shown = "".join(parsed.text)
    assert shown.count("<img src=x onerror=alert(1)>") >= 10  # each block shows it as text


def test_every_block_shows_a_files_text_as_text_in_markdown():
    md = every_block(HOSTILE).markdown()
    rendered = cmarkgfm.github_flavored_markdown_to_html(md, options=Options.CMARK_OPT_UNSAFE)
    names = [t for t, _ in Tags(rendered).tags]
    assert "img" not in names and "script" not in names
    hrefs = [a.get("href", "") for t, a in Tags(rendered).tags if t == "a"]
    assert not [h for h in hrefs if h.startswith("javascript")]
    # The tools' link and the heading anchors are the only links.
    assert all(h.startswith("#") or h == "../docs/a%20b.md" for h in hrefs), hrefs
    # The text never opened a block: one h1, one h2 (the text's "# e" stays in its heading).
    assert names.count("h1") == 1 and names.count("h2") == 1


def test_the_tools_own_markup_stays_markup():
    d = Doc()
    d.para("run ", Code("tcbench run"), " then ", Strong("look"), ": ", Link("page", "docs/x.md"))
    assert d.markdown() == "run `tcbench run` then **look**: [page](docs/x.md)\n"
    assert ('<p>run <code>tcbench run</code> then <strong>look</strong>: '
            '<a href="docs/x.md">page</a></p>') in d.html("t")


def test_a_link_target_is_a_path_the_tools_made():
    with pytest.raises(ValueError):
        Link("x", "a\nb")
    with pytest.raises(ValueError):
        Link("x", "<javascript:alert(1)>")
    d = Doc()
    d.para(Link("x", "../my docs/a.md"))
    assert d.markdown() == "[x](<../my docs/a.md>)\n"


def test_a_command_block_cannot_close_its_fence_early():
    d = Doc()
    d.pre(["make", "```", "rm -rf /`x`", "\x1b[2K"])
    lines = d.markdown().splitlines()
    assert lines[0] == "```text" and lines[-1] == "```"
    assert not [line for line in lines[1:-1] if "`" in line or "\x1b" in line]
    assert "<pre>make\n```\nrm -rf /`x`\n\\x1b[2K</pre>" in d.html("t")


def test_an_html_block_is_in_the_page_only():
    d = Doc()
    d.para("a")
    d.raw_html("<div id='grid'></div>")
    assert d.markdown() == "a\n" and "<div id='grid'></div>" in d.html("t", style="p{}")


def test_a_code_cell_shows_text_it_cannot_hold_as_text():
    d = Doc()
    d.table(["evidence"], [[Cell("a/b|c", code=True)], [Cell("x`y", code=True)]], set())
    assert "| `a/b\\|c` |" in d.markdown() and "| x&#96;y |" in d.markdown()


def test_each_verdict_has_its_words_and_its_colour_once():
    assert set(SHORT) == set(CLASS) == set(VERDICTS)
    for cls in CLASS.values():
        assert re.search(rf"td\.{cls}\{{[^}}]+\}}", doc._STYLE), cls

    def holding(pattern: str) -> list[str]:
        return sorted(p.name for p in (REPO / "scripts").rglob("*.py")
                      if re.search(pattern, p.read_text(encoding="utf-8")))

    assert holding(r"#dafbe1|#ffd8d3|#1a7f37|#cf222e") == ["doc.py"]  # the colours
    assert holding(r"v-holds|\"does not hold\"") == ["doc.py", "model.py"]  # words, classes


def test_one_module_writes_an_html_page():
    writers = [p.relative_to(REPO).as_posix() for p in (REPO / "scripts").rglob("*.py")
               if re.search("<!doctype html", p.read_text(encoding="utf-8"), re.IGNORECASE)]
    assert writers == ["scripts/tcbench_tools/doc.py"]
