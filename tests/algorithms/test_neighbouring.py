"""Every method states how it meets each neighbouring relation (``Algorithm.relations``), and it holds as implemented.

For each relation the test reproduces the reason on a small constructed dataset, with the method's own
code (its fit with the noisy release stubbed out to capture what it feeds the mechanism and the
sensitivity it charges, or the helper that computes the released quantity):

* ``add_remove`` — the charged quantity on D and on D minus a record, the method given the same public
  n̄ = |D| (``public_n``) both times: it moves by at most the charged sensitivity (often all of it).
  Were n̄ the size of the data the method is given, removing the record would move it by MORE: that is
  why every normaliser, rate and round count reads ``problem.n_public``.
* ``replace_one`` (and liu_dda's one-node-sample version) — replacing one record by a worst-case-ish
  other moves the released quantity by at most the charged sensitivity, and, where the charge is the
  replace-one 2C, by (nearly) all of it: a charge of the add/remove C would fail.
* han_pwa's offset vector — moving every offset by b_max moves each mechanism's input by at most the
  sensitivity it charges (attained by the uniform shift).
* kusner_bo's validation rows — adding or removing a validation row moves every gain by at most the
  V-dependent part of the charge, with the public |V|.
"""

from __future__ import annotations

import numpy as np
import pytest

import dpbench.algorithms.chen_lee as chen_lee_module
import dpbench.algorithms.dp_agd as dp_agd_module
import dpbench.algorithms.dp_sgd as dp_sgd_module
import dpbench.algorithms.kuru as kuru_module
import dpbench.algorithms.objpert as objpert_module
import dpbench.algorithms.output_perturbation as outpert_module
import dpbench.bo.algorithms as bo_module
from dpbench.algorithms.base import Tracer
from dpbench.algorithms.chen_lee import DPBLGD, DPBLSGD, DPBLSGDAC, ArmijoQueries
from dpbench.algorithms.dp_agd import DPAGD
from dpbench.algorithms.dp_sgd import DPSGD
from dpbench.algorithms.kuru import KURU_METHODS
from dpbench.algorithms.liu_dda import DDA_METHODS
from dpbench.algorithms.objpert import ObjPert
from dpbench.algorithms.output_perturbation import OutPertGD, OutPertRSGD
from dpbench.algorithms.privgene import PrivGene, eem_sensitivity, population_fitness
from dpbench.algorithms.registry import ALGORITHMS
from dpbench.bo.algorithms import BOProblem, KusnerAlg1, KusnerAlg2, KusnerAlg3
from dpbench.bo.sensitivity import alg3_value_sensitivity, c_term
from dpbench.bo.targets import ScoreMatrix
from dpbench.dda.accounting import release_event
from dpbench.dda.simulator import noisy_subgradients, split_rows
from dpbench.privacy.accountants import PureDPAccountant, RDPAccountant, ZCDPAccountant
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.neighbouring import MODES, RELATIONS
from dpbench.problems import GLMProblem, make_problem
from dpbench.pwa import (
    laplace_data,
    laplace_solution,
    private_subgradient,
    subgradient_index_probabilities,
)
from dpbench.pwa import make_problem as make_pwa_problem

TOL = 1e-9

# The reviewed table of the five papers' methods and their baselines: how each meets each relation, the
# relation its paper proves and its privacy unit. A changed entry must be reviewed here and covered by a test
# below; a method added later states and proves its relations in its own test module, beside the method
# (as tests/algorithms/test_dp_adam.py does), so that a new method is its file and its test.
GROUP = {"add_remove": "native", "replace_one": "group_privacy"}  # n̄ public; replace-one by group privacy
BOTH = {"add_remove": "native", "replace_one": "native"}
REPLACE = {"replace_one": "native"}
EXPECTED = {
    "nonprivate": None,
    "majority": None,
    **dict.fromkeys(
        ("dp_sgd", "dp_blsgd", "dp_blsgd_ac", "dp_blgd", "dp_agd", "privgene"), (GROUP, "add_remove", "record")
    ),
    "objpert": (BOTH, "replace_one", "record"),
    "outpert_gd": (BOTH, "replace_one", "record"),
    "outpert_rsgd": (REPLACE, "replace_one", "record"),
    **dict.fromkeys(
        ("dp_gd", "dp_hb", "dp_nag", "dp_nag_opt", "dp_masg", "dp_masg_opt"), (BOTH, "replace_one", "record")
    ),
    "dp_dda": (REPLACE, "replace_one", "node_sample"),
    "dp_dda_all_nodes": (REPLACE, "replace_one", "node_sample"),
    **dict.fromkeys(
        ("pwa_laplace_data", "pwa_laplace_solution", "pwa_exponential", "pwa_subgradient"),
        (REPLACE, "replace_one", "offset_vector"),
    ),
    "pwa_subgradient_nonprivate": None,
    **{
        name: ({"add_remove": "native"}, "add_remove", "validation_row")
        for name in ("kusner_alg1", "kusner_alg2", "kusner_alg3")
    },
    "kusner_mtgp_likelihood": None,
}


