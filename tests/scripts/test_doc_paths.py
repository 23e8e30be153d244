"""Every repository path the README and docs/ name exists (issue 43 §5: concept pages named
kernels/gemm_imma.cu, kernels/mixed_precision_training.cu and headers and tests that had moved).

A path is a token that starts with one of the repository's top folders (``common/``,
``kernels/``, ``tests/`` ...), an include path (``tcbench/...hpp``, under a common/*/include
root), or a relative Markdown link target. Paths in another project's sources, cited as such,
are listed in OTHER_PROJECTS with the project they belong to."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
TOP = ("common", "kernels", "benchmarks", "tests", "scripts", "docs", "data", "cmake", ".ci")
PATH = re.compile(r"(?<![\w/.-])((?:\.ci|common|kernels|benchmarks|tests|scripts|docs|data|cmake)"
                  r"/[\w./-]+|tcbench/[\w/]+\.(?:hpp|h|cuh))")
LINK = re.compile(r"\]\(([^)\s]+)\)")
OTHER_PROJECTS = {
    ("docs/concepts/fp8-scaling.md", "docs/features/low_precision_training/fp8_delayed_scaling/"
     "fp8_delayed_scaling.rst"): "NVIDIA/TransformerEngine",
    ("docs/concepts/fp8-scaling.md", "common/recipe/__init__.py"): "NVIDIA/TransformerEngine",
    ("docs/history.md", "tests/tigerbeetle_test.py"): "apache/otava",
    ("docs/history.md", "tests/series_test.py"): "apache/otava",
    ("docs/history.md", "tests/analysis_test.py"): "apache/otava",
    ("docs/history.md", "tests/resources/sample.csv"): "apache/otava",
    ("docs/history.md", "tests/data/real_series.json"): "mongodb/signal-processing-algorithms",
    ("docs/history.md", "tests/test_detection.py"): "mongodb/signal-processing-algorithms",
    ("docs/methodology.md", "docs/tools.md"): "google/benchmark",
    ("docs/methodology.md", "docs/benchmarks.md"): "NVIDIA/nvbench",
    ("docs/methodology.md", "docs/cli_help.md"): "NVIDIA/nvbench",
    # The README's worked example: the file a reader saves to make a new topic.
    ("README.md", "benchmarks/bench_hello.cpp"): "tcbench, not yet written",
}
INCLUDE_ROOTS = sorted(REPO.glob("common/*/include")) + [REPO / "kernels" / "include"]


def named(doc: Path):
    for n, line in enumerate(doc.read_text().splitlines(), 1):
        for m in PATH.finditer(line):
            if line[m.end():m.end() + 1] not in ("<", "*", "{"):  # a pattern, not a path
                yield n, m.group(1).rstrip(".,:;"), None
        for m in LINK.finditer(line):
            target = m.group(1).split("#", 1)[0]
            if target and "://" not in target and not target.startswith("mailto:"):
                yield n, target, doc.parent


def exists(path: str, base: Path | None) -> bool:
    if base is not None:
        return (base / path).exists()
    if path.startswith("tcbench/"):
        return any((root / path).exists() for root in INCLUDE_ROOTS)
    return (REPO / path).exists()


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: str(d.relative_to(REPO)))
def test_every_repository_path_a_doc_names_exists(doc):
    rel = str(doc.relative_to(REPO))
    missing = [f"{rel}:{n}: {path}" for n, path, base in named(doc)
               if not exists(path, base) and (rel, path) not in OTHER_PROJECTS]
    assert not missing, missing


def test_the_other_projects_paths_are_still_named():
    """An entry of OTHER_PROJECTS that no doc names any more goes."""
    named_now = {(str(d.relative_to(REPO)), p) for d in DOCS for _, p, _ in named(d)}
    assert set(OTHER_PROJECTS) <= named_now, set(OTHER_PROJECTS) - named_now
