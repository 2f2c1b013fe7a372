"""Differentially private (accelerated) gradient methods of kuru_acc (Kuru, Birbil, Gürbüzbalaban
& Yıldırım, SIAM J. Optim. 2022), Sections 3–5: DP-GD, DP-HB (eq. 3.1), DP-NAG (eq. 4.1),
DP-NAG-opt (Prop. 4.2, Remark 4.1), DP-MASG and DP-MASG-opt (eq. 4.7, Thm 4.3).

Every iteration releases one noisy gradient: the mean of the per-example gradients on a subsample
of m records drawn without replacement (all n records when ``batch_size`` is null), plus
Laplace(b_t) noise on every coordinate, plus the data-independent regulariser gradient μz. Each
per-example gradient is clipped to L1 norm C (``l1_clip``), so the mean has L1 sensitivity
S₁/m with S₁ = 2C under replace-one neighbours (eq. 3.2); on the paper's data (‖u‖₁ ≤ 20, the
logistic |ℓ′| < 1, C = 20) the clipping never acts and S₁ = 40 as in Sec 5 (eq. 5.2). The
iteration is ε_t = ln(1 + (m/n)(e^{S₁/(b_t m)} − 1))-DP (eq. 3.3) and is charged as such to a
pure-ε ledger; the run composes to ε by basic composition (their Thm A.2).

Noise schedules: the plain methods spend ε/T per iteration (Prop. 3.1, eqs. 3.4–3.5); the -opt
methods first cut T to the T' ≤ T that minimises bound (4.6) with E₀ = ``initial_error``
(Remark 4.1, Sec 5), then take the b_t minimising Σ a_{T',t}b_t² under the budget (problem 4.4:
Prop. 4.2 in closed form for m = n, a numerical solution for m < n), see
:mod:`dpbench.algorithms.kuru_schedules`.

Public constants. α = c/L with L = ``smoothness``. The paper computes L from the sample as the
largest eigenvalue of XᵀX/n plus 2λ; a step size computed from the private data is a release
the paper does not pay for, so here L is public. When ``smoothness`` is null (the default) it is
derived from the dataset's public row-norm bound R and the loss: L = sup ℓ″·R² + μ (logistic:
R²/4 + μ), a bound on the Hessian of F for every dataset whose rows obey the bound. The L1 clip C
defaults the same way to the largest L1 norm a per-example gradient can have, sup|ℓ′|·(public
bound on ‖x_i‖₁): 20 on the paper's data, as in Sec 5, and 15 on a9a. So every compatible dataset
runs without a hand-set constant. μ is the model's regulariser (2λ in the paper's F(x) = mean loss
+ λ‖x‖², so ``model=kuru_logreg`` has μ = 0.02). The start is x₀ = ``initial_value``·𝟏, 0 by default.

The kuru figure presets restore the paper's Sec 5 set-up: x₀ = 10·𝟏 and L = 5.1033, the value for
their data from the generator's public law (rows ~ U[0,1]^20): λ_max(E[xxᵀ]) = 1/12 + 20/4 =
5.0833, plus μ = 0.02 (the sample value is within ~1% of it). The paper's L omits sup ℓ″ = 1/4,
so it is about four times the derived one.

Fidelity (``algorithm.fidelity``, :data:`PAPER`, :data:`AUTHORS_CODE`). ``paper`` is Sec 5 as
printed: L estimated from the sample, and under subsampling the -opt methods split ε by Prop. 4.2
(Remark 4.2) instead of solving (4.4). ``authors_code`` is the authors' MATLAB (GitHub
sibirbil/DPAccGradMethods, the code of footnote 2) where it differs: the same two, plus noise of
scale b/√2 (their ``laprnd`` takes b as a standard deviation) charged as Laplace(b), and T′ chosen
with α/2 in a_{T,t} and a doubled a_{T,0} (T′ = 396 at c = 0.1 and 136 at c = 1 on the Sec 5 set-up,
where eq. 4.3's weights give 303 and 106). Both modes release the sample's L without privacy: their
rows are labelled ``guarantee_valid = False``. The rest of their code computes what this module
does (docs/papers/kuru_acc.md, Fidelity modes, lists what was compared).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpbench.algorithms import kuru_schedules as schedules
from dpbench.algorithms.base import Algorithm, AuditCoverage, FidelityMode, FitResult, Look, Tracer
from dpbench.algorithms.palette import LIGHT_BLUE, LIGHT_OLIVE, LIGHT_PINK, LIGHT_PURPLE, OLIVE, PINK
from dpbench.constraints import COUNT, FINITE, POSITIVE, Boolean, Constraint
from dpbench.errors import ConfigError
from dpbench.privacy.mechanisms import subsampled_laplace_mechanism
from dpbench.privacy.neighbouring import check_relation
from dpbench.privacy.published import subsampled_laplace_std_as_scale

_SAMPLE_L = "L = λ_max(XᵀX/n) + μ of the training rows, in place of algorithm.smoothness"
_SPLIT = "-opt with m < n: ε_t = ε·a_{T,t}^{1/3}/Σ_j a_{T,j}^{1/3} (Prop. 4.2's m = n split), b_t by eqs. 3.4–3.5, not problem (4.4)"
_SAMPLE_L_BREAKS = "L, which sets every step size, is computed from the training rows and released without privacy"

PAPER = FidelityMode(
    changes=(
        f"{_SAMPLE_L} (Sec 5: 'L is estimated as the largest singular value of (1/n)(UᵀU) + 2λI_d')",
        f"{_SPLIT} (Sec 5: 'its use under subsampling was discussed in Remark 4.2')",
    ),
    breaks_guarantee=f"{_SAMPLE_L_BREAKS} (Sec 5)",
)
"""kuru_acc Sec 5 as printed."""

AUTHORS_CODE = FidelityMode(
    changes=(
        (
            "Laplace noise of scale b/√2 charged as Laplace(b): laprnd(d, 1, b) takes b as a standard deviation "
            "(laprnd.m:29 b = sigma / sqrt(2); called at NAG_LR.m:58 and HB_LR.m:41)"
        ),
        f"{_SAMPLE_L} (main_compare_methods.m:48 L = svds(1/n*(X'*X) + 2*lambda*eye(d), 1))",
        (
            "T' of Remark 4.1 from a_{T,t} with α_t/2 for α_t (opt_noise_dist_NAG.m:24 temp_vec2 = (alpha_vec/2).*(1 + "
            "alpha_vec*L)) and a_{T,0} = 2^{s_T}·Π r_i for 2^{s_T − 1}·Π r_i (opt_noise_dist_NAG.m:37)"
        ),
        f"{_SPLIT} (opt_noise_dist_NAG.m:51, DP_NAG_LR.m:88)",
    ),
    breaks_guarantee=(
        f"the Laplace noise drawn has scale b/√2 where ε_t is charged for scale b (laprnd.m), and {_SAMPLE_L_BREAKS} "
        "(main_compare_methods.m:48)"
    ),
)
"""kuru_acc's public code (sibirbil/DPAccGradMethods, main_compare_methods.m and the functions it calls)."""