# ----------------------------------------------------------------------------------------- labels
@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_every_algorithm_declares_allowed_relations(name):
    cls = ALGORITHMS[name]
    assert set(cls.relations) <= set(RELATIONS) and set(cls.relations.values()) <= set(MODES)
    assert cls.relations.get(cls.paper_relation) == "native", f"{name}: its paper's relation must be native"
    assert set(cls.relations) == set(RELATIONS) or cls.relation_reason, f"{name}: a refused relation needs a reason"


def test_labels_match_the_reviewed_table():
    table = {
        name: (dict(cls.relations), cls.paper_relation, cls.privacy_unit) if cls.private else None
        for name, cls in ALGORITHMS.items()
    }
    assert set(EXPECTED) <= set(table)
    assert {name: table[name] for name in EXPECTED} == EXPECTED


def test_kuru_subsampling_is_replace_one_only():
    for cls in KURU_METHODS:
        assert cls(batch_size=100).relation_mode("add_remove") is None
        assert cls(batch_size=100).relation_mode("replace_one") == cls().relation_mode("add_remove") == "native"


# ----------------------------------------------------------------------------------------- helpers
def _ledger(accountant, epsilon: float = 1.0, delta: float = 1e-5, neighbouring: str = "add_remove") -> Ledger:
    return Ledger(epsilon, delta, accountant, neighbouring=neighbouring)


def _without(X: np.ndarray, y: np.ndarray, z: int) -> tuple[np.ndarray, np.ndarray]:
    keep = np.arange(y.size) != z
    return X[keep], y[keep]


def _removed_public_n(X, y, z: int, **kwargs) -> GLMProblem:
    """D minus record z, the method told the public n̄ = |D| (the add/remove neighbour as the engine
    runs it: n̄ is fixed before the rows are read)."""
    return make_problem(*_without(X, y, z), public_n=y.size, **kwargs)


def _fit(algo, problem, ledger, seed: int = 0):
    return algo.fit(problem, ledger, np.random.default_rng(seed), Tracer(problem, ledger))


def _capture(monkeypatch, module, name: str, result):
    """Replace ``module.name`` (a mechanism) by a stub that records its arguments and returns
    ``result(value, kwargs)`` without noise (and without charging)."""
    calls: list[dict] = []

    def stub(value, *args, **kwargs):
        calls.append({"value": value, "args": args, **kwargs})
        return result(value, kwargs)

    monkeypatch.setattr(module, name, stub)
    return calls


def _capture_release(monkeypatch, module):
    """Replace ``module.GaussianRelease`` by one that records its arguments and releases each value
    without noise (and without charging)."""
    calls: list[dict] = []

    class NoiselessRelease:
        def __init__(self, **kwargs):
            calls.append(kwargs)

        def __call__(self, value):
            return np.array(value, dtype=float)

    monkeypatch.setattr(module, "GaussianRelease", NoiselessRelease)
    return calls


# ----------------------------------------------------------------------------------------- add_remove
def test_dp_sgd_normalised_gradient_is_add_remove_with_public_n(monkeypatch):
    """DP-SGD releases Σ_B clip(∇ℓ_i)/(qn̄) (+ noise of std σC/(qn̄)); the charged sensitivity of that
    input is C/(qn̄). With n̄ = 10 the default lot ⌊√n̄ + 10⌋ ≥ n̄ gives q = 1, so the step is
    deterministic: removing a record whose clipped gradient opposes the others' moves the input by
    exactly C/n̄ when n̄ stays public — and by 2C/n if n followed the data."""
    calls = _capture_release(monkeypatch, dp_sgd_module)
    clip, n = 1.0, 10
    X = np.tile([10.0, 0.0], (n, 1))
    y = np.ones(n)
    y[0] = -1.0  # at w = 0 its clipped gradient is +C·e₁, everyone else's −C·e₁

    def released_input(problem):
        algo = DPSGD(learning_rate=1.0, clip=clip, max_iterations=1)
        result = _fit(algo, problem, _ledger(RDPAccountant(), epsilon=10.0))
        q = result.info["sampling_rate"]
        call = calls[-1]
        assert call["sensitivity"] == clip and call["sampling_rate"] == q
        return -result.w, call["sensitivity"] / (q * problem.n_public), q  # w₁ = −(Σ clip/(qn̄)) from w₀ = 0

    on_d, charged, q = released_input(make_problem(X, y, loss="logistic", reg=0.0))
    assert q == 1.0
    public, _, _ = released_input(_removed_public_n(X, y, 0, loss="logistic", reg=0.0))
    own_n, _, _ = released_input(make_problem(*_without(X, y, 0), loss="logistic", reg=0.0))
    assert np.linalg.norm(on_d - public) == pytest.approx(charged)  # attained, never exceeded
    assert np.linalg.norm(on_d - own_n) == pytest.approx(2 * clip / n) and 2 * clip / n > 1.5 * charged


