"""File modes: what dpbench writes gets the permissions the user's umask asks for.

Atomic writes go through :func:`tempfile.mkstemp`, which creates files 0600 whatever the umask, so
lab-mates on a shared cluster could not read results or the data cache. Every
temporary file is given ``0666 & ~umask`` before it is renamed into place, as ``open()`` would.
"""

from __future__ import annotations

import os
from pathlib import Path


def current_umask() -> int:
    """The process umask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def apply_umask(path: Path | str) -> None:
    """Give ``path`` the mode a plain ``open(path, "w")`` would have: 0666 & ~umask."""
    os.chmod(path, 0o666 & ~current_umask())
