"""Every private method says which dpbench-audit targets audit its releases, and what they leave
unaudited (its ``audit``): a private method without one fails here, and so does one with no target
and no written reason, or a target name the audit suite does not have; a non-private method has none."""

from __future__ import annotations

import pytest

from dpbench.algorithms.registry import ALGORITHMS, AUDIT_COVERAGE
from dpbench.audit.suite import TARGETS


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_a_method_declares_audit_coverage_exactly_when_it_is_private(name):
    cls = ALGORITHMS[name]
    assert (cls.audit is not None) == cls.private, name


def test_the_coverage_table_is_every_private_methods_declaration():
    assert {name: cls.audit for name, cls in ALGORITHMS.items() if cls.private} == AUDIT_COVERAGE


@pytest.mark.parametrize("name", sorted(AUDIT_COVERAGE))
def test_every_target_exists_and_a_coverage_without_targets_says_why(name):
    coverage = AUDIT_COVERAGE[name]
    assert set(coverage.targets) <= set(TARGETS), set(coverage.targets) - set(TARGETS)
    assert coverage.targets or len(coverage.gaps) > 20, f"{name}: no audit target and no reason"
