"""tcbench report's HTML in a headless Chromium (browser.py), for 2, 9, 12 and 20 GPUs and a run
without a GPU: what a person would check. No table cell is narrower than its longest word
(nothing wraps inside a number or a name), the page never scrolls sideways at 1280 px (a wide
table scrolls inside its own box), every image loads, the synthetic-data banner is there exactly
when an input was synthetic, and issue 36's limits: the first screen (1280 x 900) holds the
contents, the verdicts of every GPU and its health line; a 12-GPU page is at most 15,000 px tall
and a 20-GPU one at most 20,000; no table is empty; the report of a run without a GPU says so and
points to docs/gpu-check.md. Every plot drawn for these reports is audited as it is saved: no
text of a panel sits on its border, the series of a panel are at least plot_style.MIN_DELTA_E
apart by CIEDE2000 (palette_check.py), and no dashed line lies hidden under a solid one.
Screenshots go to build/test-artifacts/screenshots/ (report_<case>_top.png, the first screen,
and report_<case>_full.png, the whole page), which CI keeps.

The 2-GPU report is gpu_a.json and gpu_b.json; the 9-GPU one the nine fixture files the review
opened; the 12- and 20-GPU ones many_gpus.fleet(n) (fictional, every topic); the host-only one a
run folder with only the host studies (answers_data's, synthetic). One more 2-GPU report is made
from the same files without their tcbench_synthetic key: it must have no banner.
"""

from __future__ import annotations

import json
import re

import pytest
from matplotlib.figure import Figure

import answers_data as ad
import many_gpus
from browser import browser, screenshot  # noqa: F401  (the fixture)
from conftest import fixture, load_doc
from tcbench_tools import plot_style

CASES = ("2gpus", "9gpus", "12gpus", "20gpus", "2gpus_real", "host_only")
GPUS = {"2gpus": 2, "9gpus": 9, "12gpus": 12, "20gpus": 20, "2gpus_real": 2, "host_only": 0}
MAX_HEIGHT = {"12gpus": 15_000, "20gpus": 20_000}  # issue 36
VIEWPORT = 900  # browser.HEIGHT: the first screen

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


def _hidden_dashes(ax) -> list[str]:
    """Dashed lines that lie exactly under a solid one (drawn later or higher)."""
    lines = [ln for ln in ax.get_lines() if ln.get_visible() and len(ln.get_xdata()) > 1]
    order = sorted(range(len(lines)), key=lambda i: (lines[i].get_zorder(), i))
    bad = []
    for a, i in enumerate(order):
        for j in order[a + 1:]:
            low, high = lines[i], lines[j]
            if low.get_linestyle() in ("-", "None") or high.get_linestyle() != "-":
                continue
            if list(low.get_xydata().ravel()) == list(high.get_xydata().ravel()):
                bad.append(f"{low.get_label()} under {high.get_label()}")
    return bad


def _series_colors(ax) -> list:
    """The colours a panel tells its series apart by: its legend's entries, or (bar panels,
    GPUs named on the axis) its bars; references (black, greys) left out."""
    from matplotlib.colors import to_rgb

    legend = ax.get_legend()
    if legend is not None:
        colors = []
        for handle in legend.legend_handles:
            get = getattr(handle, "get_color", None) or getattr(handle, "get_facecolor", None)
            color = get() if get else None
            if hasattr(color, "ndim") and getattr(color, "ndim", 0) == 2:
                color = color[0] if len(color) else None
            if color is not None:
                colors.append(color)
    else:
        colors = [p.get_facecolor() for p in ax.patches
                  if p.get_facecolor()[3] > 0 and p.get_width() > 0]
    return [c for c in colors if len({round(v, 3) for v in to_rgb(c)}) > 1]  # no greys


def audit(fig) -> list[str]:
    """What a reader would trip over in one saved figure (issue 36 §2)."""
    from palette_check import closest_pair

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    problems = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        box = ax.get_window_extent(renderer)
        for text in ax.texts:
            if not text.get_visible() or not text.get_text().strip():
                continue
            t = text.get_window_extent(renderer)
            inside = box.x0 <= t.x0 and t.x1 <= box.x1 and box.y0 <= t.y0 and t.y1 <= box.y1
            outside = t.x1 <= box.x0 or t.x0 >= box.x1 or t.y1 <= box.y0 or t.y0 >= box.y1
            if not inside and not outside:
                problems.append(f"text {text.get_text()!r} on the border of {ax.get_title()!r}")
        distance, a, b = closest_pair(_series_colors(ax))
        if distance < plot_style.MIN_DELTA_E:
            problems.append(f"{ax.get_title()!r}: colours {a} and {b} only {distance:.1f} apart")
        problems += [f"{ax.get_title()!r}: dashed {h}" for h in _hidden_dashes(ax)]
    return problems


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
    host = work / "host_run"
    host.mkdir()
    (host / "studies.json").write_text(json.dumps(ad.doc(
        ad.HOST_CONTEXT, ad.int8_study() + ad.loss_host() + ad.alignment_model()
        + ad.fp8_study())))
    inputs = {"2gpus": [fixture("gpu_a.json"), fixture("gpu_b.json")],
              "9gpus": many_gpus.nine(),
              "12gpus": many_gpus.fleet(12, work / "fleet12"),
              "20gpus": many_gpus.fleet(20, work / "fleet20"),
              "2gpus_real": real,
              "host_only": [host]}
    out, audits = {}, {}
    original = Figure.savefig
    case_now = []

    def spy(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        audits.setdefault(case_now[-1], []).extend(audit(self))
        return result

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Figure, "savefig", spy)
        for case, files in inputs.items():
            case_now.append(case)
            folder = work / case
            assert main(["report", *map(str, files), "--out", str(folder)]) == 0
            out[case] = folder / "report.html"
    out["audits"] = audits
    return out


