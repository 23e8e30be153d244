"""Each run's results as packed arrays (table ``run_arrays``), for reading a whole history fast.

``results`` holds one row per run and benchmark: the normalised record that SQL can query. A
history of 10,000 runs of 2000 benchmarks is 20 million such rows, and reading them back through
a database driver costs about a microsecond per row and value (a minute for ``history check``
alone). So ``history add`` also stores, in the same transaction, one row per run with its usable
results as four little-endian arrays: the benchmark ids (int32), the median time, and the 10th
and 90th percentiles of the repetitions (float64, seconds; NaN where unknown). Reading 10,000
such rows takes about a second. Packing needs only the standard library (``history add`` does
not import numpy); the readers unpack with numpy.
"""

from __future__ import annotations

import math
import struct

IDS = "<i4"  # numpy dtypes of the columns
VALUES = "<f8"


def pack(rows: list[tuple[int, float, float | None, float | None]]) -> dict[str, bytes]:
    """(benchmark id, median, p10, p90) of each usable result -> the run_arrays columns."""
    rows = sorted(rows)
    n = len(rows)

    def floats(i: int) -> bytes:
        return struct.pack(f"<{n}d", *(math.nan if r[i] is None else r[i] for r in rows))

    return {"benchmarks": struct.pack(f"<{n}i", *(r[0] for r in rows)), "median": floats(1),
            "p10": floats(2), "p90": floats(3)}


def unpack(raw, dtype: str):
    import numpy as np

    return np.frombuffer(bytes(raw), dtype=np.dtype(dtype))
