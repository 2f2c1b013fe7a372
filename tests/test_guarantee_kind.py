"""Every row says what its (ε, δ) is — proven, conditional, not_covered or none — and only a proven one
is ``guarantee_valid`` (dpbench.jobs.columns.guarantee_status).

Before the kind existed, kusner_bo's Alg. 1–2 (whose sensitivities hold under Assumption 1, which no run
can check) and han_pwa's pwa_exponential (charged as if its Metropolis chain had mixed) wrote
``guarantee_valid = true`` beside the methods whose proofs cover the run.
"""

from __future__ import annotations

import pytest

from dpbench.jobs.columns import GUARANTEE_KINDS, guarantee_status
from dpbench.jobs.plan import make_plan


@pytest.mark.parametrize(
    ("overrides", "kind", "note"),
    [
        (("algorithm=kusner_alg1",), "conditional", "Assumption 1"),
        (("algorithm=kusner_alg2",), "conditional", "de Freitas"),
        (("algorithm=kusner_alg3",), "proven", None),
        (("experiment=han_fig2", "algorithm=pwa_exponential"), "conditional", "Metropolis chain has mixed"),
        (("experiment=han_fig2", "algorithm=pwa_laplace_data"), "proven", None),
        (("algorithm=dp_sgd",), "proven", None),
        (("algorithm=dp_sgd", "tuning=oracle"), "not_covered", "tuning=oracle"),
        (("algorithm=dp_sgd", "privacy.count_share=0"), "not_covered", "privacy.count_share=0"),
        (("algorithm=objpert", "privacy.neighbouring=replace_one", "privacy.count_share=0"), "proven", None),
        (("algorithm=nonprivate",), "none", None),
    ],
)
def test_the_kind_follows_the_configuration(compose_run_config, overrides, kind, note):
    cfg = compose_run_config(*overrides)
    got, reasons = guarantee_status(cfg, make_plan(cfg).method, "public")
    assert got == kind and got in GUARANTEE_KINDS
    assert bool(reasons) == (note is not None) and (note is None or note in "; ".join(reasons))
