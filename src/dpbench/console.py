"""The edge every companion command (dpbench-status, dpbench-audit, dpbench-plot) shares with the
terminal: a reader that stops early (``dpbench-status DIR | head``) ends the command quietly,
Ctrl-C ends it with one line and status 130, and a refusal raised before the command's own handling
(an installed plugin that fails to load, found on the first import of the registry) is one line with
status 2, never a traceback."""

from __future__ import annotations

import functools
import os
import sys

from dpbench.errors import DpbenchError, caused_by_ctrl_c


def console_command(prog: str):
    """Decorate the ``main`` of command ``prog``: a closed stdout ends it with status 1 and no traceback
    (the recipe of the Python docs, "Note on SIGPIPE": stdout is flushed inside the guard, then pointed
    at /dev/null so that the interpreter's own flush at exit cannot raise again); Ctrl-C, or an exception it
    caused (:func:`~dpbench.errors.caused_by_ctrl_c`), prints ``<prog>: interrupted`` and returns 130
    (128 + SIGINT); a :class:`~dpbench.errors.DpbenchError` that reaches it prints ``<prog>: error: <message>``
    and returns 2."""

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
            except (KeyboardInterrupt, Exception) as exc:
                if caused_by_ctrl_c(exc):  # Ctrl-C, or an import it cut short (ImportError from it)
                    print(f"{prog}: interrupted", file=sys.stderr)
                    return 130
                if isinstance(exc, DpbenchError):
                    print(f"{prog}: error: {exc}", file=sys.stderr)
                    return 2
                raise

        return wrapper

    return decorate
