"""Ctrl-C in a joblib sweep: one line from ``dpbench``, nothing from its workers.

A terminal's Ctrl-C sends SIGINT to every process of the foreground group: the sweep's own process,
which ends the sweep and its workers (``dpbench: error: interrupted …``), and joblib's loky workers.

- A worker that is still starting (Python importing joblib before any code of ours runs) would print
  a ``KeyboardInterrupt`` traceback. :class:`WorkersStartDeafToCtrlC`, a Hydra callback of the sweep's
  process, keeps SIGINT *blocked* (pending, not lost) in every thread of that process while the
  joblib launcher runs, so that the workers it spawns inherit the block; a listener thread takes
  each SIGINT with ``sigtimedwait`` and raises ``KeyboardInterrupt`` in the main thread, as Python's
  own handler would.
- In a worker, :func:`interrupts_in_jobs_only` surrounds each job: it installs a handler that raises
  only while a job runs, and lifts the inherited block; between jobs a worker ignores Ctrl-C.
"""

from __future__ import annotations

import _thread
import contextlib
import signal
import sys
import threading
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

_JOB_RUNNING = False  # in a sweep's worker process: whether a job is running
#: In the sweep's process: set to stop the listener thread (module state: the launcher pickles callbacks).
_STOP_LISTENING: threading.Event | None = None
_SIGINT = {signal.SIGINT}


class WorkersStartDeafToCtrlC(Callback):
    """Hydra callback (``hydra.callbacks`` in ``conf/config.yaml``): while a multirun's joblib launcher
    runs, the sweep's process holds SIGINT blocked, so loky's workers start with it blocked, and a
    listener thread turns each SIGINT into ``KeyboardInterrupt`` in the main thread. Other launchers
    (basic, submitit, Ray) are left as they are. A process started with SIGINT ignored (a background
    job of a non-interactive shell) keeps ignoring it."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        global _STOP_LISTENING  # noqa: PLW0603 — process state, not the callback's: Hydra's joblib launcher pickles callbacks
        launcher = str(config.hydra.launcher.get("_target_", ""))
        if (
            "joblib" not in launcher
            or threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
            or _STOP_LISTENING is not None
        ):
            return
        _start_resource_trackers()
        _STOP_LISTENING = threading.Event()
        signal.pthread_sigmask(signal.SIG_BLOCK, _SIGINT)  # threads started from now on inherit it
        threading.Thread(
            target=_forward_to_main_thread, args=(_STOP_LISTENING,), name="dpbench-ctrl-c", daemon=True
        ).start()

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        """The sweep returned: stop listening; a SIGINT still pending reaches the main thread now."""
        global _STOP_LISTENING  # noqa: PLW0603
        if _STOP_LISTENING is not None:
            _STOP_LISTENING.set()
            _STOP_LISTENING = None
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGINT)


def _start_resource_trackers() -> None:
    """Start the resource trackers of multiprocessing and loky now: each, when started, blocks SIGINT
    for its own spawn and then *unblocks* it in the spawning thread, which would undo the block taken
    after it. Once running, loky finds them alive at every worker's spawn and leaves the mask alone."""
    from multiprocessing import resource_tracker

    from joblib.externals.loky.backend import resource_tracker as loky_resource_tracker

    resource_tracker.ensure_running()
    loky_resource_tracker.ensure_running()


def _forward_to_main_thread(stop: threading.Event) -> None:
    while not stop.is_set():
        if signal.sigtimedwait(_SIGINT, 0.2) is not None:
            _thread.interrupt_main(signal.SIGINT)


def _interrupt_if_a_job_runs(signum, frame) -> None:
    if _JOB_RUNNING:
        raise KeyboardInterrupt


def _drop_swallowed_interrupt(unraisable) -> None:
    """``sys.unraisablehook`` of a sweep's worker: a Ctrl-C that lands while Python runs a callback that
    cannot raise (a weakref callback of the import system, a ``__del__``) would print "Exception ignored …
    Traceback … KeyboardInterrupt". During a job it is dropped without a word: the sweep's own process got
    the same Ctrl-C and ends the sweep, and joblib then kills its workers. It cannot be raised again from
    here: a signal handler runs in the innermost Python frame, this hook's own, and Python prints what the
    hook raises as "Exception ignored in sys.unraisablehook". Every other unraisable exception is reported
    as Python reports it."""
    if _JOB_RUNNING and unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
        return
    sys.__unraisablehook__(unraisable)


@contextlib.contextmanager
def interrupts_in_jobs_only():
    """Around a job in a sweep's worker process (joblib's loky workers): during a job Ctrl-C interrupts
    it as usual; between jobs the worker ignores it, and the sweep's own process, which gets it too,
    ends the sweep and its workers. Left to loky, a worker caught between jobs (in its idle loop's
    ``gc.collect()``) printed a traceback under the one-line message. The SIGINT block a worker inherits
    (:class:`WorkersStartDeafToCtrlC`) is lifted once the handler is in place, so a Ctrl-C pressed while
    the worker started is ignored like one between jobs. A job that runs in the main process
    (``dpbench`` without ``-m``, the basic launcher) is untouched. A Ctrl-C swallowed by a callback is
    dropped (:func:`_drop_swallowed_interrupt`)."""
    global _JOB_RUNNING  # noqa: PLW0603 — the flag the SIGINT handler reads: a module global
    import multiprocessing

    if multiprocessing.parent_process() is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    signal.signal(signal.SIGINT, _interrupt_if_a_job_runs)
    sys.unraisablehook = _drop_swallowed_interrupt
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGINT)
    _JOB_RUNNING = True
    try:
        yield
    finally:
        _JOB_RUNNING = False
