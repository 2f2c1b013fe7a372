"""DP-AGD (Lee & Kifer, KDD 2018, "Concentrated differentially private gradient descent with
adaptive per-iteration privacy budget"), the adaptive full-batch baseline of chen_lee Sec 5.3.

Per iteration: a noisy clipped gradient (Gaussian, budget ρ_ng); the step is chosen by a noisy
min over candidate step sizes 0, η_max/m, …, η_max on the clipped objective (budget ρ_nmax);
when the noisy min picks step 0 the gradient budget grows to (1 + γ)ρ_ng and a fresh gradient
drawn with the extra budget is averaged with the old one, weighted by budgets; every 10
iterations η_max ← min(1.1·max(chosen steps), η_max⁰). Accounting is zCDP: ε → ρ by solving
ε = ρ + 2√(ρ ln 1/δ) (Bun & Steinke 2016), each gradient costs 1/(2σ²) per unit sensitivity,
each noisy min is ε_nmax-DP, i.e. ε_nmax²/2-zCDP. Defaults are those of the public DP-AGD code
(GitHub ppmlguy/DP-AGD): C_grad = 3, C_obj = 3, γ = 0.1, 60 "splits" (ε_nmax = ε/(2·60),
ρ_nmax = ε_nmax²/2, σ of the classic Gaussian mechanism at (ε_nmax, δ)), 20 candidate steps on
(0, 2], the direction normalised to unit length before the data-independent μw is added.

Our reading: the noisy min is report-noisy-max on the negated scores with Lap(C_obj/ε_nmax)
noise, ε_nmax-DP because the clipped-loss sums are monotone under adding a record (Dwork & Roth
2014, Claim 3.9); the public code draws one-sided exponential noise of the same scale. The scores
are the clipped loss sums plus the (data-independent) n·(μ/2)‖v‖², so the step is chosen on the
regularised objective the run is measured on.

Cost: the noisy min scores n × 21 candidate margins per iteration, and for the logistic loss the exp and
log1p of each are the fit's floor in float64. The scores are therefore screened
(:mod:`dpbench.privacy.screening`): first bounded by second-order Taylor expansions at one, two, then three
anchor steps (a pass over the rows per anchor), then computed in float32, each with a rigorous error bound,
and exactly only when none can decide report-noisy-max's index (rarely: the noise scale C_obj/ε_nmax is
10³–10⁵ times the float32 bound). The released index, the draws and hence the whole fit are those of the
exact computation, bit for bit (tests/algorithms/test_dp_agd.py).

``fidelity=authors_code`` follows the public code (``algo/agd_rho.py``) where it differs, line for
line (:data:`AUTHORS_CODE`): its noisy min adds the exponential noise to the *scores*
(:func:`dpbench.privacy.published.noisy_min_exponential_subtracted`, not ε-DP: its rows are labelled
``guarantee_valid = False``); it moves to candidate idx − 1 of the chosen idx; a resampled gradient is
averaged with the iteration's *first* noisy draw, not with the running estimate; it scores the
clipped losses without the regulariser; and its budget counter charges the gradient of every
successful iteration twice (at the top of the loop and after the step), so it stops earlier than
the releases require. The ledger charges each release once, as made.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpbench.algorithms.base import Algorithm, AuditCoverage, FidelityMode, FitResult, Look, Tracer
from dpbench.algorithms.palette import BLUE
from dpbench.constraints import COUNT, POSITIVE, Constraint
from dpbench.privacy.events import GaussianEvent, PureDPEvent
from dpbench.privacy.mechanisms import gaussian_mechanism, report_noisy_max, report_noisy_max_screened
from dpbench.privacy.published import noisy_min_exponential_subtracted
from dpbench.privacy.screening import ScreenedValues
from dpbench.privacy.zcdp import zcdp_rho_for_epsilon
from dpbench.problems.products import matvec
from dpbench.problems.screened_losses import LogisticLineBounds

_SCORE_BLOCK_ENTRIES = 1 << 16  # candidate scoring in row blocks of ≤ 512 KB per buffer (they stay in cache)

AUTHORS_CODE = FidelityMode(
    changes=(
        "noisy min = argmin(clipped loss + Exp(C_obj/ε_nmax)) (common/noisy_max.py, bmin=True), not report-noisy-max",
        "the step applied is candidate idx − 1 of the chosen idx (agd_rho.py: w = candidate[idx-1])",
        "a resampled gradient is averaged with the iteration's first noisy draw (grad_avg(..., noisy_unnorm, ...))",
        "the noisy-min scores omit the regulariser (loss_func(theta, X, y, clip=obj_clip))",
        "the budget counter charges a successful iteration's gradient twice (rho -= rho_ng after the step too)",
    ),
    breaks_guarantee="the noisy min adds one-sided exponential noise to the scores, which is not ε_nmax-DP",
)
"""DP-AGD as the public code (ppmlguy/DP-AGD, algo/agd_rho.py and common/) runs it."""


@dataclass
class DPAGD(Algorithm):
    """DP-AGD with the public code's defaults (see the module docstring).

    Neighbouring relations: ``add_remove`` natively, ``replace_one`` by group privacy. The noisy min
    is charged sensitivity C_obj (:meth:`_scores` feeds ``report_noisy_max(..., sensitivity=clip_obj,
    monotonic=True)``); every score carries the term n̄·(μ/2)‖v‖² with the public n̄
    (``problem.n_public``), so adding or removing a record moves every score by its clipped loss
    alone, at most C_obj and all in one direction, as charged. (With the data's own n the term would
    move too, up to C_obj + (μ/2)‖v‖²: the privacy review measured 1.49 % above the charge on Adult.)
    """

    clip_grad: float = 3.0
    clip_obj: float = 3.0
    gamma: float = 0.1
    splits: int = 60
    n_candidates: int = 20
    max_step: float = 2.0
    step_update_every: int = 10
    step_growth: float = 1.1
    max_iterations: int | None = None
    fidelity: str = "correct"

    name: ClassVar[str] = "dp_agd"
    tuning_grid: ClassVar[dict[str, list]] = {"splits": [30, 60], "clip_grad": [1.0, 3.0]}  # ours
    label: ClassVar[str] = "DP-AGD"
    look: ClassVar[Look] = Look(BLUE, "^")
    audit: ClassVar[AuditCoverage] = AuditCoverage(("report_noisy_max_dp_agd", "gaussian"))
    paper: ClassVar[str] = "chen_lee"
    accountant: ClassVar[str] = "zcdp"
    adaptive_stopping: ClassVar[bool] = True  # ρ per step chosen from noisy outputs: a zCDP budget filter
    fidelity_modes: ClassVar[dict[str, FidelityMode]] = {"authors_code": AUTHORS_CODE}

    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {
        "clip_grad": [POSITIVE],
        "clip_obj": [POSITIVE],
        "gamma": [POSITIVE],
        "splits": [COUNT],
        "n_candidates": [COUNT],
        "max_step": [POSITIVE],
        "step_update_every": [COUNT],
        "step_growth": [POSITIVE],
        "max_iterations": [COUNT, None],
    }

    def initial_budgets(self, epsilon: float, delta: float) -> tuple[float, float]:
        """(ρ_ng, ρ_nmax) of the public code: ε_nmax = ε/(2·splits), ρ_nmax = ε_nmax²/2, and ρ_ng of
        the classic Gaussian mechanism σ = C√(2 ln(1.25/δ))/ε_nmax, i.e. ε_nmax²/(4 ln(1.25/δ))."""
        eps_nmax = epsilon / (2.0 * self.splits)
        return eps_nmax**2 / (4.0 * math.log(1.25 / delta)), eps_nmax**2 / 2.0

    def fit(self, problem, ledger, rng: np.random.Generator, tracer: Tracer) -> FitResult:
        authors = self.fidelity == "authors_code"
        rho_ng, rho_nmax = self.initial_budgets(ledger.epsilon, ledger.delta)
        eps_nmax = math.sqrt(2.0 * rho_nmax)
        select = PureDPEvent(eps_nmax)
        counter = _AuthorsCounter(ledger, rho_nmax) if authors else None
        w = np.zeros(problem.dim)
        max_step, chosen = self.max_step, []
        tracer.pace(problem.n_public)  # a full-batch gradient per iteration
        tracer.record(0, w, step_size=0.0, rho_grad=rho_ng)
        t = 0
        while self.max_iterations is None or t < self.max_iterations:
            gradient_event = GaussianEvent(1.0 / math.sqrt(2.0 * rho_ng))
            if not (ledger.can_afford(gradient_event) and ledger.can_afford(select)):
                break
            if counter is not None and not counter.pay_if_used(rho_ng):
                break
            clipped_sum = problem.clipped_gradient_sum(w, None, self.clip_grad)
            noisy = first = self._noisy(clipped_sum, rho_ng, rng, ledger)
            steps = np.linspace(0.0, max_step, self.n_candidates + 1)
            index = 0
            while index == 0:
                if not ledger.can_afford(select):
                    break
                direction = noisy / np.linalg.norm(noisy) + problem.regulariser_gradient(w)
                candidates = w[None, :] - steps[:, None] * direction[None, :]
                index = self._noisy_min(problem, w, direction, steps, candidates, eps_nmax, rng, ledger)
                if index > 0:
                    w = candidates[index - 1 if authors else index]
                    chosen.append(steps[index])
                    if counter is not None:
                        counter.rho -= rho_ng  # agd_rho.py charges the step's gradient a second time
                    break
                extra = self.gamma * rho_ng  # budget increase: ρ_ng ← (1 + γ)ρ_ng
                if not ledger.can_afford(GaussianEvent(1.0 / math.sqrt(2.0 * extra))):
                    break
                if counter is not None and not counter.pay_if_used(extra):
                    break
                fresh = self._noisy(clipped_sum, extra, rng, ledger)
                weight = rho_ng / (rho_ng + extra)
                noisy = weight * (first if authors else noisy) + (1.0 - weight) * fresh
                rho_ng += extra
            t += 1
            if t % self.step_update_every == 0 and chosen:
                max_step, chosen = min(self.step_growth * max(chosen), self.max_step), []
            tracer.record(t, w, step_size=float(steps[index]), rho_grad=rho_ng, max_step=max_step)
        return FitResult(w=w, n_iterations=t, info={"final_rho_grad": rho_ng})

    def _noisy_min(self, problem, w, direction, steps, candidates, eps_nmax: float, rng, ledger) -> int:
        """The index of the chosen candidate step (:meth:`_select` of :meth:`_scores`). For the logistic loss
        under ``fidelity=correct`` the scores are screened (:meth:`_screened_scores`,
        :mod:`dpbench.privacy.screening`): computed exactly only when the approximate ones cannot decide the
        index, which is the exact mechanism's either way."""
        at_w = problem.full_product(w)
        along = matvec(problem.X, direction).ravel()
        problem.counts.obj_evals += problem.n * candidates.shape[0]
        authors = self.fidelity == "authors_code"

        def exact() -> np.ndarray:
            return self._scores(problem, at_w, along, steps, candidates, regularised=not authors)

        if authors or problem.loss.name != "logistic":
            return self._select(exact(), eps_nmax, rng, ledger)
        screened = self._screened_scores(problem, at_w, along, steps, candidates, exact)
        return report_noisy_max_screened(screened, **self._noisy_max_terms(eps_nmax, rng, ledger))

    def _screened_scores(self, problem, at_w, along, steps, candidates, exact) -> ScreenedValues:
        """−scores (report-noisy-max's values) known ever more tightly: Taylor bounds at the anchor steps 0, then
        0 and η_max/2, then 0, η_max/2 and η_max (:class:`~dpbench.problems.screened_losses.LogisticLineBounds`,
        one pass over the rows per anchor; they decide about nine noisy mins in ten on Adult), then the float64
        sums of the steps those bounds leave able to win (:meth:`~LogisticLineBounds.direct_sums`, a pass per
        step), then the exact scores."""
        signed_at_w, signed_along = problem.y * at_w, problem.y * along  # y = ±1
        regulariser = problem.n_public * 0.5 * problem.reg * np.einsum("ij,ij->i", candidates, candidates)
        bounds = LogisticLineBounds(signed_at_w, signed_along, self.clip_obj, steps[-1])

        def negated(sums: np.ndarray, error: np.ndarray, finer) -> ScreenedValues:
            scores = sums + regulariser
            return ScreenedValues(-scores, error + 2.0**-50 * (np.abs(scores) + error), lambda: -exact(), finer)

        def taylor_level(anchors: tuple, finer) -> ScreenedValues:
            sums, error = bounds.clipped_sums(steps, anchors)
            return negated(sums, error, lambda contenders: finer(sums, error, contenders))

        def direct_level(sums: np.ndarray, error: np.ndarray, contenders: np.ndarray) -> ScreenedValues:
            which = np.flatnonzero(contenders)
            sums, error = sums.copy(), error.copy()
            sums[which], error[which] = bounds.direct_sums(steps[which])
            return negated(sums, error, None)

        middle, end = 0.5 * steps[-1], steps[-1]
        return taylor_level(
            (0.0,),
            lambda *_: taylor_level((0.0, middle), lambda *_: taylor_level((0.0, middle, end), direct_level)),
        )

    def _select(self, scores: np.ndarray, eps_nmax: float, rng, ledger) -> int:
        """The index chosen from ``scores``: report-noisy-max on −scores (monotone, ε_nmax-DP), or the
        public code's noisy min under ``fidelity=authors_code``."""
        if self.fidelity == "authors_code":
            return noisy_min_exponential_subtracted(
                scores, sensitivity=self.clip_obj, epsilon=eps_nmax, rng=rng, ledger=ledger, label="dp_agd.noisy_min"
            )
        return report_noisy_max(-scores, **self._noisy_max_terms(eps_nmax, rng, ledger))

    def _noisy_max_terms(self, eps_nmax: float, rng, ledger) -> dict:
        """Report-noisy-max on −scores: sensitivity C_obj, monotone, ε_nmax-DP."""
        return {
            "sensitivity": self.clip_obj,
            "epsilon": eps_nmax,
            "rng": rng,
            "ledger": ledger,
            "monotonic": True,
            "label": "dp_agd.noisy_min",
        }

    def _noisy(self, clipped_sum: np.ndarray, rho: float, rng, ledger) -> np.ndarray:
        return gaussian_mechanism(
            clipped_sum,
            sensitivity=self.clip_grad,
            noise_multiplier=1.0 / math.sqrt(2.0 * rho),
            rng=rng,
            ledger=ledger,
            label="dp_agd.gradient",
        )

    def _scores(self, problem, at_w, along, steps, candidates: np.ndarray, *, regularised: bool = True) -> np.ndarray:
        """Σ_i min(ℓ_i(v), C_obj) + n̄(μ/2)‖v‖² for every candidate v = w − η·direction (n̄ public;
        without the regulariser term when not ``regularised``); ``at_w`` = Xw, ``along`` = X·direction.

        The margins of all candidates come from two products, y ⊙ (Xw − η·X·direction), instead of
        one product per candidate; they are scored in blocks of rows in two reused buffers, never
        as an n × k array. Row 0 of the value buffer carries the running sum into each block's
        column sums, so the sum runs over the rows in order, as one ``sum(axis=0)`` over all rows
        does: the same floats.
        """
        block = max(1, _SCORE_BLOCK_ENTRIES // steps.size)
        margins = np.empty((block, steps.size))
        values = np.zeros((block + 1, steps.size))
        for start in range(0, problem.n, block):
            rows = slice(start, min(start + block, problem.n))
            m = rows.stop - start
            np.multiply(along[rows, None], steps[None, :], out=margins[:m])
            np.subtract(at_w[rows, None], margins[:m], out=margins[:m])
            margins[:m] *= problem.y[rows, None]
            problem.loss.value(margins[:m], out=values[1 : m + 1])
            np.minimum(values[1 : m + 1], self.clip_obj, out=values[1 : m + 1])
            values[0] = np.add.reduce(values[: m + 1], axis=0)
        if not regularised:
            return values[0]
        return values[0] + problem.n_public * 0.5 * problem.reg * np.einsum("ij,ij->i", candidates, candidates)


class _AuthorsCounter:
    """The public code's zCDP budget counter ``rho`` (agd_rho.py), which decides when a
    ``fidelity=authors_code`` run stops. It starts at the ledger's whole budget ρ; the code draws a
    gradient (or a resampled one), pays for it, then pays ρ_nmax for a noisy min and stops when the
    counter went negative, discarding both. :meth:`pay_if_used` pays only for a gradient that noisy
    min will use, and refuses it otherwise, so no release is made that the run would discard."""

    def __init__(self, ledger, rho_nmax: float) -> None:
        self.rho = zcdp_rho_for_epsilon(ledger.epsilon, ledger.delta)  # common/param.py dp_to_zcdp
        self.rho_nmax = rho_nmax

    def pay_if_used(self, rho_gradient: float) -> bool:
        if self.rho <= 0.0 or self.rho - rho_gradient - self.rho_nmax < 0.0:
            return False
        self.rho -= rho_gradient + self.rho_nmax
        return True
