import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import chisquare

import dpbench.algorithms.privgene as privgene_module
from dpbench.algorithms.base import Tracer
from dpbench.algorithms.baselines import NonPrivate
from dpbench.algorithms.privgene import (
    CoordinateMoveScorer,
    PrivGene,
    eem_sensitivity,
    per_selection_epsilon,
    population_fitness,
    selection_probabilities,
)
from dpbench.privacy.accountants import PureDPAccountant, RDPAccountant
from dpbench.privacy.events import PureDPEvent
from dpbench.privacy.ledger import Ledger
from dpbench.problems import make_problem


def _data(n, d, seed, sharpness=3.0):
    """A bias column plus d − 1 features in [0, 1]; labels drawn from a logistic model (not separable)."""
    rng = np.random.default_rng(seed)
    X = np.hstack([np.ones((n, 1)), rng.uniform(size=(n, d - 1))])
    w = 3.0 * rng.normal(size=d)
    margin = X[:, 1:] @ w[1:]
    margin -= np.median(margin)
    y = np.where(rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-sharpness * margin)), 1.0, -1.0)
    return X, y


def _problem(n=400, d=3, seed=0, reg=0.001, loss="logistic"):
    X, y = _data(n, d, seed)
    return make_problem(X, y, loss=loss, reg=reg)


@pytest.fixture
def spy(monkeypatch):
    """Record the (sensitivity, epsilon, monotonic, label) of every selection PrivGene makes, screened or not."""
    calls = []

    def recording(real, size):
        def record(utilities, **kw):
            calls.append({k: kw[k] for k in ("sensitivity", "epsilon", "monotonic", "label")} | {"m": size(utilities)})
            return real(utilities, **kw)

        return record

    monkeypatch.setattr(privgene_module, "exponential_mechanism", recording(privgene_module.exponential_mechanism, len))
    screened = privgene_module.exponential_mechanism_screened
    monkeypatch.setattr(privgene_module, "exponential_mechanism_screened", recording(screened, lambda s: len(s.approx)))
    return calls


# ----------------------------------------------------------------------------------- privacy calibration
def test_rounds_follow_the_dp_agd_rule():
    algo = PrivGene()
    assert algo.n_rounds(4000, 0.8) == 4  # round(4000·0.8/800)
    assert algo.n_rounds(36000, 1.6) == 72
    assert algo.n_rounds(1000, 0.1) == 1  # round(0.125) = 0 → at least one round
    assert PrivGene(max_rounds=10).n_rounds(36000, 1.6) == 10
    assert PrivGene(rounds=7).n_rounds(36000, 1.6) == 7
    assert [PrivGene().mutation_scale_at(t) for t in (1, 2, 3)] == pytest.approx([0.5, 0.475, 0.45125])


def test_selection_budget_and_sensitivity_equal_the_hand_computed_values(spy):
    problem = _problem(reg=0.0)  # μ = 0: Δ'_t = 2·G·B·δ_t exactly (one parent, all ± moves)
    ledger = Ledger(0.8, 1e-8, PureDPAccountant())
    result = PrivGene(rounds=5).fit(problem, ledger, np.random.default_rng(0), Tracer(problem, ledger))

    eps_sel = result.info["eps_per_selection"]
    assert eps_sel == pytest.approx(0.8 / 5, rel=1e-12) and 5 * eps_sel <= 0.8
    assert [c["epsilon"] for c in spy] == [eps_sel] * 5
    assert [c["sensitivity"] for c in spy] == pytest.approx([2 * 0.5 * 0.95**t for t in range(5)], rel=1e-12)
    assert [c["monotonic"] for c in spy] == [False] * 5  # exp(εu/(2Δ')), DP-AGD's exponent
    assert [c["m"] for c in spy] == [2 * problem.dim] * 5  # Ω = parent ± δ e_j

    assert ledger.summary()["n_charges"] == 5  # exactly the selections, one charge each
    assert [(e.label, e.event, e.count) for e in ledger.entries] == [("privgene.selection", PureDPEvent(eps_sel), 5)]
    assert ledger.eps_spent <= 0.8
    assert ledger.eps_spent == pytest.approx(0.8, rel=1e-9)


