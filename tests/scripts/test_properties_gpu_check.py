"""Property-based tests of gpu_check's readers of outside input: its
variables (TCBENCH_CHECK_BUDGET_S, TCBENCH_STEP_TIMEOUT_S, TCBENCH_BUILD_TIMEOUT_S) and --tier,
read before any step, and a bundle's MANIFEST.txt. The check itself is not run (a stand-in
takes its place once the values are read). Before, a value of "²" passed str.isdigit() and
int() raised: a traceback on the GPU box.
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

import properties as p

VALUES = st.one_of(p.hostile_text, st.sampled_from(
    ["450", "1", "0", "-5", "²", "٣", "1_000", " 60", "60s", "1e3", "9" * 30, "", "3600"]))


@settings(max_examples=p.examples(30))
@given(budget=VALUES, step=VALUES, build=VALUES, tier=st.sampled_from(["1", "2", "3", "4", "²"]))
@example(budget="²", step="180", build="3600", tier="1")
def test_the_variables_and_the_tier(tmp_path, monkeypatch, budget, step, build, tier):
    from tcbench_tools.gpu_check import cli, run

    monkeypatch.setattr(run.Check, "run", lambda self: 0)  # the values are what is tested
    for name, value in (("TCBENCH_CHECK_BUDGET_S", budget), ("TCBENCH_STEP_TIMEOUT_S", step),
                        ("TCBENCH_BUILD_TIMEOUT_S", build)):
        monkeypatch.delenv(name, raising=False)
        try:
            if "\x00" not in value and value.encode("utf-8", "surrogateescape"):
                monkeypatch.setenv(name, value)
        except UnicodeEncodeError:
            pass  # the environment cannot hold it
    o = p.run_cli_main(cli.main, [str(p.workdir(tmp_path)), "--tier", tier])
    p.check(o, {0, 2}, (budget, step, build, tier), prefix="gpu_check")


manifest_line = st.one_of(p.hostile_text, st.builds(
    "{} {} {}".format, st.sampled_from(["sha", "x"]),
    st.sampled_from(["10", "0", "²", "٣", "-1", "1" * 25, ""]) | p.hostile_text,
    st.sampled_from(["bin/bench_x", "../outside", "/etc/passwd", "bin", ""]) | p.hostile_text))


@settings(max_examples=p.examples(40))
@given(lines=st.lists(manifest_line, max_size=5))
@example(lines=["sha ² bin/bench_x"])
def test_a_bundles_manifest(tmp_path, lines):
    from tcbench_tools.gpu_check import bundle

    root = p.workdir(tmp_path)
    (root / "bin").mkdir()
    (root / "bin" / "bench_x").write_bytes(b"0123456789")
    text = "tcbench bundle\nfiles: 1\n" + "\n".join(lines) + "\n"
    (root / "MANIFEST.txt").write_bytes(text.encode("utf-8", "surrogatepass"))
    with p.time_limit():
        why = bundle.bundle_problem(root)
    assert why is None or isinstance(why, str)
