"""The report's plots from 1 to 20 GPUs: every series its own colour, marker and line style (20
GPUs never share a line), legends outside the data, log2 axes for power-of-two sweeps with
ticks at the sizes, integer ticks on integer axes, p10-p90 error bars from the repetitions, small
multiples instead of one crowded panel, and the SYNTHETIC DATA mark on every plot of a report
that read a synthetic input (and on none of one that did not).
"""

from __future__ import annotations

import json
import math

import matplotlib.image as mpimg
import numpy as np
import pytest
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure

from conftest import fixture, load_doc
from tcbench_tools import plot_style, plots, synthetic

GPUS20 = [f"Fixture GPU {i:02d}" for i in range(1, 21)]
PAGE_PX = 1120  # doc.py's report column: 1200 px less its padding


@pytest.fixture
def saved_figures(monkeypatch) -> list[Figure]:
    """Every figure saved, drawn first (renderer kept as ``test_renderer``)."""
    figures: list[Figure] = []
    original = Figure.savefig

    def spy(self, *args, **kwargs):
        self.canvas.draw()
        self.test_renderer = self.canvas.get_renderer()
        figures.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", spy)
    return figures


def _sweep(n: int, spread: bool = True) -> dict[str, list[plots.Point]]:
    sizes = [256, 512, 1024, 2048, 4096, 8192]
    return {gpu: [plots.Point(x, 10.0 * (g + 1) * math.log2(x),
                              *((9.5 * (g + 1) * math.log2(x), 10.4 * (g + 1) * math.log2(x))
                                if spread else (None, None)))
                  for x in sizes] for g, gpu in enumerate(GPUS20[:n])}


# ---------------------------------------------------------------------------------------------
# Styles


def test_twenty_series_never_share_colour_marker_and_line_style():
    styles = [plot_style.series_style(i) for i in range(36)]
    assert len({(s.color, s.marker, s.linestyle) for s in styles}) == 36
    # Series that share a colour differ in marker and in line style.
    for i, a in enumerate(styles):
        for b in styles[i + 1:]:
            if a.color == b.color:
                assert a.marker != b.marker and a.linestyle != b.linestyle
    # No series is drawn in the reference colour (peaks, models, the diagonal).
    assert plot_style.REFERENCE not in plot_style.PALETTE
    assert plot_style.MARK_COLOR not in plot_style.PALETTE


def test_a_sweep_of_20_gpus_has_20_distinct_lines_and_the_legend_outside(saved_figures, tmp_path):
    """Issue 24's "20 GPUs share a line": matplotlib's 10-colour cycle repeated with one line
    style, so GPU 1 and GPU 11 were drawn alike."""
    plots.sweep("fp16 vs m=n=k", "m=n=k", "TFLOP/s", _sweep(20), tmp_path / "s.png")
    fig = saved_figures[0]
    ax = fig.axes[0]
    lines = [ln for ln in ax.get_lines() if ln.get_label() in GPUS20]
    assert len(lines) == 20
    looks = {(ln.get_color(), ln.get_marker(), ln.get_linestyle()) for ln in lines}
    assert len(looks) == 20
    legend = next(a.get_legend() for a in fig.axes if a.get_legend() is not None)
    assert [t.get_text() for t in legend.get_texts()] == GPUS20
    box = legend.get_window_extent(fig.test_renderer)
    for axes in fig.axes:  # beside the data, never over it
        assert not box.overlaps(axes.get_window_extent(fig.test_renderer))


def test_one_gpu_keeps_its_style_across_plots(saved_figures, tmp_path):
    styles = plot_style.styles_for(GPUS20)
    plots.sweep("a", "m", "TFLOP/s", {g: p for g, p in _sweep(20).items() if g in GPUS20[5:7]},
                tmp_path / "a.png", styles)
    line = next(ln for ln in saved_figures[0].axes[0].get_lines() if ln.get_label() == GPUS20[6])
    assert (line.get_color(), line.get_marker()) == (styles[GPUS20[6]].color,
                                                     styles[GPUS20[6]].marker)


# ---------------------------------------------------------------------------------------------
# Axes and error bars


