"""``python -m dpbench.verify`` is the ``dpbench-verify`` command."""

import sys

from dpbench.verify.cli import main

sys.exit(main())
