"""What every method implements, and what it hands back.

An algorithm never reads files, never touches Hydra and never writes results (DESIGN.md): it gets
a problem, a privacy :class:`~dpbench.privacy.accountant.Ledger`, a numpy Generator and a
:class:`Tracer`, pays every data-dependent release into the ledger through
:mod:`dpbench.privacy.mechanisms`, and returns a :class:`FitResult`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

#: The neighbouring relations an :class:`Algorithm` may declare (``Algorithm.neighbouring``), each
#: with its meaning; the class docstring says which methods satisfy which and why.
NEIGHBOURING_RELATIONS: dict[str, str] = {
    "add_remove": "one record added or removed; n may change",
    "replace_one": "one record replaced by another; n fixed and public",
    "zero_out": "one record replaced by a null record that contributes nothing; n fixed and public",
    "replace_one_node_sample": "liu_dda: one sample of one node replaced; nodes and per-node q fixed and public",
    "offsets_within_b_max": "han_pwa eq. (4): every offset b_i may move by at most b_max at once",
    "add_remove_validation_row": "kusner_bo: one validation row added or removed; the configured |V| is public",
    "none": "not private (reference baseline)",
}


@dataclass
class FitResult:
    """A trained model: linear weights ``w``, or a constant label (the majority baseline)."""

    w: np.ndarray | None
    n_iterations: int
    constant_label: float | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def predict(self, X) -> np.ndarray:
        """Labels in {−1, +1} (a zero margin counts as +1)."""
        if self.w is None:
            return np.full(X.shape[0], self.constant_label, dtype=float)
        return np.where(X @ self.w >= 0, 1.0, -1.0)


class Tracer:
    """Collects iteration-level records (``trace.parquet``) for one fold × rep.

    The algorithm calls :meth:`record`; the training objective logged here is a measurement
    for the figures, taken outside the algorithm and never released by it, so it is neither
    counted as an evaluation nor charged to the ledger. ``every`` = 0 means automatic: about
    ``max_points`` records over the number of iterations the algorithm announces with
    :meth:`plan` (every iteration when it announces none). ``test`` = (X_test, y_test) lets an
    algorithm log the test accuracy of its recorded iterates (:meth:`test_accuracy`), a measurement
    like the objective. ``nonprivate`` (``trace.nonprivate``): whether iterates that are never
    released — OutPert's gradient descent before its output is noised — may be traced at all; an
    algorithm checks it before recording one.
    """

    def __init__(
        self, problem, ledger, every: int = 0, max_points: int = 200, test: tuple | None = None, nonprivate: bool = False
    ) -> None:
        self._problem = problem
        self.nonprivate = nonprivate
        self._ledger = ledger
        self._test = test
        self._requested = every
        self._max_points = max_points
        self.every = max(every, 1)
        self.rows: list[dict[str, Any]] = []

    def plan(self, n_iterations: int) -> None:
        """Announce how many iterations the run will take (sets the automatic cadence)."""
        if self._requested == 0:
            self.every = max(1, math.ceil(n_iterations / self._max_points))

    def test_accuracy(self, w: np.ndarray) -> float:
        """Share of test rows whose label sign(xᵀw) (0 counts as +1) is right; NaN without a test set."""
        if self._test is None or self._test[1].shape[0] == 0:
            return math.nan
        X, y = self._test
        return float(np.mean(np.where(X @ w >= 0, 1.0, -1.0) == y))

    def record(self, iteration: int, w: np.ndarray, *, step_size: float, force: bool = False, **extra: Any) -> None:
        """Log iteration ``iteration`` (model ``w`` after it) if it falls on the cadence or ``force``."""
        if not force and iteration % self.every != 0:
            return
        if self.rows and self.rows[-1]["iteration"] == iteration:
            return
        self.rows.append(
            {
                "iteration": iteration,
                "train_objective": self._problem.evaluate_objective(w),
                "step_size": float(step_size),
                "eps_spent": self._ledger.eps_spent if self._ledger is not None else math.inf,
                "grad_evals": self._problem.counts.grad_evals,
                "obj_evals": self._problem.counts.obj_evals,
                **extra,
            }
        )


class Algorithm:
    """Base class of every method; subclasses are dataclasses whose fields are hyper-parameters.

    Class attributes
    ----------------
    name : the config name (``algorithm=<name>``)
    paper : the key of the paper it comes from (``chen_lee``, ``kuru_acc``, … or ``baseline``)
    private : False for reference baselines (non-private optimum, majority class)
    accountant : which accountant prices its releases (``rdp``, ``zcdp`` or ``pure``)
    supported_losses : loss names it can optimise (None = every GLM loss); others are refused
    supports_l1 : True if it handles an ℓ1 term φ‖w‖₁ in the objective (``model.l1_reg``); config
        refuses an ℓ1 model for the others, which would silently ignore the term
    problem_kind : ``glm`` (a loss on a dataset of rows, :class:`~dpbench.problems.GLMProblem`) or
        ``pwa`` (han_pwa's piecewise-affine problem, :mod:`dpbench.pwa`); config checks that the
        dataset, the model and the algorithm agree on it
    secure_sampler : False when some of its noise is drawn outside :mod:`dpbench.privacy.mechanisms`
        (the DDA simulator's vectorised Gaussian, han_pwa's vector Laplace and MCMC, objective
        perturbation), so ``privacy.sampler=secure`` cannot cover it; config then refuses the pair
    adaptive_stopping : True when the method chooses what its next release costs from earlier noisy
        outputs and stops when the budget cannot pay for it. Its RDP ledger is then a Rényi filter on
        one order fixed before the run from :meth:`planned_step` (or a union filter over a fixed grid,
        :mod:`dpbench.privacy.filter`), never a post-hoc minimum over orders
    neighbouring : the neighbouring relation the charged sensitivities hold for AS IMPLEMENTED — the
        pairs (D, D′) the ledger's (ε, δ) protects; one of :data:`NEIGHBOURING_RELATIONS`:

        * ``add_remove`` — D′ is D with one record added or removed; n may change, so nothing that
          is charged may depend on it;
        * ``replace_one`` — one record replaced by any other; n is fixed and public. A clipped sum
          then has sensitivity 2C (C under add/remove), and the charge must be the 2C one;
        * ``zero_out`` — one record replaced by a *null record* that contributes nothing; n is fixed
          and public (dp-accounting's ``NeighboringRelation.REPLACE_SPECIAL``). A method that uses
          the training-set size n (normalisers, lot sizes, round counts, n·(μ/2)‖v‖² score terms)
          as a public constant while charging add/remove sensitivities satisfies this relation, not
          add/remove. What the null record contributes, per method: in DP-SGD a zero clipped
          gradient (it is Poisson-sampled like any record, and the lot normaliser qn counts it); in
          DP-BLSGD, DP-BLSGD-AC and DP-BLGD a zero clipped gradient and a zero clipped loss
          min(ℓ, C_obj) = 0 in every Armijo query (L = qn, resp. n, counts it); in DP-AGD a zero
          clipped gradient and a zero clipped loss in the noisy-min scores (n·(μ/2)‖v‖² counts it);
          in PrivGene a zero clipped loss in the fitness φ (n·(μ/2)‖w‖² and r = nε/800 count it);
        * ``replace_one_node_sample`` — liu_dda: one sample of one node's local dataset replaced by
          another; the number of nodes and every node's q are fixed and public (dda/accounting.py);
        * ``offsets_within_b_max`` — han_pwa eq. (4): the database is the offset vector b, and D′ may
          move every offset at once, max_i |b_i − b_i′| ≤ b_max; A, the box and b_max are public;
        * ``add_remove_validation_row`` — kusner_bo: one row added to or removed from the sensitive
          validation set V (the pairs Assumption 1's k₁ is measured on, Fig. 1); the training set,
          Λ and the configured |V| are public;
        * ``none`` — non-private references (``private = False``)
    privacy_unit : what one neighbouring step changes: ``record`` (a training row; liu_dda's node
        sample is one), ``validation_row`` (kusner_bo) or ``offset_vector`` (han_pwa: all of b)
    """

    name: ClassVar[str]
    paper: ClassVar[str]
    private: ClassVar[bool] = True
    accountant: ClassVar[str] = "rdp"
    supported_losses: ClassVar[frozenset[str] | None] = None
    unsupported_reason: ClassVar[str] = ""
    supports_l1: ClassVar[bool] = False
    problem_kind: ClassVar[str] = "glm"
    adaptive_stopping: ClassVar[bool] = False
    secure_sampler: ClassVar[bool] = True
    neighbouring: ClassVar[str]
    privacy_unit: ClassVar[str] = "record"

    def _require_positive(self, *keys: str, allow_none: bool = False) -> None:
        """Raise a ValueError naming the first hyper-parameter in ``keys`` that is not finite and > 0
        (None passes when ``allow_none``)."""
        for key in keys:
            value = getattr(self, key)
            if value is None and allow_none:
                continue
            if value is None or isinstance(value, bool) or not (math.isfinite(value) and value > 0):
                suffix = " or null" if allow_none else ""
                raise ValueError(f"{self.name}: {key} must be finite and > 0{suffix}, got {value}")

    def _require_count(self, *keys: str, allow_none: bool = False) -> None:
        """Raise a ValueError naming the first hyper-parameter in ``keys`` that is not an integer ≥ 1
        (None passes when ``allow_none``)."""
        for key in keys:
            value = getattr(self, key)
            if value is None and allow_none:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                suffix = " or null" if allow_none else ""
                raise ValueError(f"{self.name}: {key} must be an integer ≥ 1{suffix}, got {value!r}")

    def _require_choice(self, key: str, allowed: tuple[str, ...]) -> None:
        """Raise a ValueError naming hyper-parameter ``key`` unless its value is one of ``allowed``."""
        value = getattr(self, key)
        if value not in allowed:
            raise ValueError(f"{self.name}: {key} must be one of {', '.join(allowed)}, got {value!r}")

    def _require_bool(self, *keys: str) -> None:
        """Raise a ValueError naming the first hyper-parameter in ``keys`` that is not true or false."""
        for key in keys:
            if not isinstance(getattr(self, key), bool):
                raise ValueError(f"{self.name}: {key} must be true or false, got {getattr(self, key)!r}")

    @classmethod
    def check_model(cls, reg: float, l1_reg: float) -> None:
        """Raise a ConfigError if the model's regularisers (μ = ``reg``, φ = ``l1_reg``) do not suit the
        method; config calls it before any data is read. Every μ ≥ 0 and φ = 0 suit by default."""

    def accountant_options(self) -> dict[str, Any]:
        """Extra options for this method's accountant (e.g. how subsampling is amplified)."""
        return {}

    def planned_step(self, epsilon: float):
        """For ``adaptive_stopping`` methods: the privacy event of one step as planned before any data
        is seen (public values only), from which the Rényi filter's order is fixed
        (:func:`~dpbench.privacy.filter.filter_accountant`); None when the method plans none."""
        return None

    def fit(self, problem, ledger, rng: np.random.Generator, tracer: Tracer) -> FitResult:
        raise NotImplementedError
