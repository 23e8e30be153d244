"""Short to read (issue 43 §5): the README's and each concept page's first screen have a median
sentence of at most 20 words, and no README paragraph runs past ten lines (one mixed six
subjects in 16 lines). Code blocks, tables and headings are not prose; a code span counts as one
word and a link as its text."""

from __future__ import annotations

import re
import statistics
from pathlib import Path

import pytest

from conftest import REPO

MEDIAN_WORDS = 20
FIRST_SCREEN = 60  # lines of a concept page a reader sees before deciding to read on
LONGEST_PARAGRAPH = 10  # lines
ITEM = re.compile(r"^\s*([-*]|\d+\.)\s+")


def paragraphs(text: str) -> list[list[str]]:
    """The prose paragraphs (list items are paragraphs of their own), as lists of lines."""
    out: list[list[str]] = []
    cur: list[str] = []
    code = False
    for line in text.splitlines():
        if line.startswith("```"):
            code = not code
        prose = not code and line.strip() and not line.startswith(("|", "#", "```", "    "))
        if not prose or ITEM.match(line):
            if cur:
                out.append(cur)
            cur = [ITEM.sub("", line).lstrip("> ")] if prose else []
            continue
        cur.append(line.strip().lstrip("> "))
    if cur:
        out.append(cur)
    return out


def sentence_lengths(text: str) -> list[int]:
    lengths = []
    for para in paragraphs(text):
        prose = re.sub(r"`[^`]*`", "X", " ".join(para))  # a code span is one word
        prose = re.sub(r"\]\([^)]*\)", "]", prose)  # a link is its text
        for sentence in re.split(r"(?<=[.!?:])\s+(?=[A-Z`(\"*])", prose):
            words = len(re.findall(r"[\w'/.^%-]+", sentence))
            if words:
                lengths.append(words)
    return lengths


PAGES = [REPO / "README.md", *sorted((REPO / "docs" / "concepts").glob("*.md"))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_the_first_screen_reads_in_short_sentences(page: Path):
    text = page.read_text()
    if page.name != "README.md":
        text = "\n".join(text.splitlines()[:FIRST_SCREEN])
    lengths = sentence_lengths(text)
    assert len(lengths) >= 10
    assert statistics.median(lengths) <= MEDIAN_WORDS, (page.name, statistics.median(lengths))


def test_no_readme_paragraph_runs_past_ten_lines():
    longest = max(paragraphs((REPO / "README.md").read_text()), key=len)
    assert len(longest) <= LONGEST_PARAGRAPH, longest[0]
