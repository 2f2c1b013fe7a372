"""The folds of a job on a labelled dataset: training and test data per fold, derived from the
job's seed alone (so every algorithm sees the same folds), and the checks made before any run."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dpbench.errors import ConfigError, DpbenchError
from dpbench.recent_answers import RecentAnswers

if TYPE_CHECKING:
    from dpbench.algorithms.base import FidelityMode
    from dpbench.data import Dataset
    from dpbench.settings import RunConfig


@dataclass
class Split:
    """One fold: training and test data, and the training size the methods may read when it was
    released by a noisy count (``released_n``; :mod:`dpbench.privacy.counts`)."""

    X_train: Any
    y_train: np.ndarray
    X_test: Any
    y_test: np.ndarray
    released_n: int | None = None

    @property
    def public_n(self) -> int:
        """n̄, the training size the methods use as a public constant, never the size of the data they
        are given: the noisy count ñ released under add/remove (``released_n``), else the fold's size —
        public under replace-one, where n is fixed (the stratified folds' sizes follow from the
        published record and label counts and the public seed alone), and outside the guarantee under
        add/remove with ``privacy.count_share=0`` (docs/privacy.md)."""
        return int(self.y_train.shape[0]) if self.released_n is None else self.released_n


def make_splits(dataset: Dataset, cfg: RunConfig, mode: FidelityMode | None = None) -> list[Split]:
    """The folds for ``cfg.seed``: stratified k-fold on train+test when ``cv.folds > 1``; the
    dataset's own test split when it has one and ``cv.folds == 1``; otherwise a stratified
    hold-out of ``cv.test_fraction``. Rows are clipped to ``data.row_norm`` when it is set, then
    mapped by the fidelity ``mode``'s ``row_map`` when it has one (a per-row map: the folds are
    the same).

    The folds are a function of the data (``dataset.checksum`` identifies it exactly) and these settings
    alone, so a process remembers the last ones made (:data:`_RECENT_FOLDS`): a sweep worker running job
    after job on one dataset splits it once. Their arrays are read-only, so no job can change another's folds."""
    row_map = None if mode is None else mode.row_map
    key = (dataset.checksum, cfg.seed, cfg.folds, cfg.test_fraction, cfg.row_norm, row_map)
    if key in _RECENT_FOLDS:
        return [dataclasses.replace(split) for split in _RECENT_FOLDS[key]]
    from dpbench.data.dataset import make_read_only

    splits = _make_splits(dataset, cfg, row_map)
    for split in splits:
        make_read_only(split.X_train, split.y_train, split.X_test, split.y_test)
    _RECENT_FOLDS.remember(key, splits)
    return [dataclasses.replace(split) for split in splits]


_RECENT_FOLDS = RecentAnswers(1)
"""The folds this process made last, by the data and settings that decide them (:func:`make_splits`)."""


def _make_splits(dataset: Dataset, cfg: RunConfig, row_map: Callable[[Any], Any] | None) -> list[Split]:
    """:func:`make_splits`'s folds, made."""
    import scipy.sparse as sp
    from sklearn.model_selection import StratifiedKFold, StratifiedShuffleSplit

    from dpbench.data import clip_rows

    X, y = dataset.X, dataset.y
    if cfg.row_norm is not None:
        X = clip_rows(X, cfg.row_norm)
    X_test = dataset.X_test
    if X_test is not None and cfg.row_norm is not None:
        X_test = clip_rows(X_test, cfg.row_norm)
    if row_map is not None:
        X = row_map(X)
        X_test = None if X_test is None else row_map(X_test)
    split_seed = int(np.random.SeedSequence(cfg.seed).generate_state(1)[0])

    if cfg.folds == 1 and X_test is not None:
        splits = [Split(X, y, X_test, dataset.y_test)]
        _check_two_classes(dataset.name, splits)
        return splits
    if cfg.folds == 1 and cfg.test_fraction == 0.0:  # optimisation studies: train on every row, no test set
        splits = [Split(X, y, X[:0], y[:0])]
        _check_two_classes(dataset.name, splits)
        return splits
    if X_test is not None:
        X = sp.vstack([X, X_test], format="csr") if sp.issparse(X) else np.vstack([X, X_test])
        y = np.concatenate([y, dataset.y_test])
    smallest_class = int(np.min(np.unique(y, return_counts=True)[1]))
    if smallest_class < max(cfg.folds, 2):
        raise ConfigError(
            f"dataset {dataset.name}: its smallest class has {smallest_class} example(s), too few for "
            f"{'cv.folds=' + str(cfg.folds) if cfg.folds > 1 else 'a stratified hold-out'}"
        )
    if cfg.folds == 1:
        splitter = StratifiedShuffleSplit(n_splits=1, test_size=cfg.test_fraction, random_state=split_seed)
    else:
        splitter = StratifiedKFold(n_splits=cfg.folds, shuffle=True, random_state=split_seed)
    splits = [Split(X[tr], y[tr], X[te], y[te]) for tr, te in splitter.split(np.zeros(len(y)), y)]
    _check_two_classes(dataset.name, splits)
    return splits


def fit_split(split: Split, mode: FidelityMode | None) -> Split:
    """The rows a method trains on for this fold: the fold itself, or — when its fidelity ``mode``
    ``trains_on_test_fold``, as DP-AGD's ``run_outpert_logistic.py`` does (``outpert_gd(X, y, ...)``
    on every row) — the fold's training rows followed by its test rows; the test rows stay the
    test set, so the test accuracy is then not a held-out measurement."""
    if mode is None or not mode.trains_on_test_fold:
        return split
    import scipy.sparse as sp

    rows = [split.X_train, split.X_test]
    X = sp.vstack(rows, format="csr") if sp.issparse(split.X_train) else np.vstack(rows)
    return Split(X, np.concatenate([split.y_train, split.y_test]), split.X_test, split.y_test)


def _check_two_classes(name: str, splits: list[Split]) -> None:
    for fold, split in enumerate(splits):
        if np.unique(split.y_train).size < 2:
            raise ConfigError(f"dataset {name}: the training data of fold {fold} has a single class; nothing to learn")


def public_row_norm(dataset: Dataset, cfg: RunConfig) -> float | None:
    """A bound on the training rows' L2 norms that is public: the one the dataset's encoding
    guarantees (``info["row_norm_bound"]``, e.g. 1 for unit-normalised rows) or the ``data.row_norm``
    every row was clipped to, whichever is smaller; None when there is neither."""
    bounds = [b for b in (dataset.info.get("row_norm_bound"), cfg.row_norm) if b is not None]
    return float(min(bounds)) if bounds else None


def check_finite(dataset: Dataset) -> None:
    """Refuse a dataset without rows, or with NaN or infinite features, before anything runs."""
    from dpbench.problems.products import all_finite

    if dataset.X.shape[0] == 0 or dataset.y.shape[0] != dataset.X.shape[0]:
        raise DpbenchError(
            f"dataset {dataset.name}: no usable rows ({dataset.X.shape[0]} feature rows, {dataset.y.shape[0]} labels)"
        )
    for label, X in (("features", dataset.X), ("test features", dataset.X_test)):
        if X is None:
            continue
        if not all_finite(X):
            raise DpbenchError(f"dataset {dataset.name}: {label} contain NaN or infinite values")