def test_clipping_caps_and_the_regulariser_adds_to_the_sensitivity(spy):
    problem = _problem(reg=0.0)
    ledger = Ledger(1.0, 1e-8, PureDPAccountant())
    PrivGene(rounds=3, clip_obj=0.3).fit(problem, ledger, np.random.default_rng(0), Tracer(problem, ledger))
    assert [c["sensitivity"] for c in spy] == [0.3] * 3  # min(C, 2δ_t) with 2δ_t ≥ 0.9

    # hand example: children {0}, δ = 0.5 → D₁ = 1; norms² of ±0.5e_j all 0.25 → no regulariser term
    pop = 0.5 * np.vstack([np.eye(2), -np.eye(2)])
    assert eem_sensitivity(pop, l1_diameter=1.0, clip=None, lipschitz=1.0, feature_bound=1.0, reg=0.1) == 1.0
    # parent (2, 0): norms² 6.25, 2.25, 4.25, 4.25 → (μ/2)·4 = 0.2 on top of min(C, G·B·D₁) = min(0.7, 2·1)
    pop = np.array([2.0, 0.0]) + pop
    assert eem_sensitivity(pop, l1_diameter=1.0, clip=0.7, lipschitz=1.0, feature_bound=2.0, reg=0.1) == pytest.approx(
        0.9
    )
    assert eem_sensitivity(pop, l1_diameter=1.0, clip=0.7, lipschitz=1.0, feature_bound=None, reg=0.0) == 0.7
    with pytest.raises(ValueError, match="unbounded"):
        eem_sensitivity(pop, l1_diameter=1.0, clip=None, lipschitz=1.0, feature_bound=None, reg=0.0)


def test_several_parents_split_the_budget_and_the_bound_covers_the_population(spy, monkeypatch):
    populations = []
    real = PrivGene._mutants

    def recording(self, children, delta, rng):
        populations.append(real(self, children, delta, rng))
        return populations[-1]

    monkeypatch.setattr(PrivGene, "_mutants", recording)
    problem = _problem(reg=0.01)
    ledger = Ledger(2.0, 1e-8, PureDPAccountant())
    algo = PrivGene(rounds=6, n_parents=3, population_size=12, crossover="uniform", clip_obj=5.0)
    algo.fit(problem, ledger, np.random.default_rng(3), Tracer(problem, ledger))
    assert ledger.summary()["n_charges"] == 18 and len(spy) == 18
    assert spy[0]["epsilon"] == pytest.approx(2.0 / 18, rel=1e-12)
    assert [c["m"] for c in spy[:3]] == [12, 11, 10]  # without replacement
    assert ledger.eps_spent <= 2.0 and ledger.eps_spent == pytest.approx(2.0, rel=1e-9)
    for t, pop in enumerate(populations):  # Δ' used ≥ the exact bound on this population
        l1 = max(np.abs(pop - p).sum(axis=1).max() for p in pop)
        sq = (pop**2).sum(axis=1)
        exact = min(5.0, l1) + 0.5 * 0.01 * (sq.max() - sq.min())
        assert spy[3 * t]["sensitivity"] >= exact - 1e-12


def test_per_selection_epsilon_uses_the_whole_budget_and_never_more():
    for eps, count in [(0.8, 36), (1.6, 72), (0.05, 3), (1.0, 7)]:
        ledger = Ledger(eps, 1e-8, PureDPAccountant())
        x = per_selection_epsilon(ledger, count)
        assert ledger.can_afford(PureDPEvent(x), count)
        for _ in range(count):
            ledger.charge(PureDPEvent(x))
        assert eps * (1 - 1e-12) <= ledger.eps_spent <= eps
    rdp = Ledger(1.0, 1e-6, RDPAccountant())  # any accountant: the largest affordable split
    x = per_selection_epsilon(rdp, 50)
    assert rdp.can_afford(PureDPEvent(x), 50) and not rdp.can_afford(PureDPEvent(x * (1 + 1e-9)), 50)


