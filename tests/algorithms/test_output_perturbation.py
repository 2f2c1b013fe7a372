"""OUTPERT-GD and OUTPERT-RSGD: sensitivities against hand computations and against neighbouring
datasets, noise calibration against dp-accounting, the single ledger entry, and refusals."""

from pathlib import Path

import numpy as np
import pytest
import yaml
from dp_accounting import GaussianDpEvent
from dp_accounting.rdp import RdpAccountant

from dpbench.algorithms.base import Tracer
from dpbench.algorithms.baselines import NonPrivate
from dpbench.algorithms.output_perturbation import (
    OutPertGD,
    OutPertRSGD,
    batch_sizes,
    gradient_descent,
    permuted_sgd,
    rsgd_sensitivities,
)
from dpbench.data import clip_rows
from dpbench.privacy.accountants import RDPAccountant
from dpbench.privacy.events import GaussianEvent
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.rdp import DEFAULT_ORDERS
from dpbench.problems import make_problem

CONF = Path(__file__).resolve().parents[2] / "conf" / "algorithm"


NO_CLIP = 1e300  # clipping per-example gradients at this norm changes nothing


def _data(n, d, seed, *, unit_rows=True):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if unit_rows:
        X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) >= 0, 1.0, -1.0)
    return X, y


def _ledger(eps=1.0):
    return Ledger(eps, 1e-8, RDPAccountant(), neighbouring="replace_one")  # the papers' relation, as derived below


def _fit(algo, problem, eps=1.0, seed=0):
    ledger = _ledger(eps)
    tracer = Tracer(problem, ledger)
    result = algo.fit(problem, ledger, np.random.default_rng(seed), tracer)
    return result, ledger, tracer


def _dp_accounting_epsilon(sigma, delta=1e-8):
    accountant = RdpAccountant(list(DEFAULT_ORDERS))
    accountant.compose(GaussianDpEvent(sigma))
    return accountant.get_epsilon(delta)


# ----------------------------------------------------------------------------- sensitivities by hand
def test_gd_sensitivity_is_the_closed_form():
    X, y = _data(300, 4, 0)
    mu, eta, T = 0.01, 0.5, 30
    problem = make_problem(X, y, loss="logistic", reg=mu)
    G = 1.0  # |ℓ′| ≤ 1 and the public row bound R = 1 (unit rows)
    # η = 0.5 ≤ 2/(μ + β̄) with β̄ = 0.25·G² + μ, so c = 1 − ημ: Δ = 2G/(nμ)·(1 − (1 − ημ)^T)
    expected = 2 * G / (300 * mu) * (1 - (1 - eta * mu) ** T)
    assert OutPertGD(iterations=T, step_size=eta).sensitivity(problem) == pytest.approx(expected, rel=1e-12)
    result, _, _ = _fit(OutPertGD(iterations=T, step_size=eta), problem)
    assert result.info["sensitivity"] == pytest.approx(expected, rel=1e-12)
    # a step past 2/(μ + β̄): c = ηβ̄ − 1 > 1, Δ = 2ηG/n·(c^T − 1)/(c − 1)
    beta = 0.25 * G**2 + mu
    c = 10.0 * beta - 1.0
    expected = 2 * 10.0 * G / 300 * (c**5 - 1) / (c - 1)
    assert OutPertGD(iterations=5, step_size=10.0).sensitivity(problem) == pytest.approx(expected, rel=1e-12)


def test_gd_default_step_is_one_over_the_worst_case_smoothness():
    X, y = _data(200, 3, 1)
    X[0] *= 2.0  # a row of norm 2: with R = 1 it is clipped (never checked); R = 2 keeps it
    problem = make_problem(X, y, loss="huber_hinge", reg=0.001)
    clipped = make_problem(clip_rows(X, 1.0), y, loss="huber_hinge", reg=0.001, public_row_norm=1.0)
    assert np.array_equal(_fit(OutPertGD(), problem)[0].w, _fit(OutPertGD(), clipped)[0].w)
    result, _, _ = _fit(OutPertGD(row_bound=2.0), problem)
    beta = 1.0 * 4.0 + 0.001  # sup ℓ″ = 1/(2h) = 1 for h = 0.5
    assert result.info["step_size"] == pytest.approx(1 / beta, rel=1e-12)
    assert result.info["step_size"] <= 1 / problem.smoothness()
    assert result.info["contraction"] == pytest.approx(1 - 0.001 / beta, rel=1e-12)


