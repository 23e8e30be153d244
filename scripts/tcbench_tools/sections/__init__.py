"""Topic sections of ``tcbench report``: one module per topic, found by name.

Each module in this package defines

    TOPIC: str                       # the benchmark-name prefix it explains, e.g. "int8_gemm"
    TITLE: str                       # the section heading
    def render(doc, sets, labels, out_dir) -> list[Path]

``render`` appends headings, paragraphs, tables and images to ``doc`` (report.Doc) for the result
sets (results.ResultSet, one per GPU, labelled ``labels``) and returns the PNGs it wrote. PNG
names start with ``section_<TOPIC>_`` so that a rewritten report can drop the stale ones. A
section is rendered only when some result set holds a benchmark of its topic, or of one of the
topics its optional ``ALSO_TOPICS`` names (tensor_util: tensor_peak).
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def modules() -> list[ModuleType]:
    """Every section module, in name order."""
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(mod, "TOPIC") and hasattr(mod, "render"):
            found.append(mod)
    return found
