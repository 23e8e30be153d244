"""tcbench's Python tools: run the benchmark binaries, compare result files, report across GPUs.

Everything here reads only Google Benchmark JSON result files (DESIGN.md Section 6); nothing
reads C++ headers. The entry point is scripts/tcbench, which runs ``python -m tcbench_tools``.
"""

__version__ = "0.1.0"
