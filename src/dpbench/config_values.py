"""Typed readers of composed config values: one sentence naming the key when a value has the wrong type.

Used by the configuration (:mod:`dpbench.resolve`) and by each kind of job that reads a section of its own
(``Kind.read_section``, ``Kind.read_model``), so that every setting is refused in the same words.
"""

from __future__ import annotations

import math
from typing import Any

from dpbench.errors import ConfigError


def string(section: dict[str, Any], key: str, prefix: str) -> str:
    """``section[key]`` as a string (``prefix.key`` names it in the refusal)."""
    value = section.get(key)
    if not isinstance(value, str):
        raise ConfigError(f"{prefix}.{key} must be a string, got {value!r}")
    return value


def number(value: Any, key: str) -> float:
    """``value`` as a float; booleans, None and NaN are refused."""
    if isinstance(value, bool) or value is None:
        raise ConfigError(f"{key} must be a number, got {value!r}")
    try:
        result = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{key} must be a number, got {value!r}") from None
    if math.isnan(result):
        raise ConfigError(f"{key} must be a number, got NaN")
    return result


def optional_number(value: Any, key: str) -> float | None:
    """``value`` as a float, or None."""
    return None if value is None else number(value, key)


def integer(value: Any, key: str) -> int:
    """``value`` as an int (a float with an integer value is accepted)."""
    result = number(value, key)
    if not result.is_integer():
        raise ConfigError(f"{key} must be an integer, got {value!r}")
    return int(result)


def boolean(value: Any, key: str) -> bool:
    """``value``, which must be true or false."""
    if not isinstance(value, bool):
        raise ConfigError(f"{key} must be true or false, got {value!r}")
    return value