def test_power_of_two_sweeps_get_a_log2_axis_with_ticks_at_the_sizes(saved_figures, tmp_path):
    plots.sweep("square", "m=n=k", "TFLOP/s", _sweep(2), tmp_path / "p2.png")
    ax = saved_figures[0].axes[0]
    assert ax.get_xscale() == "log" and ax.xaxis.get_transform().base == 2
    assert list(ax.get_xticks()) == [256, 512, 1024, 2048, 4096, 8192]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["256", "512", "1024", "2048", "4096",
                                                           "8192"]
    assert ax.get_ylim()[0] == 0  # throughput from 0


def test_decimal_sizes_get_a_log10_axis_with_readable_labels(saved_figures, tmp_path):
    """The unscale sweep's ticks were powers of two in scientific notation that overprinted."""
    pts = {"A": [(1e7, 1500.0), (1e8, 1640.0), (1e9, 1660.0)]}
    plots.sweep("unscale", "elements", "GB/s", pts, tmp_path / "u.png")
    ax = saved_figures[0].axes[0]
    assert ax.xaxis.get_transform().base == 10
    assert [t.get_text() for t in ax.get_xticklabels()] == ["10M", "100M", "1G"]


def test_a_short_integer_axis_gets_integer_ticks(saved_figures, tmp_path):
    plots.sweep("k", "k", "TFLOP/s", {"A": [(4095.0, 1.0), (4096.0, 2.0), (4097.0, 1.5)]},
                tmp_path / "k.png")
    ax = saved_figures[0].axes[0]
    assert ax.get_xscale() == "linear"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["4095", "4096", "4097"]


def test_sizes_side_by_side_do_not_print_over_each_other(saved_figures, tmp_path):
    pts = {"A": [(float(n), 1.0) for n in (32, 33, 64, 65, 128, 129, 8192, 8193)]}
    plots.sweep("pairs", "n", "TFLOP/s", pts, tmp_path / "n.png")
    ax = saved_figures[0].axes[0]
    boxes = [t.get_window_extent(saved_figures[0].test_renderer) for t in ax.get_xticklabels()
             if t.get_text()]
    assert len(boxes) >= 4
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])


def test_repetitions_give_p10_p90_error_bars(saved_figures, tmp_path):
    plots.sweep("spread", "m", "TFLOP/s", _sweep(3), tmp_path / "e.png")
    ax = saved_figures[0].axes[0]
    bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(bars) == 3
    segments = bars[0].lines[2][0].get_segments()
    # GPU 1 at 256: p10 = 9.5 * 8, p90 = 10.4 * 8 around the median 80.
    assert segments[0][:, 1] == pytest.approx([76.0, 83.2])
    plots.sweep("none", "m", "TFLOP/s", _sweep(3, spread=False), tmp_path / "n.png")
    assert not [c for c in saved_figures[1].axes[0].containers
                if isinstance(c, ErrorbarContainer)]


def test_a_peak_panel_shows_each_gpu_against_its_own_peak(saved_figures, tmp_path):
    pts = {"A": [(1024, 50.0), (2048, 60.0), (4096, 80.0)],
           "B": [(1024, 100.0), (2048, 120.0), (4096, 160.0)]}
    plots.sweep("two", "m", "TFLOP/s", pts, tmp_path / "t.png", peaks={"A": 100.0, "B": 200.0})
    fig = saved_figures[0]
    assert len(fig.axes) == 2
    relative = {ln.get_label(): list(ln.get_ydata()) for ln in fig.axes[1].get_lines()}
    assert relative["A"] == relative["B"] == pytest.approx([50.0, 60.0, 80.0])


# ---------------------------------------------------------------------------------------------
# Bar panels


def test_bars_are_small_multiples_with_gpus_as_rows(saved_figures, tmp_path):
    precisions = ["fp32", "tf32", "fp16", "bf16", "int8", "fp8"]
    peak = {(g, p): 100.0 * (i + 1) for i, g in enumerate(GPUS20) for p in precisions}
    achieved = {(g, p): 80.0 * (i + 1) for i, g in enumerate(GPUS20) for p in precisions
                if not (p == "fp8" and i % 3 == 0)}
    missing = {(g, "fp8"): "n/a" for i, g in enumerate(GPUS20) if i % 3 == 0}
    plots.peak_vs_achieved(precisions, GPUS20, peak, achieved, tmp_path / "b.png", missing)
    fig = saved_figures[0]
    assert fig.get_figwidth() <= plot_style.PAGE_WIDTH_IN  # shown at its size on the page
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == precisions  # one panel each, no empty one
    first = visible[0]
    labels = first.get_yticklabels()
    assert [t.get_text() for t in labels] == GPUS20
    heights = [t.get_position()[1] for t in labels]
    assert heights == sorted(heights, reverse=True)  # the first GPU on top
    assert first.get_xscale() == "linear" and first.get_xlim()[0] == 0
    # A solid bar per GPU and its peak outline behind it; "n/a" where the GPU lacks FP8.
    fp8 = visible[-1]
    assert sum(1 for t in fp8.texts if t.get_text() == "n/a") == 7
    assert min(t.get_fontsize() for t in first.get_yticklabels()) >= 8


