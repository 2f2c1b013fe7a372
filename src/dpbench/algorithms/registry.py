"""Name → algorithm class, construction from config, and model compatibility checks."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from dpbench.algorithms.base import Algorithm
from dpbench.algorithms.baselines import Majority, NonPrivate
from dpbench.algorithms.chen_lee import DPBLGD, DPBLSGD, DPBLSGDAC
from dpbench.algorithms.dp_agd import DPAGD
from dpbench.algorithms.dp_sgd import DPSGD
from dpbench.algorithms.kuru import KURU_METHODS
from dpbench.algorithms.liu_dda import DDA_METHODS
from dpbench.algorithms.objpert import ObjPert
from dpbench.algorithms.output_perturbation import OutPertGD, OutPertRSGD
from dpbench.algorithms.privgene import PrivGene
from dpbench.bo.algorithms import BO_METHODS
from dpbench.errors import ConfigError
from dpbench.pwa.algorithms import PWA_METHODS

ALGORITHMS: dict[str, type[Algorithm]] = {
    cls.name: cls
    for cls in (
        NonPrivate,
        Majority,
        DPSGD,
        DPBLSGD,
        DPBLSGDAC,
        DPBLGD,
        DPAGD,
        ObjPert,
        PrivGene,
        OutPertGD,
        OutPertRSGD,
    )
    + KURU_METHODS
    + PWA_METHODS
    + DDA_METHODS
    + BO_METHODS
}


def algorithm_class(name: str) -> type[Algorithm]:
    """The class registered under ``name``; unknown names list the valid choices."""
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise ConfigError(f"unknown algorithm {name!r}; valid choices: {', '.join(sorted(ALGORITHMS))}") from None


def make_algorithm(name: str, params: Mapping[str, Any]) -> Algorithm:
    """Instantiate ``name`` with hyper-parameters ``params``; unknown or invalid ones are named."""
    cls = algorithm_class(name)
    valid = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(params) - valid)
    if unknown:
        raise ConfigError(
            f"algorithm.{unknown[0]} is not a parameter of {name}; valid: {', '.join(sorted(valid)) or '(none)'}"
        )
    try:
        return cls(**params)
    except (TypeError, ValueError) as exc:
        message = str(exc).removeprefix(f"{name}: ")  # the _require_* checks name the method already
        raise ConfigError(f"algorithm {name}: {message}") from None


def check_compatible(name: str, loss: str) -> None:
    """Refuse a model/algorithm pair the method cannot handle, saying why."""
    cls = algorithm_class(name)
    if cls.supported_losses is not None and loss not in cls.supported_losses:
        reason = f" ({cls.unsupported_reason})" if cls.unsupported_reason else ""
        raise ConfigError(
            f"algorithm {name} does not support the {loss} loss{reason}; "
            f"supported: {', '.join(sorted(cls.supported_losses))}"
        )