def test_per_selection_epsilon_is_remembered_only_for_the_same_ledger_state(monkeypatch):
    """A fresh ledger of the same budget and accountant configuration gets the remembered answer without a search;
    one that has been charged, or that has another conversion, is searched again and answers differently."""
    from dpbench.algorithms import privgene
    from dpbench.recent_answers import RecentAnswers

    monkeypatch.setattr(privgene, "_PER_SELECTION", RecentAnswers(8))
    searches = []
    real = privgene._bisect_per_selection_epsilon
    monkeypatch.setattr(privgene, "_bisect_per_selection_epsilon", lambda *a: searches.append(1) or real(*a))
    first = per_selection_epsilon(Ledger(1.0, 1e-6, RDPAccountant()), 50)
    assert per_selection_epsilon(Ledger(1.0, 1e-6, RDPAccountant()), 50) == first and len(searches) == 1
    charged = Ledger(1.0, 1e-6, RDPAccountant())
    charged.charge(PureDPEvent(0.01))
    assert per_selection_epsilon(charged, 50) < first and len(searches) == 2
    filtered = per_selection_epsilon(Ledger(1.0, 1e-6, RDPAccountant(conversion="filter")), 50)
    assert filtered != first and len(searches) == 3
    assert per_selection_epsilon(Ledger(1.0, 1e-6, RDPAccountant()), 49) != first and len(searches) == 4


# ----------------------------------------------------------------------------------- the mechanism
def test_selection_probabilities_have_the_closed_form():
    u = np.array([-3.0, -1.0, -2.5, 0.0, -7.0])
    expected = np.exp(0.6 * u / (2 * 0.5))
    assert selection_probabilities(u, sensitivity=0.5, epsilon=0.6) == pytest.approx(
        expected / expected.sum(), rel=1e-12
    )
    tight = np.exp(0.6 * u / 0.5)
    assert selection_probabilities(u, sensitivity=0.5, epsilon=0.6, tight=True) == pytest.approx(
        tight / tight.sum(), rel=1e-12
    )


def _slow_fitness(problem, w, clip):
    total = 0.0
    for i in range(problem.n):
        x = problem.X[i].toarray().ravel() if sp.issparse(problem.X) else problem.X[i]
        loss = math.log1p(math.exp(-problem.y[i] * float(x @ w)))
        total += loss if clip is None else min(loss, clip)
    return total + problem.n * 0.5 * problem.reg * float(w @ w)


def test_privgene_selects_with_the_closed_form_law():
    """One round from w = 0: Ω = {±δ₀e_j}; the returned model is candidate k with probability
    ∝ exp(ε·u_k/(2Δ')), Δ' = 2δ₀ = 1, u = −fitness. χ² over 3000 seeded runs."""
    problem = _problem(n=40, d=2, seed=5)
    eps = 0.5
    candidates = 0.5 * np.vstack([np.eye(2), -np.eye(2)])
    u = -np.array([_slow_fitness(problem, w, None) for w in candidates])
    p = np.exp(eps * (u - u.max()) / (2 * 1.0))
    p /= p.sum()
    assert p.min() > 0.05  # a non-degenerate law, so the test has power
    counts = np.zeros(4)
    algo = PrivGene(rounds=1)
    for seed in range(3000):
        ledger = Ledger(eps, 1e-8, PureDPAccountant())
        w = algo.fit(problem, ledger, np.random.default_rng(seed), Tracer(problem, None)).w
        counts[int(np.flatnonzero(np.all(candidates == w, axis=1))[0])] += 1
    assert chisquare(counts, 3000 * p).pvalue > 1e-3
    # and a wrong sensitivity (Δ' = δ₀ instead of 2δ₀) is rejected by the same data
    wrong = np.exp(eps * (u - u.max()) / (2 * 0.5))
    assert chisquare(counts, 3000 * wrong / wrong.sum()).pvalue < 1e-3


