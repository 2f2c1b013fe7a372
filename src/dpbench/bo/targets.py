"""Tuning targets of kusner_bo (Kusner et al., ICML 2015): a finite candidate set Λ, its models, their scores.

A data holder tunes hyper-parameters λ over a finite Λ on a sensitive validation set V. Here Λ is the first
``n_candidates`` points of a scrambled Sobol sequence in the unit cube (the GP inputs), mapped log-uniformly to
hyper-parameter values (Sec. 6 samples its 100 SVM settings "from a Sobol sequence"). Each candidate model is
trained once on a fixed training split; for every evaluation row (pool, then test) we store whether the model
classifies it correctly and its ramp loss, so any validation set's score is a mean over a subset of columns
(:class:`ScoreMatrix`).

Two targets:

* ``svm_rbf`` — Sec. 6: λ = [C, γ²] of an RBF-kernel SVM, K(x, x′) = exp(−γ²‖x − x′‖²), i.e. scikit-learn
  ``SVC(kernel="rbf", C=C, gamma=γ²)``; f_V(λ) is the validation accuracy.
* ``logreg`` — Sec. 5, Assumption 2: w_λ minimises eq. (10) O_λ(w) = λ/2‖w‖² + (1/n)Σ ℓ(w, x_i, y_i) with the
  logistic loss ℓ, no separate intercept (a bias column is part of x and penalised, so O_λ is λ-strongly convex
  as Theorem 7 uses); rows are clipped to L2 norm ≤ ``row_norm``, so ℓ and the ramp validation loss g are
  ``row_norm``-Lipschitz in w. f_V = −(1/m)Σ g (Assumption 2) is :meth:`ScoreMatrix.ramp_score`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from time import perf_counter
from typing import Any

import numpy as np
import scipy.sparse as sp
import sklearn
from scipy.stats import qmc
from sklearn.linear_model import LogisticRegression
from sklearn.svm import SVC
from tqdm.auto import tqdm

from dpbench import __version__
from dpbench.data.dataset import Dataset, Matrix, index_sha256
from dpbench.data.preprocess import clip_rows
from dpbench.errors import ConfigError
from dpbench.results import _atomic_write

log = logging.getLogger(__name__)

TARGETS = ("svm_rbf", "logreg")
#: Each target's options (the TargetSpec fields it uses) and its hyper-parameters with their log10 ranges.
_OPTIONS = {"svm_rbf": ("log10_C", "log10_gamma"), "logreg": ("log10_lambda", "row_norm")}
_HYPERPARAMETERS = {"svm_rbf": (("C", "log10_C"), ("gamma", "log10_gamma")), "logreg": (("lambda", "log10_lambda"),)}
_CACHE_FORMAT = 1
_SVM_CHUNK = 10_000  # evaluation rows per SVC.decision_function call


def candidate_points(n_candidates: int, dim: int, *, seed: int) -> np.ndarray:
    """The first ``n_candidates`` points of a scrambled Sobol sequence in [0, 1]^dim, shape (n, dim).

    Drawn as a whole power of two (``random_base2``) and truncated, which avoids scipy's balance warning.
    """
    for key, value, least in (("n_candidates", n_candidates, 1), ("dim", dim, 1), ("seed", seed, 0)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
            raise ConfigError(f"{key} must be an integer ≥ {least}, got {value!r}")
    sobol = qmc.Sobol(d=dim, scramble=True, seed=seed)
    return sobol.random_base2((n_candidates - 1).bit_length())[:n_candidates]


@dataclass(frozen=True)
class TargetSpec:
    """A tuning target and the log10 ranges its unit-cube points map to.

    ``svm_rbf`` uses ``log10_C`` and ``log10_gamma``; its ``gamma`` is scikit-learn's, the paper's γ² (Sec. 6:
    λ = [C, γ²], K(x, x′) = exp(−γ²‖x − x′‖²)). ``logreg`` uses ``log10_lambda`` (λ of eq. 10) and ``row_norm``
    (the L2 bound rows are clipped to). Options of the other target must keep their defaults.
    """

    name: str
    log10_C: tuple[float, float] = (-1.0, 3.0)
    log10_gamma: tuple[float, float] = (-4.0, 0.0)
    log10_lambda: tuple[float, float] = (-4.0, 0.0)
    row_norm: float = 1.0

    def __post_init__(self) -> None:
        if self.name not in TARGETS:
            raise ConfigError(f"unknown target {self.name!r}; valid choices: {', '.join(TARGETS)}")
        for f in fields(self)[1:]:
            value = getattr(self, f.name)
            if f.name.startswith("log10_"):
                value = _range(f.name, value)
                object.__setattr__(self, f.name, value)
            if f.name not in _OPTIONS[self.name] and value != f.default:
                raise ConfigError(
                    f"{f.name} = {value!r} is not an option of target {self.name}; "
                    f"valid: {', '.join(_OPTIONS[self.name])}"
                )
        row_norm = self.row_norm
        if isinstance(row_norm, bool) or not isinstance(row_norm, (int, float)) or not 0 < row_norm < math.inf:
            raise ConfigError(f"row_norm must be finite and > 0, got {row_norm!r}")
        object.__setattr__(self, "row_norm", float(row_norm))

    @classmethod
    def from_options(cls, name: str, options: Mapping[str, Any]) -> TargetSpec:
        """The spec of target ``name`` with ``options`` (a config section minus ``name``); unknown keys are errors."""
        if name not in TARGETS:
            raise ConfigError(f"unknown target {name!r}; valid choices: {', '.join(TARGETS)}")
        unknown = sorted(set(options) - set(_OPTIONS[name]))
        if unknown:
            raise ConfigError(
                f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} for target {name}; "
                f"valid: {', '.join(_OPTIONS[name])}"
            )
        return cls(name, **{str(key): value for key, value in options.items()})

    @property
    def dim(self) -> int:
        """Number of hyper-parameters (the GP input dimension): 2 for svm_rbf, 1 for logreg."""
        return len(_HYPERPARAMETERS[self.name])

    def options(self) -> dict[str, Any]:
        """The options this target uses, JSON-ready."""
        return {key: getattr(self, key) for key in _OPTIONS[self.name]}

    def hyperparameters(self, points: np.ndarray) -> list[dict[str, float]]:
        """Map unit-cube points (n, dim) log-uniformly to hyper-parameter values: u ↦ 10^((1−u)·lo + u·hi).

        svm_rbf → ``{"C", "gamma"}`` (gamma = γ²); logreg → ``{"lambda"}``. Endpoints map exactly to 10^lo, 10^hi.
        """
        u = _unit_points(points, self.dim)
        pairs = _HYPERPARAMETERS[self.name]
        lo = np.array([getattr(self, key)[0] for _, key in pairs])
        hi = np.array([getattr(self, key)[1] for _, key in pairs])
        values = 10.0 ** ((1.0 - u) * lo + u * hi)
        return [{name: float(v) for (name, _), v in zip(pairs, row)} for row in values]


def _range(key: str, value: Any) -> tuple[float, float]:
    """A (lo, hi) log10 range as floats, finite with lo < hi."""
    try:
        if isinstance(value, (str, bytes)):
            raise TypeError
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ConfigError(f"{key} must be a pair [lo, hi] of numbers, got {value!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ConfigError(f"{key} must be finite with lo < hi, got [{lo}, {hi}]")
    return lo, hi


def _unit_points(points: np.ndarray, dim: int) -> np.ndarray:
    u = np.asarray(points, dtype=np.float64)
    if u.ndim != 2 or u.shape[0] < 1 or u.shape[1] != dim:
        raise ValueError(f"points must have shape (n ≥ 1, {dim}), got {u.shape}")
    if not np.all((u >= 0.0) & (u <= 1.0)):
        raise ValueError(f"points must lie in [0, 1]^{dim}; got values in [{np.nanmin(u)}, {np.nanmax(u)}]")
    return u


# ---------------------------------------------------------------------- splits
@dataclass(frozen=True, eq=False)
class Splits:
    """Sorted row indices into the dataset's rows (X, then X_test when present): the (non-sensitive) training
    split T, the pool validation sets are drawn from, and a held-out test split."""

    train: np.ndarray
    pool: np.ndarray
    test: np.ndarray

    def fingerprint(self) -> dict[str, str]:
        """sha256 of each index array."""
        return {"train": index_sha256(self.train), "pool": index_sha256(self.pool), "test": index_sha256(self.test)}


def make_splits(n_rows: int, *, train_size: int, test_size: int, pool_size: int | None = None, seed: int) -> Splits:
    """Split ``range(n_rows)`` by a seeded permutation: train = first ``train_size``, test = next ``test_size``,
    pool = next ``pool_size`` (None = all the rest); each sorted."""
    checks = (("n_rows", n_rows, 1), ("train_size", train_size, 1), ("test_size", test_size, 0), ("seed", seed, 0))
    for key, value, least in checks + ((("pool_size", pool_size, 1),) if pool_size is not None else ()):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
            raise ConfigError(f"{key} must be an integer ≥ {least}, got {value!r}")
    rest = n_rows - train_size - test_size
    if rest < (pool_size or 1):
        pool = "(at least) 1" if pool_size is None else pool_size
        raise ConfigError(
            f"train_size {train_size} + test_size {test_size} + pool_size {pool} = "
            f"{train_size + test_size + (pool_size or 1)} rows exceed the {n_rows} rows available"
        )
    perm = np.random.default_rng(seed).permutation(n_rows)
    cuts = np.cumsum([train_size, test_size, rest if pool_size is None else pool_size])
    train, test, pool = (np.sort(part) for part in np.split(perm[: cuts[-1]], cuts[:-1]))
    return Splits(train=train, pool=pool, test=test)


def row_count(dataset: Dataset) -> int:
    """Rows of ``dataset`` counting its test split: the range :class:`Splits` index into."""
    return int(dataset.y.size + (0 if dataset.y_test is None else dataset.y_test.size))


def stack_rows(dataset: Dataset) -> tuple[Matrix, np.ndarray]:
    """(X, y) of all rows: the dataset's X then X_test (CSR if either is sparse, dense otherwise)."""
    if dataset.X_test is None or dataset.y_test is None:
        return dataset.X, dataset.y
    if sp.issparse(dataset.X) or sp.issparse(dataset.X_test):
        X = sp.vstack([dataset.X, dataset.X_test], format="csr")
    else:
        X = np.vstack([dataset.X, dataset.X_test])
    return X, np.concatenate([dataset.y, dataset.y_test])