def test_dp_sgd_sampling_rate_is_public(monkeypatch):
    """With q < 1 the rate q = L/n̄ is a public constant: removing a record leaves every other record's
    inclusion probability as analysed. Were it L/n of the data given, it would move."""
    _capture_release(monkeypatch, dp_sgd_module)
    rng = np.random.default_rng(1)
    X, y = rng.uniform(-1, 1, size=(400, 3)), np.where(rng.random(400) < 0.5, -1.0, 1.0)

    def rate(problem):
        return _fit(DPSGD(max_iterations=1), problem, _ledger(RDPAccountant())).info["sampling_rate"]

    q_d = rate(make_problem(X, y, loss="logistic", reg=0.0))
    q_public = rate(_removed_public_n(X, y, 0, loss="logistic", reg=0.0))
    q_own_n = rate(make_problem(*_without(X, y, 0), loss="logistic", reg=0.0))
    assert q_d < 1.0 and q_public == q_d and q_own_n != q_d


def _armijo_data(n: int):
    """d = 1, w = 10, g = 20 (η₀ = 1 reaches v = −10). Every record but 0 has clipped loss ≈ 0 at w
    and C_obj at v; record 0 the reverse: f_B(w) − f_B(v) is as negative as it gets, and record 0 is
    the one whose removal also shrinks the denominator L."""
    X = np.ones((n, 1))
    y = np.ones(n)
    y[0] = -1.0
    return X, y, np.array([10.0]), np.array([20.0])


@pytest.mark.parametrize(
    "algo",
    [
        DPBLGD(init_scale=0.0, max_iterations=1),
        DPBLSGD(sampling_rate=0.5, init_scale=0.0, max_iterations=1),
        DPBLSGDAC(sampling_rate=0.5, init_scale=0.0, max_iterations=1),
    ],
    ids=lambda a: a.name,
)
def test_chen_lee_armijo_query_is_add_remove_with_public_n(monkeypatch, algo):
    """NoisyBTLS is charged Δ_q = C_obj/L for the Armijo queries (:class:`ArmijoQueries`), L = qn̄. The
    test runs the method's fit on D and on D minus a record with AboveThreshold stubbed, takes the
    queries object it built (its normaliser L and the sensitivity it charged), and evaluates the first
    query on the full batch (a possible Poisson batch) at a fixed (w, g): removing record 0 with n̄
    public moves it by ≤ Δ_q; had L followed the data's n, by ≈ 2Δ_q."""
    seen: list[tuple[ArmijoQueries, float]] = []

    def stub(queries, threshold, *, max_queries, sensitivity, **kwargs):
        seen.append((queries, sensitivity))
        return 0  # the first step is accepted: the iteration ends

    monkeypatch.setattr(chen_lee_module, "above_threshold", stub)
    n = 20
    X, y, w, g = _armijo_data(n)

    def built_queries(problem):
        _fit(algo, problem, _ledger(RDPAccountant(**algo.accountant_options())))
        queries, sensitivity = seen[-1]
        assert sensitivity == queries.sensitivity == algo.clip_obj / queries._normaliser
        return queries

    on_d = built_queries(make_problem(X, y, loss="logistic", reg=0.0))
    on_public = built_queries(_removed_public_n(X, y, 0, loss="logistic", reg=0.0))
    on_own_n = built_queries(make_problem(*_without(X, y, 0), loss="logistic", reg=0.0))
    L = on_d._normaliser
    assert on_public._normaliser == L and on_own_n._normaliser != L
    assert pytest.approx(getattr(algo, "sampling_rate", 1.0) * n) == L

    def first_query(problem, batch, normaliser):
        q = ArmijoQueries(
            problem,
            w,
            g,
            batch,
            eta0=1.0,
            alpha=algo.alpha,
            beta=algo.beta,
            obj_clip=algo.clip_obj,
            normaliser=normaliser,
        )
        return q.value(0)

    full = None if isinstance(algo, DPBLGD) else np.arange(n)
    rest = None if isinstance(algo, DPBLGD) else np.arange(n - 1)
    value = first_query(make_problem(X, y, loss="logistic", reg=0.0), full, L)
    own_n = first_query(make_problem(*_without(X, y, 0), loss="logistic", reg=0.0), rest, on_own_n._normaliser)
    public = first_query(_removed_public_n(X, y, 0, loss="logistic", reg=0.0), rest, L)

    charged = on_d.sensitivity
    assert abs(value - own_n) > 1.9 * charged  # ≈ 2·C_obj/L: L would move with n
    assert abs(value - public) <= charged * (1 + TOL)