def test_rsgd_sensitivity_by_hand_on_two_batches():
    X, y = _data(10, 3, 2)
    mu, eta0 = 0.1, 0.8
    problem = make_problem(X, y, loss="logistic", reg=mu)
    G = np.linalg.norm(X, axis=1).max()
    beta = 0.25 * G**2 + mu
    c0 = max(abs(1 - eta0 * mu), abs(1 - eta0 * beta))
    eta1 = eta0 / np.sqrt(2)
    c1 = max(abs(1 - eta1 * mu), abs(1 - eta1 * beta))
    a0, a1 = 2 * G * eta0 / 5, 2 * G * eta1 / 5  # two batches of 5, two passes
    # record in batch 0: visited at steps 1 and 3; in batch 1: at steps 2 and 4
    first = [a0, c0 * a0, c1 * c0 * a0 + a1, c1 * (c1 * c0 * a0 + a1)]
    second = [0.0, a0, c1 * a0, c1 * c1 * a0 + a1]
    algo = OutPertRSGD(epochs=2, batch_size=5, init_step=eta0)
    np.testing.assert_allclose(algo.sensitivities(problem), [np.mean(first), np.mean(second)], rtol=1e-12)
    last = OutPertRSGD(epochs=2, batch_size=5, init_step=eta0, averaging="none")
    np.testing.assert_allclose(last.sensitivities(problem), [first[-1], second[-1]], rtol=1e-12)
    result, _, _ = _fit(algo, problem)
    assert result.info["sensitivity"] == pytest.approx(max(np.mean(first), np.mean(second)), rel=1e-12)


@pytest.mark.parametrize("averaging", ["all", "none"])
def test_rsgd_closed_form_matches_the_step_by_step_recurrence(averaging):
    sizes = batch_sizes(52, 7)  # 7 batches: 3 of 8, 4 of 7
    assert list(sizes) == [8, 8, 8, 7, 7, 7, 7]
    steps = np.array([3.0, 1.2, 0.7])  # c > 1 in the first pass, < 1 later
    G, mu, beta = 1.3, 0.05, 0.9
    delta, history = np.zeros(7), []
    for eta in steps:  # eq. (RS-1), one step at a time
        c = max(abs(1 - eta * mu), abs(1 - eta * beta))
        for j in range(7):
            delta = c * delta
            delta[j] += 2 * G * eta / sizes[j]
            history.append(delta.copy())
    expected = np.mean(history, axis=0) if averaging == "all" else history[-1]
    got = rsgd_sensitivities(sizes, steps, lipschitz=G, mu=mu, beta=beta, averaging=averaging)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_batches_and_step_schedule_follow_the_public_code():
    assert list(batch_sizes(10, 4)) == [5, 5]
    assert list(batch_sizes(3, 1000)) == [3]  # b > n: one full batch
    X, y = _data(40, 3, 3)
    problem = make_problem(X, y, loss="logistic", reg=0.01)
    _, steps = OutPertRSGD(epochs=4, batch_size=10, init_step=2.0).schedule(problem)
    np.testing.assert_allclose(steps, 2.0 / np.sqrt([1, 2, 3, 4]))
    _, steps = OutPertRSGD(epochs=3, batch_size=100, init_step=2.0).schedule(problem)
    np.testing.assert_allclose(steps, [2.0, 2.0, 2.0])  # a single batch keeps η₀ (public code)
    beta = 0.25 * np.linalg.norm(X, axis=1).max() ** 2 + 0.01
    assert OutPertRSGD().first_step(problem) == pytest.approx(2 / (0.01 + beta), rel=1e-12)


def test_training_maps_match_a_plain_loop():
    X, y = _data(23, 3, 8, unit_rows=False)
    problem = make_problem(X, y, loss="huber_hinge", reg=0.01)

    def grad(w, rows):
        m = y[rows] * (X[rows] @ w)
        slope = np.where(m < 0.5, -1.0, np.where(m <= 1.5, -(1.5 - m), 0.0))  # Huber hinge, h = 0.5
        return X[rows].T @ (slope * y[rows]) / len(rows) + 0.01 * w

    w = np.zeros(3)
    for _ in range(7):
        w = w - 0.3 * grad(w, np.arange(23))
    np.testing.assert_allclose(
        gradient_descent(problem, step=0.3, iterations=7, lipschitz=NO_CLIP), w, rtol=1e-12, atol=1e-15
    )

    order = np.random.default_rng(0).permutation(23)
    batches = [order[:8], order[8:16], order[16:]]  # batch_sizes(23, 7) = [8, 8, 7]
    w, iterates = np.zeros(3), []
    for eta in (0.9, 0.9 / np.sqrt(2)):
        for rows in batches:
            w = w - eta * grad(w, rows)
            iterates.append(w)
    sizes = batch_sizes(23, 7)
    steps = np.array([0.9, 0.9 / np.sqrt(2)])
    np.testing.assert_allclose(
        permuted_sgd(problem, order, sizes, steps, averaging="none", lipschitz=NO_CLIP), w, rtol=1e-12
    )
    np.testing.assert_allclose(
        permuted_sgd(problem, order, sizes, steps, averaging="all", lipschitz=NO_CLIP),
        np.mean(iterates, axis=0),
        rtol=1e-12,
    )


