"""tcbench's Python tools: run the benchmark binaries, compare result files, report across GPUs.

Everything here reads only Google Benchmark JSON result files; nothing reads C++ headers. The
names and counters those files hold are mirrored in schema.py, which tests/scripts/test_schema.py
checks against the C++ (``tcbench_context --schema``). The entry point is scripts/tcbench, which
runs ``python -m tcbench_tools``.
"""

__version__ = "0.2.0"
