"""Shared helpers for the tests of scripts/tcbench_tools.

Fixtures under fixtures/ are real Google Benchmark 1.7 output (see fixtures/gen/) with synthetic
numbers. Tests that need many variations start from one of them and replace the iteration rows'
real_time values, so the structure stays the one Google Benchmark writes.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FIXTURES = HERE / "fixtures"
sys.path.insert(0, str(REPO / "scripts"))

from tcbench_tools.cli import main  # noqa: E402


def fixture(name: str) -> Path:
    return FIXTURES / name


def load_doc(name: str) -> dict:
    return json.loads(fixture(name).read_text())


def _unit_scale(unit: str) -> float:
    return {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


def with_times(doc: dict, times: dict[str, list[float]]) -> dict:
    """A copy of ``doc`` whose benchmarks named in ``times`` (key without /manual_time) have
    exactly these per-repetition real times (seconds); their aggregate rows are dropped."""
    out = copy.deepcopy(doc)
    rows = []
    done = set()
    for row in out["benchmarks"]:
        key = row["run_name"].removesuffix("/manual_time")
        if key not in times:
            rows.append(row)
            continue
        if row["run_type"] == "aggregate" or key in done:
            continue
        done.add(key)
        for i, seconds in enumerate(times[key]):
            new = dict(row)
            new["repetition_index"] = i
            new["repetitions"] = len(times[key])
            new["real_time"] = seconds / _unit_scale(row["time_unit"])
            rows.append(new)
    missing = set(times) - done
    assert not missing, f"not in the template: {missing}"
    out["benchmarks"] = rows
    return out


def scaled(doc: dict, factor_by_name: dict[str, float]) -> dict:
    """A copy of ``doc`` with the real_time of every row of the named benchmarks multiplied
    (aggregates too, except cv which is scale-free)."""
    out = copy.deepcopy(doc)
    for row in out["benchmarks"]:
        key = row["run_name"].removesuffix("/manual_time")
        if key in factor_by_name and row.get("aggregate_name") != "cv":
            row["real_time"] *= factor_by_name[key]
    return out


def write(tmp_path: Path, name: str, doc: dict) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def noisy(rng: np.random.Generator, center: float, cv: float, n: int) -> list[float]:
    """n log-normal samples with median ``center`` and roughly the given relative spread."""
    return list(center * np.exp(rng.normal(0.0, cv, n)))


@pytest.fixture
def cli(capsys):
    """Run the CLI in-process: returns (exit code, stdout, stderr)."""

    def run(*argv: str) -> tuple[int, str, str]:
        code = main([str(a) for a in argv])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run
