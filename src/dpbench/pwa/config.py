"""What the configuration asks of the piecewise-affine kind (``Kind.read_model``, ``Kind.check_dataset``):
``model=pwa`` is han_pwa's f(x) = max_i (a_iᵀx + b_i), which has no parameters and no regulariser, and a
``synthetic_pwa`` instance's options are checked before any job runs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dpbench.config_values import string
from dpbench.errors import ConfigError
from dpbench.pwa.dataset import load_pwa_problem
from dpbench.settings import ModelConfig


def read_model(model: dict[str, Any], name: str) -> ModelConfig:
    """The ``model`` section of the piecewise-affine f: its loss, nothing else, reg = 0."""
    extra = sorted(set(model) - {"name", "loss", "reg"})
    if extra or model.get("reg", 0.0) != 0.0:
        raise ConfigError(f"model {name} (the piecewise-affine f) takes no parameters and reg = 0, got {model}")
    return ModelConfig(name=name, loss=string(model, "loss", "model"), reg=0.0)


def check_dataset(name: str, options: Mapping[str, Any]) -> None:
    """Build the instance once, so that a bad option is refused naming it (:func:`load_pwa_problem`)."""
    load_pwa_problem(name, options)
