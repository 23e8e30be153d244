"""The plain-text verdict of ``history check``, and the synthetic-data note of ``history add``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tcbench_tools import synthetic
from tcbench_tools.names import short_path
from tcbench_tools.printable import printable
from tcbench_tools.tables import fmt_time, text_table

if TYPE_CHECKING:  # history add imports this module too, and needs neither numpy nor detect
    from tcbench_tools.history.detect import Check


def p_text(p: float) -> str:
    """A p-value as the tables show it; one below the smallest double is "<1e-300" (thousands
    of runs on either side of a large step), not a 0 that reads as certainty."""
    return f"{p:.1e}" if p >= 1e-300 else "<1e-300"


def synthetic_note(runs: list) -> str | None:
    """The sentence ``history add`` prints when a run carries tcbench_synthetic (``runs``:
    ingest.Run objects), as compare and report mark such inputs; None when none does."""
    fake = [r for r in runs if synthetic.is_synthetic(r.context)]
    if not fake:
        return None
    listed = ", ".join(printable(short_path(r.source)) for r in fake[:5])  # a path's controls
    listed += f" and {len(fake) - 5} more" if len(fake) > 5 else ""
    return (f"{synthetic.MARK}: {len(fake)} of the {len(runs)} run(s) ({listed}) carry the "
            f"context key {synthetic.KEY}: test fixtures, not measurements; the history keeps "
            "them, and its dashboard marks them.")


def incomplete_note(run) -> str:
    """What ``history add`` says of an incomplete run (``run``: an ingest.Run)."""
    return (f"INCOMPLETE: {run.incomplete}; stored marked incomplete, so check takes no change "
            "from it.")


def check_text(result: Check) -> str:
    lines = [f"tcbench history check: {result.runs} runs, {result.series} series (benchmark x "
             f"GPU model x quick/full x environment), {len(result.change_points)} change "
             f"point(s) of at least {result.floor:g}% (the reporting floor; "
             f"{len(result.below_floor)} smaller ones not listed)."]
    if result.incomplete:
        lines.append(f"INCOMPLETE: {result.incomplete} run(s) were cut short or stopped early; "
                     "they are in no series, so no change is found or confirmed with them.")
    if any(c.series.synthetic for c in result.change_points):
        lines.append(f"{synthetic.MARK}: change points marked * come from runs that carry "
                     f"{synthetic.KEY} (test fixtures, not measurements).")
    if result.change_points:
        rows = [["FAIL" if c.gates else ("new" if c.recent else ""),
                 c.series.benchmark + (" *" if c.series.synthetic else ""),
                 c.series.gpu, c.series.mode, c.run.run_id[:12],
                 c.run.time.strftime("%Y-%m-%d %H:%M"), (c.run.git_sha or "-")[:12],
                 fmt_time(c.before), fmt_time(c.after), f"{c.change_pct:+.1f}%",
                 p_text(c.p_value), c.direction, str(c.confirming)]
                for c in result.change_points]
        lines += ["", text_table(["gate", "benchmark", "GPU", "mode", "first run", "time",
                                  "git sha", "before", "after", "change", "p", "direction",
                                  "runs"], rows, {7, 8, 9, 10, 12}), ""]
    failing = result.failing
    if failing:
        lines.append(f"FAIL: {len(failing)} regression(s) beyond {result.threshold:g}% began "
                     f"within the newest {result.window} runs of their series and at least 3 "
                     "runs are at the new level.")
    else:
        lines.append(f"PASS: no regression beyond {result.threshold:g}% began within the newest "
                     f"{result.window} runs of any series.")
    return "\n".join(lines)

