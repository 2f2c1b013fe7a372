"""liu_dda numerical core: gossip matrices, the closed forms of eq. (6), Theorem 1's calibration and
Algorithm 1's simulator.

Every test uses fixed seeds, so each outcome is deterministic; for the statistical tests the stated
level is the probability that a correct implementation would fail over the choice of seed.
"""

from __future__ import annotations

import copy
import math
import time
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog, minimize
from scipy.stats import binomtest, chisquare

from dpbench.dda import (
    SCHEDULES,
    DDASimulator,
    RandomGossip,
    activation_probability,
    check_iteration_condition,
    complete_graph_edges,
    metropolis_matrix,
    metropolis_weights,
    noisy_subgradients,
    per_step_epsilon,
    proof_guarantee,
    prox_l1,
    prox_l2,
    remark31_epsilon,
    run_dda,
    sample_edges,
    split_rows,
    theorem1_delta,
    theorem1_sigma,
)
from dpbench.privacy.audit import epsilon_lower_bound

LEVEL = 1e-3  # goodness-of-fit tests: a correct sampler fails with probability 0.1%


# --------------------------------------------------------------------------------- gossip (Sec. 3.1, 5.1)
@pytest.mark.parametrize("n_edges", [1, 2])
def test_every_sampled_gossip_matrix_is_doubly_stochastic_with_metropolis_weights(n_edges):
    n, draws = 20, 3000
    rng = np.random.default_rng(100 + n_edges)
    shared = 0
    for _ in range(draws):
        edges = sample_edges(n, n_edges, rng)
        assert edges.shape == (n_edges, 2) and np.all(edges[:, 0] < edges[:, 1])
        w = metropolis_matrix(n, edges)
        assert np.array_equal(w, w.T) and np.all(w >= 0)
        np.testing.assert_allclose(w.sum(axis=0), 1.0, rtol=0, atol=1e-15)
        np.testing.assert_allclose(w.sum(axis=1), 1.0, rtol=0, atol=1e-15)
        degree = np.zeros(n, dtype=int)
        for i, j in edges:
            degree[i] += 1
            degree[j] += 1
        expected = np.zeros((n, n))
        for i, j in edges:  # Metropolis (Xiao, Boyd & Kim 2007): 1/(1 + max(d_i, d_j)) on an edge
            expected[i, j] = expected[j, i] = 1.0 / (1 + max(degree[i], degree[j]))
        expected[np.diag_indices(n)] = 1.0 - expected.sum(axis=1)
        np.testing.assert_allclose(w, expected, rtol=0, atol=1e-15)  # zero off the sampled edges too
        active, block = metropolis_weights(n, edges)
        assert np.array_equal(active, np.flatnonzero(degree))
        np.testing.assert_array_equal(block, w[np.ix_(active, active)])
        shared += int(degree.max() == 2)
    if n_edges == 1:
        assert shared == 0
    else:  # the two edges share a node: 3 active nodes, the shared one with weight 1/3 to each
        m = n * (n - 1) // 2
        assert binomtest(shared, draws, 2 * (n - 2) / (m - 1)).pvalue > LEVEL


def test_edges_are_uniform_and_iota_is_the_expected_active_fraction():
    n, draws = 20, 19_000
    rng = np.random.default_rng(7)
    counts = np.zeros((n, n), dtype=int)
    for _ in range(draws):
        ((i, j),) = sample_edges(n, 1, rng)
        counts[i, j] += 1
    assert chisquare(counts[np.triu_indices(n, 1)]).pvalue > LEVEL  # 190 edges, uniform
    assert activation_probability(20, 1) == pytest.approx(0.1, abs=1e-15)
    m = 190
    assert activation_probability(20, 2) == pytest.approx(1 - (m - 19) * (m - 20) / (m * (m - 1)), rel=1e-14)
    assert activation_probability(20, 2) == pytest.approx(0.190476, abs=1e-6)  # not 0.2: edges may share a node
    gossip, rng = RandomGossip(n, 2), np.random.default_rng(8)
    active = sum(gossip.draw(rng)[0].size for _ in range(draws))
    # #active = 4 − [the edges share a node] and E #active = nι, so P(shared) = 4 − nι
    assert binomtest(4 * draws - active, draws, 4 - n * activation_probability(n, 2)).pvalue > LEVEL


