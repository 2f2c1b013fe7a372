"""Selecting an algorithm selects the model it needs (and, where only one fits, its dataset,
bo.target and neighbouring relation) through Hydra defaults (conf/algorithm/*.yaml); the command line and
experiment presets override that as usual; a refused model/algorithm pair names a model (and a dataset) that
works; and no preset's job, nor the default run, changes its config hash."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dpbench.conf_files import group_choices
from dpbench.errors import ConfigError

NATIVE = "privacy.neighbouring=native"
ADD_REMOVE = "privacy.neighbouring=add_remove"
REPLACE_ONE = "privacy.neighbouring=replace_one"
# The methods that select their own model and meet replace-one only (docs/privacy.md): selecting one selects
# privacy.neighbouring=native too (rows: neighbouring=replace_one, relation_conversion=native) instead of being
# refused under the default add_remove. pwa_subgradient_nonprivate is not private and keeps the default.
NATIVE_ONLY = (
    "dp_dda",
    "dp_dda_two_edges",
    "dp_dda_all_nodes",
    "pwa_exponential",
    "pwa_laplace_data",
    "pwa_laplace_solution",
    "pwa_laplace_solution_paper",
    "pwa_subgradient",
    "pwa_subgradient_paper",
    "pwa_subgradient_small_step",
)
REFUSED_UNDER_ADD_REMOVE = (
    r"does not support privacy.neighbouring=add_remove: .*; use "
    r"privacy.neighbouring=replace_one or privacy.neighbouring=native"
)
BO_SMALL = [
    "dataset.n=1500",
    "dataset.d=5",
    "bo.n_candidates=12",
    "bo.train_size=300",
    "bo.test_size=300",
    "bo.pool_size=800",
    "bo.validation_size=200",
    "algorithm.iterations=6",
]

# algorithm option alone → (dataset, model, bo.target) it composes with
SELECTS = {
    **dict.fromkeys(("kusner_alg1", "kusner_alg2", "kusner_mtgp_likelihood"), ("synthetic_logreg", "bo", "svm_rbf")),
    "kusner_alg3": ("synthetic_logreg", "bo", "logreg"),
    **{name: ("synthetic_pwa", "pwa", None) for name in group_choices("algorithm") if name.startswith("pwa_")},
    **dict.fromkeys(("dp_dda", "dp_dda_two_edges", "dp_dda_all_nodes"), ("synthetic_logreg", "liu_l2_svm", None)),
}


def _results(cwd: Path) -> pd.DataFrame:
    (path,) = (cwd / "outputs" / "runs").glob("*/results.parquet")
    return pd.read_parquet(path)


# ------------------------------------------------------------------ selection
@pytest.mark.parametrize("algorithm", sorted(SELECTS))
def test_an_algorithm_alone_composes_with_the_model_it_needs(compose_run_config, algorithm):
    dataset, model, target = SELECTS[algorithm]
    run = compose_run_config(f"algorithm={algorithm}")
    assert (run.dataset, run.model.name, run.bo.target if run.bo else None) == (dataset, model, target)
    assert run.privacy.neighbouring == ("native" if algorithm in NATIVE_ONLY else "add_remove")


def test_the_algorithms_that_select_their_relation_are_those_refused_under_add_remove(compose_run_config):
    """Every algorithm alone under an explicit add_remove: those refused for the relation are NATIVE_ONLY
    (which select native) and outpert_rsgd, which selects nothing of its own and keeps the default (and its
    refusal)."""
    refused = set()
    for name in group_choices("algorithm"):
        try:
            compose_run_config(f"algorithm={name}", ADD_REMOVE)
        except ConfigError as exc:
            if re.search(REFUSED_UNDER_ADD_REMOVE, str(exc)):
                refused.add(name)
    assert refused == {*NATIVE_ONLY, "outpert_rsgd"}
    with pytest.raises(ConfigError, match=REFUSED_UNDER_ADD_REMOVE):
        compose_run_config("algorithm=outpert_rsgd")


def test_commands_naming_only_the_method_compose(compose_run_config):
    """Three commands that name the method but not its model compose as written: kusner_alg1 under the default relation, the other two
    under their paper's (native: replace_one); an explicit add_remove is still refused, wherever it is on the
    command line, and an explicit replace_one wins."""
    run = compose_run_config("algorithm=kusner_alg1")
    assert (run.model.name, run.bo.target, run.privacy.neighbouring) == ("bo", "svm_rbf", "add_remove")
    for command in (["dataset=synthetic_pwa", "algorithm=pwa_laplace_data"], ["dataset=adult", "algorithm=dp_dda"]):
        run = compose_run_config(*command)
        assert run.model.name == {"pwa_laplace_data": "pwa", "dp_dda": "liu_l2_svm"}[run.algorithm]
        assert run.privacy.neighbouring == "native"
        assert run.config_hash == compose_run_config(*command, f"model={run.model.name}", NATIVE).config_hash
        for overrides in ([ADD_REMOVE, *command], [*command, ADD_REMOVE]):
            with pytest.raises(ConfigError, match=REFUSED_UNDER_ADD_REMOVE):
                compose_run_config(*overrides)
        assert compose_run_config(REPLACE_ONE, *command).privacy.neighbouring == "replace_one"


def test_the_command_line_and_presets_override_what_the_algorithm_selects(compose_run_config):
    assert compose_run_config("algorithm=dp_dda").model.name == "liu_l2_svm"
    assert compose_run_config("algorithm=dp_dda", "model=liu_l1_svm").model.name == "liu_l1_svm"
    assert compose_run_config("algorithm=dp_dda_two_edges", "model=svm").model.name == "svm"
    assert compose_run_config("algorithm=kusner_alg1", "dataset=adult").dataset == "adult"
    with pytest.raises(ConfigError, match="dataset=adult does not fit algorithm=pwa_laplace_data"):
        compose_run_config("algorithm=pwa_laplace_data", "dataset=adult")
    with pytest.raises(
        ConfigError, match=re.escape("kusner_alg3 cannot tune bo.target=svm_rbf; it supports bo.target=logreg")
    ):
        compose_run_config("algorithm=kusner_alg3", "bo.target=svm_rbf")
    # a preset's model and bo.target win over the swept algorithm's
    assert compose_run_config("experiment=liu_fig3", "algorithm=dp_dda_all_nodes").model.name == "liu_l1_svm"
    assert compose_run_config("experiment=kusner_utility_logreg", "algorithm=kusner_alg1").bo.target == "logreg"
    with pytest.raises(ConfigError, match=r"use model=liu_l2_svm \(its default\) or .* instead of model=logreg"):
        compose_run_config("experiment=leaderboard", "algorithm=dp_dda")
    # a preset's relation wins over the swept algorithm's: the leaderboard's add_remove refuses dp_dda and pwa_*
    with pytest.raises(ConfigError, match=REFUSED_UNDER_ADD_REMOVE):
        compose_run_config("experiment=leaderboard", "algorithm=dp_dda", "model=liu_l2_svm")
    with pytest.raises(ConfigError, match=REFUSED_UNDER_ADD_REMOVE):
        compose_run_config(
            "experiment=leaderboard",
            "algorithm=pwa_subgradient_small_step",
            "dataset=synthetic_pwa",
            "model=pwa",
            "tuning=fixed",
        )
    assert compose_run_config("experiment=han_fig2", "algorithm=pwa_exponential").privacy.neighbouring == "native"


def _cfg_job(cli, tmp_path, *args: str) -> dict:
    result = cli(["--cfg", "job", *args], tmp_path)
    assert result.returncode == 0, result.stderr
    return yaml.safe_load(result.stdout)


def test_the_command_line_override_wins_in_the_cli(cli, tmp_path):
    assert _cfg_job(cli, tmp_path, "algorithm=dp_dda")["model"]["name"] == "liu_l2_svm"
    assert _cfg_job(cli, tmp_path, "algorithm=dp_dda", "model=liu_l1_svm")["model"]["name"] == "liu_l1_svm"
    cfg = _cfg_job(cli, tmp_path, "algorithm=kusner_alg3")
    assert (cfg["model"]["name"], cfg["bo"]["target"], cfg["algorithm"]["name"]) == ("bo", "logreg", "kusner_alg3")
    assert _cfg_job(cli, tmp_path, "algorithm=kusner_alg3", "bo.target=svm_rbf")["bo"]["target"] == "svm_rbf"
    assert _cfg_job(cli, tmp_path, "algorithm=dp_dda_two_edges")["privacy"]["neighbouring"] == "native"
    assert _cfg_job(cli, tmp_path, ADD_REMOVE, "algorithm=dp_dda")["privacy"]["neighbouring"] == "add_remove"
    assert (
        _cfg_job(cli, tmp_path, "algorithm=pwa_subgradient_paper", REPLACE_ONE)["privacy"]["neighbouring"]
        == "replace_one"
    )


# ------------------------------------------------------------------ commands naming only the method, run
@pytest.mark.parametrize(
    "args, expected",
    [
        (
            ["algorithm=kusner_alg1", *BO_SMALL],
            {"model": "bo", "target": "svm_rbf", "dataset": "synthetic_logreg", "neighbouring": "add_remove"},
        ),
        (
            ["algorithm=kusner_alg3", *BO_SMALL],
            {"model": "bo", "target": "logreg", "dataset": "synthetic_logreg", "neighbouring": "add_remove"},
        ),
        (
            ["dataset=synthetic_pwa", "algorithm=pwa_laplace_data"],
            {
                "model": "pwa",
                "dataset": "synthetic_pwa",
                "neighbouring": "replace_one",
                "relation_conversion": "native",
            },
        ),
        (
            ["algorithm=pwa_subgradient_paper", "algorithm.iterations=5"],  # a variant built on pwa_subgradient
            {
                "model": "pwa",
                "dataset": "synthetic_pwa",
                "neighbouring": "replace_one",
                "relation_conversion": "native",
            },
        ),
        (
            ["algorithm=pwa_laplace_solution", REPLACE_ONE],
            {
                "model": "pwa",
                "dataset": "synthetic_pwa",
                "neighbouring": "replace_one",
                "relation_conversion": "native",
            },
        ),
    ],
)
def test_the_family_runs_without_naming_its_model(cli, tmp_path, args, expected):
    result = cli([*args, "progress=false"], tmp_path)
    assert result.returncode == 0, result.stderr
    row = _results(tmp_path).iloc[0]
    assert {key: row[key] for key in expected} == expected


def test_dp_dda_runs_on_adult_without_naming_its_model_or_relation(cli, tmp_path, shared_data, compose_run_config):
    data_dir = shared_data("adult_a9a/a9a.gz", "adult_a9a/a9a.t.gz")
    args = ["dataset=adult", "algorithm=dp_dda", "algorithm.iterations=200", f"data_dir={data_dir}", "progress=false"]
    result = cli(args, tmp_path)
    assert result.returncode == 0, result.stderr
    row = _results(tmp_path).iloc[0]
    assert (row["dataset"], row["model"], row["loss"]) == ("adult", "liu_l2_svm", "hinge")
    assert (row["neighbouring"], row["relation_conversion"]) == ("replace_one", "native")
    explicit = compose_run_config(
        "dataset=adult", "algorithm=dp_dda", "model=liu_l2_svm", NATIVE, "algorithm.iterations=200"
    )
    assert row["config_hash"] == explicit.config_hash  # the job the explicit spelling ran


@pytest.mark.parametrize(
    "args",
    [
        [ADD_REMOVE, "dataset=adult", "algorithm=dp_dda"],
        ["dataset=synthetic_pwa", "algorithm=pwa_laplace_data", ADD_REMOVE],
        ["algorithm=dp_dda_two_edges", ADD_REMOVE],
    ],
)
def test_an_explicit_add_remove_is_still_refused_in_one_line(cli, tmp_path, args):
    result = cli(args, tmp_path)
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert re.fullmatch(r"dpbench: error: algorithm \w+ " + REFUSED_UNDER_ADD_REMOVE, line), line
    assert not (tmp_path / "outputs").exists()


# ------------------------------------------------------------------ refusals name what works
@pytest.mark.parametrize(
    "algorithm",
    [
        "dp_blsgd",
        "dp_sgd",
        "objpert",
        "dp_gd",
        "dp_dda",
        "dp_dda_all_nodes",
        "kusner_alg1",
        "kusner_alg3",
        "pwa_laplace_data",
    ],
)
def test_every_refused_model_names_a_model_that_works(compose_run_config, algorithm):
    """Each model option with ``algorithm``: those refused must name (model=…, or in the list after it) a
    model that composes with it, and a refusal of the problem kind a dataset too."""
    works, refused = set(), {}
    for model in group_choices("model"):
        try:
            compose_run_config(f"algorithm={algorithm}", f"model={model}")
            works.add(model)
        except ConfigError as exc:
            refused[model] = str(exc)
    assert works and refused
    for model, message in refused.items():
        named = re.search(r"(?:needs|use|with) [^;]*?model=(\w+)((?: \(its default\))?(?: or \w+(?:, \w+)*)?)", message)
        assert named, f"model={model}: {message}"
        alternatives = {named.group(1), *re.findall(r"\w+", named.group(2).replace("its default", ""))} - {"or"}
        assert alternatives <= works, f"model={model}: {message}"
        if "does not fit" in message:  # the problem kind: a dataset is named too, and it fits
            dataset = re.search(r"dataset=(\w+)", message.split("which needs")[1])
            assert dataset, message
            compose_run_config(f"algorithm={algorithm}", f"model={named.group(1)}", f"dataset={dataset.group(1)}")


def test_a_refusal_in_the_cli_is_one_line_naming_the_model(cli, tmp_path):
    result = cli(["dataset=adult", "algorithm=dp_dda", "model=logreg"], tmp_path)
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert "algorithm dp_dda does not support the logistic loss" in line
    assert (
        "use model=liu_l2_svm (its default) or " in line
        and "liu_l1_svm" in line
        and line.endswith("instead of model=logreg")
    )


# ------------------------------------------------------------------ nothing else moves
# The new short spellings and what they had to be spelt as before (same job, same hash).
EXPLICIT = {
    "algorithm=kusner_alg1": "algorithm=kusner_alg1 model=bo",
    "algorithm=kusner_alg2": "algorithm=kusner_alg2 model=bo",
    "algorithm=kusner_mtgp_likelihood": "algorithm=kusner_mtgp_likelihood model=bo",
    "algorithm=kusner_alg3": "algorithm=kusner_alg3 model=bo bo.target=logreg",
    f"algorithm=pwa_laplace_data {NATIVE}": f"algorithm=pwa_laplace_data dataset=synthetic_pwa model=pwa {NATIVE}",
    f"algorithm=pwa_subgradient_paper {NATIVE}": f"algorithm=pwa_subgradient_paper dataset=synthetic_pwa model=pwa {NATIVE}",
    f"dataset=adult algorithm=dp_dda {NATIVE}": f"dataset=adult algorithm=dp_dda model=liu_l2_svm {NATIVE}",
    f"dataset=synthetic_svm algorithm=dp_dda_two_edges {NATIVE}": f"dataset=synthetic_svm algorithm=dp_dda_two_edges model=liu_l2_svm {NATIVE}",
    # selecting the relation too: the same jobs as with privacy.neighbouring=native spelt out
    "dataset=adult algorithm=dp_dda": f"dataset=adult algorithm=dp_dda model=liu_l2_svm {NATIVE}",
    "dataset=synthetic_pwa algorithm=pwa_laplace_data": f"algorithm=pwa_laplace_data dataset=synthetic_pwa model=pwa {NATIVE}",
    **{
        f"algorithm={name}": f"algorithm={name} model=liu_l2_svm {NATIVE}"
        for name in NATIVE_ONLY
        if name.startswith("dp_dda")
    },
    **{
        f"algorithm={name}": f"algorithm={name} dataset=synthetic_pwa model=pwa {NATIVE}"
        for name in NATIVE_ONLY
        if name.startswith("pwa_")
    },
    "algorithm=pwa_subgradient_nonprivate": "algorithm=pwa_subgradient_nonprivate dataset=synthetic_pwa model=pwa",
    f"algorithm=dp_dda {REPLACE_ONE}": f"algorithm=dp_dda model=liu_l2_svm {REPLACE_ONE}",
    f"algorithm=pwa_exponential {REPLACE_ONE}": f"algorithm=pwa_exponential dataset=synthetic_pwa model=pwa {REPLACE_ONE}",
}


def _cases(compose) -> dict[str, list[str]]:
    """label → overrides: the default run, every algorithm that selects nothing (alone), the short
    spellings above, each experiment preset's base config and its first job per swept algorithm."""
    from dpbench.status import expand_sweep

    cases = {"default": []}
    cases.update(
        {f"algorithm={name}": [f"algorithm={name}"] for name in group_choices("algorithm") if name not in SELECTS}
    )
    cases.update({label: label.split() for label in EXPLICIT})
    for experiment in group_choices("experiment"):
        cases[f"experiment={experiment}"] = [f"experiment={experiment}"]
        seen = set()
        # each preset's first job per algorithm in Hydra's order (HASHES' labels), not in dpbench's launch order
        sweep = compose([f"experiment={experiment}", "hydra/sweeper=basic"], hydra=True)
        for overrides, subdir in expand_sweep(sweep):
            algorithm = next((o for o in overrides if o.startswith("algorithm=")), None)
            if algorithm not in seen:
                seen.add(algorithm)
                cases[f"experiment={experiment} {subdir}"] = overrides
    return cases