_AUTHORS_BOUND = {"step_factor": 0.5, "start_stage": 0}
"""The authors' a_{T,t} and a_{T,0} (opt_noise_dist_NAG.m lines 24 and 37; kuru_schedules docstring)."""


@dataclass
class _KuruMethod(Algorithm):
    """Shared hyper-parameters (names as in ``conf/algorithm/dp_nag.yaml``):

    iterations : T, the iteration budget
    step_scale : c, α = c/L (Sec 5 sweeps c ∈ {0.1, 1})
    batch_size : m, records per iteration drawn without replacement; null = all n (no subsampling)
    l1_clip : C, per-example gradient L1 clipping; the L1 sensitivity is S₁ = 2C (eq. 5.2); null = the
        largest L1 norm a gradient can have on the dataset, sup|ℓ′|·(public bound on ‖x_i‖₁), so
        clipping never acts (20 on the paper's data, 15 on a9a)
    smoothness : L, a public smoothness constant; null = sup ℓ″·R² + μ from the public row-norm bound R
        (module docstring)
    initial_value : x₀ = initial_value·𝟏
    fidelity : correct | paper | authors_code (:data:`PAPER`, :data:`AUTHORS_CODE`; module docstring)

    Neighbouring relations. kuru_acc's neighbours have Hamming distance 1 with n fixed (Def. A.2,
    eq. (3.2) "changing Y and Y′ in one data item"); under ``replace_one`` the charge is their
    S₁ = 2C (eq. 5.2) on a mean over m, amplified for m of n drawn without replacement (eq. 3.3).
    Under ``add_remove`` (only without subsampling, :meth:`relation_mode`) the mean is over the
    public n̄ and S₁ = C: one clipped term more or less. The noise scales b_t (eqs. 3.4–3.5,
    problem 4.4, T′ of Remark 4.1) are functions of the public n̄ and m.
    """

    iterations: int = 100
    step_scale: float = 1.0
    batch_size: int | None = None
    l1_clip: float | None = None
    smoothness: float | None = None
    initial_value: float = 0.0
    fidelity: str = "correct"

    paper: ClassVar[str] = "kuru_acc"
    tuning_grid: ClassVar[dict[str, list]] = {"iterations": [50, 100, 200], "step_scale": [0.1, 1.0]}  # ours
    audit: ClassVar[AuditCoverage] = AuditCoverage(("dp_nag_step",))  # every kuru method's gradients: one noisy step
    fidelity_modes: ClassVar[dict[str, FidelityMode]] = {"paper": PAPER, "authors_code": AUTHORS_CODE}
    accountant: ClassVar[str] = "pure"
    relations: ClassVar[dict[str, str]] = {"add_remove": "native", "replace_one": "native"}
    paper_relation: ClassVar[str] = "replace_one"
    relation_reason: ClassVar[str] = (
        "subsampling m of n without replacement (eq. 3.3) is a replace-one bound; set algorithm.batch_size=null"
    )
    supported_losses: ClassVar[frozenset[str] | None] = frozenset({"logistic", "huber_hinge"})
    unsupported_reason: ClassVar[str] = "the methods and their step sizes assume a smooth loss"

    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {
        "iterations": [COUNT],
        "step_scale": [POSITIVE],
        "batch_size": [COUNT, None],
        "l1_clip": [POSITIVE, None],
        "smoothness": [POSITIVE, None],
        "initial_value": [FINITE],
    }

    # ------------------------------------------------------------------ public schedule (no data)
    def steps(self, mu: float) -> tuple[np.ndarray, np.ndarray]:
        """(α_t, s_t) for t = 1..T."""
        return schedules.constant_steps(self.iterations, self.step_scale, self.smoothness)

    def momenta(self, alphas: np.ndarray, mu: float) -> np.ndarray:
        """β_t; zero for DP-GD."""
        return schedules.momentum(alphas, mu)

    def noise_schedule(
        self, alphas, stages, mu: float, *, d: int, n: int, m: int, epsilon: float, sensitivity: float
    ) -> np.ndarray:
        """b_1..b_T' (its length is the number of iterations run); ``sensitivity`` is S₁ (:meth:`l1_sensitivity`)."""
        return schedules.uniform_noise(sensitivity, epsilon, len(alphas), n, m)

    def l1_sensitivity(self, neighbouring: str) -> float:
        """S₁, the L1 sensitivity of m·(the clipped mean): 2C under replace-one (eq. 5.2), C under
        add/remove, where the mean over the public n̄ gains or loses one clipped term."""
        return {"replace_one": 2.0, "add_remove": 1.0}[check_relation(neighbouring)] * self.l1_clip

    def relation_mode(self, relation: str) -> str | None:
        """Both relations natively; add/remove only without subsampling (batch_size null): with m of n
        drawn without replacement the population itself changes, and eq. 3.3 is a replace-one bound."""
        if relation == "add_remove" and self.batch_size is not None:
            return None
        return super().relation_mode(relation)

    # ------------------------------------------------------------------ the run
    def public_smoothness(self, problem) -> float:
        """L = sup ℓ″·R² + μ with R the problem's public row-norm bound (module docstring)."""
        return (
            problem.loss.smoothness * self._public_bound(problem.public_row_bound(), "smoothness", "L") ** 2
            + problem.reg
        )

    def sample_smoothness(self, problem) -> float:
        """L = λ_max(XᵀX/n) + μ of the training rows, as kuru_acc Sec 5 estimates it (``paper`` and
        ``authors_code`` only: a function of the private data, released without privacy)."""
        return problem.gram_norm() + problem.reg

    def public_l1_clip(self, problem) -> float:
        """C = sup|ℓ′|·(public bound on ‖x_i‖₁): the largest L1 norm a per-example gradient can have."""
        return problem.loss.lipschitz * self._public_bound(problem.public_row_l1_bound(), "l1_clip", "C")

    def _public_bound(self, bound: float | None, key: str, symbol: str) -> float:
        if bound is None:
            raise ConfigError(
                f"{self.name}: the dataset declares no public bound on its rows, so {key} cannot be derived; "
                f"set algorithm.{key}=<{symbol}> or data.row_norm=<R>"
            )
        return bound

    def _smoothness(self, problem) -> float:
        """The L the run uses: the sample's under ``paper`` and ``authors_code``, else ``smoothness``
        or, when null, the public bound (module docstring)."""
        if self.fidelity != "correct":
            return self.sample_smoothness(problem)
        return self.public_smoothness(problem) if self.smoothness is None else self.smoothness

    def fit(self, problem, ledger, rng: np.random.Generator, tracer: Tracer) -> FitResult:
        constants = dataclasses.replace(
            self,
            smoothness=self._smoothness(problem),
            l1_clip=self.public_l1_clip(problem) if self.l1_clip is None else self.l1_clip,
        )
        return constants._run(problem, ledger, rng, tracer)

    def _run(self, problem, ledger, rng: np.random.Generator, tracer: Tracer) -> FitResult:
        """The run, with L and C set."""
        n, d, mu = problem.n_public, problem.dim, problem.reg
        m = n if self.batch_size is None else self.batch_size
        if m > n:
            raise ConfigError(f"{self.name}: batch_size = {m} exceeds the {n} training rows")
        if self.relation_mode(ledger.neighbouring) is None:
            raise ConfigError(
                f"{self.name} with batch_size = {m} does not support privacy.neighbouring={ledger.neighbouring}"
            )
        sensitivity = self.l1_sensitivity(ledger.neighbouring)
        if not 0.0 < mu * self.step_scale / self.smoothness < 1.0:
            raise ConfigError(
                f"{self.name}: needs a strongly convex model (μ = model.reg > 0) with μα < 1; got μ = {mu}, "
                f"α = c/L = {self.step_scale / self.smoothness}"
            )
        alphas, stages = self.steps(mu)
        noise = self.noise_schedule(
            alphas, stages, mu, d=d, n=n, m=m, epsilon=ledger.epsilon - ledger.eps_spent, sensitivity=sensitivity
        )
        T = len(noise)
        alphas, stages, betas = alphas[:T], stages[:T], self.momenta(alphas[:T], mu)
        tracer.plan(T, rows_per_iteration=m)

        x = np.full(d, float(self.initial_value))
        previous = x
        tracer.record(0, x, step_size=0.0, noise_scale=math.nan, stage=int(stages[0]))
        for t in range(T):
            x, previous = self._step(problem, x, previous, t, alphas, betas, stages, noise, m, rng, ledger)
            tracer.record(
                t + 1,
                x,
                step_size=float(alphas[t]),
                force=t == T - 1,
                noise_scale=float(noise[t]),
                stage=int(stages[t]),
            )
        return FitResult(
            w=x,
            n_iterations=T,
            info={
                "requested_iterations": self.iterations,
                "batch_size": m,
                "first_noise": float(noise[0]),
                "last_noise": float(noise[-1]),
                "smoothness": self.smoothness,
            },
        )

    def _step(self, problem, x, previous, t, alphas, betas, stages, noise, m, rng, ledger):
        """NAG (eq. 4.1): z_t = (1 + β)x_t − βx_{t−1}, x_{t+1} = z_t − α(∇F_B(z_t) + η_t); the
        momentum restarts (x_{t−1} := x_t) when a new MASG stage begins."""
        if t > 0 and stages[t] != stages[t - 1]:
            previous = x
        z = x + betas[t] * (x - previous)
        return z - alphas[t] * self._noisy_gradient(problem, z, noise[t], m, rng, ledger), x

    def _noisy_gradient(self, problem, z, noise_scale: float, m: int, rng, ledger) -> np.ndarray:
        """(1/m)Σ_{i∈B} clip₁(∇ℓ_i(z), C) + Laplace(b)^d + μz: one ε_t-DP release (eqs. 2.8, 3.3); without
        subsampling B is every row and m the public n̄. Under ``authors_code`` the noise is Laplace(b/√2),
        charged as Laplace(b) (:func:`~dpbench.privacy.published.subsampled_laplace_std_as_scale`)."""
        n = problem.n_public
        batch = None if self.batch_size is None or m == problem.n else rng.choice(problem.n, size=m, replace=False)
        mean = problem.clipped_gradient_sum(z, batch, self.l1_clip, norm=1) / m
        sensitivity = self.l1_sensitivity(ledger.neighbouring) / m
        mechanism = subsampled_laplace_std_as_scale if self.fidelity == "authors_code" else subsampled_laplace_mechanism
        noisy = mechanism(
            mean,
            sensitivity=sensitivity,
            epsilon=sensitivity / noise_scale,
            sample_size=m,
            population=n,
            rng=rng,
            ledger=ledger,
            label=f"{self.name}.gradient",
            neighbouring=ledger.neighbouring,
        )
        return noisy + problem.regulariser_gradient(z)