def test_the_efficiency_plot_is_small_multiples_too(saved_figures, tmp_path):
    from tcbench_tools import power_report

    fig = power_report.efficiency_figure(["fp16", "int8"], ["A", "B", "C"],
                                         {("A", "fp16"): 0.8, ("B", "fp16"): 1.1,
                                          ("C", "fp16"): 0.9, ("B", "int8"): 2.2},
                                         throttled={("B", "fp16")})
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == ["fp16", "int8"]
    hatched = [p for p in visible[0].patches if p.get_hatch()]
    assert len(hatched) == 1


# ---------------------------------------------------------------------------------------------
# The synthetic mark


def _real(tmp_path, name: str):
    """The fixture as a real run writes it: without the synthetic key (same file name)."""
    doc = load_doc(name)
    del doc["context"][synthetic.KEY]
    path = tmp_path / "as_measured" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def test_every_plot_of_a_synthetic_report_is_marked_and_no_plot_of_a_real_one(cli, tmp_path,
                                                                              saved_figures):
    names = ("gpu_a.json", "gpu_b.json", "alignment_quick.json", "loss_scaling.json")
    code, _, err = cli("report", *(fixture(n) for n in names), "--out", tmp_path / "fake")
    assert code == 0, err  # marked, not refused
    marked = len(saved_figures)
    code, _, err = cli("report", *(_real(tmp_path, n) for n in names), "--out", tmp_path / "real")
    assert code == 0, err
    assert len(saved_figures) == 2 * marked > 0

    def mark_of(fig):
        return [t for t in fig.texts if t.get_gid() == "tcbench-synthetic-mark"]

    for fig in saved_figures[:marked]:
        (text,) = mark_of(fig)
        assert text.get_text() == "SYNTHETIC DATA" and text.get_rotation() == 25
        # Inside the figure: marking never grows or clips the plot.
        box = text.get_window_extent(fig.test_renderer)
        assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= fig.bbox.x1 and box.y1 <= fig.bbox.y1
    assert not any(mark_of(fig) for fig in saved_figures[marked:])
    # The PNGs differ exactly by the mark: same plots, same sizes, different pixels.
    fake = sorted((tmp_path / "fake").glob("*.png"))
    real = sorted((tmp_path / "real").glob("*.png"))
    assert [p.name for p in fake] == [p.name for p in real]
    for a, b in zip(fake, real):
        ia, ib = mpimg.imread(a), mpimg.imread(b)
        assert ia.shape == ib.shape, a.name
        assert np.abs(ia - ib).max() > 0.1, a.name
    md = (tmp_path / "fake" / "report.md").read_text()
    assert md.splitlines()[2].startswith("> **SYNTHETIC DATA: 4 of the input files")
    assert "SYNTHETIC" not in (tmp_path / "real" / "report.md").read_text()


def test_one_synthetic_file_among_real_ones_marks_the_whole_report(cli, tmp_path):
    code, _, _ = cli("report", _real(tmp_path, "gpu_a.json"), fixture("gpu_b.json"),
                     "--out", tmp_path / "rep")
    assert code == 0
    md = (tmp_path / "rep" / "report.md").read_text()
    banner = md.splitlines()[2]
    assert "SYNTHETIC DATA: 1 of the input files (gpu_b.json)" in banner
    assert "/fixtures/" not in banner  # file names; the full paths are in the Runs table


# ---------------------------------------------------------------------------------------------
# The palette: distinct by CIEDE2000 (issue 36)


