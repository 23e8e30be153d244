"""``tcbench history add|check|dashboard``: every run kept, change points, a dashboard.

Exit codes: 0 ok (check: no gating regression); 1 check found a regression beyond the threshold
that began within the newest runs of its series and is confirmed by at least 3 runs; 2 usage or
input error (not a results file, a run without provenance, a database that cannot be reached or
is not tcbench's); 70 a bug in the tools.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tcbench_tools.arguments import whole_number
from tcbench_tools.errors import EXIT_FAIL, EXIT_OK
from tcbench_tools.printable import printable

WHERE = ("The database is --db, else $TCBENCH_HISTORY_DB, else results/history.sqlite. See "
         "docs/history.md.")
EPILOG = ("Exit codes: 0 ok; 1 (check) a regression beyond the threshold began within the newest "
          f"runs and 3 runs are at its new level; 2 usage or input error. {WHERE}")
ADD_EPILOG = ("Exit codes: 0 stored (a run already there is said and skipped); 2 usage or input "
              f"error: nothing is stored. {WHERE}")
DASHBOARD_EPILOG = f"Exit codes: 0 written; 2 usage or input error. {WHERE}"


_window = whole_number(1, 100000)


def _db_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", metavar="URL",
                   help="sqlite:///PATH, a file path, or postgresql://USER[:PASS]@HOST[:PORT]/DB "
                        "(default: $TCBENCH_HISTORY_DB, else results/history.sqlite)")


def add_parser(sub) -> None:
    h = sub.add_parser("history", help="keep every run in a database; find regressions as "
                                       "change points; a dashboard",
                       description="A performance history: runs with their provenance in "
                                   "SQLite or PostgreSQL, change-point detection per series "
                                   "(benchmark x GPU model x quick/full), a static dashboard.",
                       epilog=EPILOG)
    hs = h.add_subparsers(dest="history_command", metavar="ACTION", required=True)
    a = hs.add_parser("add", help="store runs with their provenance (the same run twice: once)",
                      description="RESULTS: result files, tcbench run folders, fleet folders "
                                  "(every finished task) or gpu_check.sh output folders. All of "
                                  "them are read and checked first, then stored in one "
                                  "transaction.", epilog=ADD_EPILOG)
    a.add_argument("results", nargs="+", type=Path, metavar="RESULTS")
    _db_option(a)
    c = hs.add_parser("check", help="change points per series; exit 1 on a new regression",
                      description="Finds level changes in each series' time (binary "
                                  "segmentation with a penalty from the series' own noise, then "
                                  "each boundary tested against the whole segments beside it, "
                                  "the weakest merged first) and fails when a regression beyond "
                                  "the threshold began within the newest --window runs of its "
                                  "series and at least 3 runs are at the new level.",
                      epilog=EPILOG)
    _db_option(c)
    c.add_argument("--window", type=_window, default=5, metavar="N",
                   help="a regression gates when it begins within the newest N runs of its "
                        "series (default: 5)")
    c.add_argument("--threshold", default="5", metavar="PCT",
                   help="slowdown in percent that gates (default: 5, as compare)")
    _floor_option(c)
    c.add_argument("--json", action="store_true", help="print the result as JSON")
    d = hs.add_parser("dashboard", help="one static HTML page of every series",
                      description="DIR/index.html and its PNG plots: per GPU and topic, each "
                                  "benchmark's time over the runs with its p10-p90 band and "
                                  "change points; the newest regressions at the top; each run's "
                                  "provenance.", epilog=DASHBOARD_EPILOG)
    _db_option(d)
    d.add_argument("--out", type=Path, required=True, metavar="DIR",
                   help="folder for index.html and its PNG plots (created if missing)")
    d.add_argument("--window", type=_window, default=5, metavar="N",
                   help="as for check: which regressions are marked as new (default: 5)")
    d.add_argument("--threshold", default="5", metavar="PCT", help="as for check (default: 5)")
    _floor_option(d)
    h.set_defaults(func=run)


def _floor_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--min-magnitude", metavar="PCT",
                   help="reporting floor: a change smaller than PCT percent is neither listed "
                        "nor gated (the dashboard draws it, marked below the floor); default: "
                        "half the threshold")


def _store(args: argparse.Namespace):
    from tcbench_tools.history import store

    return store.Store(args.db or store.default_url())


def _add(args: argparse.Namespace) -> int:
    from tcbench_tools.history import ingest, text

    runs = ingest.read(args.results)  # every input checked before the database is touched
    db = _store(args)
    added, present = ingest.add(db, runs)
    benchmarks = sum(len(r.results) for r in added)
    print(f"tcbench history: {len(added)} run(s) added ({benchmarks} benchmark results), "
          f"{len(present)} already there, in {db.where}.")
    for run in present:
        print(printable(f"tcbench history: already there: {run.run_id[:12]} from {run.source}."))
    for run in added:
        if run.incomplete:
            print(printable(f"tcbench history: {text.incomplete_note(run)}"))
    note = text.synthetic_note(added + present)
    if note:
        print(f"tcbench history: {note}")
    return EXIT_OK


def _percent(text: str, option: str) -> float:
    from tcbench_tools.compare import parse_percent

    return parse_percent(text, option) * 100.0


def _limits(args: argparse.Namespace) -> tuple[float, float]:
    """(threshold, reporting floor) in percent."""
    from tcbench_tools.history import detect

    threshold = _percent(args.threshold, "--threshold")
    floor = (detect.default_floor(threshold) if args.min_magnitude is None
             else _percent(args.min_magnitude, "--min-magnitude"))
    return threshold, floor


def _history(db, bands: bool = True):
    """Every series of the database; a database without runs is an input error."""
    from tcbench_tools.errors import InputError
    from tcbench_tools.history import series

    with db.reading() as conn:
        history = series.load(conn, bands)
    if not history.runs:
        raise InputError(f"the history database {db.where} holds no runs yet (history add "
                         "stores some).")
    return history


def _check(args: argparse.Namespace) -> int:
    from tcbench_tools.history import detect, text

    threshold, floor = _limits(args)
    db = _store(args)
    history = _history(db, bands=False)
    result = detect.check(history, args.window, threshold, floor)
    if args.json:
        print(json.dumps(detect.as_json(result), indent=2))
    else:
        print(text.check_text(result))
    return EXIT_FAIL if result.failing else EXIT_OK


def _dashboard(args: argparse.Namespace) -> int:
    from tcbench_tools.history import dashboard, detect

    threshold, floor = _limits(args)
    history = _history(_store(args))
    result = detect.check(history, args.window, threshold, floor)
    page, images = dashboard.write(history, result, args.out)
    print(f"tcbench history: dashboard of {len(history.runs)} runs, {len(history.series)} "
          f"series -> {page} ({images} plots).")
    return EXIT_OK


def run(args: argparse.Namespace, extra: list[str] | None = None) -> int:
    if extra:
        print("tcbench: arguments after '--' are not for 'history'.", file=sys.stderr)
        return 2
    return {"add": _add, "check": _check, "dashboard": _dashboard}[args.history_command](args)
