"""``history add``: results -> one run each, with its provenance, stored in one transaction.

A path is a result file, a run folder, or a folder of run folders: ``tcbench run``'s, each
``gpu<N>/`` of ``--device all``, a GPU check's ``results/``, each ``<partition>/<node>-<gpu>/``
of a fleet (runfile.run_folders finds them all). Each run folder is one run; the GPU state the
check recorded in it before the suite (``nvidia-smi-before.txt``) adds the clocks and power.

Every input is read and checked before the database is opened, so bad input changes nothing.
A run's id is the sha256 of its canonical content (context and rows, keys sorted), so adding
the same run again, from the same or another path, stores nothing new.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from tcbench_tools import files, runfile, schema
from tcbench_tools.errors import InputError
from tcbench_tools.history import arrays, forked, store
from tcbench_tools.names import short_path
from tcbench_tools.printable import printable
from tcbench_tools.results import Benchmark, ResultSet, load

# Context keys that tcbench run adds when it merges files: how a run was put together, not what
# it measured (left out of the run id so the same measurements get the same id).
_BOOKKEEPING = frozenset({schema.RUN_BINARIES, schema.RUN_SOURCES})
# Context -> runs columns (text).
_TEXT_COLUMNS = {"git_sha": "git_sha", "tcbench_version": "tcbench_version",
                 "gpu_uuid": "gpu_uuid", "compute_capability": "compute_capability",
                 "driver_version": "driver_version", "cuda_runtime": "cuda_runtime",
                 "cublaslt_version": "cublaslt_version", "host_name": "host"}
_GPU_STATE = "nvidia-smi-before.txt"


@dataclass
class Result:
    name: str
    status: str  # ok, skipped, failed, unusable
    median: float | None = None
    p10: float | None = None
    p90: float | None = None
    repetitions: int | None = None
    cv: float | None = None
    message: str | None = None
    counters: dict[str, float] = field(default_factory=dict)


@dataclass
class Run:
    run_id: str
    source: str
    time: datetime  # UTC, naive
    gpu_name: str
    quick: bool
    columns: dict  # the other runs columns
    values: dict[str, float]  # run_values: numeric context without a column
    context: dict
    results: list[Result]
    # Why it is incomplete (a result file cut short, a run stopped early); None: a whole run.
    incomplete: str | None = None


# --------------------------------------------------------------------------------------------
# Paths -> result sets
# --------------------------------------------------------------------------------------------

def _gpu_state(folder: Path) -> dict[str, dict[str, str]]:
    """The CSV table gpu_check.sh recorded with nvidia-smi --query-gpu, one dict per GPU row
    (header names with their units, as nvidia-smi writes them); {} when absent or unreadable."""
    try:
        lines = files.read_text(folder / _GPU_STATE, files.RECORD_LIMIT, "nvidia-smi table",
                                errors="replace").splitlines()
    except InputError:
        return {}
    for i, line in enumerate(lines):
        if line.startswith("index, name, pci.bus_id"):
            header = [h.strip() for h in line.split(",")]
            rows = {}
            for row in lines[i + 1:]:
                cells = [c.strip() for c in row.split(",")]
                if len(cells) != len(header):
                    break
                item = dict(zip(header, cells))
                rows[item.get("uuid", str(len(rows)))] = item
            return rows
    return {}


_UNIT = re.compile(r"^(?P<name>[^\[]+?)\s*(\[(?P<unit>[^\]]+)\])?$")


def _smi_values(row: dict[str, str]) -> dict[str, float]:
    """The numeric fields of one nvidia-smi CSV row as run values ``nvidia_smi.<field>_<unit>``."""
    out = {}
    for head, cell in row.items():
        m = _UNIT.match(head)
        if not m:
            continue
        number = cell.split()[0] if cell.split() else ""
        try:
            value = float(number)
        except ValueError:
            continue
        if math.isfinite(value):
            unit = m.group("unit")
            out[f"nvidia_smi.{m.group('name')}" + (f"_{unit}" if unit else "")] = value
    return out


def result_sets(path: Path) -> list[tuple[ResultSet, dict[str, float]]]:
    """The runs a path holds (runfile.run_folders, as every reader finds them), each with the GPU
    state its run folder recorded before the run."""
    out = []
    for run in runfile.run_folders(path):
        rs = load(run)
        state = _gpu_state(run) if run.is_dir() else {}
        uuid = rs.context.get("gpu_uuid")
        row = state.get(uuid) if isinstance(uuid, str) else None
        if row is None and len(state) == 1:
            row = next(iter(state.values()))
        out.append((rs, _smi_values(row) if row else {}))
    return out


# --------------------------------------------------------------------------------------------
# Result set -> run
# --------------------------------------------------------------------------------------------

def _canonical_rows(bench: Benchmark) -> list[dict]:
    rows = bench.iterations + [bench.aggregates[k] for k in sorted(bench.aggregates)]
    return [{k: v for k, v in row.items() if k != schema.ROW_BINARY} if schema.ROW_BINARY in row
            else row for row in rows]


def run_id(rs: ResultSet) -> str:
    """sha256 of the run's canonical JSON: its context (without merge bookkeeping) and every
    benchmark's rows, keys sorted; the same measurements always give the same id."""
    doc = {"context": {k: v for k, v in rs.context.items() if k not in _BOOKKEEPING},
           "benchmarks": {name: (_canonical_rows(b), b.error)
                          for name, b in sorted(rs.benchmarks.items())}}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _text(context: dict, key: str) -> str | None:
    """A provenance column's text: at most store.TEXT_LIMIT characters (the context JSON keeps
    the whole value), the same in both databases."""
    raw = context.get(key)
    if raw is None or isinstance(raw, (dict, list)):
        return None
    text = printable(str(raw).strip())
    return text[:store.TEXT_LIMIT] or None


