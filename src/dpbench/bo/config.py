"""What the configuration asks of the hyper-parameter-selection kind (``Kind.read_model``,
``Kind.read_section``): ``model=bo`` names no model of its own (the tuned model is ``bo.target``), and the
``bo`` section says what is tuned and on which rows (:class:`~dpbench.settings.BOConfig`)."""

from __future__ import annotations

import dataclasses
from typing import Any

from dpbench.bo.targets import TARGETS
from dpbench.config_values import integer, string
from dpbench.errors import ConfigError
from dpbench.settings import BOConfig, ModelConfig


def read_model(model: dict[str, Any], name: str) -> ModelConfig:
    """The ``model`` section of a kusner_bo job: its loss and nothing else."""
    extra = sorted(set(model) - {"name", "loss"})
    if extra:
        raise ConfigError(f"model {name} takes no parameters (the tuned model is bo.target), got {', '.join(extra)}")
    return ModelConfig(name=name, loss=string(model, "loss", "model"), reg=0.0)


def read_section(section: dict[str, Any]) -> BOConfig:
    """The ``bo`` section as a BOConfig (absent keys take BOConfig's defaults); unknown keys are named."""
    valid = {f.name for f in dataclasses.fields(BOConfig)}
    unknown = sorted(set(section) - valid)
    if unknown:
        raise ConfigError(f"bo.{unknown[0]} is not a bo setting; valid: {', '.join(sorted(valid))}")
    values: dict[str, Any] = {"target": string(section, "target", "bo")}
    if values["target"] not in TARGETS:
        raise ConfigError(f"bo.target must be one of {', '.join(TARGETS)}, got {values['target']!r}")
    options = section.get("target_options") or {}
    if not isinstance(options, dict):
        raise ConfigError(f"bo.target_options must be a mapping, got {options!r}")
    values["target_options"] = options
    for key in valid - {"target", "target_options"}:
        if key in section:
            nullable = key == "pool_size" and section[key] is None
            values[key] = None if nullable else integer(section[key], f"bo.{key}")
    return BOConfig(**values)