def test_coloraide_reproduces_the_published_ciede2000_test_pairs():
    from palette_check import SHARMA_2005, delta_e_lab

    assert len(SHARMA_2005) == 34
    for i, (lab1, lab2, want) in enumerate(SHARMA_2005, 1):
        assert delta_e_lab(lab1, lab2) == pytest.approx(want, abs=6e-5), i
        assert delta_e_lab(lab2, lab1) == pytest.approx(want, abs=6e-5), i  # symmetric


def test_any_two_palette_colours_are_far_apart_and_far_from_the_references():
    from palette_check import closest_pair, delta_e

    assert len(plot_style.PALETTE) == 20
    distance, a, b = closest_pair(plot_style.PALETTE)
    assert distance >= plot_style.MIN_DELTA_E, (a, b, distance)
    assert distance == pytest.approx(15.0, abs=0.05)  # Tol's wine and purple: the closest pair
    for color in plot_style.PALETTE:  # never read as a reference line or the synthetic mark
        for reference in ("black", "white", "0.5", plot_style.MARK_COLOR):
            assert delta_e(color, reference) >= 15, (color, reference)


def test_colours_are_assigned_per_plot():
    """Issue 36: a 4-GPU plot of GPUs 02, 05, 08 and 11 used their indices among 12 GPUs, so
    GPU 02 and GPU 11 shared a colour; per plot they get the palette's first four."""
    styles = plot_style.styles_for(["GPU 02", "GPU 05", "GPU 08", "GPU 11"])
    assert [s.color for s in styles.values()] == list(plot_style.PALETTE[:4])
    many = [plot_style.series_style(i) for i in range(180)]
    assert len({(s.color, s.marker, s.linestyle) for s in many}) == 180
    for i in range(40):  # two series with one colour differ in marker
        if many[i].color == many[i + 20].color:
            assert many[i].marker != many[i + 20].marker


def _gpu_colours(fig) -> dict[str, set]:
    """GPU label -> the colours it has in one figure: its legend entries, and in bar panels (GPUs
    named on the y axis) the colour of its bar."""
    from matplotlib.colors import to_hex

    found: dict[str, set] = {}
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is not None:
            for handle, text in zip(legend.legend_handles, legend.get_texts()):
                get = getattr(handle, "get_color", None) or getattr(handle, "get_facecolor", None)
                color = get() if get else None
                if hasattr(color, "ndim") and color.ndim == 2:
                    color = color[0] if len(color) else None
                if color is not None:
                    found.setdefault(text.get_text(), set()).add(to_hex(color))
        names = {round(t.get_position()[1]): t.get_text() for t in ax.get_yticklabels()}
        for bar in ax.patches:
            if bar.get_facecolor()[3] > 0 and bar.get_width() > 0:
                name = names.get(round(bar.get_y() + bar.get_height() / 2))
                if name:
                    found.setdefault(name, set()).add(to_hex(bar.get_facecolor()))
    return found


def test_a_gpu_keeps_one_colour_in_every_plot_of_a_report(cli, saved_figures, tmp_path):
    """Before: colours went by position in each plot, so a GPU's colour changed between sections
    (GPU 02 light blue in "Peak vs best achieved", dark purple in "Block scaling speed")."""
    code, _, err = cli("report", fixture("gpu_a.json"), fixture("gpu_b.json"),
                       fixture("block_scaling_h.json"), "--out", tmp_path / "rep")
    assert code == 0, err
    seen: dict[str, set] = {}
    plotted: dict[str, int] = {}
    for fig in saved_figures:
        for gpu, colours in _gpu_colours(fig).items():
            if gpu.startswith("Fixture GPU"):
                seen.setdefault(gpu, set()).update(colours)
                plotted[gpu] = plotted.get(gpu, 0) + 1
    h = "Fixture GPU H (block scaling)"
    assert plotted[h] >= 2  # in the comparison and in the block scaling plots
    assert {gpu: len(c) for gpu, c in seen.items()} == {gpu: 1 for gpu in seen}, seen
    assert seen[h] == {plot_style.PALETTE[2].lower()}  # its index in the report
    # ...and no plot is wider than the page, which would shrink its 8 pt labels to about 7 px
    # (issue 43 §5: "Peak vs best achieved" was 1718 px wide on a 1120 px column).
    for png in (tmp_path / "rep").glob("*.png"):
        width = int.from_bytes(png.read_bytes()[16:20], "big")
        assert width <= PAGE_PX, (png.name, width)