# ---------------------------------------------------------------------- scores
@dataclass(frozen=True, eq=False)
class ScoreMatrix:
    """Per-candidate, per-evaluation-row scores of the trained models.

    ``correct[j, r]``: model j classifies evaluation row r correctly (y·s > 0 for its decision value s; a zero
    score counts as a mistake); ``ramp[j, r]`` = min(1, max(0, 1 − y·s)) (float32). Columns are the dataset rows
    ``eval_rows``: the pool split (first ``n_pool``), then the test split. ``row_norm`` is the L2 bound rows were
    clipped to (logreg), None for svm_rbf. ``train_seconds``/``predict_seconds`` are the total fit/score times.
    """

    correct: np.ndarray
    ramp: np.ndarray
    eval_rows: np.ndarray
    n_pool: int
    hyperparameters: list[dict[str, float]]
    points: np.ndarray
    train_seconds: float
    key: str
    row_norm: float | None = None
    predict_seconds: float = 0.0

    def pool_columns(self) -> np.ndarray:
        """Column indices of the pool rows."""
        return np.arange(self.n_pool)

    def test_columns(self) -> np.ndarray:
        """Column indices of the test rows."""
        return np.arange(self.n_pool, self.eval_rows.size)

    def accuracy(self, columns: np.ndarray) -> np.ndarray:
        """Each candidate's accuracy on ``columns``: shape (n_candidates,) for an index array of shape (m,), or
        (n_candidates, k) for k validation sets given as rows of a (k, m) array (Sec. 6's f_V)."""
        return self.correct[:, _columns(columns)].mean(axis=-1)

    def ramp_score(self, columns: np.ndarray) -> np.ndarray:
        """f_V(w_λ) = −(1/m)Σ_{i∈V} g(w_λ, x_i, y_i) with g the ramp loss (Assumption 2); shapes as :meth:`accuracy`."""
        return -self.ramp[:, _columns(columns)].mean(axis=-1, dtype=np.float64)


