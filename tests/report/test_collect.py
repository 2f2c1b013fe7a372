"""What ``dpbench-report`` takes from a sweep: the figures of its experiment and the claims in them."""

from __future__ import annotations

import pandas as pd
import pytest

from dpbench.report.collect import claims_in, recipes_for

SUMMARY = """# kuru_acc Figs 3–4

## Claims of Sec 5, m = n = 100000

**(a) accelerated methods beat DP-GD, best over T: HOLDS**

- c = 0.1: DP-HB -0.977 < DP-GD 1.076
- c = 1: DP-HB -1.579 < DP-GD -0.541

**(b) DP-NAG-opt has the lowest value: FAILS**

- c = 1: DP-NAG-opt -1.970, DP-MASG-opt -2.1

## Mean iterations

- not evidence of any claim
"""


def test_claims_are_read_with_the_numbers_under_them():
    claims = claims_in(SUMMARY)
    assert [(c.claim, c.verdict) for c in claims] == [
        ("(a) accelerated methods beat DP-GD, best over T", "HOLDS"),
        ("(b) DP-NAG-opt has the lowest value", "FAILS"),
    ]
    assert claims[0].evidence == ["c = 0.1: DP-HB -0.977 < DP-GD 1.076", "c = 1: DP-HB -1.579 < DP-GD -0.541"]
    assert claims[1].evidence == ["c = 1: DP-NAG-opt -1.970, DP-MASG-opt -2.1"]  # the next heading ends it


@pytest.mark.parametrize(
    ("experiment", "figure"),
    [
        ("kuru_fig3", "kuru.fig3"),
        ("kuru_fig4", "kuru.fig4"),
        ("chen_lee_fig3_public", "chen_lee.fig3"),
        ("kusner_utility_logreg", "kusner.utility"),
        ("leaderboard", "leaderboard"),
        ("han_fig2", "han.fig2"),
    ],
)
def test_a_preset_sweep_gets_its_papers_figure(experiment, figure):
    assert [r.name for r in recipes_for([experiment], pd.DataFrame())] == [figure]


def test_a_sweep_over_epsilon_without_a_preset_gets_accuracy_against_epsilon():
    rows = pd.DataFrame({"eps": [0.1, 1.0], "test_accuracy": [0.7, 0.8]})
    assert [r.name for r in recipes_for([], rows)] == ["accuracy-vs-eps"]
    assert recipes_for([], rows.iloc[:1]) == []


def test_every_preset_sweep_has_a_figure_in_the_report():
    """A paper's preset draws its paper's figure; the one preset without a figure of its own (a sweep
    over ε) gets accuracy against ε."""
    from dpbench.conf_files import group_choices

    over_eps = pd.DataFrame({"eps": [0.1, 1.0], "test_accuracy": [0.7, 0.8]})
    for experiment in group_choices("experiment"):
        assert recipes_for([experiment], over_eps), experiment


CHEN_LEE_SUMMARY = """## chen_lee's claims, checked against these runs

**"dp_blsgd and dp_blgd outperform dp_agd"** (mean test accuracy, per dataset and ε):

- dp_blsgd beats dp_agd in 3 of 18 settings: holds in part; not at adult ε = 0.05 (0.756 vs 0.764)
- dp_blgd beats dp_agd in 18 of 18 settings: holds

**"outpert_rsgd wins on bank"** (rank among the private methods, 1 = best):

- outpert_rsgd is first at 0 of 6 ε: fails. ε = 0.05: #8 (best privgene 0.883)

**"objpert and dp_sgd are weak at small ε"** (at the two smallest ε of each dataset):

- adult ε = 0.05 (majority 0.761): objpert #2/9, 0.801 (not weak)

**(B) the advantage is larger at small ε: PARTLY**

- ε = 0.2: r = 1.3
"""


def test_quoted_claims_take_their_verdict_from_their_cases():
    claims = claims_in(CHEN_LEE_SUMMARY)
    assert [(c.claim, c.verdict) for c in claims] == [
        ("dp_blsgd and dp_blgd outperform dp_agd", "PARTLY"),  # one case in part, one holds
        ("outpert_rsgd wins on bank", "FAILS"),
        ("objpert and dp_sgd are weak at small ε", "NO VERDICT"),  # numbers only
        ("(B) the advantage is larger at small ε", "PARTLY"),
    ]
    assert claims[0].evidence[1] == "dp_blgd beats dp_agd in 18 of 18 settings: holds"


def test_the_committed_chen_lee_summaries_have_verdicts():
    from pathlib import Path

    results = Path(__file__).resolve().parents[2] / "docs" / "results"
    for name in ("chen_lee_fig3.md", "chen_lee_fig4.md", "leaderboard.md"):
        verdicts = {c.verdict for c in claims_in((results / name).read_text())}
        assert verdicts & {"HOLDS", "FAILS", "PARTLY"}, name


def test_a_methods_audit_rows_are_those_of_the_targets_covering_it():
    from dpbench.report.collect import _audit_gaps, _audit_rows

    audit = pd.DataFrame({"name": ["dp_sgd_step", "gaussian", "dp_nag_step", "laplace"], "verdict": ["ok"] * 4})
    assert [row["name"] for row in _audit_rows("dp_sgd", audit)] == ["dp_sgd_step"]
    assert [row["name"] for row in _audit_rows("dp_agd", audit)] == ["gaussian"]  # report_noisy_max_dp_agd absent here
    assert [row["name"] for row in _audit_rows("dp_hb", audit)] == ["dp_nag_step"]  # no target is named after dp_hb
    assert _audit_rows("nonprivate", audit) == []
    assert "Poisson subsample" in _audit_gaps("dp_blsgd") and _audit_gaps("dp_sgd") == ""
