"""Input validation shared by the privacy modules: every error is a ValueError naming the bad value."""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np


def check_positive(name: str, value: object) -> float:
    """Return ``value`` as a float, or raise if it is not a finite real number > 0."""
    if isinstance(value, bool) or not isinstance(value, Real) or not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def check_delta(delta: object, name: str = "delta") -> float:
    """Return δ as a float, or raise if it is not in the open interval (0, 1)."""
    if isinstance(delta, bool) or not isinstance(delta, Real) or not 0.0 < delta < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {delta!r}")
    return float(delta)


def check_rate(sampling_rate: object) -> float:
    """Return the Poisson sampling rate q as a float, or raise if it is not in (0, 1]."""
    if isinstance(sampling_rate, bool) or not isinstance(sampling_rate, Real) or not 0.0 < sampling_rate <= 1.0:
        raise ValueError(f"sampling_rate must be in (0, 1], got {sampling_rate!r}")
    return float(sampling_rate)


def check_count(name: str, value: object) -> int:
    """Return ``value`` as an int, or raise if it is not an integer ≥ 1."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def check_orders(orders: object, *, integer: bool = False) -> np.ndarray:
    """Return RDP orders as a float64 array; each must be finite and > 1 (an integer ≥ 2 if ``integer``)."""
    arr = np.asarray(orders, dtype=np.float64)
    if arr.size == 0:
        raise ValueError("orders must not be empty")
    if not np.all(np.isfinite(arr) & (arr > 1.0)):
        raise ValueError(f"RDP orders must be finite and > 1, got {orders!r}")
    if integer and not np.all(arr == np.round(arr)):
        bad = arr[arr != np.round(arr)]
        raise ValueError(f"only integer RDP orders are supported here, got non-integer orders {bad.tolist()}")
    return arr


def check_generator(rng: object) -> np.random.Generator:
    """Return ``rng`` if it is a ``numpy.random.Generator`` (seeds and legacy RandomState are refused)."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def check_finite_array(name: str, value: object) -> np.ndarray:
    """Return ``value`` as a float64 array, or raise if any entry is NaN or infinite."""
    arr = np.asarray(value, dtype=np.float64)
    if not np.isfinite(arr).all():  # the method, not np.all(): half the cost on a DP-SGD step
        raise ValueError(f"{name} must be finite, got non-finite entries in {value!r}")
    return arr
