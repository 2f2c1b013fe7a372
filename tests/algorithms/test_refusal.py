"""The one compatibility hook: ``Algorithm.refusal`` reads a class's declarations, overrides add conditions."""

import pytest

from dpbench.algorithms.base import Request
from dpbench.algorithms.registry import algorithm_class
from dpbench.errors import ConfigError
from dpbench.jobs import BO_LOSS


def _refused(name: str, **asked):
    cls = algorithm_class(name)
    return cls().refusal(Request(**{"loss": "logistic", **asked}))


@pytest.mark.parametrize(
    ("name", "asked", "setting", "says"),
    [
        ("dp_nag", {"loss": "hinge"}, "model", "algorithm dp_nag does not support the hinge loss (the methods"),
        ("dp_sgd", {"l1_reg": 0.1, "model": "lasso"}, "model.l1_reg", "model lasso has an ℓ1 regulariser"),
        ("objpert", {"sampler": "secure"}, "privacy.sampler", "use privacy.sampler=numpy"),
        (
            "outpert_rsgd",
            {"neighbouring": "add_remove"},
            "privacy.neighbouring",
            "use privacy.neighbouring=replace_one",
        ),
        (
            "dp_dda",
            {"loss": "hinge", "reg": 0.1, "l1_reg": 0.1, "neighbouring": "replace_one"},
            "model.reg",
            "exactly one regulariser",
        ),
        ("kusner_alg3", {"loss": BO_LOSS, "bo_target": "svm_rbf"}, "bo.target", "it supports bo.target=logreg"),
    ],
)
def test_each_declaration_refuses_its_setting_in_one_sentence(name, asked, setting, says):
    refused = _refused(name, **asked)
    assert refused is not None and refused.setting == setting
    assert says in refused.reason and "\n" not in refused.reason


@pytest.mark.parametrize(
    ("name", "asked"),
    [
        ("dp_sgd", {"reg": 0.01}),
        ("dp_dda", {"loss": "hinge", "reg": 0.1, "neighbouring": "replace_one"}),
        ("dp_dda", {"loss": "hinge", "l1_reg": 0.1, "neighbouring": "native"}),
        ("kusner_alg3", {"loss": BO_LOSS, "bo_target": "logreg"}),
        ("dp_sgd", {"sampler": "secure", "tuning": "private", "searches_grid": True}),
    ],
)
def test_what_a_method_declares_it_runs_is_not_refused(name, asked):
    assert _refused(name, **asked) is None


def test_private_tuning_needs_a_renyi_curve_and_the_relation_met_natively():
    assert _refused("dp_sgd", tuning="private", searches_grid=True, neighbouring="replace_one").setting == "tuning"
    assert _refused("dp_sgd", tuning="private", searches_grid=False, neighbouring="replace_one") is None
    assert "no Rényi curve" in _refused("objpert", tuning="private", searches_grid=True).reason


def test_a_run_is_refused_by_the_hook_with_the_models_that_work(compose_run_config):
    with pytest.raises(ConfigError, match=r"exactly one regulariser.*got reg = 0.1, l1_reg = 0.0005$"):
        compose_run_config("algorithm=dp_dda", "model=liu_l1_svm", "model.reg=0.1", "dataset=synthetic_svm")
