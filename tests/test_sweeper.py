"""dpbench's sweeper checks the jobs that use every override of a batch once before it launches
(hydra_plugins.dpbench_sweeper), and launches what Hydra's basic sweeper launches."""

from __future__ import annotations

from types import SimpleNamespace

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.plugins import Plugins

from hydra_plugins.dpbench_sweeper import representatives, signature


def test_a_plain_leaf_value_leaves_the_signature_and_everything_else_stays():
    assert signature(["dataset=adult", "privacy.eps=0.4", "algorithm.clip=2"]) == (
        "dataset=adult",
        "privacy.eps=",
        "algorithm.clip=",
    )
    kept = ["hydra/launcher=joblib", "hydra.launcher.n_jobs=2", "+privacy.extra=1", "++privacy.eps=1", "seed=3"]
    assert signature(kept) == tuple(kept)


def test_a_sweep_over_epsilon_is_checked_once_per_method():
    batch = [[f"algorithm={a}", f"privacy.eps={e}"] for a in ("dp_sgd", "objpert") for e in (0.1, 0.4, 1.6)]
    assert representatives(batch) == [batch[0], batch[3]]
    assert representatives([["privacy.epss=0.1"], ["privacy.epss=0.2"]]) == [["privacy.epss=0.1"]]


def test_every_option_is_composed_once_with_every_key():
    """Four datasets × sixteen algorithms × three ε: sixteen jobs use every option (each with every key)."""
    datasets, algorithms = [f"d{i}" for i in range(4)], [f"a{i}" for i in range(16)]
    batch = [
        [f"dataset={d}", f"algorithm={a}", f"privacy.eps={e}", "+algorithm.clip=1"]
        for d in datasets
        for a in algorithms
        for e in (0.1, 0.4, 1.6)
    ]
    kept = representatives(batch)
    assert len(kept) == 16 + 3 and kept[0] is batch[0]
    used = {override for job in kept for override in signature(job)}
    assert used == {override for job in batch for override in signature(job)}


def test_the_sweeper_composes_only_the_representatives():
    """The class as Hydra's plugin scan finds it (the scan executes the plugin modules again)."""
    sweeper_class = Plugins.instance().class_name_to_class["hydra_plugins.dpbench_sweeper.DpbenchSweeper"]
    composed = []
    loader = SimpleNamespace(load_sweep_config=lambda master_config, sweep_overrides: composed.append(sweep_overrides))
    sweeper = sweeper_class(max_batch_size=None)
    sweeper.hydra_context, sweeper.config = SimpleNamespace(config_loader=loader), object()
    batch = [["dataset=adult", f"privacy.eps={e}"] for e in (0.1, 0.2, 0.3)] + [["dataset=bank", "privacy.eps=0.1"]]
    sweeper.validate_batch_is_legal(batch)
    assert composed == [batch[0], batch[3]]


def test_jobs_that_train_the_most_models_launch_first():
    """tuning=oracle jobs, then tuning=private ones, then the rest, each group in Hydra's order; batches keep their size."""
    sweeper_class = Plugins.instance().class_name_to_class["hydra_plugins.dpbench_sweeper.DpbenchSweeper"]
    parser = OverridesParser.create()
    overrides = parser.parse_overrides(["dataset=adult,bank", "tuning=private,fixed,oracle", "algorithm=dp_sgd"])
    (jobs,) = sweeper_class.split_arguments(overrides, None)
    tunings = [next(o for o in job if o.startswith("tuning=")) for job in jobs]
    assert tunings == ["tuning=oracle"] * 2 + ["tuning=private"] * 2 + ["tuning=fixed"] * 2
    assert [job[0] for job in jobs] == ["dataset=adult", "dataset=bank"] * 3
    batches = sweeper_class.split_arguments(overrides, 4)
    assert [len(b) for b in batches] == [4, 2] and [job for b in batches for job in b] == jobs
    (plain,) = sweeper_class.split_arguments(parser.parse_overrides(["privacy.eps=0.1,0.4,1.6"]), None)
    assert plain == [["privacy.eps=0.1"], ["privacy.eps=0.4"], ["privacy.eps=1.6"]]