@dataclass
class DPGD(_KuruMethod):
    """DP-GD: x_{t+1} = x_t − α(∇F_B(x_t) + η_t), ε/T per iteration (Sec 5's baseline)."""

    name: ClassVar[str] = "dp_gd"
    label: ClassVar[str] = "DP-GD"
    look: ClassVar[Look] = Look(OLIVE, "o")

    def momenta(self, alphas: np.ndarray, mu: float) -> np.ndarray:
        return np.zeros_like(alphas)


@dataclass
class DPHB(_KuruMethod):
    """DP-HB (DP-SHB, eq. 3.1): x_{t+1} = x_t − α(∇F_B(x_t) + η_t) + β(x_t − x_{t−1}), with
    β = (1 − √(αμ))/(1 + √(αμ)) (Sec 5) and b from Prop. 3.1."""

    name: ClassVar[str] = "dp_hb"
    label: ClassVar[str] = "DP-HB"
    look: ClassVar[Look] = Look(LIGHT_OLIVE, "s")

    def _step(self, problem, x, previous, t, alphas, betas, stages, noise, m, rng, ledger):
        gradient = self._noisy_gradient(problem, x, noise[t], m, rng, ledger)
        return x - alphas[t] * gradient + betas[t] * (x - previous), x


@dataclass
class DPNAG(_KuruMethod):
    """DP-NAG (eq. 4.1) with α = c/L, β = (1 − √(αμ))/(1 + √(αμ)) and ε/T per iteration."""

    name: ClassVar[str] = "dp_nag"
    label: ClassVar[str] = "DP-NAG"
    look: ClassVar[Look] = Look(PINK, "^")


