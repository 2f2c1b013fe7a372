"""Declarative constraints on hyper-parameters and options: one checker, one sentence per violation.

After scikit-learn's ``_parameter_constraints`` (``sklearn/utils/_param_validation.py``): a class
declares, for each of its parameters, the list of what a value may be, and
:func:`check_parameters` refuses the first value that is none of them, in one sentence naming the
owner, the key, what it may be and what it got::

    parameter_constraints = {
        "steps": [Integer(1)],                        # an integer ≥ 1
        "learning_rate": [Real(0, closed="neither")],  # a finite number > 0
        "batch_size": [Integer(1), None],             # an integer ≥ 1 or null
        "noise": [Options("calibrated", "fixed")],    # one of calibrated, fixed
    }

    check_parameters("dp_sgd", constraints, {"steps": 0, ...})
    # ValueError: dp_sgd: steps must be an integer ≥ 1, got 0

``None`` in a list allows null. ``bool`` is never a number (YAML's ``true`` is not 1). Standard
library only: settings and dataset options may use it before anything heavy loads.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


class Constraint:
    """What a value may be: :meth:`accepts` tells, :meth:`describe` says it as a noun phrase."""

    def accepts(self, value: Any) -> bool:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


def _bound(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class Real(Constraint):
    """A finite number (int or float, never bool) between ``low`` and ``high`` (None: unbounded);
    ``closed`` says which ends belong: ``both`` (default), ``left``, ``right`` or ``neither``."""

    low: float | None = None
    high: float | None = None
    closed: str = "both"

    def __post_init__(self) -> None:
        if self.closed not in ("both", "left", "right", "neither"):
            raise ValueError(f"closed must be both, left, right or neither, got {self.closed!r}")

    def _inside(self, value: float) -> bool:
        left_closed = self.closed in ("both", "left")
        right_closed = self.closed in ("both", "right")
        if self.low is not None and (value < self.low or (value == self.low and not left_closed)):
            return False
        return not (self.high is not None and (value > self.high or (value == self.high and not right_closed)))

    def accepts(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        return math.isfinite(value) and self._inside(value)

    def _range(self) -> str:
        left_closed = self.closed in ("both", "left")
        right_closed = self.closed in ("both", "right")
        if self.low is not None and self.high is not None:
            return (
                f"in {'[' if left_closed else '('}{_bound(self.low)}, {_bound(self.high)}{']' if right_closed else ')'}"
            )
        if self.low is not None:
            return f"{'≥' if left_closed else '>'} {_bound(self.low)}"
        if self.high is not None:
            return f"{'≤' if right_closed else '<'} {_bound(self.high)}"
        return ""

    def describe(self) -> str:
        return f"a finite number {self._range()}".rstrip()


@dataclass(frozen=True)
class Integer(Real):
    """An integer (never bool) between ``low`` and ``high``, both included by default."""

    def accepts(self, value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and self._inside(value)

    def describe(self) -> str:
        return f"an integer {self._range()}".rstrip()


@dataclass(frozen=True)
class Options(Constraint):
    """One of the given values (strings, usually)."""

    values: tuple[Any, ...]

    def __init__(self, *values: Any) -> None:
        object.__setattr__(self, "values", tuple(values))

    def accepts(self, value: Any) -> bool:
        return any(value == option and type(value) is type(option) for option in self.values)

    def describe(self) -> str:
        return "one of " + ", ".join(str(option) for option in self.values)


@dataclass(frozen=True)
class Boolean(Constraint):
    """``true`` or ``false``."""

    def accepts(self, value: Any) -> bool:
        return isinstance(value, bool)

    def describe(self) -> str:
        return "true or false"


@dataclass(frozen=True)
class ListOf(Constraint):
    """A non-empty list (or tuple) whose every item meets ``item``."""

    item: Constraint

    def accepts(self, value: Any) -> bool:
        return isinstance(value, (list, tuple)) and bool(value) and all(self.item.accepts(v) for v in value)

    def describe(self) -> str:
        return f"a non-empty list, each item {self.item.describe()}"


@dataclass(frozen=True)
class Satisfies(Constraint):
    """A value for which ``predicate`` holds, described by ``description`` (for what the others cannot say)."""

    predicate: Callable[[Any], bool]
    description: str

    def accepts(self, value: Any) -> bool:
        try:
            return bool(self.predicate(value))
        except (TypeError, ValueError):
            return False

    def describe(self) -> str:
        return self.description


def _accepts(alternative: Constraint | None, value: Any) -> bool:
    return value is None if alternative is None else alternative.accepts(value)


def describe(alternatives: Sequence[Constraint | None]) -> str:
    """What ``alternatives`` allow, as one phrase: ``an integer ≥ 1 or null``."""
    phrases = [alternative.describe() for alternative in alternatives if alternative is not None]
    if None in alternatives:
        phrases.append("null")
    return " or ".join(phrases)


def violation(owner: str, key: str, alternatives: Sequence[Constraint | None], value: Any) -> str | None:
    """The sentence refusing ``value`` for ``key`` of ``owner``, or None when one alternative accepts it."""
    if any(_accepts(alternative, value) for alternative in alternatives):
        return None
    return f"{owner}: {key} must be {describe(alternatives)}, got {value!r}"


def check_parameters(
    owner: str, constraints: Mapping[str, Sequence[Constraint | None]], values: Mapping[str, Any]
) -> None:
    """Raise a ValueError with the sentence of the first value (in the order of ``values``) that its
    constraints refuse; keys without constraints are not checked here (tests require one for each)."""
    for key, value in values.items():
        if key in constraints and (sentence := violation(owner, key, constraints[key], value)):
            raise ValueError(sentence)


POSITIVE = Real(0, closed="neither")
"""A finite number > 0: a step size, a clipping norm, a noise multiplier."""
NON_NEGATIVE = Real(0)
"""A finite number ≥ 0."""
FINITE = Real()
"""Any finite number."""
COUNT = Integer(1)
"""An integer ≥ 1: iterations, steps, a batch size."""
PROBABILITY_OPEN = Real(0, 1, closed="neither")
"""A number in (0, 1)."""
