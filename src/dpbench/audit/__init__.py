"""dpbench-audit: statistical lower bounds on the ε of dpbench's private mechanisms.

:mod:`~dpbench.audit.core` (the auditor), :mod:`~dpbench.audit.events` (choosing the distinguishing
event), :mod:`~dpbench.audit.targets` and :mod:`~dpbench.audit.algorithm_targets` (the mechanisms,
each on the worst-case neighbouring pair of its proof), :mod:`~dpbench.audit.controls` (deliberately
broken mechanisms that must be caught), :mod:`~dpbench.audit.suite` (registry and runs) and
:mod:`~dpbench.audit.cli` (``dpbench-audit``, ``python -m dpbench.audit``).
"""

from dpbench.audit.core import (
    DEFAULT_N,
    FAMILY_ALPHA,
    AuditResult,
    Target,
    audit,
    bonferroni_confidence,
)

__all__ = ["DEFAULT_N", "FAMILY_ALPHA", "AuditResult", "Target", "audit", "bonferroni_confidence"]