@dataclass
class _Optimised(_KuruMethod):
    """The -opt schedule: T' from bound (4.6) (Remark 4.1), then b_t solving (4.4) (under ``paper`` and
    ``authors_code``: Prop. 4.2's split, :func:`~dpbench.algorithms.kuru_schedules.split_noise`)."""

    initial_error: float = 10.0
    choose_iterations: bool = True

    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {
        **_KuruMethod.parameter_constraints,
        "initial_error": [POSITIVE],
        "choose_iterations": [Boolean()],
    }

    def noise_schedule(
        self, alphas, stages, mu: float, *, d: int, n: int, m: int, epsilon: float, sensitivity: float
    ) -> np.ndarray:
        T = len(alphas)
        bound = _AUTHORS_BOUND if self.fidelity == "authors_code" else {}
        if self.choose_iterations:
            T = schedules.choose_iterations(
                alphas,
                stages,
                mu,
                self.smoothness,
                E0=self.initial_error,
                d=d,
                sensitivity=sensitivity,
                n=n,
                epsilon=epsilon,
                **bound,
            )
        _, a = schedules.error_weights(alphas[:T], stages[:T], mu, self.smoothness, **bound)
        schedule = schedules.optimal_noise if self.fidelity == "correct" else schedules.split_noise
        return schedule(a, sensitivity, epsilon, n, m)


