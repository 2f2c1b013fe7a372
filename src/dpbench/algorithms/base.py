"""What every method implements, and what it hands back.

An algorithm never reads files, never touches Hydra and never writes results (docs/architecture.md): it gets
a problem, a privacy :class:`~dpbench.privacy.ledger.Ledger`, a numpy Generator and a
:class:`Tracer`, pays every data-dependent release into the ledger through
:mod:`dpbench.privacy.mechanisms`, and returns a :class:`FitResult`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

import numpy as np

from dpbench.constraints import Constraint, Options, check_parameters


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
        from dpbench.problems.products import matvec

        return np.where(matvec(X, self.w) >= 0, 1.0, -1.0)


class Tracer:
    """Collects iteration-level records (``trace.parquet``) for one fold × rep.

    The algorithm calls :meth:`record`; the training objective logged here is a measurement
    for the figures, taken outside the algorithm and never released by it, so it is neither
    counted as an evaluation nor charged to the ledger. ``every`` = 0 means automatic: about
    ``max_points`` records over the number of iterations the algorithm announces with
    :meth:`plan` (every iteration when it announces none), and, with ``max_share`` = s, no more
    than the fit can afford: each record evaluates F on all n training rows, so records are at
    least n̄/s rows of the algorithm's own work apart, counted in the rows per iteration it announces
    to :meth:`plan` or :meth:`pace` from public values (q·n̄ for a Poisson batch, n̄ for a full one):
    its evaluations touch about a share s of the rows the fit does (``trace.max_share``, default
    0.05, which keeps tracing to 5–8 % of a fit's time in docs/performance.md; None: no bound).
    Which iterations are recorded is published with the trace, so the cadence never follows the
    work actually done (the secret batches' sizes, or the realised n). The first record and
    the forced last one are always kept. ``test`` = (X_test, y_test) lets an
    algorithm log the test accuracy of its recorded iterates (:meth:`test_accuracy`), a measurement
    like the objective. ``nonprivate`` (``trace.nonprivate``): whether iterates that are never
    released — OutPert's gradient descent before its output is noised — may be traced at all; an
    algorithm checks it before recording one. ``reported_eps`` maps the ledger's spend to the run's ε
    (doubled when the run meets replace-one by group privacy; None: the spend itself).
    """

    def __init__(
        self,
        problem,
        ledger,
        every: int = 0,
        max_points: int = 200,
        test: tuple | None = None,
        nonprivate: bool = False,
        reported_eps=None,
        max_share: float | None = None,
    ) -> None:
        self._problem = problem
        self._reported_eps = reported_eps  # the ledger's spend → the run's ε (group privacy doubles it)
        self.nonprivate = nonprivate
        self._ledger = ledger
        self._test = test
        if max_share is not None and not (math.isfinite(max_share) and max_share > 0):
            raise ValueError(f"trace max_share must be finite and > 0 or None, got {max_share}")
        self._requested = every
        self._max_points = max_points
        self.every = max(every, 1)
        # rows of the algorithm's work between records (automatic cadence with a share only), from the public
        # n̄: which iterations the trace records is published with it, so it must not follow the data's size
        self._spacing = problem.n_public / max_share if every == 0 and max_share is not None else None
        self.rows: list[dict[str, Any]] = []

    def _eps_spent(self) -> float:
        if self._ledger is None:
            return math.inf
        spent = self._ledger.eps_spent
        return spent if self._reported_eps is None else self._reported_eps(spent)

    def plan(self, n_iterations: int, rows_per_iteration: float | None = None) -> None:
        """Announce how many iterations the run will take and, if known in advance from public values,
        how many rows each one processes (sets the automatic cadence)."""
        if self._requested == 0:
            self.every = max(1, math.ceil(n_iterations / self._max_points))
            self.pace(rows_per_iteration)

    def pace(self, rows_per_iteration: float | None) -> None:
        """Announce, from public values, how many rows each iteration processes (q·n̄ for a Poisson
        batch of rate q, n̄ for a full batch) when the number of iterations is not known in advance:
        records are then at least n̄/s rows of that work apart (automatic cadence with a share s)."""
        if self._requested == 0 and self._spacing is not None and rows_per_iteration:
            self.every = max(self.every, math.ceil(self._spacing / rows_per_iteration))

    def test_accuracy(self, w: np.ndarray) -> float:
        """Share of test rows whose label sign(xᵀw) (0 counts as +1) is right; NaN without a test set."""
        if self._test is None or self._test[1].shape[0] == 0:
            return math.nan
        X, y = self._test
        from dpbench.problems.products import matvec

        return float(np.mean(np.where(matvec(X, w) >= 0, 1.0, -1.0) == y))

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
                "eps_spent": self._eps_spent(),
                "grad_evals": self._problem.counts.grad_evals,
                "obj_evals": self._problem.counts.obj_evals,
                **extra,
            }
        )


FIDELITIES = ("correct", "paper", "authors_code")
"""How faithfully a method follows what was published (``algorithm.fidelity``): ``correct`` —
dpbench's implementation, whose every release its privacy analysis covers (the default);
``paper`` — the paper as printed, where that differs; ``authors_code`` — the authors' public code's
logic, where that differs. docs/results/deviations.md measures each difference."""


@dataclass(frozen=True)
class FidelityMode:
    """A non-``correct`` fidelity of one method: what it changes (``changes``, one line per
    deviation, each naming its source) and, when the run's (ε, δ) no longer holds, why
    (``breaks_guarantee``; "" when the guarantee still holds).

    What the authors' code trains and tests on, where that differs from the fold (the GLM job reads
    these, :mod:`dpbench.jobs.splits`): ``rows_as_loaded`` — their rows as their loader makes them,
    never clipped (config refuses ``data.row_norm``); ``row_map`` — a per-row map their loader
    applies to every row, training and test (the job applies it to each fold; F* is computed on the
    mapped rows); ``trains_on_test_fold`` — their script trains on the fold's test rows too (the job
    appends them to the training rows, and every row says the test accuracy is not held out)."""

    changes: tuple[str, ...]
    breaks_guarantee: str = ""
    rows_as_loaded: bool = False
    row_map: Callable[[Any], Any] | None = None
    trains_on_test_fold: bool = False


@dataclass(frozen=True)
class Look:
    """How every figure and ``dpbench-report`` draw a method: a colour (hex, :mod:`dpbench.algorithms.palette`),
    a marker and a line style, so that a method is recognised at a glance across papers."""

    colour: str
    marker: str
    line: str = "-"


@dataclass(frozen=True)
class AuditCoverage:
    """Which ``dpbench-audit`` targets (names of :data:`dpbench.audit.suite.TARGETS`) test the mechanisms a
    private method's releases go through (``targets``), and which releases they leave unaudited (``gaps``;
    "" = none). ``dpbench-report`` shows a method's audit verdicts from its targets, and its gaps beside
    them; an entry without targets must say why in ``gaps``."""

    targets: tuple[str, ...]
    gaps: str = ""


@dataclass(frozen=True)
class Request:
    """What a run asks of a method, the question :meth:`Algorithm.refusal` answers before any data is read:
    the model (its name, loss and regularisers μ = ``reg``, φ = ``l1_reg``), ``privacy.sampler``,
    ``privacy.neighbouring``, ``tuning.mode`` (``searches_grid``: a grid is searched) and kusner_bo's
    ``bo.target`` (None for other kinds)."""

    model: str = ""
    loss: str = ""
    reg: float = 0.0
    l1_reg: float = 0.0
    sampler: str = "numpy"
    neighbouring: str = "add_remove"
    tuning: str = "fixed"
    searches_grid: bool = False
    bo_target: str | None = None


class Refusal(NamedTuple):
    """A method's no to a :class:`Request`: the ``setting`` it refuses (``model``, ``model.l1_reg``,
    ``model.reg``, ``privacy.sampler``, ``privacy.neighbouring``, ``tuning``, ``bo.target``) and one
    sentence saying why, with what would work when the method knows it."""

    setting: str
    reason: str


class Algorithm:
    """Base class of every method; subclasses are dataclasses whose fields are hyper-parameters.

    What a method computes is its kind's to call (``Kind.entry``, :mod:`dpbench.jobs`): a linear-model
    method implements ``fit(problem, ledger, rng, tracer) -> FitResult``; han_pwa's and kusner_bo's
    implement ``release(problem, …)`` (:mod:`dpbench.pwa.algorithms`, :mod:`dpbench.bo.algorithms`). The
    base class holds what every kind shares: the declarations below and the hooks that read them.

    Class attributes
    ----------------
    name : the config name (``algorithm=<name>``)
    label : the name its paper prints (figures' legends and titles)
    look : its :class:`Look` in every figure (no two methods share one; tests/plot/test_style.py)
    audit : the :class:`AuditCoverage` of its releases; every private method has one
        (tests/test_audit_coverage.py), non-private ones None
    paper : the key of the paper it comes from (``chen_lee``, ``kuru_acc``, … or ``baseline``)
    private : False for reference baselines (non-private optimum, majority class)
    accountant : which accountant prices its releases (``rdp``, ``zcdp`` or ``pure``)
    supported_losses : loss names it can optimise (None = every GLM loss); :meth:`refusal` refuses others,
        saying ``unsupported_reason``
    supports_l1 : True if it handles an ℓ1 term φ‖w‖₁ in the objective (``model.l1_reg``);
        :meth:`refusal` refuses an ℓ1 model for the others, which would silently ignore the term
    problem_kind : ``glm`` (a loss on a dataset of rows, :class:`~dpbench.problems.GLMProblem`) or
        ``pwa`` (han_pwa's piecewise-affine problem, :mod:`dpbench.pwa`); config checks that the
        dataset, the model and the algorithm agree on it
    secure_sampler : False when some of its noise is drawn outside :mod:`dpbench.privacy.mechanisms`
        (the DDA simulator's vectorised Gaussian, han_pwa's vector Laplace and MCMC, objective
        perturbation), so ``privacy.sampler=secure`` cannot cover it; :meth:`refusal` then refuses the pair
    adaptive_stopping : True when the method chooses what its next release costs from earlier noisy
        outputs and stops when the budget cannot pay for it. Its RDP ledger is then a Rényi filter on
        one order fixed before the run from :meth:`planned_step` (or a union filter over a fixed grid,
        :mod:`dpbench.privacy.filter`), never a post-hoc minimum over orders
    relations : how the method meets each neighbouring relation a run may ask for
        (``privacy.neighbouring``, :mod:`dpbench.privacy.neighbouring`): ``native`` — its sensitivities
        are computed for that relation; ``group_privacy`` — it runs under add/remove at
        (ε/2, δ/(1 + e^{ε/2})), which is replace-one (ε, δ); absent — the run is refused.
        Under ``add_remove`` a method may use the training-set size only as the public n̄
        (``problem.n_public``): rates q = L/n̄, normalisers qn̄ and n̄, n̄·(μ/2)‖v‖² score terms, round
        counts r = n̄ε/800. With n̄ fixed, D and D with one record added or removed are run by the
        same mechanism, and a clipped sum moves by one clipped term: Δ = C. Under ``replace_one`` a
        clipped sum has Δ = 2C, and the charge must be the 2C one. Each class docstring says why its
        entries hold; :meth:`relation_mode` may refine them by hyper-parameter
    paper_relation : the relation its paper proves, used under ``privacy.neighbouring=native``
    relation_reason : why a relation missing from ``relations`` cannot be met (the config error says it)
    fidelity_modes : the non-``correct`` fidelities the method has (:data:`FIDELITIES`, a
        :class:`FidelityMode` each); a method with any has a ``fidelity`` hyper-parameter, whose options
        (``correct`` and the modes) :meth:`constraints` adds. A mode that breaks the guarantee labels
        every row it writes (``guarantee_valid = False``, ``guarantee_note``), and no ranking ranks it
    privacy_unit : what one neighbouring step changes: ``record`` (a training row), ``node_sample``
        (liu_dda: one sample of one node's local data; the nodes and their q are public),
        ``validation_row`` (kusner_bo: a row of the sensitive validation set V; the training set, Λ
        and |V| are public) or ``offset_vector`` (han_pwa: the whole offset vector b, replaced by one
        with max_i |b_i − b_i′| ≤ b_max, eq. (4); A, the box and b_max are public)
    conditional_on : the assumption its guarantee rests on when no run can check it ("" when its proof
        covers every run): its rows say ``guarantee_kind = conditional`` and ``guarantee_valid = False``
    reads_training_size : True when the method reads the training-set size n̄ (every GLM method);
        under add/remove the engine then releases a noisy ñ first and pays for it
        (:mod:`dpbench.privacy.counts`)
    tuning_grid : hyper-parameter → the values ``tuning=private`` and ``tuning=oracle`` search over ({}:
        nothing to tune); a preset may set ``algorithm.tuning_grid`` in its stead
    parameter_constraints : hyper-parameter → what its value may be (:mod:`dpbench.constraints`, as
        scikit-learn's ``_parameter_constraints``); every hyper-parameter has an entry
        (tests/algorithms/test_parameter_constraints.py), ``fidelity``'s comes from ``fidelity_modes``.
        Construction refuses the first value outside them in one sentence; a check that relates two
        values stays in the subclass's ``__post_init__``, after ``super().__post_init__()``
    """

    name: ClassVar[str]
    label: ClassVar[str]
    look: ClassVar[Look]
    audit: ClassVar[AuditCoverage | None] = None
    paper: ClassVar[str]
    private: ClassVar[bool] = True
    accountant: ClassVar[str] = "rdp"
    supported_losses: ClassVar[frozenset[str] | None] = None
    unsupported_reason: ClassVar[str] = ""
    supports_l1: ClassVar[bool] = False
    problem_kind: ClassVar[str] = "glm"
    adaptive_stopping: ClassVar[bool] = False
    secure_sampler: ClassVar[bool] = True
    relations: ClassVar[dict[str, str]] = {"add_remove": "native", "replace_one": "group_privacy"}
    paper_relation: ClassVar[str] = "add_remove"
    relation_reason: ClassVar[str] = ""
    privacy_unit: ClassVar[str] = "record"
    reads_training_size: ClassVar[bool] = True
    conditional_on: ClassVar[str] = ""
    fidelity_modes: ClassVar[dict[str, FidelityMode]] = {}
    tuning_grid: ClassVar[dict[str, list]] = {}
    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {}

    @classmethod
    def constraints(cls) -> dict[str, list[Constraint | None]]:
        """Every constrained hyper-parameter: the class's own, and ``fidelity``'s options."""
        found = dict(cls.parameter_constraints)
        if "fidelity" in {f.name for f in dataclasses.fields(cls)}:
            found.setdefault("fidelity", [Options("correct", *cls.fidelity_modes)])
        return found

    def __post_init__(self) -> None:
        """Refuse the first hyper-parameter its constraints do not allow, in one sentence naming it."""
        check_parameters(
            self.name, self.constraints(), {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        )

    @property
    def fidelity_mode(self) -> FidelityMode | None:
        """The mode this instance runs in; None for ``correct`` (and for methods without modes)."""
        return self.fidelity_modes.get(getattr(self, "fidelity", "correct"))

    def refusal(self, request: Request) -> Refusal | None:
        """The one compatibility question: None when this instance can run ``request``, else the first
        setting it refuses and why. The default reads the class's declarations — ``supported_losses``
        (with ``unsupported_reason``), ``supports_l1``, ``secure_sampler``, ``relations`` (with
        ``relation_reason``) and, for ``tuning=private``, an accountant repeat-and-select can price and a
        relation met natively. A method with a condition of its own overrides this and asks
        ``super().refusal(request)`` first. The run's resolution calls it once and adds what it knows
        would work (the models the method takes, the methods with an ℓ1 step)."""
        from dpbench.privacy.neighbouring import RELATIONS, resolve

        if self.supported_losses is not None and request.loss not in self.supported_losses:
            why = f" ({self.unsupported_reason})" if self.unsupported_reason else ""
            return Refusal(
                "model",
                f"algorithm {self.name} does not support the {request.loss} loss{why}; "
                f"supported: {', '.join(sorted(self.supported_losses))}",
            )
        if request.l1_reg and not self.supports_l1:
            return Refusal(
                "model.l1_reg",
                f"model {request.model} has an ℓ1 regulariser (model.l1_reg = {request.l1_reg:g}) that algorithm "
                f"{self.name} does not handle",
            )
        if request.sampler == "secure" and self.private and not self.secure_sampler:
            return Refusal(
                "privacy.sampler",
                f"privacy.sampler=secure is not available for algorithm {self.name}: some of its noise is drawn "
                "outside dpbench.privacy.mechanisms; use privacy.sampler=numpy",
            )
        if resolve(self, request.neighbouring)[1] is None:
            met = [r for r in RELATIONS if self.relation_mode(r) is not None]
            choices = " or ".join(f"privacy.neighbouring={r}" for r in (*met, "native"))
            return Refusal(
                "privacy.neighbouring",
                f"algorithm {self.name} does not support privacy.neighbouring={request.neighbouring}: "
                f"{self.relation_reason}; use {choices}",
            )
        if request.tuning == "private" and request.searches_grid and self.private:
            return self._private_tuning_refusal(request.neighbouring)
        return None

    def _private_tuning_refusal(self, neighbouring: str) -> Refusal | None:
        """Repeat-and-select (tuning=private) needs a Rényi curve of every trial: an accountant that has one
        and the relation met natively (group privacy has none here)."""
        from dpbench.privacy.accountants import TUNABLE_ACCOUNTANTS
        from dpbench.privacy.neighbouring import RELATIONS, resolve

        if self.accountant not in TUNABLE_ACCOUNTANTS:
            return Refusal(
                "tuning",
                f"tuning=private cannot tune {self.name}: its ledger composes {self.accountant} (ε, δ) pairs, "
                "which have no Rényi curve for repeat-and-select; use tuning=fixed or tuning=oracle",
            )
        if resolve(self, neighbouring)[1] != "native":
            native = " or ".join(f"privacy.neighbouring={r}" for r in RELATIONS if resolve(self, r)[1] == "native")
            return Refusal(
                "tuning",
                f"tuning=private needs {self.name} to meet privacy.neighbouring={neighbouring} natively "
                f"(group privacy has no Rényi curve here); use {native} or tuning=fixed",
            )
        return None

    def relation_mode(self, relation: str) -> str | None:
        """How this method meets ``relation`` (``native`` or ``group_privacy``), or None if it cannot."""
        return self.relations.get(relation) if self.private else "native"

    def accountant_options(self) -> dict[str, Any]:
        """Extra options for this method's accountant (e.g. how subsampling is amplified)."""
        return {}

    def planned_step(self, epsilon: float):
        """For ``adaptive_stopping`` methods: the privacy event of one step as planned before any data
        is seen (public values only), from which the Rényi filter's order is fixed
        (:func:`~dpbench.privacy.filter.filter_accountant`); None when the method plans none."""
