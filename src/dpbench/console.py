"""The edge every companion command (dpbench-status, dpbench-audit, dpbench-plot) shares with the
terminal: a reader that stops early (``dpbench-status DIR | head``) ends the command quietly, and
Ctrl-C ends it with one line and status 130, never with a traceback."""

from __future__ import annotations

import functools
import os
import sys


def console_command(prog: str):
    """Decorate the ``main`` of command ``prog``: a closed stdout ends it with status 1 and no traceback
    (the recipe of the Python docs, "Note on SIGPIPE": stdout is flushed inside the guard, then pointed
    at /dev/null so that the interpreter's own flush at exit cannot raise again); Ctrl-C prints
    ``<prog>: interrupted`` and returns 130 (128 + SIGINT)."""

    def decorate(main):
        @functools.wraps(main)
        def wrapper(*args, **kwargs):
            try:
                status = main(*args, **kwargs)
                sys.stdout.flush()
                return status
            except BrokenPipeError:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
                return 1
            except KeyboardInterrupt:
                print(f"{prog}: interrupted", file=sys.stderr)
                return 130

        return wrapper

    return decorate
