"""`python -m hvbench_assets.cli ...`, the same as the `hvbench` console script."""

import sys

from hvbench_assets.cli import main

sys.exit(main())