# ----------------------------------------------------------------------------- calibration and ledger
@pytest.mark.parametrize("make", [lambda: OutPertGD(iterations=20), lambda: OutPertRSGD(epochs=3, batch_size=50)])
@pytest.mark.parametrize("eps", [0.3, 2.0])
def test_single_release_is_the_smallest_noise_that_fits(make, eps):
    X, y = _data(400, 5, 4)
    problem = make_problem(X, y, loss="logistic", reg=0.001)
    algo = make()
    result, ledger, _ = _fit(algo, problem, eps=eps, seed=7)
    sigma = result.info["noise_multiplier"]
    assert _dp_accounting_epsilon(sigma) <= eps * (1 + 1e-9)
    assert _dp_accounting_epsilon(0.999 * sigma) > eps
    assert len(ledger.entries) == 1
    assert ledger.entries[0].event == GaussianEvent(sigma)
    assert ledger.eps_spent <= eps
    assert ledger.eps_spent == pytest.approx(eps, rel=1e-5)
    # the released model is the noise-free one plus N(0, (σΔ)²I), with this run's generator
    rng = np.random.default_rng(7)
    if isinstance(algo, OutPertGD):
        clean = gradient_descent(problem, step=algo.step(problem), iterations=algo.iterations, lipschitz=NO_CLIP)
    else:
        sizes, steps = algo.schedule(problem)
        clean = permuted_sgd(
            problem, rng.permutation(problem.n), sizes, steps, averaging=algo.averaging, lipschitz=NO_CLIP
        )
    noise = rng.normal(0.0, sigma * result.info["sensitivity"], size=problem.dim)
    np.testing.assert_allclose(result.w, clean + noise, rtol=1e-10, atol=1e-12)


def test_trace_ends_with_the_noisy_release_and_holds_non_private_iterates_only_when_asked():
    X, y = _data(300, 4, 5)
    problem = make_problem(X, y, loss="logistic", reg=0.001)
    for algo in (OutPertGD(iterations=40), OutPertRSGD(epochs=5, batch_size=30)):
        result, ledger, tracer = _fit(algo, problem, eps=0.5)  # default: the public start and the release only
        assert [r["iteration"] for r in tracer.rows] == [0, result.n_iterations]
        ledger = _ledger(0.5)
        tracer = Tracer(problem, ledger, nonprivate=True)
        result = algo.fit(problem, ledger, np.random.default_rng(0), tracer)
        rows = tracer.rows
        assert [r["iteration"] for r in rows] == sorted({r["iteration"] for r in rows})
        assert rows[0]["iteration"] == 0 and rows[-1]["iteration"] == result.n_iterations
        assert rows[-1]["train_objective"] == problem.evaluate_objective(result.w)
        assert rows[-1]["eps_spent"] == ledger.eps_spent > 0
        assert all(r["eps_spent"] == 0.0 for r in rows[:-1])  # nothing released before the end
        assert len(rows) > 3


# ----------------------------------------------------------------------------- empirical sensitivity
@pytest.mark.parametrize("loss,eta", [("logistic", 2.0), ("huber_hinge", 1.0)])  # c = 1 − ημ for both
def test_gd_outputs_on_neighbours_are_within_the_sensitivity(loss, eta):
    mu, T, n = 0.05, 30, 40
    ratios = []
    for seed in range(12):
        X, y = _data(n, 3, 100 + seed)
        rng = np.random.default_rng(seed)
        problem = make_problem(X, y, loss=loss, reg=mu)
        bound = OutPertGD(iterations=T, step_size=eta).sensitivity(problem)
        w = gradient_descent(problem, step=eta, iterations=T, lipschitz=NO_CLIP)
        i = int(rng.integers(n))
        x_new = rng.normal(size=3)
        x_new /= np.linalg.norm(x_new)
        neighbours = [
            (X, np.where(np.arange(n) == i, -y, y)),  # replace: flip one label
            (np.where(np.arange(n)[:, None] == i, x_new, X), y),  # replace: a new row
            (np.delete(X, i, axis=0), np.delete(y, i)),  # remove one record
            (np.vstack([X, x_new]), np.append(y, -1.0)),  # add one record
        ]
        for X2, y2 in neighbours:
            w2 = gradient_descent(make_problem(X2, y2, loss=loss, reg=mu), step=eta, iterations=T, lipschitz=NO_CLIP)
            ratios.append(np.linalg.norm(w - w2) / bound)
    assert max(ratios) <= 1.0
    assert max(ratios) > 0.1  # the bound is not vacuous on these problems (observed: 0.26 / 0.29)


