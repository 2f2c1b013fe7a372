"""``dataset=synthetic_pwa``: the han_pwa Sec. 5.1 instance as a configurable, validated dataset.

Options (conf/dataset/synthetic_pwa.yaml): m pieces, dimension d, box half-width c, adjacency
bound b_max (eq. 4), generator seed and the standard deviations of a_i and b_i. The instance is a
deterministic function of them (:func:`~dpbench.pwa.problem.make_problem`, nested in m), and its
checksum is the sha256 of (A, b, c, b_max).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from dpbench.data.options import integer, positive_number, resolve
from dpbench.pwa.problem import (
    DEFAULT_B_MAX,
    DEFAULT_C,
    DEFAULT_D,
    DEFAULT_M,
    PWAProblem,
    make_problem,
)

__all__ = ["PWA_DATASETS", "PWA_OPTIONS", "load_pwa_problem", "problem_checksum"]

PWA_OPTIONS = {
    "m": integer(DEFAULT_M, 1),
    "d": integer(DEFAULT_D, 1),
    "c": positive_number(DEFAULT_C),
    "b_max": positive_number(DEFAULT_B_MAX),
    "seed": integer(0, 0),
    "a_std": positive_number(1.0),
    "b_std": positive_number(1.0),
}
PWA_DATASETS: tuple[str, ...] = ("synthetic_pwa",)


def load_pwa_problem(name: str, options: Mapping[str, Any]) -> PWAProblem:
    """The instance for dataset ``name`` (only ``synthetic_pwa``) and its options; a bad option
    raises :class:`~dpbench.errors.DataError` naming it."""
    resolved = resolve(name, {str(k): options[k] for k in options}, PWA_OPTIONS)
    m = resolved.pop("m")
    return make_problem(m, **{k: (float(v) if k not in ("d", "seed") else v) for k, v in resolved.items()})


def problem_checksum(problem: PWAProblem) -> str:
    """sha256 over the instance's numbers: equal checksums ⇒ the same problem."""
    digest = hashlib.sha256()
    for array in (problem.A, problem.b, np.array([problem.c, problem.b_max])):
        digest.update(np.ascontiguousarray(array, dtype="<f8").tobytes())
    return digest.hexdigest()