def _columns(columns: np.ndarray) -> np.ndarray:
    idx = np.asarray(columns)
    if idx.size == 0 or not np.issubdtype(idx.dtype, np.integer):
        raise ValueError(f"columns must be a non-empty integer index array, got dtype {idx.dtype}, shape {idx.shape}")
    return idx


def _fit_svm(X: Matrix, y: np.ndarray, params: Mapping[str, float]) -> Callable[[Matrix], np.ndarray]:
    """Fit SVC(kernel="rbf", C, gamma = γ²); return its decision function, evaluated in chunks of rows."""
    model = SVC(kernel="rbf", C=params["C"], gamma=params["gamma"], cache_size=500).fit(X, y)

    def decision(X_eval: Matrix) -> np.ndarray:
        chunks = range(0, X_eval.shape[0], _SVM_CHUNK)
        return np.concatenate([model.decision_function(X_eval[i : i + _SVM_CHUNK]) for i in chunks])

    return decision


def _fit_logreg(X: Matrix, y: np.ndarray, params: Mapping[str, float]) -> Callable[[Matrix], np.ndarray]:
    """Minimise eq. (10) O_λ(w) = λ/2‖w‖² + (1/n)Σ log(1 + exp(−y_i wᵀx_i)); return x ↦ wᵀx.

    scikit-learn's lbfgs minimises ½‖w‖² + C Σ log-loss = (1/(nλ))·O_λ(w) for C = 1/(nλ) (internally it
    minimises exactly mean log-loss + 1/(2Cn)‖w‖² = O_λ), so the minimiser is w_λ. No intercept: the bias column,
    when present, is a penalised coordinate of w.
    """
    C = 1.0 / (y.size * params["lambda"])
    model = LogisticRegression(C=C, l1_ratio=0.0, fit_intercept=False, solver="lbfgs", tol=1e-10, max_iter=10_000)
    w = model.fit(X, y).coef_.ravel()
    return lambda X_eval: np.asarray(X_eval @ w).ravel()


