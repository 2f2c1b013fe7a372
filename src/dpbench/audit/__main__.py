"""``python -m dpbench.audit`` is the ``dpbench-audit`` command."""

import sys

from dpbench.audit.cli import main

sys.exit(main())
