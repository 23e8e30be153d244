"""The plain-text verdict of ``history check``."""

from __future__ import annotations

from tcbench_tools.history.detect import Check
from tcbench_tools.tables import fmt_time, text_table


def check_text(result: Check) -> str:
    lines = [f"tcbench history check: {result.runs} runs, {result.series} series (benchmark x "
             f"GPU model x quick/full), {len(result.change_points)} change point(s)."]
    if result.change_points:
        rows = [["FAIL" if c.gates else ("new" if c.recent else ""), c.series.benchmark,
                 c.series.gpu, c.series.mode, c.run.run_id[:12],
                 c.run.time.strftime("%Y-%m-%d %H:%M"), (c.run.git_sha or "-")[:12],
                 fmt_time(c.before), fmt_time(c.after), f"{c.change_pct:+.1f}%",
                 f"{c.p_value:.1e}", c.direction, str(c.confirming)]
                for c in result.change_points]
        lines += ["", text_table(["gate", "benchmark", "GPU", "mode", "first run", "time",
                                  "git sha", "before", "after", "change", "p", "direction",
                                  "runs"], rows, {7, 8, 9, 10, 12}), ""]
    failing = result.failing
    if failing:
        lines.append(f"FAIL: {len(failing)} regression(s) beyond {result.threshold:g}% began "
                     f"within the newest {result.window} runs of their series and are confirmed "
                     "by at least 3 runs.")
    else:
        lines.append(f"PASS: no regression beyond {result.threshold:g}% began within the newest "
                     f"{result.window} runs of any series.")
    return "\n".join(lines)
