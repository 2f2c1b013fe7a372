"""``python -m dpbench.plot`` is the ``dpbench-plot`` command."""

import sys

from dpbench.plot.cli import main

sys.exit(main())