@pytest.mark.parametrize("tight, bound", [(False, 0.5), (True, 1.0)])
def test_neighbouring_datasets_change_the_selection_law_by_at_most_eps(tight, bound):
    """Add a worst-case record z (x = 1, |x_j| ≤ B = 1) and compare the EEM laws over the same Ω:
    max |log p_D − log p_D'| ≤ ε (default exponent: ≤ ε/2 under add/remove)."""
    X, y = _data(60, 3, seed=1)
    eps, delta = 0.7, 0.5
    pop = np.array([0.3, -0.2, 0.1]) + delta * np.vstack([np.eye(3), -np.eye(3)])
    sens = eem_sensitivity(pop, l1_diameter=2 * delta, clip=None, lipschitz=1.0, feature_bound=1.0, reg=0.0)
    worst = 0.0
    for label in (1.0, -1.0):
        for z in (np.ones(3), np.array([1.0, 0.0, 1.0])):
            laws = []
            for Xs, ys in ((X, y), (np.vstack([X, z]), np.append(y, label))):
                prob = make_problem(Xs, ys, loss="logistic", reg=0.0)
                laws.append(
                    selection_probabilities(
                        -population_fitness(prob, pop.T, None), sensitivity=sens, epsilon=eps, tight=tight
                    )
                )
            worst = max(worst, float(np.max(np.abs(np.log(laws[0]) - np.log(laws[1])))))
    assert worst <= bound * eps + 1e-12
    assert worst > 0.5 * bound * eps  # the bound is not vacuous here


# ----------------------------------------------------------------------------------- fitness
@pytest.mark.parametrize("clip", [None, 0.8])
@pytest.mark.parametrize("sparse", [False, True])
def test_fitness_is_the_vectorised_clipped_loss(clip, sparse, monkeypatch):
    X, y = _data(30, 4, seed=2)
    problem = make_problem(sp.csr_matrix(X) if sparse else X, y, loss="logistic", reg=0.05)
    W = np.random.default_rng(0).normal(scale=2.0, size=(4, 7))
    slow = np.array([_slow_fitness(problem, W[:, k], clip) for k in range(7)])
    before = problem.counts.obj_evals
    assert population_fitness(problem, W, clip) == pytest.approx(slow, rel=1e-12)
    assert problem.counts.obj_evals - before == 30 * 7
    if clip is not None:
        assert problem.clipped_loss_sum(W[:, 0], None, clip) + 30 * 0.025 * W[:, 0] @ W[:, 0] == pytest.approx(slow[0])
    monkeypatch.setattr(privgene_module, "_BLOCK_ELEMENTS", 60)  # two candidates per block
    assert population_fitness(problem, W, clip) == pytest.approx(slow, rel=1e-12)


# ----------------------------------------------------------------------------------- sanity
def test_large_budget_reaches_nonprivate_accuracy():
    """Measured: non-private test accuracy 0.945; PrivGene at ε = 10⁶, r = 150 → 0.941 (train
    objective 0.368 vs F* = 0.264: the shrinking mutations cover a path of Σδ_t ≤ 10 per axis)."""
    X, y = _data(4000, 6, seed=0)
    train, test = slice(0, 3000), slice(3000, None)
    problem = make_problem(X[train], y[train], loss="logistic", reg=0.001)
    reference = NonPrivate().fit(problem, None, np.random.default_rng(0), Tracer(problem, None))
    ledger = Ledger(1e6, 1e-8, PureDPAccountant())
    result = PrivGene(rounds=150).fit(problem, ledger, np.random.default_rng(1), Tracer(problem, ledger))

    def accuracy(w):
        return float(np.mean(np.where(X[test] @ w >= 0, 1.0, -1.0) == y[test]))

    assert accuracy(reference.w) > 0.9
    assert accuracy(result.w) >= accuracy(reference.w) - 0.015
    assert problem.evaluate_objective(result.w) < 0.6 * problem.evaluate_objective(np.zeros(6))
    assert ledger.summary()["n_charges"] == 150


def test_small_budget_stays_private_and_runs_the_paper_round_count():
    problem = _problem(n=4000, d=4)
    ledger = Ledger(0.4, 1e-8, PureDPAccountant())
    result = PrivGene().fit(problem, ledger, np.random.default_rng(0), Tracer(problem, ledger))
    assert result.n_iterations == 2 == ledger.summary()["n_charges"]  # round(4000·0.4/800)
    assert ledger.eps_spent <= 0.4