def _config_hashes(conf: Path, spell=None) -> dict[str, str]:
    """label → config hash (or the refusal) of every case, composed from the conf/ directory ``conf``
    (``spell(label, overrides)``: other overrides to compose a case with; HASHES came from the committed
    conf/ with each short spelling through its EXPLICIT form)."""
    from hydra import compose, initialize_config_dir

    from dpbench.resolve import run_config
    from dpbench.resolvers import register_resolvers

    register_resolvers()
    with initialize_config_dir(version_base="1.3", config_dir=str(conf)):

        def make(overrides, hydra=False):
            return compose(config_name="config", overrides=list(overrides), return_hydra_config=hydra)

        hashes = {}
        for label, overrides in _cases(make).items():
            try:
                hashes[label] = run_config(make(spell(label, overrides) if spell else overrides)).config_hash
            except ConfigError as exc:
                hashes[label] = f"refused: {exc}"
        return hashes


def _traced_without_a_share_bound(label: str, overrides: list[str]) -> list[str]:
    """The case with the trace cadence it had when HASHES were recorded (no bound on its share)."""
    return [*overrides, "trace.max_share=null"]


@pytest.mark.slow
def test_no_preset_job_nor_the_default_run_changes_its_config_hash():
    from dpbench.conf_files import config_dir

    hashes = _config_hashes(config_dir(), spell=_traced_without_a_share_bound)
    assert set(HASHES) <= set(hashes)
    changed = {label: (HASHES[label], hashes[label]) for label in HASHES if hashes[label] != HASHES[label]}
    assert not changed


