"""Chen & Lee (2022), *Stochastic Adaptive Line Search for Differentially Private Optimization*.

DP-BLSGD (Alg. 2) with NoisyBTLS (Alg. 1) and CHEB (Alg. 3), its clipping-adaptive variant
DP-BLSGD-AC (Sec 4.4) and the full-batch DP-BLGD (Sec 5.3), under RDP budget tracking (Sec 4.3).

Our reading where the paper leaves room (each documented in ``conf/algorithm/*.yaml``):

* **Scale of the objective.** Alg. 2 line 6 averages the noisy gradient over the batch while
  Thm 1 clips a *summed* objective. We normalise both by the expected batch size L = qn (the
  public denominator of Abadi et al.): g̃ = (Σ_B clip(∇ℓ_i) + N(0, C²/(2ρ)·I))/L + μw and
  f_B(v) = Σ_B min(ℓ_i(v), C_obj)/L + (μ/2)‖v‖², so the Armijo query
  q(η) = f_B(w) − f_B(w − ηg̃) − αη‖g̃‖² has sensitivity Δ_q = C_obj/L.
* **Accounting of a shared minibatch.** The gradient and every NoisyBTLS call of an iteration
  read the same minibatch B; Sec 4.3 amplifies each release separately, which under-counts
  (amplification is superadditive). We amplify all releases on B together
  (:class:`~dpbench.privacy.ledger.PoissonBatch`): amp(Σ_k ε_k(α)) with Lemma 4. CHEB's
  second gradient is drawn on a fresh minibatch and amplified on its own.
* **Stopping rule.** "Until no order can pay for the next gradient" (Sec 4.3) takes the best Rényi
  order after the fact, which is proven only for compositions fixed in advance. The budget is
  instead tracked by a Rényi filter on one order α*, fixed before the run from the planned step
  (:meth:`planned_step`; :mod:`dpbench.privacy.filter`, Feldman & Zrnic 2021 Thm 3.1).
* **Budget strategies** (Fig. 1e): ``adap`` is CHEB; ``must`` always raises ρ_grad; ``no``
  never raises a budget. All three still average the two gradients (Alg. 3 line 11).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpbench.algorithms.base import Algorithm, AuditCoverage, FitResult, Look, Tracer
from dpbench.algorithms.palette import LIGHT_RED, ORANGE, RED
from dpbench.algorithms.sampling import poisson_subsample
from dpbench.constraints import (
    COUNT,
    NON_NEGATIVE,
    POSITIVE,
    PROBABILITY_OPEN,
    Boolean,
    Constraint,
    Options,
    Real,
)
from dpbench.privacy.events import ComposedEvent, GaussianEvent, PoissonSampledEvent
from dpbench.privacy.mechanisms import above_threshold, gaussian_mechanism
from dpbench.privacy.screening import ScreenedValue
from dpbench.privacy.sparse_vector import svt_noise

NOISE_KINDS = ("laplace", "gaussian")
BUDGET_STRATEGIES = ("adap", "must", "no")
LINE_SEARCH_TARGETS = (
    "dp_blsgd_noisy_btls_laplace",
    "dp_blsgd_noisy_btls_gaussian",
    "above_threshold_laplace",
    "above_threshold_gaussian",
    "gaussian",
)
POISSON_LINE_SEARCH_AUDIT = AuditCoverage(
    (*LINE_SEARCH_TARGETS, "dp_blsgd_poisson_btls_laplace", "dp_blsgd_poisson_btls_gaussian"),
    gaps="the noisy gradient and NoisyBTLS together on one Poisson subsample (PoissonBatch prices them jointly; the "
    "targets audit each release alone)",
)


def _subsampled(event, sampling_rate: float):
    return event if sampling_rate == 1.0 else PoissonSampledEvent(sampling_rate, event)


def angle_degrees(u: np.ndarray, v: np.ndarray) -> float:
    """ANGLEBETWEEN of Alg. 3 line 5, in degrees (90° when either vector is zero)."""
    norms = np.linalg.norm(u) * np.linalg.norm(v)
    if norms == 0.0:
        return 90.0
    return math.degrees(math.acos(max(-1.0, min(1.0, float(u @ v) / norms))))


@dataclass(frozen=True)
class LineSearchResult:
    step: float
    candidates: int


class ArmijoQueries:
    """The queries of NoisyBTLS (chen_lee Alg. 1 line 7): q_i = f_B(w) − αη_i‖g‖² − f_B(w − η_i g)
    with η_i = η₀β^i and the clipped objective f_B(v) = Σ_{i∈B} min(ℓ_i(v), C_obj)/L + (μ/2)‖v‖².
    With L = ``normaliser`` public (qn̄, or n̄ for DP-BLGD), adding or removing a record moves every
    q_i by at most Δ_q = C_obj/L (Thm 1); were L computed from the data's n, q_i could move by up
    to 2Δ_q. Evaluated lazily (``self(i)``), so a search that stops early pays for the candidates it
    looked at only.

    ``self(i)`` returns a :class:`~dpbench.privacy.screening.ScreenedValue` where the clipped sums can be
    approximated (:class:`~dpbench.problems.screened_losses.ClippedLossLine`): first from the line's Taylor
    bounds at η = 0 on the drop S(w) − S(w − ηg), in which S(w) cancels (one pass over the batch for the whole
    search, every step the search may ask about bounded at once when ``max_it`` is given), then in float32 (a pass
    per query);
    AboveThreshold computes q_i exactly only when neither can decide its test, and releases the same index
    either way. :meth:`value` is q_i exactly."""

    def __init__(self, problem, w, grad, batch, *, eta0, alpha, beta, obj_clip, normaliser, max_it=None) -> None:
        """``max_it``: how many queries the search may ask (None: not known), so that the line bounds every step
        it may ask about at once."""
        self._problem, self._w, self._grad = problem, w, grad
        self._eta0, self._alpha, self._beta = eta0, alpha, beta
        self._max_it = max_it
        self._normaliser = normaliser
        self._sensitivity = obj_clip / normaliser
        self._line = problem.clipped_loss_line(w, grad, batch, obj_clip, max_step=eta0)
        self._obj_clip = obj_clip
        self._regulariser_w = 0.5 * problem.reg * float(w @ w)
        self._f_w: float | None = None  # f_B(w), computed when a query first needs it exactly
        self._f_w_float32: tuple[float, float] | bool | None = False  # False: not yet approximated
        self._squared_norm = float(grad @ grad)
        self.asked = 0

    @property
    def sensitivity(self) -> float:
        return self._sensitivity

    def step(self, i: int) -> float:
        return self._eta0 * self._beta**i

    def __call__(self, i: int) -> ScreenedValue | float:
        if self.asked == 0 and self._max_it is not None:
            self._line.expect_steps([self.step(j) for j in range(self._max_it)])
        self.asked += 1
        self._problem.counts.obj_evals += self._line.size
        eta = self.step(i)
        v = self._w - eta * self._grad
        regulariser = 0.5 * self._problem.reg * float(v @ v)
        armijo = self._alpha * eta * self._squared_norm

        def exact() -> float:
            return self._exact_f_w() - armijo - (self._line.exact(v) / self._normaliser + regulariser)

        def float32() -> ScreenedValue | None:
            estimate, at_w = self._line.approximate(eta), self._estimate_f_w()
            if estimate is None or at_w is None:
                return None
            f_w, error_w = at_w
            f_v = estimate[0] / self._normaliser + regulariser
            error = error_w + estimate[1] / self._normaliser
            # the four operations on approximate inputs round differently: 2⁻⁴⁸ of the magnitudes covers them
            error += 2.0**-48 * (abs(f_w) + armijo + abs(f_v) + error)
            return ScreenedValue(f_w - armijo - f_v, error, exact, None)

        return self._from_drop(eta, regulariser, armijo, exact, float32) or float32() or exact()

    def _from_drop(self, eta, regulariser, armijo, exact, finer) -> ScreenedValue | None:
        """q_i from the line's bounds on the drop S(w) − S(v) (the value S(w) cancels), or None where it has none.
        The exact computation rounds f(w) and f(v), whose loss parts lie in [0, |B|·C/L]: 2⁻⁴⁸ of that covers it."""
        bounded = self._line.bounded_drop(eta)
        if bounded is None:
            return None
        drop, drop_error = bounded[0] / self._normaliser, bounded[1] / self._normaliser
        magnitude = self._line.size * self._obj_clip / self._normaliser + self._regulariser_w + regulariser + armijo
        error = drop_error + 2.0**-48 * (magnitude + abs(drop) + drop_error)
        return ScreenedValue(drop + self._regulariser_w - regulariser - armijo, error, exact, finer)

    def value(self, i: int) -> float:
        """q_i, computed exactly."""
        value = self(i)
        return value.exact() if isinstance(value, ScreenedValue) else value

    def _exact_f_w(self) -> float:
        if self._f_w is None:
            self._f_w = self._line.exact_at_w() / self._normaliser + self._regulariser_w
        return self._f_w

    def _estimate_f_w(self) -> tuple[float, float] | None:
        """(f_B(w), 0) once computed exactly, else its float32 approximation and error bound (None: not
        approximated)."""
        if self._f_w is not None:
            return self._f_w, 0.0
        if self._f_w_float32 is False:
            at_w = self._line.approximate(0.0)
            self._f_w_float32 = (
                None if at_w is None else (at_w[0] / self._normaliser + self._regulariser_w, at_w[1] / self._normaliser)
            )
        return self._f_w_float32


def noisy_btls(
    problem,
    w: np.ndarray,
    grad: np.ndarray,
    batch: np.ndarray | None,
    *,
    eta0: float,
    alpha: float,
    beta: float,
    max_it: int,
    obj_clip: float,
    normaliser: float,
    noise: str,
    budget: float,
    rng: np.random.Generator,
    ledger,
    on_failure: str = "zero",
) -> LineSearchResult:
    """NoisyBTLS, chen_lee Alg. 1: AboveThreshold (Lemma 5) over the :class:`ArmijoQueries`
    q_0, …, q_{max_it−1} with threshold T = 0 and sensitivity Δ_q = C_obj/L.

    ``budget`` is ε_BT for Laplace noise (ε₁ = ε_BT/2, ε₂ = ε_BT/4; RDP by Thm 2) or ρ_BT for
    Gaussian noise (σ₁² = 3/(2ρ), σ₂² = 3/ρ; Thm 3). ``ledger`` is charged once for the whole
    search (a :class:`~dpbench.privacy.ledger.PoissonBatch` when B is a subsample). Returns
    step 0 on failure, or β^max_it·η₀ when ``on_failure="smallest"`` (Sec 5.7).
    """
    queries = ArmijoQueries(
        problem,
        w,
        grad,
        batch,
        eta0=eta0,
        alpha=alpha,
        beta=beta,
        obj_clip=obj_clip,
        normaliser=normaliser,
        max_it=max_it,
    )
    budget_kw = {"epsilon": budget} if noise == "laplace" else {"rho": budget}
    found = above_threshold(
        queries,
        0.0,
        max_queries=max_it,
        sensitivity=queries.sensitivity,
        rng=rng,
        ledger=ledger,
        noise=noise,
        label="noisy_btls",
        **budget_kw,
    )
    if found is not None:
        return LineSearchResult(queries.step(found), queries.asked)
    return LineSearchResult(eta0 * beta**max_it if on_failure == "smallest" else 0.0, queries.asked)


@dataclass
class _ChenLeeBase(Algorithm):
    """Hyper-parameters shared by DP-BLSGD, DP-BLSGD-AC and DP-BLGD (defaults: chen_lee Sec 5.4).

    Neighbouring relations: ``add_remove`` natively, ``replace_one`` by group privacy. chen_lee's
    neighbours are add/remove (Sec 2, |D △ D′| = 1) and Thm 1 clips a *summed* objective; our reading
    normalises the gradient and every Armijo query by L = qn̄ (n̄ for DP-BLGD) with the public n̄
    (``problem.n_public``), so adding or removing a record moves the clipped gradient sum by ≤ C_grad
    and every query by ≤ Δ_q = C_obj/L, as charged (:class:`ArmijoQueries`).
    """

    expected_iterations: float = 50.0  # ε_iter = ε/(2·50), Sec 5.4
    clip_grad: float = 3.0
    clip_obj: float = 1.0
    alpha: float = 0.5
    beta: float = 0.8
    max_it: int = 20
    eta0: float = 2.0
    tau: int = 10
    varsigma: float = 1.2
    noise: str = "laplace"
    on_failure: str = "zero"
    init_scale: float = 0.01
    amplification: str = "lemma4"
    max_iterations: int | None = None

    paper: ClassVar[str] = "chen_lee"
    accountant: ClassVar[str] = "rdp"
    tuning_grid: ClassVar[dict[str, list]] = {"expected_iterations": [20, 50, 100], "clip_grad": [1.0, 3.0]}  # ours
    adaptive_stopping: ClassVar[bool] = True  # Alg. 2 lines 21–22: spend until no step can be paid for

    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {
        "expected_iterations": [POSITIVE],
        "clip_grad": [POSITIVE],
        "clip_obj": [POSITIVE],
        "alpha": [POSITIVE],
        "beta": [PROBABILITY_OPEN],
        "max_it": [COUNT],
        "eta0": [POSITIVE],
        "tau": [COUNT],
        "varsigma": [POSITIVE],
        "noise": [Options(*NOISE_KINDS)],
        "on_failure": [Options("zero", "smallest")],
        "init_scale": [NON_NEGATIVE],
        "amplification": [Options("lemma4", "exact")],
        "max_iterations": [COUNT, None],
    }

    def accountant_options(self) -> dict[str, Any]:
        return {"gaussian_amplification": self.amplification}

    # ------------------------------------------------------------------ shared pieces
    def _initial_budgets(self, epsilon: float) -> tuple[float, float]:
        """(ρ_grad, line-search budget) from ε_iter = ε/(2·50) (Sec 5.4): ρ_grad = ε_iter²/2 and
        ε_BT = ε_iter (Laplace) or ρ_BT = ε_iter²/2 (Gaussian)."""
        eps_iter = epsilon / (2.0 * self.expected_iterations)
        rho_grad = eps_iter**2 / 2.0
        return rho_grad, (eps_iter if self.noise == "laplace" else rho_grad)

    def _line_search_event(self, budget: float, normaliser: float, clip_obj: float):
        budget_kw = {"epsilon": budget} if self.noise == "laplace" else {"rho": budget}
        return svt_noise(self.noise, sensitivity=clip_obj / normaliser, **budget_kw).event

    def planned_step(self, epsilon: float):
        """One iteration as planned: the noisy gradient and one NoisyBTLS at the initial budgets
        (Sec 5.4), on one Poisson batch of rate q for the subsampled methods (priced jointly, as
        :class:`~dpbench.privacy.ledger.PoissonBatch` does)."""
        rho_grad, bt_budget = self._initial_budgets(epsilon)
        joint = ComposedEvent((self._gradient_event(rho_grad), self._line_search_event(bt_budget, 1.0, self.clip_obj)))
        return _subsampled(joint, getattr(self, "sampling_rate", 1.0))

    @staticmethod
    def _gradient_event(rho: float) -> GaussianEvent:
        return GaussianEvent(1.0 / math.sqrt(2.0 * rho))

    def _noisy_gradient(self, problem, w, batch, rho, clip, normaliser, rng, ledger) -> np.ndarray:
        """Alg. 2 lines 5–6: (Σ_B clip(∇ℓ_i, C) + N(0, C²/(2ρ)·I))/L, plus μw (data-independent)."""
        clipped_sum = problem.clipped_gradient_sum(w, batch, clip)
        noisy = gaussian_mechanism(
            clipped_sum,
            sensitivity=clip,
            noise_multiplier=1.0 / math.sqrt(2.0 * rho),
            rng=rng,
            ledger=ledger,
            label="noisy_gradient",
        )
        return noisy / normaliser + problem.regulariser_gradient(w)

    def _initial_point(self, dim: int, rng: np.random.Generator) -> np.ndarray:
        """Alg. 2 line 2, "initialize w₀ randomly": N(0, init_scale²·I), independent of the data."""
        return rng.normal(0.0, self.init_scale, size=dim) if self.init_scale > 0 else np.zeros(dim)


@dataclass
class DPBLSGD(_ChenLeeBase):
    """DP-BLSGD, chen_lee Alg. 2: Poisson minibatches at rate q, a clipped noisy gradient, NoisyBTLS
    for the step, CHEB (Alg. 3) when the search fails, intelligent backtracking (Sec 4.2), and RDP
    budget tracking until the Rényi filter cannot pay for the next gradient (Sec 4.3).

    Neighbouring relations as :class:`_ChenLeeBase`: the Poisson rate q and the normaliser L = qn̄ of
    the gradient and of every Armijo query are public."""

    sampling_rate: float = 0.1
    xi: float = 0.3
    psi: float = 0.8
    phi_max: float = 1.1
    phi_min: float = 0.5
    budget_strategy: str = "adap"
    adaptive_clipping: bool = False
    zeta: float = 0.05

    name: ClassVar[str] = "dp_blsgd"
    label: ClassVar[str] = "DP-BLSGD"
    look: ClassVar[Look] = Look(RED, "o")
    audit: ClassVar[AuditCoverage] = POISSON_LINE_SEARCH_AUDIT

    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {
        **_ChenLeeBase.parameter_constraints,
        "sampling_rate": [Real(0, 1, closed="right")],
        "xi": [POSITIVE],
        "psi": [PROBABILITY_OPEN],
        "phi_max": [Real(1, closed="neither")],
        "phi_min": [PROBABILITY_OPEN],
        "budget_strategy": [Options(*BUDGET_STRATEGIES)],
        "adaptive_clipping": [Boolean()],
        "zeta": [Real(0, 1, closed="left")],
    }

    def fit(self, problem, ledger, rng: np.random.Generator, tracer: Tracer) -> FitResult:
        n, q = problem.n, self.sampling_rate
        normaliser = q * problem.n_public  # expected batch size L = qn̄ (public)
        tracer.pace(normaliser)
        rho_grad, bt_budget = self._initial_budgets(ledger.epsilon)
        clip_grad, clip_obj = self.clip_grad, self.clip_obj
        eta0, chosen = self.eta0, []
        theta_bar, previous = 90.0, None  # eq. (7): θ̄ starts at 90°
        w = self._initial_point(problem.dim, rng)
        tracer.record(0, w, step_size=0.0, rho_grad=rho_grad, bt_budget=bt_budget, candidates=0, line_searches=0)

        t = 0
        while self.max_iterations is None or t < self.max_iterations:
            batch_idx = poisson_subsample(n, q, rng)
            batch = ledger.poisson_batch(q)
            if not batch.can_afford(self._gradient_event(rho_grad)):  # Alg. 2 lines 21–22
                break
            g = self._noisy_gradient(problem, w, batch_idx, rho_grad, clip_grad, normaliser, rng, batch)
            step, candidates, searches, raises, shrunk = 0.0, 0, 0, 0, False
            while step == 0.0:  # Alg. 2 lines 9–20
                if not batch.can_afford(self._line_search_event(bt_budget, normaliser, clip_obj)):
                    break
                result = noisy_btls(
                    problem,
                    w,
                    g,
                    batch_idx,
                    eta0=eta0,
                    alpha=self.alpha,
                    beta=self.beta,
                    max_it=self.max_it,
                    obj_clip=clip_obj,
                    normaliser=normaliser,
                    noise=self.noise,
                    budget=bt_budget,
                    rng=rng,
                    ledger=batch,
                    on_failure=self.on_failure,
                )
                step, candidates, searches = result.step, candidates + result.candidates, searches + 1
                if step > 0.0:  # lines 12–14
                    w = w - step * g
                    if previous is not None:
                        theta_bar = self.psi * theta_bar + (1.0 - self.psi) * angle_degrees(g, previous)
                    previous = g
                    chosen.append(step)
                elif ledger.can_afford(_subsampled(self._gradient_event(rho_grad), q)):  # lines 15–17
                    raised, rho_grad, bt_budget, g = self._cheb(
                        problem, w, g, rho_grad, bt_budget, clip_grad, normaliser, theta_bar, rng, ledger
                    )
                    raises += raised
                    if raised and self.adaptive_clipping and not shrunk:  # Sec 4.4, eq. (9)
                        clip_grad, clip_obj, shrunk = (1 - self.zeta) * clip_grad, (1 - self.zeta) * clip_obj, True
                else:
                    break
            t += 1
            if t % self.tau == 0 and chosen:  # intelligent backtracking (Sec 4.2)
                eta0, chosen = min(self.varsigma * max(chosen), eta0), []
            tracer.record(
                t,
                w,
                step_size=step,
                rho_grad=rho_grad,
                bt_budget=bt_budget,
                candidates=candidates,
                line_searches=searches,
                rho_raises=raises,
                clip_grad=clip_grad,
                clip_obj=clip_obj,
                theta_bar=theta_bar,
            )
        tracer.record(t, w, step_size=0.0, force=True, rho_grad=rho_grad, bt_budget=bt_budget)
        return FitResult(
            w=w, n_iterations=t, info={"final_rho_grad": rho_grad, "final_bt_budget": bt_budget, "final_eta0": eta0}
        )

    def _cheb(self, problem, w, g, rho_grad, bt_budget, clip_grad, normaliser, theta_bar, rng, ledger):
        """CHEB, chen_lee Alg. 3: a second noisy gradient on a fresh minibatch; its angle to the first
        decides which budget grows (eq. (8): θ_max = φ_max·θ̄, θ_min = φ_min·θ̄); the two are averaged."""
        second_batch = ledger.poisson_batch(self.sampling_rate)
        idx = poisson_subsample(problem.n, self.sampling_rate, rng)
        g2 = self._noisy_gradient(problem, w, idx, rho_grad, clip_grad, normaliser, rng, second_batch)
        theta = angle_degrees(g, g2)
        raised = False
        if self.budget_strategy == "must":
            rho_grad, raised = (1 + self.xi) * rho_grad, True
        elif self.budget_strategy == "adap":
            if g @ g2 < 0 or theta > self.phi_max * theta_bar:
                rho_grad, raised = (1 + self.xi) * rho_grad, True
            elif theta < self.phi_min * theta_bar:
                bt_budget = (1 + self.xi) * bt_budget
        return raised, rho_grad, bt_budget, (g + g2) / 2.0


@dataclass
class DPBLSGDAC(DPBLSGD):
    """DP-BLSGD-AC (chen_lee Sec 4.4): DP-BLSGD that shrinks C_grad and C_obj by (1 − ζ), at most
    once per update, whenever CHEB raises ρ_grad (eq. (9)). Neighbouring relations as DP-BLSGD
    (L = qn̄; the shrunk clips are functions of earlier releases only)."""

    adaptive_clipping: bool = True

    name: ClassVar[str] = "dp_blsgd_ac"
    label: ClassVar[str] = "DP-BLSGD-AC"
    look: ClassVar[Look] = Look(LIGHT_RED, "o")
    audit: ClassVar[AuditCoverage] = POISSON_LINE_SEARCH_AUDIT


@dataclass
class DPBLGD(_ChenLeeBase):
    """DP-BLGD (chen_lee Sec 5.3): full-batch DP-BLSGD with DP-AGD's budget-increase rule (Lee &
    Kifer 2018): when NoisyBTLS fails, raise ρ_grad to (1 + γ)ρ_grad, draw a fresh noisy gradient
    with the extra budget ρ_new − ρ_old and average the two weighted by their budgets.

    Neighbouring relations as :class:`_ChenLeeBase`: the full-batch normaliser is the public L = n̄,
    not the number of rows, so adding or removing a record leaves every denominator alone."""

    gamma: float = 0.1

    name: ClassVar[str] = "dp_blgd"
    label: ClassVar[str] = "DP-BLGD"
    look: ClassVar[Look] = Look(ORANGE, "s")
    audit: ClassVar[AuditCoverage] = AuditCoverage(LINE_SEARCH_TARGETS)

    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {
        **_ChenLeeBase.parameter_constraints,
        "gamma": [POSITIVE],
    }

    def fit(self, problem, ledger, rng: np.random.Generator, tracer: Tracer) -> FitResult:
        n = problem.n_public  # the full-batch normaliser L = n̄ (public)
        tracer.pace(n)
        rho_grad, bt_budget = self._initial_budgets(ledger.epsilon)
        eta0, chosen = self.eta0, []
        w = self._initial_point(problem.dim, rng)
        tracer.record(0, w, step_size=0.0, rho_grad=rho_grad, bt_budget=bt_budget, candidates=0, line_searches=0)
        t = 0
        while self.max_iterations is None or t < self.max_iterations:
            if not ledger.can_afford(self._gradient_event(rho_grad)):
                break
            g = self._noisy_gradient(problem, w, None, rho_grad, self.clip_grad, n, rng, ledger)
            step, candidates, searches = 0.0, 0, 0
            while step == 0.0:
                if not ledger.can_afford(self._line_search_event(bt_budget, n, self.clip_obj)):
                    break
                result = noisy_btls(
                    problem,
                    w,
                    g,
                    None,
                    eta0=eta0,
                    alpha=self.alpha,
                    beta=self.beta,
                    max_it=self.max_it,
                    obj_clip=self.clip_obj,
                    normaliser=n,
                    noise=self.noise,
                    budget=bt_budget,
                    rng=rng,
                    ledger=ledger,
                    on_failure=self.on_failure,
                )
                step, candidates, searches = result.step, candidates + result.candidates, searches + 1
                if step > 0.0:
                    w = w - step * g
                    chosen.append(step)
                    continue
                extra = self.gamma * rho_grad  # ρ_new − ρ_old
                if not ledger.can_afford(self._gradient_event(extra)):
                    break
                fresh = self._noisy_gradient(problem, w, None, extra, self.clip_grad, n, rng, ledger)
                weight = rho_grad / (rho_grad + extra)  # DP-AGD's budget-weighted average
                g = weight * g + (1.0 - weight) * fresh
                rho_grad += extra
            t += 1
            if t % self.tau == 0 and chosen:
                eta0, chosen = min(self.varsigma * max(chosen), eta0), []
            tracer.record(
                t,
                w,
                step_size=step,
                rho_grad=rho_grad,
                bt_budget=bt_budget,
                candidates=candidates,
                line_searches=searches,
            )
        tracer.record(t, w, step_size=0.0, force=True, rho_grad=rho_grad, bt_budget=bt_budget)
        return FitResult(w=w, n_iterations=t, info={"final_rho_grad": rho_grad, "final_eta0": eta0})