def test_gossip_draws_match_sample_edges_and_the_all_nodes_matrix_is_uniform():
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    gossip = RandomGossip(20, 2)
    for _ in range(50):
        active, block = gossip.draw(a)
        ref_active, ref_block = metropolis_weights(20, sample_edges(20, 2, b))
        assert np.array_equal(active, ref_active) and np.array_equal(block, ref_block)
    np.testing.assert_allclose(metropolis_matrix(20, complete_graph_edges(20)), np.full((20, 20), 1 / 20), atol=1e-15)


def test_gossip_arguments_are_validated():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="n_edges = 191 exceeds the 190 edges"):
        sample_edges(20, 191, rng)
    with pytest.raises(ValueError, match="n >= 2"):
        sample_edges(1, 1, rng)
    with pytest.raises(ValueError, match="distinct"):
        metropolis_matrix(5, [[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="self-loop"):
        metropolis_matrix(5, [[2, 2]])
    with pytest.raises(ValueError, match=r"in \[0, 5\)"):
        metropolis_matrix(5, [[0, 5]])


# --------------------------------------------------------------------------------- eq. (6) closed forms
def _brute_l2(z, weight, gamma, mu):
    fun = lambda x: z @ x + weight * mu / 2 * x @ x + gamma / 2 * x @ x
    jac = lambda x: z + (weight * mu + gamma) * x
    return minimize(fun, np.zeros_like(z), jac=jac, method="BFGS", options={"gtol": 1e-12}).x


def _brute_l1(z, weight, gamma, phi):
    """x = u − v, u, v ≥ 0 makes ⟨z, x⟩ + wφ‖x‖₁ + (γ/2)‖x‖² smooth on a box: L-BFGS-B solves it exactly."""
    m = z.size

    def fun(uv):
        u, v = uv[:m], uv[m:]
        x = u - v
        g = z + gamma * x
        return z @ x + weight * phi * (u.sum() + v.sum()) + gamma / 2 * x @ x, np.concatenate(
            (g + weight * phi, -g + weight * phi)
        )

    res = minimize(
        fun,
        np.zeros(2 * m),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0, None)] * (2 * m),
        options={"ftol": 1e-15, "gtol": 1e-12},
    )
    return res.x[:m] - res.x[m:]


def test_prox_closed_forms_equal_brute_force_minimisation():
    rng = np.random.default_rng(21)
    for _ in range(20):
        z = rng.normal(0, 3, size=6)
        weight, gamma, strength = rng.uniform(0.1, 5), rng.uniform(0.1, 3), rng.uniform(0.05, 2)
        np.testing.assert_allclose(
            prox_l2(z, weight=weight, gamma=gamma, mu=strength), _brute_l2(z, weight, gamma, strength), atol=1e-6
        )
        np.testing.assert_allclose(
            prox_l1(z, weight=weight, gamma=gamma, phi=strength), _brute_l1(z, weight, gamma, strength), atol=1e-6
        )
    rows = rng.normal(0, 3, size=(4, 6))  # vectorised over rows: each row is its own problem
    np.testing.assert_array_equal(
        prox_l1(rows, weight=2.0, gamma=0.5, phi=1.0),
        np.array([prox_l1(r, weight=2.0, gamma=0.5, phi=1.0) for r in rows]),
    )
    assert np.all(prox_l1(rows, weight=2.0, gamma=0.5, phi=1.0)[np.abs(rows) <= 2.0] == 0)
    with pytest.raises(ValueError, match="gamma must be a finite number > 0, got 0"):
        prox_l1(rows, weight=1.0, gamma=0, phi=1.0)


