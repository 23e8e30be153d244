"""tcbench history dashboard in a headless Chromium (browser.py): the page loads, every plot
renders, the regression list is right, nothing overflows a 1280 px window, and a run's column in
a plot leads to that run's provenance.

The history: 100 nightly runs of GPU A (8 benchmarks, 3 topics) and 60 of GPU B (4), seeded,
with three known changes: GPU A's names[0] 10 % slower from run 97 (new: the gate fails on it),
GPU A's names[5] 8 % slower from run 40 (an older regression) and GPU B's names[1] 12 % faster
from run 30 (an improvement). Screenshots go to build/test-artifacts/screenshots/.
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

import history_data as hd
from browser import browser, screenshot  # noqa: F401  (the fixture)
from tcbench_tools.history import canvas

TOPICS = ("fp16_vs_fp32", "int8_gemm", "alignment")


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    from tcbench_tools.cli import main

    work = tmp_path_factory.mktemp("dash")
    names = hd.names(8, TOPICS)
    rng = np.random.default_rng(22)
    a = hd.step_history(100, names, rng, cv=(0.005, 0.012), rep_cv=0.008,
                        steps={names[0]: (97, 1.10), names[5]: (40, 1.08)})
    b = hd.step_history(60, names[:4], rng, cv=(0.005, 0.012), rep_cv=0.008,
                        gpu="Fixture GPU B", start=hd.START + timedelta(days=40, hours=2),
                        steps={names[1]: (30, 1 / 1.12)})
    paths = hd.write_runs(work / "runs", a + b)
    db = str(work / "h.sqlite")
    assert main(["history", "add", *map(str, paths), "--db", db]) == 0
    assert main(["history", "check", "--db", db]) == 1
    out = work / "out"
    assert main(["history", "dashboard", "--db", db, "--out", str(out)]) == 0
    return {"page": out / "index.html", "names": names, "a": a, "b": b}


def test_the_dashboard_loads_and_every_plot_renders(browser, dashboard):  # noqa: F811
    from selenium.webdriver.common.by import By

    browser.get(dashboard["page"].as_uri())
    assert browser.title == "tcbench history"
    assert browser.find_element(By.TAG_NAME, "h1").text == "tcbench performance history"
    images = browser.find_elements(By.CSS_SELECTOR, "figure img")
    assert len(images) == 8 + 4  # one plot per series
    sizes = browser.execute_script(
        "return Array.from(document.images).map(i => [i.complete, i.naturalWidth, "
        "i.naturalHeight])")
    assert sizes and all(done and w == 390 and h == 240 for done, w, h in sizes), sizes
    width = browser.execute_script("return [window.innerWidth, "
                                   "document.documentElement.scrollWidth]")
    assert width[0] == 1280 and width[1] <= 1280, width
    shot = screenshot(browser, "history_dashboard")
    full = screenshot(browser, "history_dashboard_full", full_page=True)
    assert shot.stat().st_size > 10000 and full.stat().st_size > shot.stat().st_size


def test_the_regression_list_is_right(browser, dashboard):  # noqa: F811
    from selenium.webdriver.common.by import By

    names, a = dashboard["names"], dashboard["a"]
    browser.get(dashboard["page"].as_uri())
    rows = browser.find_elements(By.CSS_SELECTOR, "#regression-list tbody tr")
    cells = [[td.text for td in row.find_elements(By.TAG_NAME, "td")] for row in rows]
    # Newest first: the new one (the gate fails on it), then the older one.
    assert [(c[0], c[1], c[2], c[6]) for c in cells] == [
        ("new", f"{names[0]} (synthetic data)", "Fixture GPU A", a[97]["context"]["git_sha"][:12]),
        ("", f"{names[5]} (synthetic data)", "Fixture GPU A", a[40]["context"]["git_sha"][:12])]
    assert cells[0][9].startswith("+") and cells[1][9].startswith("+")
    others = browser.find_elements(By.CSS_SELECTOR, "#other-list tbody tr")
    assert [[td.text for td in row.find_elements(By.TAG_NAME, "td")][1:3] for row in others] == [
        [f"{names[1]} (synthetic data)", "Fixture GPU B"]]
    # The benchmark links to its plot, whose caption names the change and its sha.
    link = rows[0].find_element(By.CSS_SELECTOR, "td.name a").get_attribute("href")
    figure = browser.find_element(By.ID, link.split("#")[1])
    assert names[0] in figure.text and a[97]["context"]["git_sha"][:7] in figure.text


def test_a_run_in_a_plot_links_to_its_provenance(browser, dashboard):  # noqa: F811
    from selenium.webdriver.common.by import By

    a = dashboard["a"]
    browser.get(dashboard["page"].as_uri())
    image = browser.find_elements(By.CSS_SELECTOR, "figure img")[0]
    map_name = image.get_attribute("usemap").lstrip("#")
    areas = browser.find_elements(By.CSS_SELECTOR, f"map[name='{map_name}'] area")
    assert len(areas) == 100  # one per run of GPU A
    # Every area's target exists; the newest run's row holds its provenance.
    targets = browser.execute_script(
        "return Array.from(document.querySelectorAll('area')).map("
        "a => !!document.getElementById(a.getAttribute('href').slice(1)))")
    assert all(targets)
    browser.execute_script("arguments[0].click()", areas[-1])
    assert browser.execute_script("return location.hash").startswith("#run-")
    row = browser.find_element(By.ID, browser.execute_script("return location.hash")[1:])
    text = row.text
    assert a[99]["context"]["git_sha"] in text and "Fixture GPU A" in text and "full" in text
    assert a[99]["context"]["gpu_uuid"] in text
    # The area of run i lies over run i's point: x grows with the run index.
    xs = [int(area.get_attribute("coords").split(",")[0]) for area in areas]
    assert xs == sorted(xs) and xs[0] >= 40 and xs[-1] < canvas.WIDTH


# -- issue 36 section 4, issue 33 section 3: a dashboard that reads true ------------------------

MARK_PIXELS = 1000  # pixels of the SYNTHETIC DATA mark on white in a plot (it has thousands)
MARK_ON_WHITE = (241, 198, 188)  # plot_style.MARK_COLOR at the mark's alpha 0.28 over white


def mark_pixels(png) -> int:
    from PIL import Image

    a = np.asarray(Image.open(png).convert("RGB")).astype(int)
    return int((np.abs(a - np.array(MARK_ON_WHITE)).max(axis=2) <= 6).sum())


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """The feature history (history_data.feature_history) without tcbench_synthetic."""
    from tcbench_tools.cli import main

    work = tmp_path_factory.mktemp("plain")
    docs, names = hd.feature_history(np.random.default_rng(36))
    paths = hd.write_runs(work / "runs", docs)
    db = str(work / "h.sqlite")
    assert main(["history", "add", *map(str, paths), "--db", db]) == 0
    assert main(["history", "dashboard", "--db", db, "--out", str(work / "out")]) == 0
    return {"page": work / "out" / "index.html", "names": names, "work": work}


def test_synthetic_runs_are_marked_in_a_banner_and_every_plot(browser, dashboard, plain):  # noqa: F811
    from selenium.webdriver.common.by import By

    browser.get(dashboard["page"].as_uri())
    banner = browser.find_element(By.ID, "synthetic-banner")
    assert banner.text.startswith("SYNTHETIC DATA: All 160 runs of this history carry the "
                                  "context key tcbench_synthetic.")
    assert banner.rect["y"] < 200 and banner.get_attribute("role") == "alert"
    assert len(browser.find_elements(By.CSS_SELECTOR, "table.runs small.synthetic")) == 160
    pngs = sorted(dashboard["page"].parent.glob("plots/*/*.png"))
    assert len(pngs) == 12 and all(mark_pixels(p) > MARK_PIXELS for p in pngs)
    browser.get(plain["page"].as_uri())
    assert not browser.find_elements(By.ID, "synthetic-banner")
    assert "SYNTHETIC" not in browser.find_element(By.TAG_NAME, "body").text.upper()
    plain_pngs = sorted(plain["page"].parent.glob("plots/*/*.png"))
    assert len(plain_pngs) == 6 and all(mark_pixels(p) < MARK_PIXELS / 5 for p in plain_pngs)


def test_captions_break_between_name_fields_and_plots_show_at_their_size(browser, dashboard):  # noqa: F811
    browser.get(dashboard["page"].as_uri())
    # Each field of a name ("fp16_vs_fp32/", "cublaslt/", ..., "layout:nn") is its own text
    # node between <wbr> marks: one that a line break cut would have two client rectangles.
    split = browser.execute_script("""
        const out = [];
        for (const cap of document.querySelectorAll('figcaption, td.name')) {
          const walker = document.createTreeWalker(cap, NodeFilter.SHOW_TEXT);
          let lines = new Set();
          while (walker.nextNode()) {
            const range = document.createRange();
            range.selectNodeContents(walker.currentNode);
            const rects = Array.from(range.getClientRects()).filter(r => r.width > 0);
            if (rects.length > 1) out.push(walker.currentNode.textContent);
            rects.forEach(r => lines.add(Math.round(r.top)));
          }
          cap.dataset.lines = lines.size;
        }
        return out;""")
    assert split == []
    tags = browser.execute_script(  # a change's tag ("+7.9% at 00288c3") stays on one line
        "return Array.from(document.querySelectorAll('figcaption .tag:not(.minor)')).map(t => "
        "t.getClientRects().length)")
    assert tags and set(tags) == {1}
    lines = browser.execute_script(
        "return Array.from(document.querySelectorAll('figcaption')).map(c => +c.dataset.lines)")
    assert max(lines) >= 2  # the names do wrap (at a '/')
    shown = browser.execute_script(
        "return Array.from(document.querySelectorAll('figure img')).map(i => [i.width, "
        "i.naturalWidth, i.height, i.naturalHeight])")
    assert all(w == nw and h == nh for w, nw, h, nh in shown)  # never scaled down
    assert canvas.FONT * canvas.DPI / 72 >= 11.5  # tick labels of 12 px at that size


def test_the_provenance_names_each_source_relative_to_its_run_folder(browser, plain):  # noqa: F811
    from selenium.webdriver.common.by import By

    browser.get(plain["page"].as_uri())
    table = browser.find_element(By.CSS_SELECTOR, "table.runs")
    text = table.text
    assert "run-0039.json" in text and "run-0000.json" in text
    assert str(plain["work"]) not in plain["page"].read_text()  # no absolute path anywhere


def test_the_plots_of_the_feature_history(plain):
    page = plain["page"].read_text()
    names = plain["names"]
    assert "<b>E1</b> from 2026-04-02 02:00" in page and "driver 13.0 -&gt; 14.1" in page
    assert "below the 2.5% floor" in page  # names[4]'s +2 %
    assert page.count("<figure ") == 6 and names[1].split("/")[0] in page


def _draw(levels: np.ndarray, points: list[int] = (), step: float = 1.0):
    """One plot drawn on a fresh canvas: levels (seconds per run), change points at ``points``
    (each a regression of ``step``)."""
    from tcbench_tools.history.detect import ChangePoint
    from tcbench_tools.history.series import RunInfo, Series

    n = len(levels)
    runs = [RunInfo(i, f"{i:064x}", hd.START.replace(tzinfo=None) + timedelta(days=i),
                    f"{i:04x}abcdef", "G", False, {}) for i in range(n)]
    s = Series("t/v/fp16/m:1", "G", False, np.arange(n), levels, levels * 0.99, levels * 1.01)
    cps = [ChangePoint(s, i, runs[i], 1.0, step, (step - 1) * 100, 1e-5, 3, False, False)
           for i in points]
    c = canvas.Canvas(runs, [(30, "E1")], 5.0)
    import tempfile
    from pathlib import Path

    c.draw([canvas.Part(np.arange(n, dtype=float), s, cps, [])], False,
           Path(tempfile.mkdtemp()) / "p.png")
    return c.drawn, levels


def test_pure_noise_of_a_percent_fills_a_fifth_of_the_axis():
    levels = 1e-4 * np.exp(np.random.default_rng(1).normal(0, 0.01, 60))
    drawn, _ = _draw(levels)
    lo, hi = drawn["ylim"]
    center = np.median(levels) * 1e6  # microseconds
    assert lo <= center * 0.95 and hi >= center * 1.05  # at least +-5 % (the threshold)
    assert (levels.max() - levels.min()) * 1e6 / (hi - lo) < 0.45
    assert drawn["noise_bands"] == 1 and not drawn["log"]


def test_a_series_spanning_more_than_a_decade_gets_a_log_axis():
    levels = np.r_[np.full(20, 1e-4), np.full(20, 15e-4)]
    drawn, _ = _draw(levels, [20], 15.0)
    assert drawn["log"] and drawn["ylabel"] == "time (µs, log scale)"
    drawn, _ = _draw(np.r_[np.full(20, 1e-4), np.full(20, 5e-4)], [20], 5.0)
    assert not drawn["log"] and drawn["ylabel"] == "time (µs)"


def test_labels_of_nearby_change_points_never_overlap():
    levels = 1e-4 * np.exp(np.random.default_rng(2).normal(0, 0.002, 60))
    drawn, _ = _draw(levels, [20, 22, 24, 26], 1.06)
    boxes = drawn["labels"]
    assert len(boxes) == 3  # three rows; the fourth label is left to the caption
    for i, a in enumerate(boxes):
        assert 0 <= a.x0 and a.x1 <= canvas.WIDTH and 0 <= a.y0 and a.y1 <= canvas.HEIGHT
        for b in boxes[i + 1:]:
            assert a.x1 < b.x0 or b.x1 < a.x0 or a.y1 < b.y0 or b.y1 < a.y0


def test_a_hostile_gpu_or_benchmark_name_is_text_on_the_page(tmp_path):
    """The page is doc.Doc's: a GPU name or a benchmark name that holds markup shows as text in
    the headings, captions, tables and image maps, and the page runs doc.py's script only."""
    from html.parser import HTMLParser

    from tcbench_tools.cli import main

    hostile = "<img src=x onerror=alert(1)><script>alert(2)</script>"
    names = [f"int8_gemm/cublaslt/int8/m:64/n:64/k:64/layout:{hostile}"]
    docs = hd.step_history(8, names, np.random.default_rng(5), gpu=f"GPU {hostile}",
                           steps={names[0]: (5, 1.3)})
    db = str(tmp_path / "h.sqlite")
    assert main(["history", "add", *map(str, hd.write_runs(tmp_path / "runs", docs)),
                 "--db", db]) == 0
    assert main(["history", "dashboard", "--db", db, "--out", str(tmp_path / "out")]) == 0
    page = (tmp_path / "out" / "index.html").read_text()

    class Tags(HTMLParser):
        tags: list = []

        def handle_starttag(self, tag, attrs):
            self.tags.append((tag, dict(attrs)))

    Tags().feed(page)
    scripts = [t for t, _ in Tags.tags if t == "script"]
    images = [a.get("src", "") for t, a in Tags.tags if t == "img"]
    assert len(scripts) == 1 and all(src.startswith("plots/") for src in images), images
    assert not [a for _, attrs in Tags.tags for a in attrs if a.startswith("on")]
    assert page.count("GPU &lt;img src=x onerror=alert(1)&gt;") >= 2  # heading, change table