def test_dp_agd_noisy_min_scores_are_add_remove_with_public_n(monkeypatch):
    """DP-AGD's noisy min is charged C_obj (monotone). Its scores Σ min(ℓ_i(v), C_obj) + n̄(μ/2)‖v‖²
    move by ≤ C_obj, all in one direction, when a record is removed with n̄ public; had n followed the
    data, by C_obj + (μ/2)‖v‖²."""
    calls = _capture(monkeypatch, dp_agd_module, "report_noisy_max_screened", lambda value, kw: 1)
    algo = DPAGD(max_iterations=1)
    n, reg = 12, 0.1
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(n, 1))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    X[0], y[0] = 1.0, -1.0  # at v = 10 its loss ≈ 10 > C_obj: clipped to C_obj
    _fit(algo, make_problem(X, y, loss="logistic", reg=reg), _ledger(ZCDPAccountant()))
    charged = calls[-1]["sensitivity"]
    assert charged == algo.clip_obj and calls[-1]["monotonic"] is True

    w, direction, steps = np.zeros(1), np.array([-5.0]), np.array([0.0, 1.0, 2.0])
    candidates = w[None, :] - steps[:, None] * direction[None, :]  # v = 0, 5, 10

    def scores(problem):
        return algo._scores(problem, problem.X @ w, problem.X @ direction, steps, candidates)

    on_d = scores(make_problem(X, y, loss="logistic", reg=reg))
    own_n = scores(make_problem(*_without(X, y, 0), loss="logistic", reg=reg))
    public = scores(_removed_public_n(X, y, 0, loss="logistic", reg=reg))

    assert np.max(np.abs(on_d - own_n)) > charged + 0.5 * reg * 100 * 0.99  # C_obj + (μ/2)‖v‖² at v = 10
    assert np.all(on_d - public >= 0) and np.max(on_d - public) <= charged * (1 + TOL)


def _privgene_outputs(problem, algo, seeds):
    ledger_results = [_fit(algo, problem, _ledger(PureDPAccountant()), seed) for seed in seeds]
    return [(r.w, r.info["rounds"]) for r in ledger_results]


def _one_round(w: np.ndarray, delta0: float) -> bool:
    """Whether w lies on the support after one round from 0: a single coordinate moved by ±δ₀."""
    nonzero = np.flatnonzero(w)
    return nonzero.size == 1 and abs(abs(w[nonzero[0]]) - delta0) < 1e-12


def test_privgene_round_count_is_public():
    """By default r = round(n̄ε/800) (here the divisor is 4 so that a tiny n crosses a half-integer).
    With n̄ = 6 public, D and D minus a record both run 2 rounds. Were r computed from the data's n,
    D minus a record would run 1, and the outputs would lie on disjoint sets — no ε covers the pair."""
    algo = PrivGene(rounds_divisor=4.0)
    n, eps = 6, 1.0
    assert algo.rounds is None and algo.n_rounds(n, eps) == 2 and algo.n_rounds(n - 1, eps) == 1
    rng = np.random.default_rng(3)
    X = rng.uniform(0, 1, size=(n, 3))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    seeds = range(8)
    delta0 = algo.mutation_scale
    public = {"loss": "logistic", "reg": 0.01, "public_feature_bound": 1.0}  # X ∈ [0, 1]: PrivGene's B = 1 holds
    on_d = _privgene_outputs(make_problem(X, y, **public), algo, seeds)
    own_n = _privgene_outputs(make_problem(*_without(X, y, 0), **public), algo, seeds)
    public_n = _privgene_outputs(_removed_public_n(X, y, 0, **public), algo, seeds)
    assert all(r == 2 and not _one_round(w, delta0) for w, r in on_d)
    assert all(r == 1 and _one_round(w, delta0) for w, r in own_n)
    assert all(r == 2 and not _one_round(w, delta0) for w, r in public_n)


