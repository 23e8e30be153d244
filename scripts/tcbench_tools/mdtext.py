"""Text as Markdown: doc.py, the one Markdown writer (report.md, answers.md, compare --markdown,
model check), puts a text it did not write itself (benchmark names, labels, ``--label``, GPU
names, context values, messages) through one of these, never into its Markdown as it is.

* ``text(s)``: running text (a paragraph, a list item, a heading, bold, an image's alt text);
* ``cell(s)``: one table cell, whatever ``s`` holds;
* ``code(s)``: a code span, or the text itself when a code span could not show it;
* ``link(label, target, title)``: a link to one of the report's own files;
* ``table(headers, rows, right)``: a GFM table of cells made by ``cell``, ``code`` or ``link``.

The rule (docs/ci.md states it for users): control characters are escaped first (printable.py),
so no text adds a line; ``&`` and ``<`` become ``&amp;`` and ``&lt;``, so no tag, comment,
autolink or entity can form, in CommonMark, GFM and the original Markdown alike; a backtick,
``[`` and ``]`` become ``&#96;``, ``&#91;`` and ``&#93;``, so no code span, link or image can
open; ``*``, ``~`` and an ``_`` that is not inside a word (``fp16_acc16`` stays as it is) are
backslash-escaped, so no emphasis or strikethrough forms; a backslash that could escape what
follows it is doubled; in a cell ``|`` is ``\\|``; and at the start of running text a character
that would open a block there (``>``, ``#``, ``-``, ``+``, ``1.``) is escaped. So the text reads
back as exactly what ``printable`` shows, in any Markdown viewer; bare URLs may still become
links in GFM (never a ``javascript:`` one). Standard library only.
"""

from __future__ import annotations

import re

from tcbench_tools.printable import printable

# A backslash is an escape only before ASCII punctuation (CommonMark 2.4), or at the end of a
# text, where whatever the writer puts next would follow it.
_ESCAPING_BACKSLASH = re.compile(r"\\(?=[!-/:-@\[-`{-~]|$)")
# As character references, which every Markdown (CommonMark, GFM, the original) shows as the
# character and none reads as structure.
_INLINE = {"&": "&amp;", "<": "&lt;", "`": "&#96;", "[": "&#91;", "]": "&#93;"}
_INLINE_CHARS = re.compile("[&<`\\[\\]]")
_MAYBE_EMPHASIS = re.compile("[*_~]")
# What a code span cannot show as it is (a backtick would end it early; a viewer without
# CommonMark may read < and & inside it; a backslash before a pipe ends a table cell): such a
# text is written as text instead.
_NOT_CODE = re.compile("[`<&\\\\]")


def _emphasis(s: str) -> str:
    """``*`` and ``~`` backslash-escaped, and ``_`` where it could open or close emphasis (not
    between two letters or digits, as in ``fp16_acc16``, where CommonMark never reads it)."""
    out = []
    for i, ch in enumerate(s):
        if ch in "*~" or (ch == "_" and not (0 < i < len(s) - 1 and s[i - 1].isalnum()
                                             and s[i + 1].isalnum())):
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def _inline(value: object) -> str:
    s = _ESCAPING_BACKSLASH.sub(r"\\\\", printable(value))
    s = _INLINE_CHARS.sub(lambda m: _INLINE[m.group()], s)
    return _emphasis(s) if _MAYBE_EMPHASIS.search(s) else s


def _block_safe(s: str) -> str:
    """``s`` with the character escaped that would open a block at the start of a line: a quote,
    an ATX heading, a list item, a fence, a thematic break."""
    rest = s.lstrip(" ")
    lead = s[:len(s) - len(rest)]
    if rest.startswith(">"):
        return f"{lead}&gt;{rest[1:]}"
    if re.match(r"(#{1,6}|[-+])(\s|$)", rest) or re.fullmatch(r"-[-\s]*", rest):
        return f"{lead}\\{rest}"
    number = re.match(r"\d{1,9}(?=[.)](\s|$))", rest)
    if number:
        return f"{lead}{number.group()}\\{rest[number.end():]}"
    return s


def text(value: object, *, at_line_start: bool = True) -> str:
    """``value`` as Markdown running text that reads back as exactly ``printable(value)``.
    ``at_line_start=False`` for a text the writer puts after other text on its line (no block
    can open there)."""
    return _block_safe(_inline(value)) if at_line_start else _inline(value)


def cell(value: object) -> str:
    """``value`` as one GFM table cell: the text escapes and ``|`` as ``\\|`` (a cell opens no
    block, so ``-`` or ``> x`` stay as they are)."""
    return _inline(value).replace("|", "\\|")


def code(value: object, *, in_table: bool = False) -> str:
    """``value`` as a code span; a text a code span cannot show (a backtick, ``<``, ``&``, a
    backslash, spaces around it) is written as escaped text instead, so it still reads as itself.
    ``in_table``: the span is (part of) a table cell."""
    s = printable(value)
    if not s or _NOT_CODE.search(s) or s != s.strip():
        return cell(s) if in_table else text(s)
    return "`" + (s.replace("|", "\\|") if in_table else s) + "`"


def link(label: object, target: str, title: object | None = None, *,
         in_table: bool = False) -> str:
    """``[label](target "title")``: ``target`` is a file the tools wrote (a PNG beside the
    document), ``label`` and ``title`` may come from files. ``in_table``: the link is a table
    cell."""
    if not re.fullmatch(r"[\w.-]+", target):
        raise ValueError(f"link target {target!r} is not a file name the tools wrote")
    shown = cell(label) if in_table else text(label, at_line_start=False)
    if title is None:
        return f"[{shown}]({target})"
    quoted = _inline(title).replace('"', '\\"')
    if in_table:
        quoted = quoted.replace("|", "\\|")
    return f'[{shown}]({target} "{quoted}")'


def table(headers: list[str], rows: list[list[str]], right: set[int] | None = None) -> str:
    """A GFM table of cells that are Markdown already (``cell``, ``code(in_table=True)``,
    ``link(in_table=True)``); columns in ``right`` are right-aligned."""
    right = right or set()
    align = ["---:" if i in right else ":---" for i in range(len(headers))]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)
