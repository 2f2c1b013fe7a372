"""han_pwa: problem generator, exact LP optimum, Metropolis sampler and the four mechanisms.

Statistical tests use fixed seeds, so each outcome is deterministic; the stated level is the
probability that a correct implementation would fail the test over the choice of seed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import cumulative_trapezoid
from scipy.stats import beta, chisquare, gamma, kstest

import dpbench.pwa.mechanisms as pwa_mechanisms
from dpbench.privacy.accountants import UnsupportedEvent
from dpbench.privacy.audit import epsilon_lower_bound
from dpbench.privacy.events import ApproxDPEvent, NonPrivateEvent, PureDPEvent
from dpbench.privacy.ledger import BudgetExceeded, Ledger
from dpbench.privacy.mechanisms import (
    exponential_mechanism_probabilities,
    sample_vector_laplace,
)
from dpbench.pwa import (
    PWAProblem,
    exponential_mcmc,
    laplace_data,
    laplace_solution,
    make_problem,
    metropolis_box,
    per_step_epsilon,
    private_subgradient,
    sample_subgradient_indices,
    solve_lp,
    solve_lp_batch,
    step_sizes,
    subgradient,
    subgradient_index_probabilities,
)

LEVEL = 1e-3  # goodness-of-fit tests: a correct sampler fails with probability 0.1%


def _ledger(eps=1.0, accountant="pure", delta=1e-8):
    return Ledger(eps, delta, accountant)


# --------------------------------------------------------------------------------- vector Laplace (shared sampler)
def test_vector_laplace_norm_is_gamma_and_direction_isotropic():
    d, scale, n = 5, 0.7, 20_000
    w = sample_vector_laplace(d, scale, np.random.default_rng(11), size=n)
    norms = np.linalg.norm(w, axis=1)
    # density ∝ exp(−‖w‖/scale) on R^d ⇒ ‖w‖ ~ Gamma(d, scale) (han_pwa Sec. 5.1)
    assert kstest(norms, gamma(a=d, scale=scale).cdf).pvalue > LEVEL
    u = w / norms[:, None]
    v = np.random.default_rng(12).standard_normal(d)
    v /= np.linalg.norm(v)
    # a uniform point u of S^{d−1}: (1 + uᵀv)/2 ~ Beta((d−1)/2, (d−1)/2) for any unit v
    assert kstest((1.0 + u @ v) / 2.0, beta((d - 1) / 2, (d - 1) / 2).cdf).pvalue > LEVEL
    # E u = 0 (sd of each mean 1/√(dn)) and E uuᵀ = I/d (sd of each entry ≤ √(3/(d(d+2)n))): 5 sd
    assert np.abs(u.mean(axis=0)).max() < 5.0 / math.sqrt(d * n)
    assert np.abs(u.T @ u / n - np.eye(d) / d).max() < 5.0 * math.sqrt(3.0 / (d * (d + 2) * n))


# --------------------------------------------------------------------------------- generator
def test_generator_is_nested_in_m_and_independent_of_c_and_b_max():
    small = make_problem(5, d=4, seed=7)
    large = make_problem(40, d=4, c=3.0, b_max=0.5, seed=7)
    np.testing.assert_array_equal(small.A, large.A[:5])
    np.testing.assert_array_equal(small.b, large.b[:5])
    assert not np.array_equal(make_problem(5, d=4, seed=8).A, small.A)
    assert (large.m, large.d, large.c, large.b_max) == (40, 4, 3.0, 0.5)
    assert large.diameter == pytest.approx(2 * math.sqrt(4) * 3.0)
    assert not large.A.flags.writeable and not large.b.flags.writeable


def test_generator_draws_standard_gaussians():
    p = make_problem(4000, d=10, seed=1)
    for values in (p.A.ravel(), p.b):
        assert kstest(values, "norm").pvalue > LEVEL


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"m": 0}, r"m must be an integer >= 1, got 0"),
        ({"m": 2.5}, r"m must be an integer >= 1, got 2\.5"),
        ({"c": 0.0}, r"c must be a finite number > 0, got 0\.0"),
        ({"c": -1.0}, r"c must be a finite number > 0, got -1\.0"),
        ({"b_max": 0.0}, r"b_max must be a finite number > 0, got 0\.0"),
        ({"b_max": -2}, r"b_max must be a finite number > 0, got -2"),
        ({"d": 0}, r"d must be an integer >= 1, got 0"),
        ({"seed": -1}, r"seed must be an integer >= 0, got -1"),
    ],
)
def test_generator_rejects_bad_values(kwargs, message):
    args = {"m": 3, **kwargs}
    with pytest.raises(ValueError, match=message):
        make_problem(args.pop("m"), **args)


def test_problem_rejects_bad_values():
    A = np.ones((2, 1))
    with pytest.raises(ValueError, match=r"c must be a finite number > 0, got -0\.5"):
        PWAProblem(A, np.zeros(2), -0.5, 1.0)
    with pytest.raises(ValueError, match=r"b_max must be a finite number > 0, got 0"):
        PWAProblem(A, np.zeros(2), 1.0, 0)
    with pytest.raises(ValueError, match=r"b must have shape \(2,\)"):
        PWAProblem(A, np.zeros(3), 1.0, 1.0)


# --------------------------------------------------------------------------------- LP optimum
@pytest.mark.parametrize(("m", "c", "seed"), [(8, 1.5, 3), (8, 0.2, 3), (3, 1.0, 5)])
def test_lp_optimum_matches_brute_force_on_a_grid(m, c, seed):
    p = make_problem(m, d=2, c=c, seed=seed)
    x, value = p.solve()
    assert np.all(np.abs(x) <= c)
    assert value == pytest.approx(p.objective(x))
    n = 1201
    h = 2 * c / (n - 1)
    g = np.linspace(-c, c, n)
    grid = np.stack(np.meshgrid(g, g), axis=-1).reshape(-1, 2)
    grid_min = p.objective(grid).min()
    # the LP is the exact minimum; a grid point lies within h/√2 of x_opt and f is G-Lipschitz
    assert value <= grid_min + 1e-9
    assert grid_min - value <= p.lipschitz * h / math.sqrt(2) + 1e-12


def test_batched_lp_matches_single_solves():
    p = make_problem(30, d=4, c=0.7, seed=2)
    B = p.b + np.random.default_rng(0).normal(0.0, 2.0, size=(250, 30))  # 250·30 rows: two block LPs
    X, values = solve_lp_batch(p.A, B, p.c)
    for r in range(0, 250, 25):
        _, value = solve_lp(p.A, B[r], p.c)
        assert values[r] == pytest.approx(value, abs=1e-7)
        assert p.with_offsets(B[r]).objective(X[r]) == pytest.approx(value, abs=1e-7)


# --------------------------------------------------------------------------------- Metropolis
def _one_d_problem():
    A = np.array([[1.0], [-0.5], [2.0]])
    b = np.array([0.0, 0.3, -1.0])
    return PWAProblem(A, b, 2.0, 1.0)


def _exact_cdf(p: PWAProblem, kappa: float):
    xs = np.linspace(-p.c, p.c, 400_001)
    log_density = -kappa * p.objective(xs[:, None])
    density = np.exp(log_density - log_density.max())
    cdf = cumulative_trapezoid(density, xs, initial=0.0)
    return xs, cdf / cdf[-1]


def test_metropolis_matches_the_exponential_mechanism_density_in_1d():
    """Final states of 20 000 independent chains (300 steps each; in 1-d these chains mix in ~50) against the exact density
    ∝ exp(−εf/(2b_max)) on 20 equiprobable bins: χ² at level 0.1%. The same bins reject the
    density of ε/2 (power check)."""
    p, eps, runs = _one_d_problem(), 4.0, 20_000
    release = exponential_mcmc(
        p, epsilon=eps, runs=runs, rng=np.random.default_rng(3), ledger=_ledger(eps, "approx"), n_steps=300
    )
    assert release.x.shape == (runs, 1) and np.all(np.abs(release.x) <= p.c)
    xs, cdf = _exact_cdf(p, eps / (2 * p.b_max))
    edges = np.interp(np.linspace(0, 1, 21), cdf, xs)
    edges[0], edges[-1] = -p.c, p.c
    counts, _ = np.histogram(release.x[:, 0], bins=edges)
    assert chisquare(counts).pvalue > LEVEL
    wrong = exponential_mcmc(
        p, epsilon=eps / 2, runs=runs, rng=np.random.default_rng(3), ledger=_ledger(eps, "approx"), n_steps=300
    )
    assert chisquare(np.histogram(wrong.x[:, 0], bins=edges)[0]).pvalue < 1e-6


def test_metropolis_box_validates_and_stays_in_the_box():
    rng = np.random.default_rng(0)
    result = metropolis_box(
        lambda X: np.zeros(len(X)), np.zeros((500, 3)), half_width=0.5, proposal_std=1.0, n_steps=50, rng=rng
    )
    assert np.all(np.abs(result.x) <= 0.5)
    assert 0.0 < result.acceptance_rate.mean() < 1.0
    with pytest.raises(ValueError, match=r"proposal_std must be a finite number > 0, got 0"):
        metropolis_box(lambda X: np.zeros(len(X)), np.zeros((2, 1)), half_width=1.0, proposal_std=0, n_steps=5, rng=rng)
    with pytest.raises(ValueError, match=r"n_steps must be an integer >= 1, got 0"):
        metropolis_box(
            lambda X: np.zeros(len(X)), np.zeros((2, 1)), half_width=1.0, proposal_std=1.0, n_steps=0, rng=rng
        )
    with pytest.raises(ValueError, match="must lie in the box"):
        metropolis_box(
            lambda X: np.zeros(len(X)), np.full((2, 1), 3.0), half_width=1.0, proposal_std=1.0, n_steps=5, rng=rng
        )


def test_exponential_mcmc_proposal_reading_and_start():
    p = make_problem(6, d=3, c=4.0, seed=0)

    def run(**kw):
        return exponential_mcmc(
            p, epsilon=1.0, runs=10, n_steps=3, rng=np.random.default_rng(0), ledger=_ledger(1.0, "approx"), **kw
        )

    assert run().info["proposal_std"] == pytest.approx(math.sqrt(0.4))  # Σ = ηc·I read as a covariance
    assert run(proposal="std").info["proposal_std"] == pytest.approx(0.4)
    release = run(start="uniform")
    assert not release.exact and np.all(np.abs(release.x) <= p.c)


# --------------------------------------------------------------------------------- Laplace on the data (Thm 16)
def test_laplace_data_noise_is_vector_laplace_with_thm16_scale(monkeypatch):
    p = make_problem(7, d=3, b_max=0.5, seed=4)
    captured = {}
    real = pwa_mechanisms.solve_lp_batch

    def spy(A, B, c):
        captured["B"] = B
        return real(A, B, c)

    monkeypatch.setattr(pwa_mechanisms, "solve_lp_batch", spy)
    eps = 0.3
    release = laplace_data(p, epsilon=eps, runs=5000, rng=np.random.default_rng(5), ledger=_ledger(eps))
    norms = np.linalg.norm(captured["B"] - p.b, axis=1)
    scale = math.sqrt(p.m) * p.b_max / eps  # Thm 16: ∝ exp(−ε‖w‖/(√m b_max))
    assert release.info["noise_scale"] == pytest.approx(scale)
    assert kstest(norms, gamma(a=p.m, scale=scale).cdf).pvalue > LEVEL
    assert release.x.shape == (5000, 3) and np.all(np.abs(release.x) <= p.c)


@pytest.mark.statistical
@pytest.mark.parametrize(
    "shift, threshold, informative",
    [((-1.0, 1.0), 2.0, 0.5), ((0.0, 1.0), 1.0, 0.2)],
    ids=["b+b_max(-e1+e2)", "b+b_max*e2"],
)
def test_laplace_data_privacy_audit(shift, threshold, informative):
    """Neighbours b = (0, 0) and b′ = b + b_max·shift, adjacent by eq. (4), for f = max(x + b₁, −x + b₂)
    on [−50, 50]: x_opt(b̃) = (b̃₂ − b̃₁)/2 moves by b_max for shift (−1, +1) (the full L2 sensitivity
    √m·b_max) and by b_max/2 for b + b_max·e_j (one offset moved). Event S = {x ≥ threshold·b_max}, fixed
    from the mechanism's form (the likelihood ratio of the projected vector-Laplace noise grows
    towards its maximum in the tail; the threshold keeps ~10–35% of runs in S). 20 000 runs per
    side; the 99% Clopper–Pearson lower bound on ε must be ≤ ε (fails with prob. < 1% if the
    mechanism is ε-DP) and informative: ≥ 0.5ε for the extreme pair (expected ≈ 0.75ε), ≥ 0.2ε for
    e_j (expected ≈ 0.3ε; seeds 21/22, 31/32, 41/42 gave 0.29–0.34 at threshold 1)."""
    eps, n, b_max = 1.0, 20_000, 1.0
    p = PWAProblem(np.array([[1.0], [-1.0]]), np.zeros(2), 50.0, b_max)
    neighbour = p.with_offsets(p.b + b_max * np.array(shift))
    outputs = [
        laplace_data(q, epsilon=eps, runs=n, rng=np.random.default_rng(seed), ledger=_ledger(eps)).x[:, 0]
        for q, seed in ((neighbour, 21), (p, 22))
    ]
    hits = [int((x >= threshold * b_max).sum()) for x in outputs]
    eps_hat = epsilon_lower_bound(hits[0], n, hits[1], n, confidence=0.99)
    assert informative * eps <= eps_hat <= eps, eps_hat


# --------------------------------------------------------------------------------- Laplace on the solution (Thm 17)
@pytest.mark.parametrize("paper_scale", [True, False])
def test_laplace_solution_noise_scale(paper_scale):
    p = make_problem(12, d=4, c=0.5, seed=6)
    eps = 2.0
    release = laplace_solution(
        p, epsilon=eps, runs=4000, rng=np.random.default_rng(7), ledger=_ledger(eps), paper_scale=paper_scale
    )
    x_opt, _ = p.solve()
    diam = 2 * math.sqrt(p.d) * p.c
    scale = (math.sqrt(p.d) * diam if paper_scale else diam) / eps  # Sec. 4.2: exp(−ε‖w‖/(√d Δ)), Δ = diam P
    assert release.info["noise_scale"] == pytest.approx(scale)
    assert kstest(np.linalg.norm(release.x - x_opt, axis=1), gamma(a=p.d, scale=scale).cdf).pvalue > LEVEL


def test_laplace_solution_projection_is_optional():
    p = make_problem(12, d=4, c=0.5, seed=6)
    raw = laplace_solution(p, epsilon=0.5, runs=200, rng=np.random.default_rng(8), ledger=_ledger())
    projected = laplace_solution(p, epsilon=0.5, runs=200, rng=np.random.default_rng(8), ledger=_ledger(), project=True)
    assert np.any(np.abs(raw.x) > p.c)  # off by default, as in the paper
    np.testing.assert_array_equal(projected.x, np.clip(raw.x, -p.c, p.c))


# --------------------------------------------------------------------------------- exponential mechanism over the pieces (Alg. 1)
@pytest.mark.parametrize("selection, sign", [("printed", -1.0), ("active", 1.0)])
def test_subgradient_index_law_is_the_exponential_mechanism(selection, sign):
    """The index law is softmax(∓ε·u/(2Δ)) exactly (Δ = b_max; "printed" is Alg. 1 step 2 verbatim)."""
    rng = np.random.default_rng(9)
    U = rng.normal(0.0, 3.0, size=(3, 6))
    eps, b_max = 2.0, 0.5
    hand = np.exp(sign * eps * U / (2 * b_max))
    hand /= hand.sum(axis=1, keepdims=True)
    probs = subgradient_index_probabilities(U, epsilon=eps, b_max=b_max, selection=selection)
    np.testing.assert_allclose(probs, hand, rtol=1e-12)
    for row, expected in zip(U, probs):
        np.testing.assert_allclose(
            exponential_mechanism_probabilities(sign * row, sensitivity=b_max, epsilon=eps), expected, rtol=1e-12
        )
    # χ² of Gumbel-max draws on a row whose expected counts are all ≥ 5 (χ²'s validity condition)
    u, n = U[0] / 3.0, 200_000
    expected = n * subgradient_index_probabilities(u, epsilon=eps, b_max=b_max, selection=selection)[0]
    assert expected.min() >= 5.0
    draws = sample_subgradient_indices(
        np.tile(u, (n, 1)), epsilon=eps, b_max=b_max, rng=np.random.default_rng(10), selection=selection
    )
    assert chisquare(np.bincount(draws, minlength=6), expected).pvalue > LEVEL


def test_subgradient_index_law_survives_huge_score_gaps():
    U = np.array([[0.0, 1e6, -1e6]])
    np.testing.assert_array_equal(
        subgradient_index_probabilities(U, epsilon=1.0, b_max=1.0, selection="printed"), [[0.0, 0.0, 1.0]]
    )
    np.testing.assert_array_equal(
        subgradient_index_probabilities(U, epsilon=1.0, b_max=1.0), [[0.0, 1.0, 0.0]]
    )  # active


@pytest.mark.parametrize("selection", ["printed", "active"])
def test_private_subgradient_first_step_follows_the_index_law(selection):
    """One iteration from x(1) = 0 without projection: x(2) = −α·a_{i*}, so i* is read off x(2) and
    must follow softmax(∓ε·b/(2b_max)) (u_sub(i; 0) = b_i), χ² at level 0.1%."""
    p = make_problem(5, d=3, c=10.0, b_max=0.8, seed=11)
    eps, n = 3.0, 50_000
    release = private_subgradient(
        p,
        epsilon=eps,
        runs=n,
        rng=np.random.default_rng(12),
        ledger=_ledger(eps),
        iterations=1,
        project=False,
        selection=selection,
    )
    alpha = step_sizes(p, 1)[0]
    chosen = np.argmin(np.linalg.norm(release.x[:, None, :] + alpha * p.A[None], axis=2), axis=1)
    np.testing.assert_allclose(release.x, -alpha * p.A[chosen], atol=1e-12)
    expected = subgradient_index_probabilities(p.b, epsilon=eps, b_max=p.b_max, selection=selection)[0]
    assert chisquare(np.bincount(chosen, minlength=p.m), n * expected).pvalue > LEVEL


def test_private_subgradient_with_huge_epsilon_is_the_subgradient_method():
    p = make_problem(20, d=5, seed=13)
    private = private_subgradient(
        p, epsilon=1e9, runs=4, rng=np.random.default_rng(0), ledger=_ledger(1e9), iterations=50, selection="active"
    )
    exact = subgradient(p, iterations=50, runs=4)
    np.testing.assert_allclose(private.x, exact.x, atol=1e-12)
    assert exact.event == NonPrivateEvent() and exact.count == 0


def test_subgradient_method_approaches_the_lp_optimum():
    p = make_problem(30, d=4, c=1.0, seed=14)
    _, f_opt = p.solve()
    best = subgradient(p, iterations=3000, step_rule="diminishing", step_scale=0.1, output="best")
    assert p.objective(best.x[0]) - f_opt < 0.02
    for rule in ("constant", "diminishing"):
        # with exact subgradients (γ = 0) Thm 24's bound holds deterministically for the α-weighted average
        average = subgradient(p, iterations=1000, step_rule=rule, output="average")
        alphas = average.info["step_sizes"]
        bound = (p.diameter**2 + p.lipschitz**2 * np.sum(alphas**2)) / (2 * np.sum(alphas))
        assert np.all(np.abs(average.x) <= p.c)
        assert 0.0 <= p.objective(average.x[0]) - f_opt <= bound


def test_private_subgradient_keeps_a_feasible_path():
    p = make_problem(10, d=3, c=0.3, seed=15)
    release = private_subgradient(
        p, epsilon=1.0, runs=7, rng=np.random.default_rng(0), ledger=_ledger(), iterations=20, keep_path=True
    )
    path = release.info["path"]
    assert path.shape == (21, 7, 3) and np.all(np.abs(path) <= p.c)
    np.testing.assert_array_equal(path[-1], release.x)
    assert np.all(path[0] == 0.0)


def test_step_sizes():
    p = make_problem(10, d=3, c=2.0, seed=0)
    base = p.diameter / p.lipschitz
    np.testing.assert_allclose(step_sizes(p, 100), np.full(100, base / 10))
    np.testing.assert_allclose(step_sizes(p, 4, "diminishing", 0.5), 0.5 * base / np.sqrt([1, 2, 3, 4]))


# --------------------------------------------------------------------------------- budget and validation
MECHANISMS = {
    "laplace_data": laplace_data,
    "laplace_solution": laplace_solution,
    "exponential_mcmc": lambda p, **kw: exponential_mcmc(p, n_steps=10, accounting="pure", **kw),
    "private_subgradient": lambda p, **kw: private_subgradient(p, iterations=11, **kw),
}


@pytest.mark.parametrize("name", sorted(MECHANISMS))
@pytest.mark.parametrize("eps", [0.1, 0.3, 1.7])
def test_budget_is_spent_but_never_exceeded(name, eps):
    p = make_problem(6, d=2, seed=1)
    ledger = _ledger(eps)
    release = MECHANISMS[name](p, epsilon=eps, runs=3, rng=np.random.default_rng(0), ledger=ledger)
    assert ledger.eps_spent <= eps
    assert ledger.eps_spent == pytest.approx(eps, rel=1e-12)
    assert release.x.shape == (3, 2)
    assert sum(entry.count for entry in ledger.entries) == release.count


def test_per_step_epsilon_never_overspends():
    assert 11 * (0.1 / 11) > 0.1  # the naive split would overspend the budget here
    for eps in (0.1, 0.3, 1.0, 2.7):
        for k in (1, 7, 11, 100, 269):
            step = per_step_epsilon(eps, k)
            assert k * step <= eps and step >= (eps / k) * (1 - 1e-15)


def test_mcmc_accounting_is_approximate_by_default():
    p = make_problem(6, d=2, seed=1)
    ledger = _ledger(0.5, "approx", delta=1e-6)
    release = exponential_mcmc(p, epsilon=0.5, runs=2, rng=np.random.default_rng(0), ledger=ledger, n_steps=5)
    assert release.event == ApproxDPEvent(0.5, 1e-6) and not release.exact
    assert ledger.eps_spent == 0.5
    with pytest.raises(UnsupportedEvent):  # a pure ledger cannot be told MCMC is pure by default
        exponential_mcmc(p, epsilon=0.5, runs=2, rng=np.random.default_rng(0), ledger=_ledger(1.0), n_steps=5)
    pure = exponential_mcmc(
        p, epsilon=0.5, runs=2, rng=np.random.default_rng(0), ledger=_ledger(1.0), n_steps=5, accounting="pure"
    )
    assert pure.event == PureDPEvent(0.5) and not pure.exact and "caveat" in pure.info
    with pytest.raises(ValueError, match=r"delta must be in \(0, 1\), got 0\.0"):
        exponential_mcmc(p, epsilon=0.5, runs=2, rng=np.random.default_rng(0), ledger=ledger, delta=0.0)


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_nothing_is_released_when_the_budget_is_short(name):
    p = make_problem(6, d=2, seed=1)
    ledger = _ledger(0.5)
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(BudgetExceeded):
        MECHANISMS[name](p, epsilon=0.6, runs=3, rng=rng, ledger=ledger)
    assert ledger.eps_spent == 0.0 and not ledger.entries
    assert rng.bit_generator.state == state


def test_one_ledger_per_run_is_charged_identically_or_not_at_all():
    p = make_problem(6, d=2, seed=1)
    ledgers = [_ledger(1.0) for _ in range(3)]
    private_subgradient(p, epsilon=0.4, runs=3, rng=np.random.default_rng(0), ledger=ledgers, iterations=4)
    assert [entry.count for ledger in ledgers for entry in ledger.entries] == [4, 4, 4]
    assert all(ledger.eps_spent == ledgers[0].eps_spent for ledger in ledgers)
    ledgers[2].charge(PureDPEvent(0.5))  # the third run cannot afford another 0.4 + 0.4 + 0.5 > 1
    with pytest.raises(BudgetExceeded):
        laplace_data(p, epsilon=0.4, runs=3, rng=np.random.default_rng(0), ledger=ledgers)
    assert [len(ledger.entries) for ledger in ledgers] == [1, 1, 2]
    with pytest.raises(ValueError, match=r"got 2 ledgers for runs = 3"):
        laplace_data(p, epsilon=0.1, runs=3, rng=np.random.default_rng(0), ledger=ledgers[:2])


@pytest.mark.parametrize("name", sorted(MECHANISMS))
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"epsilon": 0.0}, r"epsilon must be a finite number > 0, got 0\.0"),
        ({"epsilon": -0.5}, r"epsilon must be a finite number > 0, got -0\.5"),
        ({"epsilon": float("nan")}, r"epsilon must be a finite number > 0, got nan"),
        ({"runs": 0}, r"runs must be an integer >= 1, got 0"),
    ],
)
def test_mechanisms_reject_bad_values(name, kwargs, message):
    p = make_problem(6, d=2, seed=1)
    args = {"epsilon": 0.5, "runs": 2, "rng": np.random.default_rng(0), "ledger": _ledger(), **kwargs}
    with pytest.raises(ValueError, match=message):
        MECHANISMS[name](p, **args)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda p, kw: exponential_mcmc(p, eta=0.0, **kw), r"eta must be a finite number > 0, got 0\.0"),
        (lambda p, kw: exponential_mcmc(p, n_steps=0, **kw), r"n_steps must be an integer >= 1, got 0"),
        (lambda p, kw: exponential_mcmc(p, proposal="var", **kw), r"proposal must be one of variance, std, got 'var'"),
        (
            lambda p, kw: exponential_mcmc(p, start="corner", **kw),
            r"start must be one of center, uniform, got 'corner'",
        ),
        (
            lambda p, kw: exponential_mcmc(p, accounting="rdp", **kw),
            r"accounting must be one of approx, pure, got 'rdp'",
        ),
        (lambda p, kw: private_subgradient(p, iterations=0, **kw), r"iterations must be an integer >= 1, got 0"),
        (
            lambda p, kw: private_subgradient(p, step_rule="adam", **kw),
            r"step_rule must be one of constant, diminishing, got 'adam'",
        ),
        (
            lambda p, kw: private_subgradient(p, step_scale=-1.0, **kw),
            r"step_scale must be a finite number > 0, got -1\.0",
        ),
        (lambda p, kw: private_subgradient(p, output="best", **kw), r"output must be one of last, average, got 'best'"),
        (
            lambda p, kw: private_subgradient(p, selection="max", **kw),
            r"selection must be one of printed, active, got 'max'",
        ),
    ],
)
def test_hyper_parameters_are_validated_before_any_charge(call, message):
    p = make_problem(6, d=2, seed=1)
    ledger = _ledger(1.0, "approx")
    with pytest.raises(ValueError, match=message):
        call(p, {"epsilon": 0.5, "runs": 2, "rng": np.random.default_rng(0), "ledger": ledger})
    assert ledger.eps_spent == 0.0