# --------------------------------------------------------------------------------- Theorem 1
def test_sigma_matches_theorem1_by_hand():
    # ε = 0.5, δ₀ = 0.01, ι = 0.1, q = 10, L = 2, T = 4000 ≥ 5q²ε²/(4ι²) = 5·100·0.25/0.04 = 3125:
    # σ² = 32ι²L²T log(2/δ₀)/(q²ε²) = 32·0.01·4·4000·log(200)/(100·0.25) = 204.8·log 200
    expected = math.sqrt(204.8 * math.log(200.0))
    assert expected == pytest.approx(32.9408, abs=1e-4)
    sigma = theorem1_sigma(0.5, delta0=0.01, iota=0.1, q=10, iterations=4000, lipschitz=2.0)
    assert sigma == pytest.approx(expected, rel=1e-14)
    assert theorem1_sigma(0.5, delta0=0.01, iota=0.1, q=10, iterations=4000, lipschitz=2.0, corrected=True) == (
        pytest.approx(math.sqrt(5) * expected, rel=1e-14)
    )
    # eq. (16): ε_t² = 8L² log(2/δ₀)/σ² = q²ε²/(4ι²T) = 25/(0.04·4000) = 25/160
    assert per_step_epsilon(sigma, lipschitz=2.0, delta0=0.01) == pytest.approx(math.sqrt(25 / 160), rel=1e-13)


def test_iteration_condition_names_T_the_bound_and_the_fix():
    with pytest.raises(ValueError) as err:
        check_iteration_condition(3000, epsilon=0.5, iota=0.1, q=10)
    message = str(err.value)
    assert "T = 3000" in message and "5q²ε²/(4ι²) = 3125" in message and "run at least 3125 iterations" in message
    check_iteration_condition(3125, epsilon=0.5, iota=0.1, q=10)  # the boundary passes
    with pytest.raises(ValueError, match="T = 3000"):
        theorem1_sigma(0.5, delta0=0.01, iota=0.1, q=10, iterations=3000, lipschitz=1.0)
    for bad in (0.0, 1.5, -1.0):
        with pytest.raises(ValueError, match=r"epsilon must be in \(0, 1\]"):
            theorem1_sigma(bad, delta0=0.01, iota=0.1, q=10, iterations=10**6, lipschitz=1.0)


