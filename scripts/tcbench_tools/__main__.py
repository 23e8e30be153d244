"""``python -m tcbench_tools``: see cli.py."""

import sys

from tcbench_tools.cli import main

sys.exit(main())