# The dates a run may have (UTC): none of tcbench's runs is older, and a later one is a runner
# whose clock is wrong. Each series is ordered by it, so a date outside is refused.
EARLIEST = datetime(2000, 1, 1)
LATEST = datetime(2100, 1, 1)


def _time(rs: ResultSet) -> datetime:
    raw = rs.context.get("date")
    if not isinstance(raw, str):
        raise InputError(f"{rs.path} has no date in its context: history cannot place the run "
                         "in time.")
    shown = printable(raw[:40])
    try:
        when = datetime.fromisoformat(raw.strip())
        if when.tzinfo is not None:  # Google Benchmark writes the local offset; keep UTC
            when = when.astimezone(timezone.utc).replace(tzinfo=None)
    except ValueError:
        raise InputError(f"{rs.path}: its context date {shown!r} is not an ISO 8601 "
                         "time.") from None
    except OverflowError:  # 0001-01-01T00:00:00+01:00 is a time before year 1 in UTC
        raise InputError(f"{rs.path}: its context date {shown!r} lies outside the years a "
                         "date can hold once converted to UTC.") from None
    if not EARLIEST <= when < LATEST:
        raise InputError(f"{rs.path}: its context date {shown!r} lies outside the years "
                         f"{EARLIEST.year}-{LATEST.year - 1} (UTC): no tcbench run has such a "
                         "date (is the runner's clock wrong?).")
    return when


def _check_names(rs: ResultSet, counters: dict[str, list[str]]) -> None:
    """The names that key a row of the history (benchmark, GPU and counter names) fit the one
    limit both databases index (store.TEXT_LIMIT characters): checked before either sees them,
    so that SQLite and PostgreSQL store the same runs. ``counters``: each benchmark's counter
    names (read once: a run of 2000 benchmarks has 18,000 rows to look through)."""
    limit = store.TEXT_LIMIT
    gpu = printable(str(rs.context.get("gpu_name", "")).strip())
    if len(gpu) > limit:
        raise InputError(f"{rs.path}: its gpu_name has {len(gpu)} characters, more than the "
                         f"{limit} the history keys a series with.")
    for name, bench in rs.benchmarks.items():
        if len(name) > limit:
            raise InputError(f"{rs.path}: benchmark {printable(name[:60])!r}... has a name of "
                             f"{len(name)} characters, more than the {limit} the history keys a "
                             "benchmark with.")
        for counter in counters[name]:
            if len(printable(counter)) > limit:
                raise InputError(f"{rs.path}: benchmark {printable(name[:60])!r} has a counter "
                                 f"named with {len(counter)} characters, more than the {limit} "
                                 "the history keeps.")