@pytest.mark.parametrize("loss", ["logistic", "huber_hinge"])
@pytest.mark.parametrize("averaging", ["all", "none"])
def test_rsgd_outputs_on_neighbours_are_within_their_batch_sensitivity(loss, averaging):
    n, mu = 40, 0.05
    ratios = []
    for seed in range(12):
        X, y = _data(n, 3, 200 + seed)
        rng = np.random.default_rng(seed)
        problem = make_problem(X, y, loss=loss, reg=mu)
        algo = OutPertRSGD(epochs=4, batch_size=7, init_step=1.5, averaging=averaging)
        sizes, steps = algo.schedule(problem)
        per_batch = algo.sensitivities(problem)
        order = rng.permutation(n)
        w = permuted_sgd(problem, order, sizes, steps, averaging=averaging, lipschitz=NO_CLIP)
        position = int(rng.integers(n))
        i = order[position]  # the replaced record keeps its place in the permutation
        batch = int(np.searchsorted(np.cumsum(sizes), position, side="right"))
        y2 = y.copy()
        y2[i] = -y2[i]
        w2 = permuted_sgd(
            make_problem(X, y2, loss=loss, reg=mu), order, sizes, steps, averaging=averaging, lipschitz=NO_CLIP
        )
        ratios.append(np.linalg.norm(w - w2) / per_batch[batch])
        assert np.linalg.norm(w - w2) <= per_batch.max()
    assert max(ratios) <= 1.0
    assert max(ratios) > 0.2  # observed 0.33–0.57


# ----------------------------------------------------------------------------- utility and refusals
@pytest.mark.parametrize("algo", [OutPertGD(), OutPertRSGD()], ids=["gd", "rsgd"])
def test_huge_budget_matches_the_non_private_accuracy(algo):
    X, y = _data(3000, 5, 6)
    X_test, y_test = X[2000:], y[2000:]
    problem = make_problem(X[:2000], y[:2000], loss="logistic", reg=0.001)
    reference = NonPrivate().fit(problem, None, np.random.default_rng(0), Tracer(problem, None)).w
    result, ledger, _ = _fit(algo, problem, eps=1e4)

    def accuracy(w):
        return np.mean(np.where(X_test @ w >= 0, 1.0, -1.0) == y_test)

    assert accuracy(result.w) >= accuracy(reference) - 0.01
    assert ledger.eps_spent <= 1e4


@pytest.mark.parametrize("cls", [OutPertGD, OutPertRSGD])
def test_hinge_loss_and_zero_regulariser_are_refused(cls):
    X, y = _data(50, 3, 7)
    assert cls.supported_losses == frozenset({"logistic", "huber_hinge"})
    assert "smooth" in cls.unsupported_reason
    hinge = make_problem(X, y, loss="hinge", reg=0.001)
    with pytest.raises(ValueError, match=f"{cls.name} does not support the hinge loss: .*smooth"):
        _fit(cls(), hinge)
    flat = make_problem(X, y, loss="logistic", reg=0.0)
    ledger = _ledger()
    with pytest.raises(ValueError, match=r"μ .* must be > 0"):
        cls().fit(flat, ledger, np.random.default_rng(0), Tracer(flat, ledger))
    assert ledger.entries == []


def test_bad_hyper_parameters_are_named():
    with pytest.raises(ValueError, match="iterations"):
        OutPertGD(iterations=0)
    with pytest.raises(ValueError, match="step_size"):
        OutPertGD(step_size=-1.0)
    with pytest.raises(ValueError, match="batch_size"):
        OutPertRSGD(batch_size=0)
    with pytest.raises(ValueError, match="init_step"):
        OutPertRSGD(init_step=float("nan"))
    with pytest.raises(ValueError, match="step_decay"):
        OutPertRSGD(step_decay="linear")
    with pytest.raises(ValueError, match="averaging"):
        OutPertRSGD(averaging="tail")


@pytest.mark.parametrize("cls", [OutPertGD, OutPertRSGD])
def test_yaml_lists_every_hyper_parameter_with_its_default(cls):
    full = yaml.safe_load((CONF / f"{cls.name}.yaml").read_text())
    assert full["data"] == {"row_norm": 1.0}  # selecting the method clips rows to its public bound
    conf = full["algorithm"]
    assert conf.pop("name") == cls.name
    assert set(conf.pop("tuning_grid")) <= set(vars(cls()))  # tuning=private / oracle search these
    assert conf == vars(cls())
