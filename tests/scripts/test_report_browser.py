"""tcbench report's HTML in a headless Chromium (browser.py), for 2, 9 and 20 GPUs: what a
person would check. No table cell is narrower than its longest word (nothing wraps inside a
number or a name), the page never scrolls sideways at 1280 px (a wide table scrolls inside its
own box), every image loads, and the synthetic-data banner is there exactly when an input was
synthetic. Screenshots go to build/test-artifacts/screenshots/ (report_<n>gpus*.png).

The 2-GPU report is gpu_a.json and gpu_b.json; the 9-GPU one the nine fixture files the review
opened; the 20-GPU one many_gpus.fleet(20) (fictional, every topic). One more 2-GPU report is
made from the same files without their tcbench_synthetic key: it must have no banner.
"""

from __future__ import annotations

import json

import pytest

import many_gpus
from browser import browser, screenshot  # noqa: F401  (the fixture)
from conftest import fixture, load_doc

CASES = ("2gpus", "9gpus", "20gpus", "2gpus_real")

# For every td/th: the widest whitespace-separated word, rendered alone in the cell's own font
# without wrapping, against the width the cell gives its content.
NARROW_CELLS = """
const probe = document.createElement('span');
probe.style.cssText = 'position:absolute;visibility:hidden;white-space:nowrap;left:-99999px';
document.body.appendChild(probe);
const bad = [];
for (const cell of document.querySelectorAll('td, th')) {
  const style = getComputedStyle(cell);
  const inner = cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  probe.style.font = style.font;
  probe.style.fontWeight = style.fontWeight;
  for (const word of cell.innerText.split(/\\s+/)) {
    if (!word) continue;
    probe.textContent = word;
    if (probe.getBoundingClientRect().width > inner + 0.5)
      bad.push([word, probe.getBoundingClientRect().width, inner]);
  }
}
probe.remove();
return bad;
"""


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict:
    from tcbench_tools.cli import main

    work = tmp_path_factory.mktemp("reports")
    real = []
    for name in ("gpu_a.json", "gpu_b.json"):
        doc = load_doc(name)
        del doc["context"]["tcbench_synthetic"]  # as a real run writes it
        path = work / f"real_{name}"
        path.write_text(json.dumps(doc))
        real.append(path)
    inputs = {"2gpus": [fixture("gpu_a.json"), fixture("gpu_b.json")],
              "9gpus": many_gpus.nine(),
              "20gpus": many_gpus.fleet(20, work / "fleet"),
              "2gpus_real": real}
    out = {}
    for case, files in inputs.items():
        folder = work / case
        assert main(["report", *map(str, files), "--out", str(folder)]) == 0
        out[case] = folder / "report.html"
    return out


def _open(driver, page) -> None:
    driver.get(page.as_uri())
    driver.execute_script("window.scrollTo(0, 0)")


@pytest.mark.parametrize("case", CASES)
def test_no_cell_is_narrower_than_its_longest_word(browser, reports, case):  # noqa: F811
    _open(browser, reports[case])
    cells = browser.execute_script("return document.querySelectorAll('td, th').length")
    assert cells > 50
    assert browser.execute_script(NARROW_CELLS) == []


@pytest.mark.parametrize("case", CASES)
def test_the_page_never_scrolls_sideways_at_1280_px(browser, reports, case):  # noqa: F811
    _open(browser, reports[case])
    width, scroll = browser.execute_script(
        "return [window.innerWidth, document.documentElement.scrollWidth]")
    assert width == 1280 and scroll <= width, (width, scroll)
    # Tables wider than the page scroll inside their own box: no table sticks out of it.
    sticking_out = browser.execute_script("""
        return Array.from(document.querySelectorAll('table')).filter(t => {
          const box = t.parentElement;
          return box.className !== 'wide' ||
                 box.getBoundingClientRect().right > document.documentElement.clientWidth + 1;
        }).length""")
    assert sticking_out == 0


@pytest.mark.parametrize("case", CASES)
def test_every_image_is_loaded(browser, reports, case):  # noqa: F811
    _open(browser, reports[case])
    images = browser.execute_script(
        "return Array.from(document.images).map(i => [i.complete, i.naturalWidth, "
        "i.naturalHeight, i.alt])")
    pngs = list(reports[case].parent.glob("*.png"))
    assert len(images) == len(pngs) > 0
    broken = [alt for done, w, h, alt in images if not (done and w > 100 and h > 100)]
    assert broken == []


@pytest.mark.parametrize("case", CASES)
def test_the_banner_is_there_exactly_when_an_input_was_synthetic(browser, reports, case):  # noqa: F811
    from selenium.webdriver.common.by import By

    _open(browser, reports[case])
    banners = browser.find_elements(By.ID, "synthetic-banner")
    if case.endswith("_real"):
        assert banners == []
        assert "SYNTHETIC" not in browser.find_element(By.TAG_NAME, "body").text
        return
    assert len(banners) == 1
    banner = banners[0]
    assert banner.is_displayed() and banner.text.startswith("SYNTHETIC DATA:")
    # At the top: right under the title, before any table or figure.
    first_table = browser.find_elements(By.TAG_NAME, "table")[0]
    assert banner.location["y"] < first_table.location["y"] and banner.location["y"] < 200
    n = {"2gpus": 2, "9gpus": 9, "20gpus": 20}[case]
    assert f"{n} of the input files" in banner.text


def test_screenshots_of_the_20_gpu_report(browser, reports):  # noqa: F811
    """Saved for a person to look at (and kept by CI): the top of the page, the peak table and
    its panels, a sweep with 20 lines, and the whole page."""
    from selenium.webdriver.common.by import By

    _open(browser, reports["20gpus"])
    shots = [screenshot(browser, "report_20gpus_top")]
    for heading, name in (("Peak vs best achieved", "report_20gpus_peak"),
                          ("Sweeps", "report_20gpus_sweeps")):
        element = browser.find_element(By.XPATH, f"//h2[text()='{heading}']")
        browser.execute_script("arguments[0].scrollIntoView()", element)
        shots.append(screenshot(browser, name))
    shots.append(screenshot(browser, "report_20gpus_full", full_page=True))
    for case in ("2gpus", "9gpus"):
        _open(browser, reports[case])
        shots.append(screenshot(browser, f"report_{case}_top"))
        shots.append(screenshot(browser, f"report_{case}_full", full_page=True))
    assert all(s.stat().st_size > 20000 for s in shots)
