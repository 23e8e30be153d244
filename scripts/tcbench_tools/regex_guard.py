"""A bound on what a user's regular expression may cost before a backtracking engine runs it.

Python's ``re`` (and libstdc++'s ``std::regex``, which Google Benchmark's filter uses) backtrack:
``(a+)+b``, ``(.|a)*x`` take time exponential in the length of the name they fail to match, and
``.*.*.*.*x`` time polynomial of degree 5 (93 s over 2000 benchmark names on this project's CI
machine). Rather than hang, ``compare --config`` refuses, with a sentence, any threshold pattern:

- longer than 1000 characters;
- with a quantifier applied to something that holds a quantifier or an alternation
  (``(a+)+``, ``(a|ab)*``, ``(x*){3}``): the nested repetitions that backtrack exponentially;
- with more than 2 unbounded quantifiers (``*``, ``+``, ``{n,}``) or more than 10 quantifiers in
  all; a counted repetition above 255 (POSIX's RE_DUP_MAX);
- with a backreference, a lookaround or a conditional group (no bound is known for them).

Patterns people write (``^alignment/.*k:4095``, ``cublaslt/(fp16|bf16)/m:4096``,
``/m:[0-9]+/n:[0-9]+``) pass. (The benchmark binaries need no such rule for
``--benchmark_filter``: they match it with a linear-time automaton of their own,
common/bench/src/name_filter.cpp, and never hand it to Google Benchmark's backtracking matcher.)
"""

from __future__ import annotations

from re import _constants as _c  # the re module's own parser (Python 3.11, which the tools need)
from re import _parser as _sre_parse

MAX_LENGTH = 1000
MAX_UNBOUNDED = 2
MAX_QUANTIFIERS = 10
MAX_COUNT = 255

_REPEATS = {_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT}
_UNBOUNDED_LIMIT = _c.MAXREPEAT


def _holds_repetition(items) -> bool:
    """Whether a parsed subpattern holds a quantifier or an alternation, at any depth."""
    for op, av in items:
        if op in _REPEATS or op is _c.BRANCH:
            return True
        if op is _c.SUBPATTERN and _holds_repetition(av[3]):
            return True
        if getattr(_c, "ATOMIC_GROUP", None) is op and _holds_repetition(av):
            return True
    return False


class _Count:
    def __init__(self) -> None:
        self.unbounded = 0
        self.all = 0


def _walk(items, count: _Count) -> str | None:
    for op, av in items:
        if op in _REPEATS:
            low, high, sub = av
            count.all += 1
            if high == _UNBOUNDED_LIMIT:
                count.unbounded += 1
            elif high > MAX_COUNT:
                return f"it repeats something {high} times (at most {MAX_COUNT})"
            if low > MAX_COUNT and low != _UNBOUNDED_LIMIT:
                return f"it repeats something {low} times (at most {MAX_COUNT})"
            if _holds_repetition(sub):
                return ("it applies a quantifier to a group that holds a quantifier or an "
                        "alternation (such as (a+)+ or (a|b)*), which a backtracking engine may "
                        "need exponential time to fail")
            found = _walk(sub, count)
        elif op is _c.SUBPATTERN:
            found = _walk(av[3], count)
        elif op is _c.BRANCH:
            found = next((f for f in (_walk(b, count) for b in av[1]) if f), None)
        elif op in (_c.GROUPREF, _c.GROUPREF_EXISTS):
            found = "it holds a backreference or a conditional group, whose cost has no bound"
        elif op in (_c.ASSERT, _c.ASSERT_NOT):
            found = "it holds a lookahead or lookbehind, whose cost has no bound"
        elif getattr(_c, "ATOMIC_GROUP", None) is op:
            found = _walk(av, count)
        else:
            found = None
        if found:
            return found
    return None


def cost_problem(pattern: str) -> str | None:
    """Why ``pattern`` may take a backtracking engine too long (a clause for a sentence), or
    None when it is bounded. ``pattern`` must compile (``re.compile``) already."""
    if len(pattern) > MAX_LENGTH:
        return f"it is {len(pattern)} characters long (at most {MAX_LENGTH})"
    count = _Count()
    found = _walk(_sre_parse.parse(pattern), count)
    if found:
        return found
    if count.unbounded > MAX_UNBOUNDED:
        return (f"it holds {count.unbounded} unbounded quantifiers (*, + or {{n,}}; at most "
                f"{MAX_UNBOUNDED}), whose cost grows as a power of the name's length")
    if count.all > MAX_QUANTIFIERS:
        return f"it holds {count.all} quantifiers (at most {MAX_QUANTIFIERS})"
    return None