def test_privgene_selection_differences_within_sensitivity():
    """Each EEM selection is fine either way: every fitness difference φ(ω) − φ(ω′) moves by at most
    Δ'_t, which also covers (μ/2)(max‖ω‖² − min‖ω‖²) for an n that changed with the data; with n̄
    public only the data part G·B·D₁ can move."""
    algo = PrivGene()
    n, d, reg, delta = 10, 3, 0.5, 0.5
    rng = np.random.default_rng(4)
    X = rng.uniform(0, 1, size=(n, d))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    X[0], y[0] = np.ones(d), -1.0
    children = np.array([[2.0, -1.0, 0.5]])  # away from 0, so candidate norms differ
    population = algo._mutants(children, delta, rng)
    sensitivity = eem_sensitivity(
        population, l1_diameter=2 * delta, clip=algo.clip_obj, lipschitz=1.0, feature_bound=algo.feature_bound, reg=reg
    )

    def utilities(problem):
        return -population_fitness(problem, population.T, algo.clip_obj)

    data_part = 1.0 * algo.feature_bound * 2 * delta  # G·B·D₁, the part one record can move with n̄ public
    assert sensitivity > data_part  # the rest is (μ/2)(max‖ω‖² − min‖ω‖²), for an n that moved

    on_d = utilities(make_problem(X, y, loss="logistic", reg=reg))
    own_n = on_d - utilities(make_problem(*_without(X, y, 0), loss="logistic", reg=reg))
    public = on_d - utilities(_removed_public_n(X, y, 0, loss="logistic", reg=reg))
    # np.ptp(shift) = max over pairs (ω, ω′) of |Δu(ω) − Δu(ω′)|
    assert data_part < np.ptp(own_n) <= sensitivity * (1 + TOL)
    assert 0.5 * data_part < np.ptp(public) <= data_part * (1 + TOL)


# ----------------------------------------------------------------------------------------- replace_one
def _replace(X, y, z: int, x_new, y_new):
    X2, y2 = X.copy(), y.copy()
    X2[z], y2[z] = x_new, y_new
    return X2, y2


