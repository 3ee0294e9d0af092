"""`python -m hvbench_assets.demo [--videos DIR]`, the same as `hvbench demo`."""

import sys

from hvbench_assets.demo.main import main

sys.exit(main())
