"""docs/concepts/alignment.md's model tables are the model's (tools/model/alignment_tables.py):
every table between <!-- predicted:NAME --> markers, and the numbers its claim block quotes."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import REPO, model_tool
from tcbench_tools import model_cmd, published

sys.path.insert(0, str(REPO / "tools" / "model"))
import alignment_tables  # noqa: E402  (tools/model, put on the path above)


def test_the_alignment_page_carries_the_models_tables():
    fresh = alignment_tables.tables(model_tool())
    page = alignment_tables.PAGE.read_text(encoding="utf-8")
    for name, table in fresh.items():
        assert alignment_tables.between(page, name) == table, (
            f"docs/concepts/alignment.md table '{name}' is stale: run "
            f".venv/bin/python tools/model/alignment_tables.py --write\n{table}")


def test_the_claim_block_quotes_the_current_numbers():
    page = alignment_tables.PAGE.read_text(encoding="utf-8")
    claim = page.split("## The multiples")[0]
    everything = published.pairs(published.load())
    ps = [p for p in everything if p.misaligned.gpu == "A100 SXM"]
    slower = sum(p.slowdown > 1 for p in ps)
    assert f"every one of {len(ps)} GEMMs" in claim and slower == len(ps)
    assert f"median {model_cmd.quantile([p.slowdown for p in ps], 0.5):.2f}x" in claim
    ada = [p for p in everything if p.misaligned.gpu == "RTX 4090"]
    assert f"{sum(p.slowdown > 1 for p in ada)} of {len(ada)} odd BF16 squares" in claim
    h100 = alignment_tables.Model(model_tool()).run(
        [{"gpu": "NVIDIA H100 80GB HBM3", **alignment_tables.as_run("fp16", 4096, n, 4096, nt=nt)}
         for nt in (False, True) for n in (32, 33)])
    r32, r33, t32, t33 = (float(p["predicted_tflops"]) for p in h100)
    assert f"H100 {r32:.1f} vs {r33:.1f} TFLOP/s" in claim
    assert f"x{t33 / t32:.2f}" in claim


def test_the_fit_report_was_made_from_the_data_as_they_are():
    """data/model/fit_report.json (the leave-one-out table) and the compiled-in constants come
    from one run of tools/model/fit.py on data/published/ as it is: a changed data file without
    a new fit fails here."""
    import hashlib

    report = json.loads(alignment_tables.FIT_REPORT.read_text(encoding="utf-8"))
    h = hashlib.sha256()
    for f in published.data_files():
        h.update(f.name.encode())
        h.update(f.read_bytes())
    assert report["data_digest"] == h.hexdigest()[:16], (
        "data/published changed since the fit: run tools/model/fit.py --build build/dev --write")
    gpus = {s["gpu"] for s in report["loo"]}
    assert {"H100 SXM", "H200", "B200", "RTX 4090", "A100 SXM"} <= gpus


def test_the_pages_layout_mapping_is_the_cpp_one(tmp_path):
    """alignment_tables.as_run (Python) and query_of (C++, through tcbench_studies' alignment rows)
    give the same predictions."""
    studies = model_tool().parent / "tcbench_studies"
    out = tmp_path / "studies.json"
    subprocess.run([str(studies), "--study", "alignment", "--out", str(out)], check=True,
                   capture_output=True, timeout=120)
    rows = json.loads(out.read_text())["benchmarks"]
    gpus = {"h100_sxm": "NVIDIA H100 80GB HBM3", "a100_sxm": "NVIDIA A100-SXM4-80GB"}
    asked, want = [], []
    for r in rows:
        _, gpu, prec, m, n, k, layout = r["name"].split("/")
        asked.append({"gpu": gpus[gpu], **alignment_tables.as_run(
            prec, int(m[2:]), int(n[2:]), int(k[2:]), nt=layout == "layout:nt")})
        want.append(r["predicted_tflops"])
    got = [float(p["predicted_tflops"]) for p in alignment_tables.Model(model_tool()).run(asked)]
    assert len(got) > 50
    for g, w, a in zip(got, want, asked):
        assert abs(g - w) <= 1e-3 * w, (a, g, w)
