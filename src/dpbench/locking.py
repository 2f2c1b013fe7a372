"""One process per job directory: two identical sweeps started at once into one directory would
otherwise both compute every job. :func:`job_lock` holds an exclusive ``flock`` on
``<job dir>/.lock`` while a job runs; a second process waits for it, then finds the results
finished and skips the job (:func:`dpbench.engine.run_job`). The lock dies with its process (a
killed job never blocks a rerun); the empty ``.lock`` file stays, since removing it would let a
third process lock a different file than the one a second is waiting on."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
from collections.abc import Iterator
from pathlib import Path

LOCK_FILE = ".lock"

log = logging.getLogger("dpbench")


@contextlib.contextmanager
def job_lock(out_dir: Path) -> Iterator[None]:
    """Hold the lock of job directory ``out_dir`` (made if absent) for the ``with`` block; wait,
    saying so once in the log, while another process holds it."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / LOCK_FILE
    fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o666)  # 0666 & ~umask; read-only is enough for flock
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.info("another dpbench process is running the job in %s; waiting for it (lock %s)", out_dir, path)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