# ----------------------------------------------------------------------------------- validation
def test_features_beyond_the_public_bound_are_clipped_never_checked():
    """Entries up to 2 with B = 1: PrivGene does not look at them (no abort that would reveal the data)
    but trains on entries clipped to [−B, B], exactly as on data clipped beforehand."""
    X, y = _data(50, 3, seed=0)
    problem = make_problem(2.0 * X, y, loss="logistic", reg=0.001)
    clipped = make_problem(np.clip(2.0 * X, -1.0, 1.0), y, loss="logistic", reg=0.001, public_feature_bound=1.0)
    outputs = []
    for prob in (problem, clipped):
        ledger = Ledger(1.0, 1e-8, PureDPAccountant())
        outputs.append(PrivGene(rounds=2).fit(prob, ledger, np.random.default_rng(0), Tracer(prob, ledger)).w)
    assert np.array_equal(outputs[0], outputs[1])
    ledger = Ledger(1.0, 1e-8, PureDPAccountant())
    # with clipping alone the bound is not needed: Δ' = C
    PrivGene(rounds=2, feature_bound=None, clip_obj=1.0).fit(
        problem, ledger, np.random.default_rng(0), Tracer(problem, ledger)
    )
    assert ledger.summary()["n_charges"] == 2


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"mutation_scale": 0.0}, "mutation_scale must be a finite number > 0"),
        ({"mutation_decay": 1.5}, r"mutation_decay must be a finite number in \(0, 1\]"),
        ({"n_parents": 0}, "n_parents must be an integer"),
        ({"rounds": 0}, "rounds must be an integer"),
        ({"clip_obj": None, "feature_bound": None}, "cannot both be null"),
        ({"crossover": "two_point"}, "crossover must be one of"),
        ({"n_parents": 5, "population_size": 3}, "population_size"),
        ({"clip_obj": -1.0}, "clip_obj must be a finite number > 0 or null"),
    ],
)
def test_bad_hyper_parameters_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PrivGene(**kwargs)


def test_crossover_children_take_each_coordinate_from_a_parent():
    parents = np.arange(12.0).reshape(3, 4)
    for kind in ("one_point", "uniform"):
        children = PrivGene(n_parents=3, crossover=kind)._children(parents, np.random.default_rng(0))
        assert children.shape == (3, 4)
        assert all(np.isin(children[:, j], parents[:, j]).all() for j in range(4))
    assert np.array_equal(PrivGene()._children(parents[:1], np.random.default_rng(0)), parents[:1])


@pytest.mark.parametrize("loss", ["logistic", "huber_hinge"])
@pytest.mark.parametrize("clip", [None, 0.8])
@pytest.mark.parametrize("sparse", [False, True])
def test_coordinate_move_scorer_equals_the_population_fitness(loss, clip, sparse):
    X, y = _data(40, 5, seed=3)
    X[X < 0.4] = 0.0  # zeros, so that the nonzero pass skips rows
    problem = make_problem(sp.csr_matrix(X) if sparse else X, y, loss=loss, reg=0.05)
    rng = np.random.default_rng(1)
    children = rng.normal(size=(2, 5))
    population = PrivGene()._mutants(children, 0.3, rng)
    expected = population_fitness(problem, population.T, clip)
    scorer = CoordinateMoveScorer(problem, clip)
    before = problem.counts.obj_evals
    got = np.concatenate([scorer(child, 0.3) for child in children])
    assert got == pytest.approx(expected, rel=1e-12)
    assert problem.counts.obj_evals - before == 40 * 2 * 5 * 2


def _exact_selections(monkeypatch) -> None:
    """PrivGene without the screened selection: every utility computed, as before the bounds existed."""
    monkeypatch.setattr(PrivGene, "_screening_bounds", lambda self, problem: None)


def _fit_record(problem, eps: float, seed: int, **params):
    from dpbench.privacy.accountants import ZCDPAccountant

    accountant = ZCDPAccountant() if params.get("fidelity") == "authors_code" else PureDPAccountant()
    ledger = Ledger(eps, 1e-8, accountant)
    tracer = Tracer(problem, ledger)
    result = PrivGene(**params).fit(problem, ledger, np.random.default_rng(seed), tracer)
    return result, ledger, problem.counts.obj_evals, tracer


