"""The sweep manifest: ``SWEEP_DIR/manifest.json`` lists every job of a multirun when it ends.

:class:`ManifestCallback` is a Hydra callback (registered under ``hydra.callbacks`` in
``conf/config.yaml``). Its multirun hooks run in the process that launched the sweep, whatever the
launcher (joblib, submitit, Ray): ``on_multirun_start`` removes a stale manifest, ``on_multirun_end``
writes the new one from :func:`dpbench.status.sweep_status`, the logic of ``dpbench-status``. Hydra
skips ``on_multirun_end`` when the sweep raised (a bug in a job, Ctrl-C), so the ``dpbench`` command
calls :func:`finish_open_sweeps` on its way out and the manifest then lists the failures too; it reads
the reports (:func:`finish_open_sweeps` returns them) to end a sweep with failed jobs in one line.
A sweep killed outright (SIGKILL, a lost node) has no manifest; ``dpbench-status`` works without it.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

log = logging.getLogger("dpbench")

#: Callbacks whose multirun started in this process and has not written its manifest yet.
_OPEN: list[ManifestCallback] = []
#: The reports of the multiruns that ended in this process (their manifests are written).
_ENDED: list = []


class ManifestCallback(Callback):
    """Write ``manifest.json`` in the sweep directory at the end of every multirun."""

    def __init__(self) -> None:
        self._sweep_dir: Path | None = None
        self._pid: int | None = None

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        """Remember the sweep directory and remove a manifest left by an earlier run of the sweep."""
        from dpbench.status import MANIFEST_FILE

        self._sweep_dir = Path(str(config.hydra.sweep.dir))
        self._pid = os.getpid()
        (self._sweep_dir / MANIFEST_FILE).unlink(missing_ok=True)
        _OPEN.append(self)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        """Every job returned: write the manifest."""
        self.finish()

    def finish(self, *, raised: bool = False) -> Path | None:
        """Write the manifest once (in the launching process only); never raises. ``raised``: the
        sweep ended with an exception, so the summary is a warning. Returns the manifest's path."""
        if self in _OPEN:
            _OPEN.remove(self)
        if self._sweep_dir is None or self._pid != os.getpid():
            return None
        from dpbench.status import sweep_status, write_manifest

        try:
            report = sweep_status(self._sweep_dir)
            path = write_manifest(report)
        except Exception as exc:  # noqa: BLE001 — a report must never turn a finished sweep into a failed one
            log.warning("cannot write the sweep manifest in %s: %s", self._sweep_dir, exc)
            return None
        _ENDED.append(report)
        level = logging.INFO if report.complete and not raised else logging.WARNING
        log.log(level, "%s; manifest: %s (dpbench-status %s lists the jobs)", report.summary(), path, self._sweep_dir)
        return path


def finish_open_sweeps() -> list:
    """Write the manifest of every multirun that started in this process but did not reach
    ``on_multirun_end`` (the sweep raised, or was interrupted); returns the
    :class:`~dpbench.status.SweepReport` of every multirun that ended in this process."""
    for callback in _OPEN[:]:  # a copy: finish() removes the callback from _OPEN
        callback.finish(raised=True)
    return list(_ENDED)
