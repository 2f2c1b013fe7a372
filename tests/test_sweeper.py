"""dpbench's sweeper checks one job per composition signature before a batch launches
(hydra_plugins.dpbench_sweeper), and launches what Hydra's basic sweeper launches."""

from __future__ import annotations

from types import SimpleNamespace

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