@pytest.mark.parametrize(
    ("sparse", "params"),
    [
        (False, {}),
        (True, {}),
        (False, {"tight": True}),
        (True, {"fidelity": "authors_code"}),
        (False, {"init_scale": 0.3}),
    ],
)
def test_screened_selections_fit_bit_for_bit_what_exact_ones_fit(sparse, params, monkeypatch):
    """Three fits each (ε = 0.4, 1.6, 6.4; 12 to 70 rounds): weights, info, ledger, evaluation counts and trace the
    same as with every utility computed, and most selections decided without them (else the test would be vacuous)."""
    X, y = _data(2500, 12, seed=4)
    if sparse:
        X[X < 0.5] = 0.0
        X = sp.csr_matrix(X)
    computed, real = [], PrivGene._utilities

    def counting(self, *args):
        computed.append(1)
        return real(self, *args)

    rounds = 0
    for eps, seed in [(0.4, 1), (1.6, 2), (6.4, 3)]:
        setting = {"rounds_divisor": 80.0, "max_rounds": 70} | params
        with monkeypatch.context() as patched:
            patched.setattr(PrivGene, "_utilities", counting)
            screened = _fit_record(make_problem(X, y, loss="logistic", reg=0.01), eps, seed, **setting)
        with monkeypatch.context() as patched:
            _exact_selections(patched)
            exact = _fit_record(make_problem(X, y, loss="logistic", reg=0.01), eps, seed, **setting)
        assert np.array_equal(screened[0].w, exact[0].w)
        assert screened[0].n_iterations == exact[0].n_iterations and screened[0].info == exact[0].info
        assert screened[1].entries == exact[1].entries and screened[1].eps_spent == exact[1].eps_spent
        assert screened[2] == exact[2]
        assert screened[3].rows == exact[3].rows
        rounds += screened[0].n_iterations
    assert rounds > 100 and len(computed) < 0.5 * rounds


@pytest.mark.parametrize("sparse", [False, True])
def test_coordinate_move_bounds_hold_the_exact_loss_sums(sparse):
    """300 random points and move sizes (10⁻⁴ … 2) on dense and sparse data: population_fitness and
    CoordinateMoveScorer (μ = 0: the loss sums) inside the Taylor bounds, which are as narrow as δ²Q_j plus
    rounding, and inside the direct sums' bounds of four moves, which are rounding only."""
    from dpbench.problems.screened_losses import CoordinateMoveBounds

    X, y = _data(3000, 9, seed=5)
    if sparse:
        X[X < 0.6] = 0.0
        X = sp.csr_matrix(X)
    problem = make_problem(X, y, loss="logistic", reg=0.0)
    bounds, scorer = CoordinateMoveBounds.for_problem(problem), CoordinateMoveScorer(problem, None)
    squares = np.asarray((X.multiply(X) if sparse else X * X).sum(axis=0)).ravel()
    rng = np.random.default_rng(6)
    for _ in range(300):
        point, delta = rng.normal(0.0, 2.0, size=9), 10.0 ** rng.uniform(-4, 0.3)
        population = PrivGene()._mutants(point[None, :], delta, rng)
        sums = bounds.at(point, delta)
        middle, error = sums.taylor()
        moves = rng.choice(18, size=4, replace=False)
        direct, direct_error = sums.direct(moves)
        for exact in (population_fitness(problem, population.T, None), scorer(point, delta)):
            assert np.all(np.abs(exact - middle) <= error)
            assert np.all(np.abs(exact[moves] - direct) <= direct_error)
        assert np.all(error <= np.tile(squares, 2) * delta**2 / 16 + 1e-7 * (1.0 + np.abs(middle)))
        assert np.all(direct_error <= 1e-7 * (1.0 + np.abs(direct)))
    assert CoordinateMoveBounds.for_problem(make_problem(X, y, loss="huber_hinge", reg=0.0)) is None
    assert CoordinateMoveBounds.for_problem(make_problem(X, 2.0 * y, loss="logistic", reg=0.0)) is None
