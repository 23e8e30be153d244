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
