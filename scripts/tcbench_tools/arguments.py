"""Converters for command-line and config values, defined once for every command.

Each ``argparse`` converter raises ``argparse.ArgumentTypeError`` with the reason, which argparse
prints after the option's name with the usage (exit 2). ``percent`` is also what ``compare``
reads a config file's thresholds with. Standard library only: ``tcbench run`` imports this.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable

from tcbench_tools.printable import printable

# A whole number as the tools read one from outside (arguments, records, other tools' output):
# ASCII digits only. int() also takes "٣", "1_000", " 7" and "+7", and str.isdigit() also
# "²", which int() then refuses: neither is a number a user or a tool writes.
_ASCII_DIGITS = re.compile(r"[0-9]+", re.ASCII)
MAX_DIGITS = 18  # every count, index and id the tools read fits in int64


def ascii_int(text: object) -> int | None:
    """``text`` as a non-negative whole number when it is 1 to 18 ASCII digits; else None."""
    if not isinstance(text, str) or len(text) > MAX_DIGITS or not _ASCII_DIGITS.fullmatch(text):
        return None
    return int(text)


def percent(value: object) -> float:
    """``5``, ``5.0`` or ``"5%"`` -> 0.05; ValueError with the reason otherwise."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a percentage")
    text = str(value).strip()
    try:
        number = float(text[:-1] if text.endswith("%") else text)
    except ValueError:
        raise ValueError(f"{value!r} is not a percentage (write e.g. 5 or \"5%\")") from None
    if not math.isfinite(number) or number <= 0 or number >= 1000:
        raise ValueError(f"{value!r} must be a percentage above 0")
    return number / 100.0


def whole_number(low: int, high: int | None = None) -> Callable[[str], int]:
    """A converter for a whole number in [low, high] (high: no limit when None)."""

    def whole(text: str) -> int:
        value = ascii_int(text)
        if value is None:
            raise argparse.ArgumentTypeError(f"{printable(text)!r} is not a whole number "
                                             "(digits 0-9)")
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(
                f"must be {low} or more" if high is None else f"must be between {low} and {high}")
        return value

    return whole


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0 or not math.isfinite(value):
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


def significance(text: str) -> float:
    """A significance level, strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError("must be between 0 and 1")
    return value


def threshold(text: str) -> float:
    """--threshold: a percentage, returned as a fraction."""
    try:
        return percent(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


positive_int = whole_number(1)
