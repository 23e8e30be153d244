"""Text from files as it may be printed: control characters escaped.

A results file, a fleet task's record or a config names benchmarks, GPUs, messages and notes that
the tools print into terminals, CI logs and Markdown summaries. A name holding ``ESC [ 2 K`` or a
carriage return could erase the line above and paint a fake ``PASS``; a newline could start a
Markdown heading. Every such character is written as a visible escape instead (``\\x1b``,
``\\r``, ``\\n``, ``\\u202e``): what ``str.isprintable`` rejects (C0 and C1 controls, DEL,
Unicode format characters such as the bidirectional overrides and zero-width characters, line and
paragraph separators, unassigned and private-use code points), except the plain space.

The tools escape at both ends: ``results`` cleans what it loads (names, messages, labels, context
values), and the writers (``tables``, the report's blocks, ``compare``, the CLI's error line)
escape what they print. Escaping is idempotent: printable(printable(s)) == printable(s).
Standard library only: ``tcbench run`` imports this.
"""

from __future__ import annotations

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(ch: str) -> str:
    if ch == " " or ch.isprintable():
        return ch
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else (f"\\u{code:04x}" if code < 0x10000
                                                   else f"\\U{code:08x}")


def printable(value: object) -> str:
    """``value`` as text with every non-printable character escaped (see the module docstring)."""
    text = value if isinstance(value, str) else str(value)
    if text.isprintable():
        return text
    return "".join(_escape(ch) for ch in text)


def printable_lines(text: str) -> str:
    """Each line of ``text`` made printable, the line breaks themselves kept (for output that is
    several lines by design, e.g. a table)."""
    return "\n".join(printable(line) for line in text.split("\n"))