def _percentile(values: list[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default 'linear' method)."""
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _invalid(rs: ResultSet, name: str, reason: str) -> InputError:
    return InputError(f"{rs.path}: benchmark {name!r}: {reason}; history keeps no value that "
                      "no measurement gives (fix or regenerate the file).")


def _result(rs: ResultSet, bench: Benchmark, counters: list[str]) -> Result:
    if bench.skipped:
        return Result(bench.name, "skipped", message=bench.skip_reason[:1000])
    if bench.failed:
        return Result(bench.name, "failed", message=bench.error[:1000])
    # The sample exists exactly when the value has no defect (results.Benchmark.sample): ask
    # for the defect only to say why there is none.
    sample = bench.sample("time")  # every repetition > 0 (defect checks the physical range)
    if sample is None:
        defect = bench.defect("time")
        if defect is not None and defect.invalid:
            raise _invalid(rs, bench.name, defect.reason)
        return Result(bench.name, "unusable",
                      message=defect.reason if defect is not None else "it has no time")
    out = Result(bench.name, "ok", sample.center, repetitions=sample.count, cv=sample.cv)
    if sample.values:
        out.p10, out.p90 = _percentile(sample.values, 0.1), _percentile(sample.values, 0.9)
    for counter in counters:
        value = bench.sample(counter)
        if value is None:
            defect = bench.defect(counter)
            if defect is not None and defect.invalid:
                raise _invalid(rs, bench.name, defect.reason)
            continue
        if math.isfinite(value.center):
            out.counters[printable(counter)] = value.center
    return out


def to_run(rs: ResultSet, extra: dict[str, float], rid: str | None = None) -> Run:
    """The run of a result set, checked; ``rid``: its run id when already known."""
    if not rs.has_tcbench_context:
        raise InputError(f"{rs.path} has no tcbench provenance (no gpu_name, tcbench_version "
                         "or compute_capability in its context): history keeps only runs of "
                         "the tcbench binaries.")
    context = rs.context
    gpu = _text(context, "gpu_name")
    if gpu is None:
        raise InputError(f"{rs.path} has no gpu_name in its context: its series cannot be "
                         "told apart from another GPU's.")
    quick = context.get("tcbench_quick")
    if quick not in ("true", "false"):
        raise InputError(f"{rs.path} has no tcbench_quick 'true' or 'false' in its context: "
                         "whether it is a quick or a full run is unknown.")
    counters = {name: b.counter_names() for name, b in rs.benchmarks.items()}
    _check_names(rs, counters)
    results = [_result(rs, b, counters[name]) for name, b in sorted(rs.benchmarks.items())]
    reps = Counter(r.repetitions for r in results if r.repetitions)
    columns = {col: _text(context, key) for key, col in _TEXT_COLUMNS.items()}
    numbers = store.numeric_values(context)
    values = {k: v for k, v in numbers.items() if k not in store.COLUMN_KEYS}
    values.update(extra)
    columns.update(
        repetitions=reps.most_common(1)[0][0] if reps else None,
        sm_clock_mhz=numbers.get("sm_clock_mhz"), mem_clock_mhz=numbers.get("mem_clock_mhz"),
        power_draw_w=numbers.get("power_draw_w", extra.get("nvidia_smi.power.draw_W")),
        power_limit_w=numbers.get("power_limit_w", extra.get("nvidia_smi.power.limit_W")))
    return Run(rid or run_id(rs), rs.path, _time(rs), gpu, quick == "true", columns, values,
               context, results, incomplete(rs))


def incomplete(rs: ResultSet) -> str | None:
    """Why a run is incomplete, in one sentence without its final full stop: a result file cut
    short (how many of its rows were kept, which planned ones never ran), or a run that
    ``tcbench run`` stopped before every binary ran (its context's tcbench_incomplete). None
    for a whole run."""
    parts = []
    if rs.partial:
        parts.append(rs.partial)
        if rs.never_ran:
            parts.append(f"{len(rs.never_ran)} planned benchmark(s) never ran: "
                         + ", ".join(rs.never_ran[:3])
                         + (f" and {len(rs.never_ran) - 3} more" if len(rs.never_ran) > 3 else ""))
    stopped = rs.context.get(schema.RUN_INCOMPLETE)
    if isinstance(stopped, str) and stopped.strip():
        parts.append(f"{short_path(rs.path)}: its run stopped early ({stopped.strip()})")
    if not parts:
        return None
    return printable("; ".join(parts))[:store.TEXT_LIMIT].rstrip(". ")


def read(paths: list[Path]) -> list[Run]:
    """Every run the paths hold, checked; the first problem is an InputError. Large inputs are
    read in a forked child while this process imports the database layer."""
    if forked.can_fork() and _input_bytes(paths) >= READ_IN_CHILD_FROM:
        reading = forked.ForkedCall(_read, paths)
        store._sa()  # meanwhile
        try:
            return reading.result()
        except forked.ChildFailed as exc:  # an error of the tools: this process's internal error
            raise RuntimeError(f"reading the runs failed: {exc}") from None
    runs = _read(paths)
    store._sa()
    return runs


def _read(paths: list[Path]) -> list[Run]:
    sets = [item for path in paths for item in result_sets(path)]
    ids = RunIds([rs for rs, _ in sets])
    runs = [to_run(rs, extra, rid="-") for rs, extra in sets]  # every check, in this process
    for run, rid in zip(runs, ids.result()):
        run.run_id = rid
    return runs


# Reading and checking a run of 2000 benchmarks with 5 repetitions (a 10 MB results.json) takes
# about 0.6 s, importing SQLAlchemy about 0.35 s, and hashing the run about 0.2 s. From this
# many bytes of input on, a forked child reads and checks (and a child of its own hashes) while
# this process imports SQLAlchemy: history add of such a run in about a second on two cores.
READ_IN_CHILD_FROM = 2 * 2**20


def _input_bytes(paths: list[Path]) -> int:
    total = 0
    for path in paths:
        try:
            total += (path.stat().st_size if path.is_file()
                      else sum(f.stat().st_size for f in path.glob("*.json")))
        except OSError:
            continue  # the reader says what is wrong with it
    return total


# A run id hashes the run's whole canonical JSON: for 2000 benchmarks with 5 repetitions, a
# quarter of a second of encoding, as long as importing the database layer. From this many
# benchmarks on, a forked child computes the ids while this process checks the values and
# imports SQLAlchemy.
HASH_IN_CHILD_FROM = 500


def _run_ids(sets: list[ResultSet]) -> list[str]:
    return [run_id(rs) for rs in sets]


class RunIds:
    """The run ids of result sets, computed in a forked child when they are many benchmarks
    (and fork exists), else when asked for. The child only hashes: every check, and any error,
    stays in this process; a child that fails leaves the work to it."""

    def __init__(self, sets: list[ResultSet]):
        self.sets, self.hashing = sets, None
        if forked.can_fork() and sum(len(rs.benchmarks) for rs in sets) >= HASH_IN_CHILD_FROM:
            self.hashing = forked.ForkedCall(_run_ids, sets)

    def result(self) -> list[str]:
        if self.hashing is not None:
            try:
                ids = self.hashing.result()
                if len(ids) == len(self.sets):
                    return ids
            except Exception:  # noqa: BLE001 - the child failed: hash here, where errors show
                pass
        return _run_ids(self.sets)


# --------------------------------------------------------------------------------------------
# Storing
# --------------------------------------------------------------------------------------------

def _benchmark_ids(conn, names: set[str]) -> dict[str, int]:
    sa = store._sa()
    bench = store.table("benchmarks")
    known = dict(conn.execute(sa.select(bench.c.name, bench.c.id)).all())
    new = sorted(names - known.keys())
    if new:
        conn.execute(bench.insert(), [{"name": n} for n in new])
        for chunk in range(0, len(new), 500):
            part = new[chunk:chunk + 500]
            known.update(conn.execute(sa.select(bench.c.name, bench.c.id).where(
                bench.c.name.in_(part))).all())
    return known


def _stored(context: dict) -> dict:
    """The context a run keeps: without the schema every file carries (the vocabulary, about
    15 kB, not a property of the run)."""
    return {k: v for k, v in context.items() if k != schema.CONTEXT_KEY}


def _store_run(conn, run: Run, ids: dict[str, int]) -> None:
    runs = store.table("runs")
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    key = conn.execute(runs.insert().values(
        run_id=run.run_id, time=run.time, added=now, gpu_name=run.gpu_name, quick=run.quick,
        source=run.source[:4000], context=json.dumps(_stored(run.context), sort_keys=True,
                                                     default=str),
        incomplete=run.incomplete, **run.columns)).inserted_primary_key[0]
    rows, counters = [], []
    for r in run.results:
        bench = ids[r.name]
        rows.append({"run": key, "benchmark": bench, "status": r.status, "median": r.median,
                     "p10": r.p10, "p90": r.p90, "repetitions": r.repetitions, "cv": r.cv,
                     "message": r.message})
        counters += [{"run": key, "benchmark": bench, "name": n, "value": v}
                     for n, v in r.counters.items()]
    conn.execute(store.table("results").insert(), rows)
    conn.execute(store.table("run_arrays").insert().values(run=key, **arrays.pack(
        [(row["benchmark"], row["median"], row["p10"], row["p90"]) for row in rows
         if row["status"] == "ok"])))
    if counters:
        conn.execute(store.table("counters").insert(), counters)
    if run.values:
        conn.execute(store.table("run_values").insert(),
                     [{"run": key, "key": k, "value": v} for k, v in run.values.items()])


def add(db: store.Store, runs: list[Run]) -> tuple[list[Run], list[Run]]:
    """Store the runs in one transaction: (added, already there). A run given twice is stored
    once; its second copy counts as already there."""
    sa = store._sa()
    unique: dict[str, Run] = {}
    repeated = []
    for run in runs:
        if run.run_id in unique:
            repeated.append(run)
        unique.setdefault(run.run_id, run)
    added, present = [], []
    with db.writing() as conn:
        table = store.table("runs")
        have = set()
        ids_wanted = list(unique)
        for chunk in range(0, len(ids_wanted), 500):
            have.update(conn.execute(sa.select(table.c.run_id).where(
                table.c.run_id.in_(ids_wanted[chunk:chunk + 500]))).scalars())
        todo = [r for r in unique.values() if r.run_id not in have]
        present = [r for r in unique.values() if r.run_id in have] + repeated
        if todo:
            ids = _benchmark_ids(conn, {r.name for run in todo for r in run.results})
            for run in todo:
                _store_run(conn, run, ids)
                added.append(run)
    return added, present