_FITTERS = {"svm_rbf": _fit_svm, "logreg": _fit_logreg}


def train_and_score(
    X: Matrix,
    y: np.ndarray,
    spec: TargetSpec,
    hyperparameters: Sequence[Mapping[str, float]],
    splits: Splits,
    *,
    progress: bool = True,
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Train one model per candidate on ``splits.train`` and score the pool then test rows.

    Returns ``(correct, ramp, train_seconds, predict_seconds)`` as in :class:`ScoreMatrix`. For logreg every row
    is first clipped to L2 norm ≤ ``spec.row_norm``.
    """
    eval_rows = np.concatenate([splits.pool, splits.test])
    X_train, y_train, X_eval, y_eval = X[splits.train], y[splits.train], X[eval_rows], y[eval_rows]
    if spec.name == "logreg":
        X_train, X_eval = clip_rows(X_train, spec.row_norm), clip_rows(X_eval, spec.row_norm)
    labels = np.unique(y_train)
    if labels.size < 2:
        raise ConfigError(f"the training split ({y_train.size} rows) has a single label {labels}; use a larger one")
    fit = _FITTERS[spec.name]
    correct = np.empty((len(hyperparameters), eval_rows.size), dtype=bool)
    ramp = np.empty((len(hyperparameters), eval_rows.size), dtype=np.float32)
    train_seconds = predict_seconds = 0.0
    for j, params in enumerate(tqdm(hyperparameters, desc=f"training {spec.name}", disable=not progress)):
        start = perf_counter()
        decision = fit(X_train, y_train, params)
        middle = perf_counter()
        margin = y_eval * decision(X_eval)
        correct[j] = margin > 0
        ramp[j] = np.clip(1.0 - margin, 0.0, 1.0)
        train_seconds += middle - start
        predict_seconds += perf_counter() - middle
    return correct, ramp, train_seconds, predict_seconds


# ---------------------------------------------------------------------- cache
def cache_key(dataset: Dataset, spec: TargetSpec, points: np.ndarray, splits: Splits) -> str:
    """sha256 of everything the score matrix depends on (data, target, candidates, splits, library versions)."""
    rounded = np.round(np.asarray(points, dtype=np.float64), 12).astype("<f8")
    payload = {
        "format": _CACHE_FORMAT,
        "dataset": dataset.checksum,
        "target": spec.name,
        "options": spec.options(),
        "points": hashlib.sha256(np.ascontiguousarray(rounded).tobytes() + str(rounded.shape).encode()).hexdigest(),
        "splits": splits.fingerprint(),
        "row_norm": spec.row_norm if spec.name == "logreg" else None,
        "sklearn": sklearn.__version__,
        "dpbench": __version__,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def score_matrix(
    dataset: Dataset,
    spec: TargetSpec,
    points: np.ndarray,
    splits: Splits,
    *,
    cache_dir: Path | None,
    progress: bool = True,
) -> ScoreMatrix:
    """The :class:`ScoreMatrix` of ``spec``'s candidates ``points`` on ``dataset``, cached under
    ``<cache_dir>/bo_scores/<key[:24]>.npz`` (None = no caching; an unreadable cache file is recomputed)."""
    hyperparameters = spec.hyperparameters(points)
    X, y = stack_rows(dataset)
    total = y.size
    for part in ("train", "pool", "test"):
        idx = getattr(splits, part)
        if idx.size and (idx.min() < 0 or idx.max() >= total):
            raise ConfigError(f"splits.{part} indexes rows outside [0, {total}) of dataset {dataset.name}")
    key = cache_key(dataset, spec, points, splits)
    path = None if cache_dir is None else Path(cache_dir) / "bo_scores" / f"{key[:24]}.npz"
    if path is not None and path.is_file():
        cached = _read(path, key)
        if cached is not None:
            log.debug("score matrix %s read from %s", key[:12], path)
            return cached
    correct, ramp, train_seconds, predict_seconds = train_and_score(
        X, y, spec, hyperparameters, splits, progress=progress
    )
    scores = ScoreMatrix(
        correct=correct,
        ramp=ramp,
        eval_rows=np.concatenate([splits.pool, splits.test]),
        n_pool=int(splits.pool.size),
        hyperparameters=hyperparameters,
        points=np.asarray(points, dtype=np.float64),
        train_seconds=train_seconds,
        key=key,
        row_norm=float(spec.row_norm) if spec.name == "logreg" else None,
        predict_seconds=predict_seconds,
    )
    if path is not None:
        _write(path, scores)
    return scores


def _write(path: Path, scores: ScoreMatrix) -> None:
    meta = {
        "format": _CACHE_FORMAT,
        "key": scores.key,
        "hyperparameters": scores.hyperparameters,
        "row_norm": scores.row_norm,
        "n_eval": int(scores.eval_rows.size),
    }

    def write(tmp: str) -> None:
        with open(tmp, "wb") as fh:  # a file object: np.savez would append ".npz" to a path
            np.savez_compressed(
                fh,
                correct=np.packbits(scores.correct, axis=1),
                ramp=scores.ramp,
                eval_rows=scores.eval_rows.astype(np.int64),
                n_pool=np.int64(scores.n_pool),
                points=scores.points,
                train_seconds=np.float64(scores.train_seconds),
                predict_seconds=np.float64(scores.predict_seconds),
                meta=np.array(json.dumps(meta)),
            )

    _atomic_write(path, write)


def _read(path: Path, key: str) -> ScoreMatrix | None:
    """The cached matrix, or None (with a warning) when the file is unreadable or is not for ``key``."""
    try:
        with open(path, "rb") as fh, np.load(fh, allow_pickle=False) as npz:
            meta = json.loads(str(npz["meta"]))
            if meta["format"] != _CACHE_FORMAT or meta["key"] != key:
                raise ValueError(f"it holds key {meta['key'][:24]} (format {meta['format']})")
            n_eval = int(meta["n_eval"])
            correct = np.unpackbits(npz["correct"], axis=1, count=n_eval).astype(bool)
            scores = ScoreMatrix(
                correct=correct,
                ramp=npz["ramp"],
                eval_rows=npz["eval_rows"],
                n_pool=int(npz["n_pool"]),
                hyperparameters=meta["hyperparameters"],
                points=npz["points"],
                train_seconds=float(npz["train_seconds"]),
                key=key,
                row_norm=meta["row_norm"],
                predict_seconds=float(npz["predict_seconds"]),
            )
        shape = (len(scores.hyperparameters), n_eval)
        if correct.shape != shape or scores.ramp.shape != shape or scores.eval_rows.shape != (n_eval,):
            raise ValueError(f"array shapes do not match {shape}")
        return scores
    except Exception as err:  # noqa: BLE001 — truncated, corrupt or foreign file: recompute
        log.warning("ignoring unreadable score cache %s (%s: %s); recomputing", path, type(err).__name__, err)
        return None
