"""Every private algorithm says which dpbench-audit targets audit its releases, and what they leave
unaudited: a private algorithm added without an entry fails here, and so does an
entry with no target and no written reason, a target name the audit suite does not have, or an
entry for a name the registry does not know."""

from __future__ import annotations

from dpbench.algorithms.audit_coverage import AUDIT_COVERAGE
from dpbench.algorithms.registry import ALGORITHMS
from dpbench.audit.suite import TARGETS

PRIVATE = {name for name, cls in ALGORITHMS.items() if cls.private}


def test_every_private_algorithm_has_an_audit_entry():
    assert PRIVATE - set(AUDIT_COVERAGE) == set()


def test_every_entry_names_a_private_algorithm_of_the_registry():
    assert set(AUDIT_COVERAGE) - PRIVATE == set()


def test_every_target_exists_and_an_entry_without_targets_says_why():
    for name, coverage in AUDIT_COVERAGE.items():
        assert set(coverage.targets) <= set(TARGETS), (name, set(coverage.targets) - set(TARGETS))
        assert coverage.targets or len(coverage.gaps) > 20, f"{name}: no audit target and no reason"