# Recorded from conf/ as committed before this change (each short spelling through its EXPLICIT form);
# labels whose job was refused then (kuru_fig3/4's base config, outpert_rsgd under add_remove) are left out.
# han_pwa's pwa_laplace_solution / pwa_subgradient jobs were re-recorded when algorithm.fidelity replaced
# paper_scale and selection, correct (the default) became Δ/ε and the active sign, and the han_fig presets run the
# printed ones as pwa_laplace_solution_paper / pwa_subgradient_paper (pwa_subgradient_active is pwa_subgradient now).
HASHES = {
    "default": "de166f2844fe1f0d",
    "algorithm=dp_agd": "d4aac008a4ac197d",
    "algorithm=dp_blgd": "7e216265a0d520da",
    "algorithm=dp_blsgd": "de166f2844fe1f0d",
    "algorithm=dp_blsgd_ac": "822c44e91cd2bee4",
    "algorithm=dp_gd": "e0f4a40d88eb3baa",
    "algorithm=dp_hb": "88f76d25144ea1ae",
    "algorithm=dp_masg": "ff11e91a8bcb88c2",
    "algorithm=dp_masg_opt": "18d22a1d936daf65",
    "algorithm=dp_nag": "15a2f9d6eacf3d5d",
    "algorithm=dp_nag_opt": "96aadf82131f197a",
    "algorithm=dp_sgd": "bdef3d3acca398e1",
    "algorithm=dp_sgd_sigma4": "e8ac2d00b3a5fe0a",
    "algorithm=majority": "ca95ba2f29d264f4",
    "algorithm=nonprivate": "20c0a5ebe79dc8d3",
    "algorithm=objpert": "6a3c711913629e0d",
    "algorithm=outpert_gd": "baf45d8dd7c2efbb",
    "algorithm=privgene": "2b8c5d666c6b4f09",
    "algorithm=kusner_alg1": "cef9ecb7c7f65ea0",
    "algorithm=kusner_alg2": "4bae4e93545d4b85",
    "algorithm=kusner_mtgp_likelihood": "317ae4449913be7d",
    "algorithm=kusner_alg3": "f99677ade1878334",
    "algorithm=pwa_laplace_data privacy.neighbouring=native": "056a162818fbe2df",
    "algorithm=pwa_subgradient_paper privacy.neighbouring=native": "f4448a308ac716f6",
    "dataset=adult algorithm=dp_dda privacy.neighbouring=native": "9179ce035bd3ea97",
    "dataset=synthetic_svm algorithm=dp_dda_two_edges privacy.neighbouring=native": "934a208b6361bd82",
    "dataset=adult algorithm=dp_dda": "9179ce035bd3ea97",
    "dataset=synthetic_pwa algorithm=pwa_laplace_data": "056a162818fbe2df",
    "algorithm=dp_dda": "2705fe1f5a5cf7bd",
    "algorithm=dp_dda_two_edges": "419a84d99f422a28",
    "algorithm=dp_dda_all_nodes": "27630b6bf99c549c",
    "algorithm=pwa_exponential": "df63a8b015042c3c",
    "algorithm=pwa_laplace_data": "056a162818fbe2df",
    "algorithm=pwa_laplace_solution": "f32c0a3b057e56a0",
    "algorithm=pwa_subgradient": "7664114dbfd77e33",
    "algorithm=pwa_subgradient_paper": "f4448a308ac716f6",
    "algorithm=pwa_subgradient_small_step": "c96f441a2593342f",
    "algorithm=pwa_subgradient_nonprivate": "4ac2ddfdd3123712",
    "algorithm=dp_dda privacy.neighbouring=replace_one": "bf4af42165368b66",
    "algorithm=pwa_exponential privacy.neighbouring=replace_one": "b5b92b03b93f6749",
    "experiment=adult_dp_sgd": "f2df313d9ba1f5ac",
    "experiment=adult_dp_sgd algorithm=dp_sgd_sigma4,privacy.eps=0.05": "cc6c483ef962c1ab",
    "experiment=adult_dp_sgd algorithm=nonprivate,privacy.eps=0.05": "0937cc637b3e83e0",
    "experiment=adult_dp_sgd algorithm=majority,privacy.eps=0.05": "b82697d35f6d377f",
    "experiment=chen_lee_fig1": "76e9d7c98bd87ba1",
    "experiment=chen_lee_fig1 privacy.eps=0.05,variant=default": "8640d6af7d3b1591",
    "experiment=chen_lee_fig2": "809b6b4490201b42",
    "experiment=chen_lee_fig2 algorithm.sampling_rate=0.01": "5b054e8e83b24ded",
    "experiment=chen_lee_fig3": "27fd25e9b4e24af6",
    "experiment=chen_lee_fig3 algorithm=dp_blsgd,dataset=adult,privacy.eps=0.05": "94720a9aaad676e2",
    "experiment=chen_lee_fig3 algorithm=dp_blsgd_ac,dataset=adult,privacy.eps=0.05": "17ff0132b638e540",
    "experiment=chen_lee_fig3 algorithm=dp_blgd,dataset=adult,privacy.eps=0.05": "62bcb36c9aef298f",
    "experiment=chen_lee_fig3 algorithm=dp_agd,dataset=adult,privacy.eps=0.05": "56e418ecc6a5dcfa",
    "experiment=chen_lee_fig3 algorithm=dp_sgd_sigma4,dataset=adult,privacy.eps=0.05": "4285a7a68bab7549",
    "experiment=chen_lee_fig3 algorithm=outpert_rsgd,dataset=adult,privacy.eps=0.05": "7cb2a81b7d4beb48",
    "experiment=chen_lee_fig3 algorithm=outpert_gd,dataset=adult,privacy.eps=0.05": "deefe059e88d4dc6",
    "experiment=chen_lee_fig3 algorithm=objpert,dataset=adult,privacy.eps=0.05": "40a4af17378979a3",
    "experiment=chen_lee_fig3 algorithm=privgene,dataset=adult,privacy.eps=0.05": "3364d15285cf30c8",
    "experiment=chen_lee_fig3 algorithm=majority,dataset=adult,privacy.eps=0.05": "765d73e03c116bcf",
    "experiment=chen_lee_fig3 algorithm=nonprivate,dataset=adult,privacy.eps=0.05": "2141101e484b6591",
    "experiment=chen_lee_fig4": "a4bc0d028795d5e2",
    "experiment=chen_lee_fig4 algorithm=dp_blsgd,dataset=adult,privacy.eps=0.05": "af01f828ad87de34",
    "experiment=chen_lee_fig4 algorithm=dp_blsgd_ac,dataset=adult,privacy.eps=0.05": "03ac755d0cff17f9",
    "experiment=chen_lee_fig4 algorithm=dp_blgd,dataset=adult,privacy.eps=0.05": "eb2320102137d13d",
    "experiment=chen_lee_fig4 algorithm=dp_agd,dataset=adult,privacy.eps=0.05": "596014f864ae333a",
    "experiment=chen_lee_fig4 algorithm=dp_sgd_sigma4,dataset=adult,privacy.eps=0.05": "790d9bb78fe4e61a",
    "experiment=chen_lee_fig4 algorithm=outpert_rsgd,dataset=adult,privacy.eps=0.05": "7bbe477ecfb7cd05",
    "experiment=chen_lee_fig4 algorithm=outpert_gd,dataset=adult,privacy.eps=0.05": "5341375d4314b0d0",
    "experiment=chen_lee_fig4 algorithm=objpert,dataset=adult,privacy.eps=0.05": "453bd3dda7efa804",
    "experiment=chen_lee_fig4 algorithm=privgene,dataset=adult,privacy.eps=0.05": "b4236eabf330807e",
    "experiment=chen_lee_fig4 algorithm=majority,dataset=adult,privacy.eps=0.05": "56dfd42b911c3624",
    "experiment=chen_lee_fig4 algorithm=nonprivate,dataset=adult,privacy.eps=0.05": "410a892ee53f8425",
    "experiment=han_fig1": "3d099d9883612738",
    "experiment=han_fig1 algorithm.iterations=1,algorithm.step_scale=1.0,algorithm=pwa_subgradient": "98156804ef2dcc0b",
    "experiment=han_fig1 algorithm.iterations=1,algorithm.step_scale=1.0,algorithm=pwa_subgradient_paper": "4fa7b3bb9cf30ef7",
    "experiment=han_fig1 algorithm.iterations=1,algorithm.step_scale=1.0,algorithm=pwa_subgradient_nonprivate": "0ea48738bb26d2c9",
    "experiment=han_fig2": "8fe130af6bd47c05",
    "experiment=han_fig2 algorithm=pwa_laplace_data,dataset.c=0.05": "2d6bfde7d2525103",
    "experiment=han_fig2 algorithm=pwa_laplace_solution_paper,dataset.c=0.05": "87e09bfc0582a9f4",
    "experiment=han_fig2 algorithm=pwa_exponential,dataset.c=0.05": "7061fd74a79b3b32",
    "experiment=han_fig2 algorithm=pwa_subgradient,dataset.c=0.05": "a279edae599a0476",
    "experiment=han_fig2 algorithm=pwa_subgradient_paper,dataset.c=0.05": "e705f53b7953ed43",
    "experiment=han_fig2 algorithm=pwa_subgradient_small_step,dataset.c=0.05": "c06f3c605f77c1bc",
    "experiment=han_fig3": "4ed2fc015cf6b868",
    "experiment=han_fig3 algorithm=pwa_laplace_data,dataset.m=10": "0d322940ad72fa68",
    "experiment=han_fig3 algorithm=pwa_laplace_solution_paper,dataset.m=10": "12183a2a8748cdf2",
    "experiment=han_fig3 algorithm=pwa_exponential,dataset.m=10": "5253badb77ad2c62",
    "experiment=han_fig3 algorithm=pwa_subgradient,dataset.m=10": "0f2fc92ca97f1960",
    "experiment=han_fig3 algorithm=pwa_subgradient_paper,dataset.m=10": "85361f0be8c0c636",
    "experiment=han_fig3 algorithm=pwa_subgradient_small_step,dataset.m=10": "15afc516bc172aa2",
    "experiment=kuru_fig3 algorithm.iterations=100,algorithm.step_scale=0.1,algorithm=dp_gd": "0b51eb698ae7a759",
    "experiment=kuru_fig3 algorithm.iterations=100,algorithm.step_scale=0.1,algorithm=dp_hb": "6a4ca8d6ea6e5c8f",
    "experiment=kuru_fig3 algorithm.iterations=100,algorithm.step_scale=0.1,algorithm=dp_nag": "f3da68499f27e987",
    "experiment=kuru_fig3 algorithm.iterations=100,algorithm.step_scale=0.1,algorithm=dp_nag_opt": "6520298de7bf3387",
    "experiment=kuru_fig3 algorithm.iterations=100,algorithm.step_scale=0.1,algorithm=dp_masg": "13446bf9d11991de",
    "experiment=kuru_fig3 algorithm.iterations=100,algorithm.step_scale=0.1,algorithm=dp_masg_opt": "921be1ebe140db9e",
    "experiment=kuru_fig4 algorithm.batch_size=1000,algorithm.iterations=100,algorithm.step_scale=0.1,algorithm=dp_gd": "7027ec08e8844dea",
    "experiment=kuru_fig4 algorithm.batch_size=1000,algorithm.iterations=100,algorithm.step_scale=0.1,algorithm=dp_hb": "1f8ef0b0be706e32",
    "experiment=kuru_fig4 algorithm.batch_size=1000,algorithm.iterations=100,algorithm.step_scale=0.1,algorithm=dp_nag": "3a169f0a47370691",
    "experiment=kuru_fig4 algorithm.batch_size=1000,algorithm.iterations=100,algorithm.step_scale=0.1,algorithm=dp_nag_opt": "390399e8d34158e8",
    "experiment=kuru_fig4 algorithm.batch_size=1000,algorithm.iterations=100,algorithm.step_scale=0.1,algorithm=dp_masg": "258d15297d0ce983",
    "experiment=kuru_fig4 algorithm.batch_size=1000,algorithm.iterations=100,algorithm.step_scale=0.1,algorithm=dp_masg_opt": "1ddcf954b6ee9411",
    "experiment=kusner_fig1": "860305898cc18baf",
    "experiment=kusner_fig1 bo.validation_size=1000": "860305898cc18baf",
    "experiment=kusner_utility": "ec659985d42e1ce9",
    "experiment=kusner_utility algorithm=kusner_alg1,privacy.eps=0.1": "94e7d2f92b7aac10",
    "experiment=kusner_utility algorithm=kusner_alg2,privacy.eps=0.1": "37f9381c670131c4",
    "experiment=kusner_utility_logreg": "78aed21b863ca49b",
    "experiment=kusner_utility_logreg algorithm.gain=ramp,algorithm=kusner_alg1,privacy.eps=0.1": "50f176b3fd218b92",
    "experiment=kusner_utility_logreg algorithm.gain=ramp,algorithm=kusner_alg2,privacy.eps=0.1": "89c555e16566c9f9",
    "experiment=kusner_utility_logreg algorithm.gain=ramp,algorithm=kusner_alg3,privacy.eps=0.1": "b6033a3b62e6695d",
    "experiment=leaderboard": "fa7638316ef678ba",
    "experiment=leaderboard algorithm=dp_sgd,dataset=adult,privacy.eps=0.1,tuning=private": "6aeedce3379da12b",
    "experiment=leaderboard algorithm=dp_blsgd,dataset=adult,privacy.eps=0.1,tuning=private": "9e63cb3ef511d876",
    "experiment=leaderboard algorithm=dp_blsgd_ac,dataset=adult,privacy.eps=0.1,tuning=private": "e3d8c5ef9b509dbb",
    "experiment=leaderboard algorithm=dp_blgd,dataset=adult,privacy.eps=0.1,tuning=private": "ee7732751db91725",
    "experiment=leaderboard algorithm=dp_agd,dataset=adult,privacy.eps=0.1,tuning=private": "8a6c32cae9595194",
    "experiment=leaderboard algorithm=objpert,dataset=adult,privacy.eps=0.1,tuning=private": "180a4b5730dcb8d3",
    "experiment=leaderboard algorithm=outpert_gd,dataset=adult,privacy.eps=0.1,tuning=private": "f5e4679b00a630c5",
    "experiment=leaderboard algorithm=privgene,dataset=adult,privacy.eps=0.1,tuning=private": "eaef2e696786ef10",
    "experiment=leaderboard algorithm=dp_gd,dataset=adult,privacy.eps=0.1,tuning=private": "980981eda4b4de5a",
    "experiment=leaderboard algorithm=dp_hb,dataset=adult,privacy.eps=0.1,tuning=private": "476d7a907c6cade6",
    "experiment=leaderboard algorithm=dp_nag,dataset=adult,privacy.eps=0.1,tuning=private": "ce3a964fa64e08a3",
    "experiment=leaderboard algorithm=dp_nag_opt,dataset=adult,privacy.eps=0.1,tuning=private": "c96882120bacc401",
    "experiment=leaderboard algorithm=dp_masg,dataset=adult,privacy.eps=0.1,tuning=private": "65fbeff1bff0a4cf",
    "experiment=leaderboard algorithm=dp_masg_opt,dataset=adult,privacy.eps=0.1,tuning=private": "58a0c46af5177c3e",
    "experiment=leaderboard algorithm=nonprivate,dataset=adult,privacy.eps=0.1,tuning=private": "b94936673232113c",
    "experiment=leaderboard algorithm=majority,dataset=adult,privacy.eps=0.1,tuning=private": "51d28a40aa6d2f7c",
    "experiment=liu_fig1": "33b0370996ac1a64",
    "experiment=liu_fig1 algorithm=dp_dda": "33b0370996ac1a64",
    "experiment=liu_fig1 algorithm=dp_dda_two_edges": "bf6a449bd4afd151",
    "experiment=liu_fig1 algorithm=dp_dda_all_nodes": "c9683a6d77b71caa",
    "experiment=liu_fig2": "282a923170088219",
    "experiment=liu_fig2 algorithm=dp_dda,privacy.eps=0.2": "2d04f94b4badc953",
    "experiment=liu_fig2 algorithm=dp_dda_two_edges,privacy.eps=0.2": "e8f6b7a116363443",
    "experiment=liu_fig2 algorithm=dp_dda_all_nodes,privacy.eps=0.2": "5a98dccec293a16d",
    "experiment=liu_fig3": "4a23008b204e5d8d",
    "experiment=liu_fig3 algorithm=dp_dda": "4a23008b204e5d8d",
    "experiment=liu_fig3 algorithm=dp_dda_two_edges": "6a5e05c4f2e274f4",
    "experiment=liu_fig3 algorithm=dp_dda_all_nodes": "cebb68622ca34c11",
    "experiment=liu_fig4": "acae8c6dad20a687",
    "experiment=liu_fig4 algorithm=dp_dda,privacy.eps=0.2": "a548162ef728777a",
    "experiment=liu_fig4 algorithm=dp_dda_two_edges,privacy.eps=0.2": "e5be14d9243c6087",
    "experiment=liu_fig4 algorithm=dp_dda_all_nodes,privacy.eps=0.2": "4c8f071cea0eb479",
}


def test_the_trace_bound_changes_the_hash_of_traced_jobs_only(compose_run_config):
    """The automatic trace of a GLM job is bounded by trace.max_share (fewer records), so its
    hash moves; the presets drawn from traces keep theirs (max_share: null), and so do jobs with no
    GLM trace (han_pwa, kusner_bo)."""
    assert compose_run_config().config_hash != HASHES["default"]
    assert (
        compose_run_config("trace.every=5").config_hash
        == compose_run_config("trace.every=5", "trace.max_share=0.5").config_hash
    )
    kuru_job = "experiment=kuru_fig3 algorithm.iterations=100,algorithm.step_scale=0.1,algorithm=dp_gd"
    for label in ("experiment=liu_fig1", "experiment=han_fig1", "experiment=kusner_fig1", kuru_job):
        experiment, _, subdir = label.partition(" ")
        overrides = [experiment, *(subdir.split(",") if subdir else [])]
        assert compose_run_config(*overrides).config_hash == HASHES[label], label