def _kuru_data(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Small rows and one record (a, +1), a = (3, −3), whose gradient the L1 clip cuts at x = 0."""
    rng = np.random.default_rng(5)
    X = rng.uniform(-0.2, 0.2, size=(n, 2))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    X[0], y[0] = [3.0, -3.0], 1.0
    return X, y


@pytest.mark.parametrize("cls", KURU_METHODS, ids=lambda c: c.name)
def test_kuru_gradient_is_replace_one(monkeypatch, cls):
    """kuru's noisy gradient is charged S₁/m = 2C/m (L1). At x = 0 records (a, +1) and (a, −1) have
    L1-clipped gradients ∓C·a/‖a‖₁: swapping one for the other moves the mean by exactly 2C/m — the
    replace-one charge, attained (an add/remove charge C/m would be exceeded)."""
    calls = _capture(monkeypatch, kuru_module, "subsampled_laplace_mechanism", lambda value, kw: value)
    n, clip = 8, 1.0
    X, y = _kuru_data(n)

    def mean_and_charge(X_, y_):
        problem = make_problem(X_, y_, loss="logistic", reg=0.02)
        _fit(
            cls(iterations=1, initial_value=0.0, l1_clip=clip, smoothness=5.1033),
            problem,
            _ledger(PureDPAccountant(), epsilon=10.0, neighbouring="replace_one"),
        )
        call = calls[0]
        calls.clear()
        assert call["population"] == n and call["sample_size"] == n
        return call["value"], call["sensitivity"]

    on_d, charged = mean_and_charge(X, y)
    replaced, _ = mean_and_charge(*_replace(X, y, 0, [3.0, -3.0], -1.0))
    moved = np.abs(on_d - replaced).sum()
    assert charged == pytest.approx(2 * clip / n)
    assert moved <= charged * (1 + TOL) and moved >= charged * (1 - 1e-6)


@pytest.mark.parametrize("cls", KURU_METHODS, ids=lambda c: c.name)
def test_kuru_gradient_is_add_remove_with_public_n(monkeypatch, cls):
    """Under add/remove (no subsampling) the mean is over the public n̄ and charged S₁/n̄ = C/n̄: removing
    a record whose L1-clipped gradient is C·a/‖a‖₁ moves the released mean by exactly C/n̄."""
    calls = _capture(monkeypatch, kuru_module, "subsampled_laplace_mechanism", lambda value, kw: value)
    n, clip = 8, 1.0
    X, y = _kuru_data(n)

    def mean_and_charge(problem):
        _fit(cls(iterations=1, l1_clip=clip, smoothness=5.1033), problem, _ledger(PureDPAccountant(), epsilon=10.0))
        call = calls.pop()
        assert call["population"] == call["sample_size"] == n and call["neighbouring"] == "add_remove"
        return call["value"], call["sensitivity"]

    on_d, charged = mean_and_charge(make_problem(X, y, loss="logistic", reg=0.02))
    removed, _ = mean_and_charge(_removed_public_n(X, y, 0, loss="logistic", reg=0.02))
    assert charged == pytest.approx(clip / n)
    assert np.abs(on_d - removed).sum() == pytest.approx(charged, rel=1e-9)


def _unit_rows(rng, n, d):
    X = rng.normal(size=(n, d))
    return X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0)


@pytest.mark.parametrize("algo", [OutPertGD(iterations=5), OutPertRSGD(epochs=2, batch_size=3)], ids=lambda a: a.name)
def test_output_perturbation_is_replace_one(monkeypatch, algo):
    """OutPert releases the trained model with the replace-one sensitivity (GD-2)/(RS-1); training on D
    and on D with one record swapped for its label-flipped copy (opposite gradients) — the same seed,
    hence the same permutation — moves the model by at most it."""
    seen: list[float] = []

    def release(w, sensitivity, ledger, rng, label, neighbouring="replace_one"):
        assert neighbouring == ledger.neighbouring == "replace_one"
        seen.append(sensitivity)
        return w, 1.0

    monkeypatch.setattr(outpert_module, "_release", release)
    rng = np.random.default_rng(6)
    n = 12
    X, y = _unit_rows(rng, n, 3), np.where(rng.random(n) < 0.5, -1.0, 1.0)
    X[0] = [1.0, 0.0, 0.0]
    models = []
    for X_, y_ in ((X, y), _replace(X, y, 0, X[0], -y[0])):
        ledger = _ledger(RDPAccountant(), neighbouring="replace_one")
        models.append(_fit(algo, make_problem(X_, y_, loss="logistic", reg=0.1), ledger, seed=7).w)
    assert seen[0] == seen[1]
    moved = np.linalg.norm(models[0] - models[1])
    assert 0.1 * seen[0] < moved <= seen[0] * (1 + TOL)


def test_output_perturbation_gd_is_add_remove_with_half_the_sensitivity(monkeypatch):
    """Under add/remove OutPert-GD's gradients differ by one term ∇ℓ_z/n̄ (norm ≤ G/n̄), so it charges
    half the replace-one Δ_T; removing a record with n̄ public moves the trained model by at most it."""
    seen: list[tuple[float, str]] = []

    def release(w, sensitivity, ledger, rng, label, neighbouring="replace_one"):
        seen.append((sensitivity, neighbouring))
        return w, 1.0

    monkeypatch.setattr(outpert_module, "_release", release)
    algo = OutPertGD(iterations=5)
    rng = np.random.default_rng(6)
    n = 12
    X, y = _unit_rows(rng, n, 3), np.where(rng.random(n) < 0.5, -1.0, 1.0)
    X[0] = [1.0, 0.0, 0.0]
    problems = (make_problem(X, y, loss="logistic", reg=0.1), _removed_public_n(X, y, 0, loss="logistic", reg=0.1))
    models = [_fit(algo, p, _ledger(RDPAccountant())).w for p in problems]
    (charged, relation), _ = seen
    assert relation == "add_remove"
    assert charged == pytest.approx(algo.sensitivity(problems[0], "replace_one") / 2)
    assert 0.1 * charged < np.linalg.norm(models[0] - models[1]) <= charged * (1 + TOL)


def test_objpert_noise_shift_under_both_relations(monkeypatch):
    """ObjPert's output w is D's minimiser for noise b; on D′ the noise giving the same w is
    b′ = −Σ∇ℓ_i(w) − n̄μw − Δw. Replace-one moves it by ‖∇ℓ_z(w) − ∇ℓ_z′(w)‖ ≤ 2ζ, what σ is
    calibrated to (Kifer et al. 2012 Thm 2), and nearly 2ζ for two records almost opposite and both far
    on the wrong side of w. Removing z with n̄ public moves it by ‖∇ℓ_z(w)‖ ≤ ζ; had n followed the
    data (n → n − 1), by ‖∇ℓ_z(w) + μw‖, here far above 2ζ."""
    n, d, reg, eps = 10, 2, 0.1, 1.0
    extra_reg = 2 * 0.25 / eps  # Δ = 2λ/ε, λ = 1/4 for the logistic loss
    b = -(n * reg + extra_reg) * 100.0 * np.array([1.0, 0.0])  # pushes w to ≈ 100·e₁
    calls = _capture(monkeypatch, objpert_module, "objective_perturbation_noise", lambda value, kw: b.copy())
    rng = np.random.default_rng(8)
    X, y = 0.3 * _unit_rows(rng, n, d), np.where(rng.random(n) < 0.5, -1.0, 1.0)
    X[0], y[0] = [-0.1, np.sqrt(0.99)], 1.0
    problem = make_problem(X, y, loss="logistic", reg=reg)
    w = _fit(ObjPert(), problem, _ledger("approx", epsilon=eps)).w
    zeta = calls[0]["gradient_bound"]
    assert zeta == 1.0 and calls[0]["epsilon"] == eps

    def noise_for(problem_):  # the b whose perturbed objective (sums over n̄) is stationary at w on problem_
        data_gradient_sum = problem_.n * (problem_.objective_and_gradient(w)[1] - reg * w)
        return -data_gradient_sum - problem_.n_public * reg * w - extra_reg * w

    assert np.linalg.norm(noise_for(problem) - b) < 1e-5 * np.linalg.norm(b)
    swapped = make_problem(*_replace(X, y, 0, [-0.1, -np.sqrt(0.99)], 1.0), loss="logistic", reg=reg)
    removed = make_problem(*_without(X, y, 0), loss="logistic", reg=reg)
    replace_shift = np.linalg.norm(noise_for(problem) - noise_for(swapped))
    assert 1.9 * zeta < replace_shift <= 2 * zeta * (1 + TOL)
    assert np.linalg.norm(noise_for(problem) - noise_for(removed)) > 4 * zeta
    public = _removed_public_n(X, y, 0, loss="logistic", reg=reg)
    assert 0.9 * zeta < np.linalg.norm(noise_for(problem) - noise_for(public)) <= zeta * (1 + TOL)


@pytest.mark.parametrize("cls", DDA_METHODS, ids=lambda c: c.name)
def test_liu_dda_release_is_replace_one_node_sample(cls):
    """A node's release is ĝ(ξ) clipped to L plus N(0, σ²I), charged as a Gaussian of sensitivity 2L
    (``release_event``). Replacing the node's sample by one with the opposite subgradient (rows of norm
    5L, clipped) moves ĝ by exactly 2L. The split itself re-deals every node's rows when N changes,
    so adding or removing a row is not a one-sample change."""
    assert cls.relations == {"replace_one": "native"} and cls.privacy_unit == "node_sample"
    L, sigma, q = 1.0, 3.0, 4
    event = release_event(sigma, lipschitz=L, q=q)
    assert event.sample_size == 1 and event.population == q
    assert event.event.noise_multiplier * 2 * L == pytest.approx(sigma)  # charged sensitivity 2L

    a = np.array([3.0, 4.0])  # ‖a‖ = 5 > L: clipped
    x = np.zeros((1, 2))  # margin 0 < 1: ĝ = −y·a·min(1, L/‖a‖)
    g, g2 = (
        noisy_subgradients(
            a[None, :], np.array([label]), np.array([0]), x, sigma=0.0, rng=np.random.default_rng(0), clip=L
        )
        for label in (1.0, -1.0)
    )
    assert np.linalg.norm(g - g2) == pytest.approx(2 * L)

    rows_n = split_rows(40, 20, np.random.default_rng(9))
    rows_m = split_rows(39, 20, np.random.default_rng(9))
    assert rows_n.shape == (20, 2) and rows_m.shape == (20, 1)  # q = ⌊N/n⌋ moves with N


# ----------------------------------------------------------------------------------------- han_pwa
def test_han_pwa_sensitivities_hold_for_offset_neighbours():
    """Adjacent databases move every offset by at most b_max (eq. 4); the uniform shift b + b_max·s,
    s ∈ {±1}^m, attains each mechanism's charge: ‖b − b′‖₂ = √m·b_max (Thm 16), |f_b − f_b′| = b_max
    for f and every u_sub (Lemma 18, Thm 19, Alg. 1); x_opt moves by at most diam(P) (Thm 17)."""
    pwa_methods = [cls for cls in ALGORITHMS.values() if cls.problem_kind == "pwa"]
    assert len(pwa_methods) == 5
    for cls in pwa_methods:
        if cls.private:
            assert cls.relations == {"replace_one": "native"} and cls.privacy_unit == "offset_vector"
    problem = make_pwa_problem(12, d=3, b_max=0.5, seed=1)
    signs = np.where(np.random.default_rng(10).random(problem.m) < 0.5, -1.0, 1.0)
    neighbour = problem.with_offsets(problem.b + problem.b_max * signs)
    shifted = problem.with_offsets(problem.b + problem.b_max)

    def run(mechanism, **options):
        return mechanism(
            problem, epsilon=1.0, runs=1, rng=np.random.default_rng(0), ledger=_ledger(PureDPAccountant()), **options
        )

    assert np.linalg.norm(problem.b - neighbour.b) == pytest.approx(run(laplace_data).info["sensitivity"])
    x_moved = np.linalg.norm(problem.solve()[0] - neighbour.solve()[0])
    assert x_moved <= run(laplace_solution).info["sensitivity"] * (1 + TOL)

    points = np.random.default_rng(11).uniform(-problem.c, problem.c, size=(200, problem.d))
    for other in (neighbour, shifted):
        assert np.max(np.abs(problem.objective(points) - other.objective(points))) <= problem.b_max * (1 + TOL)
        utilities = points @ problem.A.T
        assert np.max(np.abs((utilities + problem.b) - (utilities + other.b))) <= problem.b_max * (1 + TOL)
    assert np.max(np.abs(problem.objective(points) - shifted.objective(points))) == pytest.approx(problem.b_max)

    subgradient = run(private_subgradient, iterations=4)  # each selection charged ε_k = ε/k
    eps_step = subgradient.info["eps_per_step"]
    assert subgradient.count == 4 and subgradient.event.epsilon == eps_step
    for selection in ("printed", "active"):
        p, p2 = (
            subgradient_index_probabilities(
                points @ problem.A.T + other.b, epsilon=eps_step, b_max=problem.b_max, selection=selection
            )
            for other in (problem, neighbour)
        )
        assert np.max(np.abs(np.log(p) - np.log(p2))) <= eps_step * (1 + 1e-9)  # Alg. 1 is ε_k-DP on the pair


# ----------------------------------------------------------------------------------------- kusner_bo
def _score_matrix(ramp: np.ndarray) -> ScoreMatrix:
    n_candidates, n_rows = ramp.shape
    return ScoreMatrix(
        correct=ramp < 0.5,
        ramp=ramp.astype(np.float32),
        eval_rows=np.arange(n_rows),
        n_pool=n_rows,
        hyperparameters=[{"lambda": 0.5 + 0.1 * j} for j in range(n_candidates)],
        points=np.linspace(0, 1, n_candidates)[:, None],
        train_seconds=0.0,
        key="synthetic",
        row_norm=1.0,
    )


def test_kusner_gains_move_within_the_charge_under_add_remove(monkeypatch):
    """kusner_bo's gains are means over V of values in [0, g*] (g* = 1); adding or removing one row of a
    V of the public size m moves every gain by at most g*/m — the V-dependent term of Alg. 3's charge
    (Thm 7; attained by removing a row of loss 1 from a V of zeros) and far below Alg. 1–2's c."""
    for cls in (KusnerAlg1, KusnerAlg2, KusnerAlg3):
        assert cls.relations == {"add_remove": "native"} and cls.privacy_unit == "validation_row"
    m, n_candidates = 10, 6
    ramp = np.zeros((n_candidates, 3 * m))
    ramp[:, 0] = 1.0  # row 0: the worst row to remove; row m: the worst to add
    ramp[:, m] = 1.0
    scores = _score_matrix(ramp)
    V = np.arange(m)
    removed, added = np.arange(1, m), np.arange(m + 1)  # row 0 removed; row m added
    lambdas = np.array([h["lambda"] for h in scores.hyperparameters])
    v_term = alg3_value_sensitivity(1.0, m, float(lambdas.min()), float(lambdas.min()), 1.0)  # λ-term 0
    moves = [np.max(np.abs(scores.ramp_score(V) - scores.ramp_score(other))) for other in (removed, added)]
    assert moves[0] == pytest.approx(1.0 / m) and max(moves) <= v_term * (1 + 1e-6)
    accuracy_move = max(np.max(np.abs(scores.accuracy(V) - scores.accuracy(other))) for other in (removed, added))
    k1 = KusnerAlg1().k1  # Alg. 1 and 2 bound |f_V − f_V′| by c (union bound over 3, resp. 2, events)
    assert accuracy_move <= 1.0 / m <= min(c_term(k1, n_candidates, 1e-5 / 2, union=u) for u in (2, 3))

    released = _capture(monkeypatch, bo_module, "laplace_mechanism", lambda value, kw: value)
    for V_ in (V, removed, added):
        problem = BOProblem(scores.ramp_score(V_), scores.points, scores.hyperparameters, m, 1.0)  # |V| public: m
        KusnerAlg3(iterations=n_candidates).release(
            problem, epsilon=1.0, delta=1e-5, rng=np.random.default_rng(0), ledger=_ledger("pure")
        )
    best = [call["value"] for call in released]
    assert all(call["sensitivity"] == released[0]["sensitivity"] for call in released)
    assert max(abs(best[0] - b) for b in best[1:]) <= 1.0 / m * (1 + 1e-6) <= released[0]["sensitivity"]
