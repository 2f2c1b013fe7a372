import re

import pytest

from dpbench.errors import ConfigError


def test_default_config_is_offline_synthetic_dp_blsgd(compose_run_config):
    cfg = compose_run_config()
    assert cfg.dataset == "synthetic_logreg"
    assert cfg.algorithm == "dp_blsgd"
    assert cfg.model.loss == "logistic" and cfg.model.reg == 0.001
    assert cfg.privacy.delta == 1e-8 and cfg.privacy.conversion == "tight"
    assert cfg.reps >= 1 and cfg.folds >= 1


@pytest.mark.parametrize(
    "override,message",
    [
        ("privacy.eps=-1", "privacy.eps must be finite and > 0, got -1.0"),
        ("privacy.eps=0", "privacy.eps must be finite and > 0"),
        ("privacy.eps=inf", "privacy.eps must be finite and > 0, got inf"),
        ("privacy.eps=nan", "privacy.eps must be a number, got NaN"),
        ("privacy.eps=abc", "privacy.eps must be a number, got 'abc'"),
        ("privacy.delta=2", "privacy.delta must be in (0, 1), got 2.0"),
        ("privacy.delta=0", "privacy.delta must be in (0, 1)"),
        ("privacy.conversion=foo", "privacy.conversion must be one of tight, prop1"),
        ("reps=0", "reps must be ≥ 1, got 0"),
        ("cv.folds=0", "cv.folds must be ≥ 1, got 0"),
        ("reps=1.5", "reps must be an integer"),
        ("algorithm=dp_sgd algorithm.noise_multiplier=-4", "noise_multiplier must be a finite number > 0"),
        ("+algorithm.momentum=0.9", "algorithm.momentum is not a parameter of dp_blsgd"),
        ("algorithm.beta=1.5", "beta must be a finite number in (0, 1), got 1.5"),
        ("data.row_norm=-1", "data.row_norm must be null or finite and > 0"),
        ("model.reg=-0.1", "model.reg must be finite and ≥ 0"),
    ],
)
def test_bad_values_are_refused_with_the_key_named(compose_run_config, override, message):
    with pytest.raises(ConfigError) as err:
        compose_run_config(*override.split())
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_unknown_dataset_name_lists_choices(compose_run_config):
    with pytest.raises(ConfigError, match="unknown dataset 'mnist'; valid choices: adult, bank"):
        compose_run_config("dataset.name=mnist")


def test_incompatible_model_algorithm_pair_is_refused(compose_run_config, monkeypatch):
    from dpbench.algorithms.dp_sgd import DPSGD

    monkeypatch.setattr(DPSGD, "supported_losses", frozenset({"logistic", "huber_hinge"}))
    monkeypatch.setattr(DPSGD, "unsupported_reason", "needs a smooth loss")
    with pytest.raises(ConfigError, match="dp_sgd does not support the hinge loss \\(needs a smooth loss\\)"):
        compose_run_config("algorithm=dp_sgd", "model=svm")
    assert compose_run_config("algorithm=dp_sgd", "model=huber_svm").model.loss == "huber_hinge"


def test_config_hash_ignores_where_and_whether_but_not_what(compose_run_config):
    base = compose_run_config()
    assert compose_run_config("force=true", "progress=false", "data_dir=/elsewhere").config_hash == base.config_hash
    assert compose_run_config("privacy.eps=0.5").config_hash != base.config_hash
    assert compose_run_config("seed=1").config_hash != base.config_hash


def test_float32_data_are_another_job_and_float64_keeps_the_old_hashes(compose_run_config):
    base = compose_run_config()
    assert compose_run_config("data.dtype=float64").config_hash == base.config_hash
    assert compose_run_config("data.dtype=float32").config_hash != base.config_hash
    assert compose_run_config("data.dtype=float32").dtype == "float32"


def test_group_choice_precheck_names_valid_options():
    from dpbench.cli import check_group_choices

    with pytest.raises(ConfigError, match=r"unknown algorithm 'nope'; valid choices: .*dp_sgd"):
        check_group_choices(["algorithm=nope"])
    with pytest.raises(ConfigError, match="unknown dataset 'adlt'"):
        check_group_choices(["-m", "dataset=adult,adlt"])
    check_group_choices(["algorithm=dp_sgd,nonprivate", "privacy.eps=0.1", "hydra/launcher=joblib"])


def test_variants_apply_dotted_overrides(compose_run_config):
    cfg = compose_run_config("experiment=chen_lee_fig1", "variant=zeta_0.1")
    assert cfg.algorithm_params["adaptive_clipping"] is True and cfg.algorithm_params["zeta"] == 0.1
    assert cfg.variant == "zeta_0.1" and cfg.dataset == "adult" and cfg.folds == 10
    with pytest.raises(ConfigError, match=re.escape("unknown variant 'alpha_5'; valid choices: alpha_0.1")):
        compose_run_config("experiment=chen_lee_fig1", "variant=alpha_5")


def test_chen_lee_svm_uses_the_huberized_hinge_only_where_smoothness_is_needed(compose_run_config):
    assert compose_run_config("model=chen_lee_svm", "algorithm=dp_blsgd").model.loss == "hinge"
    assert compose_run_config("model=chen_lee_svm", "algorithm=dp_blsgd").model.loss_params == {}
    smooth = compose_run_config("model=chen_lee_svm", "algorithm=objpert").model
    assert smooth.loss == "huber_hinge" and smooth.loss_params == {"h": 0.5}
    with pytest.raises(ConfigError, match=re.escape("model.width is not a parameter of any loss")):
        compose_run_config("model=svm", "+model.width=3")