@dataclass
class DPNAGOpt(_Optimised):
    """DP-NAG-opt: DP-NAG with T' of Remark 4.1 and the noise schedule of Prop. 4.2 / problem (4.4)."""

    name: ClassVar[str] = "dp_nag_opt"
    label: ClassVar[str] = "DP-NAG-opt"
    look: ClassVar[Look] = Look(LIGHT_PINK, "v")


class _Multistage:
    """MASG stages and step sizes (eq. 4.7, scaled by c); stage k uses β^(k) (Sec 5)."""

    def steps(self, mu: float) -> tuple[np.ndarray, np.ndarray]:
        return schedules.masg_steps(self.iterations, self.step_scale, self.smoothness, mu, self.p)


@dataclass
class DPMASG(_Multistage, _KuruMethod):
    """DP-MASG: multistage NAG (eq. 4.7) with momentum restarts between stages, ε/T per iteration.

    p : the p of eq. 4.7 (stage k ≥ 2 lasts 2^k⌈√κ ln 2^{p+2}⌉ iterations)
    """

    p: int = 1
    name: ClassVar[str] = "dp_masg"
    label: ClassVar[str] = "DP-MASG"
    look: ClassVar[Look] = Look(LIGHT_BLUE, "D")
    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {
        **_KuruMethod.parameter_constraints,
        "p": [COUNT],
    }


@dataclass
class DPMASGOpt(_Multistage, _Optimised):
    """DP-MASG-opt: DP-MASG with T' of Remark 4.1 and b_t optimised with the a_{T,t} of Thm 4.3."""

    p: int = 1
    name: ClassVar[str] = "dp_masg_opt"
    label: ClassVar[str] = "DP-MASG-opt"
    look: ClassVar[Look] = Look(LIGHT_PURPLE, "P")
    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {
        **_Optimised.parameter_constraints,
        "p": [COUNT],
    }


KURU_METHODS = (DPGD, DPHB, DPNAG, DPNAGOpt, DPMASG, DPMASGOpt)
