"""Whole-budget trials kept on disk, so that a sweep trains each one once.

``tuning=oracle`` trains every point of a method's grid with the whole budget, on the whole training fold,
from the run's noise stream: exactly what a ``tuning=fixed`` job of that point trains. A leaderboard sweeps
both modes, so the point the fixed job uses was trained twice, bit for bit alike (DP-AGD's alone cost
95 s per fold at ε = 0.4). Each such trial is kept here after it is trained and taken from here by the
other job, in whichever order the two run.

A trial is keyed by what determines it bit for bit: the ``config_hash`` of the fixed job of its setting
(dataset, its options and scaling, model, method and hyper-parameters, the method's ε and δ, relation,
sampler, folds, seed, trace settings: :meth:`~dpbench.settings.RunConfig.semantic_dict`), the fold and the
repetition, the noise stream it drew from (hashed into the key: under a secret key it names the key
without revealing it) and the meaning of the code (:func:`dpbench.code_identity.current`). A kept trial
holds the model, the trace rows, the ledger, the evaluation counts and the seconds it took; it is pickled
behind the sha256 of its bytes, one file written atomically, and used only while they match, so a damaged
file is trained again. Kept
under ``$DPBENCH_CACHE/trials``; ``DPBENCH_TRIAL_CACHE=0`` turns the store off (every trial trained), which
the bit-identity test of a sweep compares against.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from dpbench.algorithms.base import FitResult
    from dpbench.privacy.ledger import Ledger
    from dpbench.settings import RunConfig

log = logging.getLogger("dpbench")

SWITCH = "DPBENCH_TRIAL_CACHE"


@dataclass
class KeptTrial:
    """What a whole-budget trial produced, as the tuning modes consume it."""

    result: FitResult
    trace_rows: list[dict[str, Any]]
    ledger: Ledger | None
    grad_evals: int
    obj_evals: int
    seconds: float


def enabled() -> bool:
    """Whether trials are kept and reused (``DPBENCH_TRIAL_CACHE`` unset or not ``0``)."""
    return os.environ.get(SWITCH, "1") != "0"


def trial_key(cfg: RunConfig, params: dict[str, Any], fold: int, rep: int, noise: np.random.SeedSequence) -> str:
    """The key of the whole-budget trial of ``params`` in the job ``cfg`` (module docstring)."""
    from dpbench import code_identity
    from dpbench.settings import TuningConfig

    fixed = dataclasses.replace(cfg, algorithm_params=params, tuning=TuningConfig())
    code = code_identity.current().source_sha256
    fields = [fixed.config_hash, fold, rep, repr(noise.entropy), repr(noise.spawn_key), code]
    return hashlib.sha256(repr(fields).encode()).hexdigest()


def _root() -> Path:
    from dpbench.conf_files import default_cache_dir

    return default_cache_dir() / "trials"


def load(key: str) -> KeptTrial | None:
    """The trial kept under ``key``, or None (absent, damaged or turned off)."""
    if not enabled():
        return None
    path = _root() / f"{key}.pkl"
    try:
        digest, _, blob = path.read_bytes().partition(b"\n")
    except OSError:
        return None
    if hashlib.sha256(blob).hexdigest().encode() != digest:
        log.warning("kept trial %s does not match its sha256: trained again", path)
        return None
    try:
        trial = pickle.loads(blob)  # our own file, its sha256 checked above
    except Exception:  # noqa: BLE001 — any unpickling failure means: train again
        return None
    return trial if isinstance(trial, KeptTrial) else None


def save(key: str, trial: KeptTrial) -> None:
    """Keep ``trial`` under ``key``: the sha256 of its pickle, a newline, the pickle, in one file renamed
    into place; a cache that cannot be written only costs time."""
    if not enabled():
        return
    root = _root()
    path = root / f"{key}.pkl"
    try:
        root.mkdir(parents=True, exist_ok=True)
        blob = pickle.dumps(trial, protocol=pickle.HIGHEST_PROTOCOL)
        staging = path.with_name(f".{path.name}.{os.getpid()}")
        staging.write_bytes(hashlib.sha256(blob).hexdigest().encode() + b"\n" + blob)
        os.replace(staging, path)
    except OSError as exc:
        log.debug("cannot keep trial in %s: %s", path, exc)
