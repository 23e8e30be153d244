"""python3 -m tcbench_tools.gpu_check: see cli.py (scripts/gpu_check.sh runs this)."""

import sys

from tcbench_tools.gpu_check.cli import main

sys.exit(main(sys.argv[1:]))