def _open(driver, page) -> None:
    driver.get(page.as_uri())
    driver.execute_script("window.scrollTo(0, 0)")


@pytest.mark.parametrize("case", CASES)
def test_no_cell_is_narrower_than_its_longest_word(browser, reports, case):  # noqa: F811
    _open(browser, reports[case])
    # Collapsed parts open, so that their tables are laid out too.
    browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
    cells = browser.execute_script("return document.querySelectorAll('td, th').length")
    assert cells > (10 if case == "host_only" else 50)
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
    assert len(images) == len(pngs) > (0 if case != "host_only" else -1)
    broken = [alt for done, w, h, alt in images if not (done and w > 100 and h > 100)]
    assert broken == []
    # Shown at its own size, never shrunk to the page's width (issue 43 §5: a 1718 px figure
    # on a 1120 px column had 7 px labels).
    browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
    shrunk = browser.execute_script(
        "return Array.from(document.images).filter(i => i.clientWidth < i.naturalWidth - 1)"
        ".map(i => [i.alt, i.naturalWidth, i.clientWidth])")
    assert shrunk == []


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
    n = {"2gpus": 2, "9gpus": 9, "12gpus": 12, "20gpus": 20, "host_only": 1}[case]
    assert f"{n} of the input files" in banner.text


@pytest.mark.parametrize("case", CASES)
def test_the_first_screen_holds_the_contents_every_verdict_and_health(browser, reports,  # noqa: F811
                                                                      case):
    from selenium.webdriver.common.by import By

    _open(browser, reports[case])
    nav = browser.find_element(By.ID, "contents")
    table = browser.find_element(By.CSS_SELECTOR, "table.glance")
    assert nav.rect["y"] + nav.rect["height"] <= VIEWPORT
    assert table.rect["y"] + table.rect["height"] <= VIEWPORT, table.rect
    rows = table.find_elements(By.CSS_SELECTOR, "tbody tr")
    gpu_rows = [r for r in rows if not r.text.startswith("without a GPU")]
    assert len(gpu_rows) == GPUS[case]
    for row in gpu_rows:  # five verdicts and one line of health
        cells = row.find_elements(By.TAG_NAME, "td")
        assert len(cells) == 7
        assert re.fullmatch(r"\d+ ran · \d+ skipped · (\d+ FAILED|0 failed)( · \d+ invalid)?",
                            cells[-1].text), cells[-1].text
        assert cells[-1].size["height"] < 30  # one line
        if "FAILED" in cells[-1].text:  # linked to its failures, which exist
            target = cells[-1].find_element(By.TAG_NAME, "a").get_attribute("href")
            anchor = target.split("#", 1)[1]
            assert browser.find_elements(By.ID, anchor)
    # Every part of the page is in the contents, and every entry leads somewhere.
    links = [a.get_attribute("href").split("#", 1)[1]
             for a in nav.find_elements(By.TAG_NAME, "a")]
    headings = [h.get_attribute("id") for h in browser.find_elements(By.TAG_NAME, "h2")]
    assert links == headings and len(links) >= (1 if case == "host_only" else 8)


@pytest.mark.parametrize("case", CASES)
def test_the_page_is_short_and_has_no_empty_table(browser, reports, case):  # noqa: F811
    _open(browser, reports[case])
    height = browser.execute_script("return document.documentElement.scrollHeight")
    assert height <= MAX_HEIGHT.get(case, 15_000), height
    empty = browser.execute_script(
        "return Array.from(document.querySelectorAll('table')).filter("
        "t => t.querySelectorAll('tbody tr').length == 0).length")
    assert empty == 0
    text = browser.execute_script("return document.body.innerText")
    assert "result file(s)" not in text
    if case == "host_only":
        assert "No GPU ran" in text and "docs/gpu-check.md" in text
        rows = browser.execute_script(
            "return Array.from(document.querySelectorAll('table.glance tbody tr'))"
            ".map(r => Array.from(r.cells).map(c => c.innerText.trim()))")
        assert rows[0][0] == "without a GPU" and rows[0][3] == "GPU only"  # Q3: no host half
        assert "Every benchmark ran" not in text and "GPUs\n" not in text


@pytest.mark.parametrize("case", CASES)
def test_every_plot_passes_the_audit(reports, case):
    """No text on a panel border, distinct colours within each panel, no dashed line hidden
    under a solid one, in every figure the report saved."""
    assert reports["audits"].get(case, []) == []


def test_screenshots(browser, reports):  # noqa: F811
    """Saved for a person to look at (and kept by CI): the first screen and the whole page of
    every case."""
    shots = []
    for case in CASES:
        _open(browser, reports[case])
        shots.append(screenshot(browser, f"report_{case}_top"))
        shots.append(screenshot(browser, f"report_{case}_full", full_page=True,
                                max_height=20_000))
    assert all(s.stat().st_size > 20000 for s in shots)