def test_remark31_delta_and_the_proof_chain():
    eps, delta0, iota, q, T, lip = 0.8, 0.01, 0.1, 10, 10_000, 1.0
    kw = {"delta0": delta0, "iota": iota, "q": q, "iterations": T}
    # eq. (7) at t = T: √(3/5)ε + ε²/5 ≤ ε; increasing in t
    assert remark31_epsilon(T, iterations=T, epsilon=eps) == pytest.approx(math.sqrt(0.6) * eps + eps**2 / 5)
    assert remark31_epsilon(T, iterations=T, epsilon=eps) <= eps
    assert np.all(np.diff(remark31_epsilon(np.arange(1, T + 1), iterations=T, epsilon=eps)) > 0)
    with pytest.raises(ValueError, match="t must be integers in"):
        remark31_epsilon(T + 1, iterations=T, epsilon=eps)
    # printed σ: (17) gives S = ε², so Lemma 4.3 with δ' = √S = ε yields ε√(2 log(e+1)) + ε² > ε
    sigma = theorem1_sigma(eps, lipschitz=lip, **kw)
    eps_chain, delta_chain = proof_guarantee(T, sigma=sigma, lipschitz=lip, delta0=delta0, iota=iota, q=q)
    assert eps_chain == pytest.approx(eps * math.sqrt(2 * math.log(math.e + 1)) + eps**2, rel=1e-12)
    assert delta_chain == pytest.approx(theorem1_delta(eps, **kw), rel=1e-12)
    assert theorem1_delta(eps, **kw) == pytest.approx(1 - (1 - eps) * (1 - iota * delta0 / q) ** T, rel=1e-12)
    # corrected σ (5× variance): S = ε²/5 and the chain gives ≤ eq. (7) ≤ ε, at every t ≤ T
    sigma5 = theorem1_sigma(eps, lipschitz=lip, corrected=True, **kw)
    for t in (1, 100, T // 2, T):
        eps_t, _ = proof_guarantee(t, sigma=sigma5, lipschitz=lip, delta0=delta0, iota=iota, q=q)
        assert eps_t <= remark31_epsilon(t, iterations=T, epsilon=eps) <= eps
    _, delta5 = proof_guarantee(T, sigma=sigma5, lipschitz=lip, delta0=delta0, iota=iota, q=q)
    assert delta5 == pytest.approx(theorem1_delta(eps, corrected=True, **kw), rel=1e-12)
    assert delta5 >= eps / math.sqrt(5)  # Theorem 1's "some constant δ" is never small


# --------------------------------------------------------------------------------- Algorithm 1
def _svm_data(n_rows=200, dim=5, seed=0):
    """Unit-norm rows (L = 1), labels of a noisy linear rule: separable-ish."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n_rows, dim))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = np.where(x @ rng.standard_normal(dim) + 0.2 * rng.standard_normal(n_rows) >= 0, 1.0, -1.0)
    return x, y


def _l2_svm_optimum(x, y, mu):
    """min_w mean(hinge) + (μ/2)‖w‖² through its dual max Σα − ‖Σα_i y_i x_i‖²/(2μ), 0 ≤ α ≤ 1/N (a smooth
    box-constrained QP, solved by L-BFGS-B); returns (F*, duality gap certifying it)."""
    n_rows = y.size
    b = y[:, None] * x

    def negdual(alpha):
        v = b.T @ alpha
        return v @ v / (2 * mu) - alpha.sum(), b @ v / mu - 1.0

    res = minimize(
        negdual,
        np.zeros(n_rows),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0, 1 / n_rows)] * n_rows,
        options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10_000},
    )
    w = b.T @ res.x / mu
    primal = np.maximum(0, 1 - b @ w).mean() + mu / 2 * w @ w
    return primal, primal + res.fun


@pytest.mark.parametrize("gossip", [{"all_nodes": True}, {"n_edges": 1}])
def test_noiseless_l2_svm_converges_to_the_optimum(gossip):
    x, y = _svm_data()
    mu = 0.1
    f_star, gap = _l2_svm_optimum(x, y, mu)
    assert 0 <= gap < 1e-8  # F* is exact to 1e-8, far below the tolerance tested below
    objective = lambda w: np.maximum(0, 1 - y * (x @ w)).mean() + mu / 2 * w @ w
    rows = np.arange(200).reshape(10, 20)  # n = 10 nodes, q = 20
    res = run_dda(
        x,
        y,
        rows,
        regulariser="l2",
        strength=mu,
        sigma=0.0,
        iterations=20_000,
        schedule="l2",
        rng=np.random.default_rng(3),
        snapshot_every=2000,
        **gossip,
    )
    assert res.iota == (1.0 if "all_nodes" in gossip else 0.2)  # one edge at n = 10: ι = 2/10
    gaps = np.array([objective(s) - f_star for s in res.snapshots])
    # F(mean x̃) − F* ≤ 2e-4 (F* ≈ 0.547, so 0.04% relative) after 20,000 iterations, down from the start
    assert np.all(gaps > -1e-8) and gaps[-1] < 2e-4 and gaps[-1] < gaps[0] / 2
    np.testing.assert_allclose(res.snapshots[-1], res.averages.mean(axis=0), rtol=0, atol=1e-15)


def test_noiseless_l1_svm_converges_to_the_lp_optimum():
    x, y = _svm_data(seed=1)
    phi, n_rows, dim = 0.05, 200, 5
    # exact optimum: the LP min φ1ᵀ(u + v) + mean(s), s ≥ 1 − y_i x_iᵀ(u − v), u, v, s ≥ 0 (HiGHS, ~1e-9)
    b = y[:, None] * x
    lp = linprog(
        np.concatenate((phi * np.ones(2 * dim), np.ones(n_rows) / n_rows)),
        A_ub=np.hstack((-b, b, -np.eye(n_rows))),
        b_ub=-np.ones(n_rows),
        bounds=(0, None),
        method="highs",
    )
    objective = lambda w: np.maximum(0, 1 - b @ w).mean() + phi * np.abs(w).sum()
    res = run_dda(
        x,
        y,
        np.arange(n_rows).reshape(10, 20),
        regulariser="l1",
        strength=phi,
        sigma=0.0,
        iterations=10_000,
        schedule="l1",
        all_nodes=True,
        rng=np.random.default_rng(4),
        snapshot_every=1000,
    )
    gaps = np.array([objective(s) - lp.fun for s in res.snapshots])
    assert np.all(gaps > -1e-8) and gaps[-1] < 1e-3 and gaps[-1] < gaps[0]  # 0.2% of F* ≈ 0.49


def _simulator(features, y, rows, seed, **kw):
    options = {"regulariser": "l2", "strength": 0.05, "sigma": 0.3, "iterations": 300, "schedule": "l2", "n_edges": 2}
    options.update(kw)
    return DDASimulator(features, y, rows, rng=np.random.default_rng(seed), **options)


def test_inactive_nodes_keep_their_state_and_active_ones_follow_eqs_5_and_6():
    x, y = _svm_data(n_rows=400, dim=6, seed=2)
    rows = np.arange(400).reshape(20, 20)
    sim = _simulator(x, y, rows, seed=5)
    for _ in range(30):
        z_before, x_before, t = sim.z.copy(), sim.x.copy(), sim.t
        replay = copy.deepcopy(sim.rng)
        active = sim.step()
        inactive = np.setdiff1d(np.arange(20), active)
        assert 2 <= active.size <= 4 and sim.t == t + 1
        assert np.array_equal(sim.z[inactive], z_before[inactive]) and np.array_equal(
            sim.x[inactive], x_before[inactive]
        )
        # the step by the book, with the n × n W^(t) and the same draws (edges, ξ, ν in that order):
        w = metropolis_matrix(20, sample_edges(20, 2, replay))
        assert np.array_equal(np.flatnonzero(np.diag(w) < 1), active)
        zeta = np.zeros((20, 6))
        zeta[active] = noisy_subgradients(
            x, y, rows[active, replay.integers(20, size=active.size)], x_before[active], sigma=0.3, rng=replay
        )
        eta = np.isin(np.arange(20), active)[:, None]
        np.testing.assert_allclose(sim.z, w @ (z_before + t * eta * zeta), rtol=1e-13, atol=1e-15)  # eq. (5), a_t = t
        # eq. (6) with ι·A_{t+1}, γ_{t+1}: A_{t+1} = (t+1)(t+2)/2, γ = 20
        np.testing.assert_allclose(
            sim.x[active], -sim.z[active] / (sim.iota * (t + 1) * (t + 2) / 2 * 0.05 + 20), rtol=1e-14
        )
    with pytest.raises(ValueError, match="horizon iterations = 300 is reached"):
        for _ in range(300):
            sim.step()


def test_lazy_weighted_averages_equal_the_eager_definition():
    x, y = _svm_data(n_rows=120, dim=4, seed=3)
    rows = np.arange(120).reshape(6, 20)
    for regulariser, schedule in (("l2", "l2"), ("l1", "l1")):
        sim = _simulator(x, y, rows, seed=9, regulariser=regulariser, schedule=schedule, iterations=60, n_edges=1)
        a = SCHEDULES[schedule].tables(60)[0]
        iterates = [sim.x.copy()]  # x^(1)
        for t in range(1, 61):
            sim.step()
            eager = sum(a[s] * iterates[s - 1] for s in range(1, t + 1)) / a[1 : t + 1].sum()  # x̃^(t), Alg. 1 line 2
            np.testing.assert_allclose(sim.averages(), eager, rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(sim.mean_average(), eager.mean(axis=0), rtol=1e-12, atol=1e-15)
            iterates.append(sim.x.copy())
    # run_dda = the same steps, with n⁻¹ Σ_i x̃_i^(t) recorded every 20 iterations
    res = run_dda(
        x,
        y,
        rows,
        regulariser="l2",
        strength=0.05,
        sigma=0.3,
        iterations=60,
        rng=np.random.default_rng(9),
        n_edges=1,
        snapshot_every=20,
    )
    sim, means = _simulator(x, y, rows, seed=9, iterations=60, n_edges=1), []
    for t in range(1, 61):
        sim.step()
        if t % 20 == 0:
            means.append(sim.mean_average())
    assert res.snapshot_iterations.tolist() == [20, 40, 60]
    assert np.array_equal(res.snapshots, np.array(means)) and np.array_equal(res.averages, sim.averages())


def test_sparse_and_dense_inputs_give_identical_runs():
    x, y = _svm_data(n_rows=300, dim=30, seed=4)
    x[np.random.default_rng(0).random(x.shape) < 0.8] = 0.0  # 80% zeros
    rows = split_rows(300, 20, np.random.default_rng(1))
    for kw in ({"n_edges": 2}, {"all_nodes": True}, {"regulariser": "l1", "schedule": "l1"}):
        results = []
        for features in (
            x,
            sp.csr_array(x),
            sp.csc_matrix(x),
            x.astype(np.float32),
            sp.csr_array(x.astype(np.float32)),
        ):
            sim = _simulator(features, y, rows, seed=11, **kw)
            for _ in range(300):
                sim.step()
            results.append((sim.z, sim.averages()))
        for z, avg in results[1:3]:  # float64: the hinge decisions, hence every later number, coincide bit for bit
            assert np.array_equal(z, results[0][0]) and np.array_equal(avg, results[0][1])
        assert np.array_equal(results[3][0], results[4][0]) and np.array_equal(results[3][1], results[4][1])


def test_split_rows_and_input_validation():
    rows = split_rows(103, 20, np.random.default_rng(2))
    assert rows.shape == (20, 5) and np.unique(rows).size == 100  # 3 leftover rows are left out
    x, y = _svm_data(n_rows=100, dim=3)
    with pytest.raises(ValueError, match="labels must be -1 or \\+1"):
        _simulator(x, (y + 1) / 2, rows, 0)
    with pytest.raises(ValueError, match="repeats a row"):
        _simulator(x, y, np.zeros((20, 5), dtype=int), 0)
    with pytest.raises(ValueError, match="sigma must be a finite number > 0, got -1"):
        _simulator(x, y, np.arange(100).reshape(20, 5), 0, sigma=-1)
    with pytest.raises(ValueError, match="regulariser must be one of l2, l1"):
        _simulator(x, y, np.arange(100).reshape(20, 5), 0, regulariser="elastic")
    with pytest.raises(ValueError, match="iota is 1"):
        _simulator(x, y, np.arange(100).reshape(20, 5), 0, all_nodes=True, iota=0.5)


def test_rcv1_sized_sparse_data_is_split_and_stepped_without_densifying():
    n_rows, dim, density = 677_399, 47_236, 0.0016
    rng = np.random.default_rng(12)
    started = time.perf_counter()
    # CSR built directly (int32 indices, float32 values, ~51M stored entries, ~0.4 GB): a row's
    # count is Binomial(dim, density), its columns uniform (a repeated column is a summed entry)
    indptr = np.zeros(n_rows + 1, dtype=np.int32)
    np.cumsum(rng.binomial(dim, density, size=n_rows), out=indptr[1:])
    indices = rng.integers(0, dim, size=int(indptr[-1]), dtype=np.int32)
    features = sp.csr_array((rng.random(indices.size, dtype=np.float32), indices, indptr), shape=(n_rows, dim))
    labels = np.where(rng.random(n_rows) < 0.5, -1.0, 1.0)
    dense_bytes = n_rows * dim * 8
    tracemalloc.start()
    try:
        rows = split_rows(n_rows, 20, np.random.default_rng(13))
        sim = DDASimulator(
            features,
            labels,
            rows,
            regulariser="l2",
            strength=5e-4,
            sigma=1.0,
            iterations=5,
            rng=np.random.default_rng(14),
            n_edges=2,
        )
        active = sim.step()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert rows.shape == (20, 33_869)  # 677,399 = 20·33,869 + 19 leftover rows
    assert sim.features is features  # no copy of the data
    # the state is 3·20·47,236 doubles ≈ 23 MB; a copy of the data would add ≥ 0.4 GB, densifying 256 GB
    assert peak < 100e6 < features.data.nbytes + features.indices.nbytes < dense_bytes
    assert np.all(sim.x[active] != 0) and np.all(np.isfinite(sim.averages()))
    assert time.perf_counter() - started < 30


# --------------------------------------------------------------------------------- privacy of one release
@pytest.mark.statistical
def test_one_release_audit_stays_below_the_per_step_guarantee():
    """One active node's release ζ = ĝ + ν (Alg. 1 line 7) on neighbouring local datasets D = {(a, +1)},
    D′ = {(a, −1)}, ‖a‖ = L, at x = 0: ĝ = −a vs +a, ‖ĝ − ĝ′‖ = 2L, the sensitivity of Sec. 4.1. The
    worst case (the differing sample is the one drawn) audits M_t itself, which Lemma 4.1 / eq. (16)
    claim to be (ε_t, δ₀)-DP, ε_t = 2L√(2 log(2/δ₀))/σ; the node and sample subsampling only amplify.

    Config: ε = 0.8, δ₀ = 0.01 (Sec. 5.1), ι = 0.1, q = 10, T = 5q²ε²/(4ι²) = 8000, so ε_t² = 0.2, the
    largest per-step ε Theorem 1 allows. Event S = {ζ < −σ} (fixed in advance; ζ is 1-D, a = (L)).
    With 20,000 runs per side, the 99% Clopper–Pearson bound on ln((P_D[S] − δ₀)/P_D′[S]) must stay
    ≤ ε_t (a correct σ fails with probability < 1%), and must exceed ε_t when σ is 4 times too small.
    """
    lip, delta0, runs = 1.0, 0.01, 20_000
    sigma = theorem1_sigma(0.8, delta0=delta0, iota=0.1, q=10, iterations=8000, lipschitz=lip)
    eps_step = per_step_epsilon(sigma, lipschitz=lip, delta0=delta0)
    assert eps_step == pytest.approx(math.sqrt(0.2), rel=1e-12)

    def audit(noise: float, seed: int) -> float:
        hits = []
        for label, offset in ((1.0, 0), (-1.0, 1)):
            zeta = noisy_subgradients(
                [[lip]],
                [label],
                np.zeros(runs, dtype=int),
                np.zeros((runs, 1)),
                sigma=noise,
                rng=np.random.default_rng(seed + offset),
            )
            hits.append(int(np.sum(zeta[:, 0] < -noise)))
        return epsilon_lower_bound(hits[0], runs, hits[1], runs, delta=delta0, confidence=0.99)

    assert audit(sigma, 40) <= eps_step
    assert audit(sigma / 4, 50) > eps_step  # the audit has the power to catch a broken calibration
