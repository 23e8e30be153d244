"""tcbench history check on real public change-point test data (fixtures/history_real/, whose
README names each source's repository, commit and path): every documented change is found, and
nothing is listed where the source documents none.

In memory for every series (the detection as ``history check`` runs it, default threshold and
floor); end to end (result files -> history add -> history check --json) on SQLite and on the
real PostgreSQL for Apache Otava's sample.csv.
"""

from __future__ import annotations

import json
from datetime import timedelta

import numpy as np
import pytest

import history_data as hd
from tcbench_tools.history import detect
from tcbench_tools.history.series import RunInfo, Series

REAL = hd.real_histories()
RUNS = [RunInfo(i, f"{i:064x}", hd.START.replace(tzinfo=None) + timedelta(days=i), f"{i:04d}",
                "G", False, {}) for i in range(400)]


def found(values: list[float]) -> list[detect.ChangePoint]:
    s = Series("b", "G", False, np.arange(len(values)), np.asarray(values, dtype=float), None,
               None)
    return detect.series_points(s, RUNS, detect.DEFAULT_WINDOW, detect.DEFAULT_THRESHOLD)[0]


def test_the_real_data_are_there():
    assert len(REAL) == 15
    assert {r.source.split("@")[0] for r in REAL} == {"apache/otava",
                                                      "mongodb/signal-processing-algorithms"}
    assert sum(len(r.changes) for r in REAL) == 17


@pytest.mark.parametrize("real", REAL, ids=[r.name for r in REAL])
def test_documented_changes_are_found_and_nothing_where_none(real):
    points = found(real.values)
    at = [c.index for c in points]
    for index, tolerance in real.changes:
        assert any(abs(i - index) <= tolerance for i in at), (real.source, index, at)
    for lo, hi in real.quiet:
        extra = [i for i in at if lo <= i < hi and i not in real.known_extra]
        assert not extra, (real.source, (lo, hi), extra)
    for index in real.known_extra:
        assert index in at, (real.source, index, at)


def test_tigerbeetle_in_detail():
    """The largest documented steps, with their sizes; the one-run anomaly at 10 is no level."""
    (real,) = [r for r in REAL if r.name == "otava_tigerbeetle"]
    points = {c.index: c for c in found(real.values)}
    assert points[15].change_pct == pytest.approx(-11.4, abs=0.5)
    assert points[71].change_pct == pytest.approx(16.0, abs=0.5)
    assert not any(9 <= i <= 12 for i in points)
    # A slow rise (97 to about 215) is summarised as steps above the floor, none below it listed.
    assert all(abs(c.change_pct) >= detect.default_floor(detect.DEFAULT_THRESHOLD)
               for c in points.values())


def _otava_sample_runs(tmp_path):
    (m1,) = [r for r in REAL if r.name == "otava_sample_csv/metric1"]
    (m2,) = [r for r in REAL if r.name == "otava_sample_csv/metric2"]
    docs = [hd.run_doc({"real/metric1/fp32": [a * 1e-9], "real/metric2/fp32": [b * 1e-3]},
                       when=hd.START + timedelta(days=i), git_sha=f"aaa{i}")
            for i, (a, b) in enumerate(zip(m1.values, m2.values))]
    return hd.write_runs(tmp_path / "runs", docs)


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_otava_sample_end_to_end(cli, tmp_path, database, request):
    db = (str(tmp_path / "h.sqlite") if database == "sqlite"
          else request.getfixturevalue("pg_url"))
    code, out, err = cli("history", "add", *_otava_sample_runs(tmp_path), "--db", db)
    assert code == 0, err
    code, out, err = cli("history", "check", "--db", db, "--json")
    assert code == 0, err  # an improvement never fails
    (c,) = json.loads(out)["change_points"]
    assert c["benchmark"] == "real/metric2/fp32" and c["git_sha"] == "aaa6"
    assert c["direction"] == "improvement" and c["change_pct"] == pytest.approx(-12.2, abs=0.5)
