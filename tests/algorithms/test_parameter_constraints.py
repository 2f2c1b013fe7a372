"""Every hyper-parameter of every method is declared in its class's ``parameter_constraints`` (or, for
``fidelity``, by ``fidelity_modes``): its default passes, a value of no kind it could take is refused at
construction in one sentence naming the method and the key, and the sentence says what the value may be."""

from __future__ import annotations

import dataclasses

import pytest

from dpbench.algorithms.registry import ALGORITHMS
from dpbench.constraints import (
    COUNT,
    POSITIVE,
    Boolean,
    Integer,
    ListOf,
    Options,
    Real,
    Satisfies,
    check_parameters,
    describe,
)

FIELDS = [(name, field.name) for name, cls in sorted(ALGORITHMS.items()) for field in dataclasses.fields(cls)]


class NotAValue:
    """A value no hyper-parameter takes."""

    def __repr__(self) -> str:
        return "<not a value>"


@pytest.mark.parametrize(("method", "key"), FIELDS, ids=[f"{m}.{k}" for m, k in FIELDS])
def test_every_hyper_parameter_is_constrained_and_a_value_of_no_kind_is_refused_naming_it(method, key):
    cls = ALGORITHMS[method]
    constraints = cls.constraints()
    assert key in constraints, f"{method}.{key} has no entry in parameter_constraints"
    with pytest.raises(ValueError, match=rf"^{method}: {key} must be .+, got <not a value>$"):
        cls(**{key: NotAValue()})


@pytest.mark.parametrize("method", sorted(ALGORITHMS))
def test_the_class_defaults_meet_the_constraints(method):
    cls = ALGORITHMS[method]
    defaults = {f.name: getattr(cls(), f.name) for f in dataclasses.fields(cls)}
    check_parameters(method, cls.constraints(), defaults)


@pytest.mark.parametrize(
    ("alternatives", "good", "bad", "phrase"),
    [
        ([POSITIVE], [1, 0.5, 1e300], [0, -1, float("nan"), float("inf"), True, "1"], "a finite number > 0"),
        ([COUNT, None], [1, 7, None], [0, 2.0, False, "3"], "an integer ≥ 1 or null"),
        ([Real(0, 1, closed="right")], [1, 0.25], [0, 1.5], "a finite number in (0, 1]"),
        ([Integer(2, 9)], [2, 9], [1, 10], "an integer in [2, 9]"),
        ([Options("a", "b")], ["a"], ["c", None, 1], "one of a, b"),
        ([Options(1, 2)], [1], [True, 1.0], "one of 1, 2"),
        ([Boolean()], [True, False], [0, "true"], "true or false"),
        ([ListOf(Real(0, 1, closed="neither"))], [[0.5], (0.1, 0.9)], [[], [1.0], 0.5], "a non-empty list"),
        ([Options("greedy"), POSITIVE], ["greedy", 2.0], ["other", -1], "one of greedy or a finite number > 0"),
        ([Satisfies(lambda v: v % 2 == 0, "an even number")], [4], [3, "x"], "an even number"),
    ],
)
def test_a_constraint_accepts_what_it_says_and_nothing_else(alternatives, good, bad, phrase):
    assert describe(alternatives).startswith(phrase)
    for value in good:
        check_parameters("m", {"k": alternatives}, {"k": value})
    for value in bad:
        with pytest.raises(ValueError, match=r"^m: k must be "):
            check_parameters("m", {"k": alternatives}, {"k": value})
