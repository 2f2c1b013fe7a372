"""Statistical privacy test of the Laplace NoisyBTLS (chen_lee Alg. 1, Thm 1) on real Armijo queries.

D is a small logistic-regression dataset, D′ = D plus one record; both sides run NoisyBTLS's own
queries (:class:`ArmijoQueries`) through NoisyBTLS's own calibration (``svt_noise`` with
Δ_q = C_obj/L, the call ``noisy_btls`` makes). The added record and the output index audited
are chosen analytically, before any sampling, as the pair that maximises the privacy loss of the
broken variant without query noise. N = 10⁶ runs per side, fixed seeds, a 99% two-sided
Clopper–Pearson union bound: the claim must hold, the broken variant must be caught.
"""

import dataclasses

import numpy as np
import pytest
from scipy.stats import laplace

from dpbench.algorithms.chen_lee import ArmijoQueries, noisy_btls
from dpbench.privacy.accountants import RDPAccountant
from dpbench.privacy.audit import epsilon_lower_bound
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.sparse_vector import svt_noise
from dpbench.problems import make_problem

pytestmark = pytest.mark.xdist_group(
    "algorithms.test_noisy_btls_privacy"
)  # its module-scoped fixture is made once, on one worker

EPS_BT, MAX_IT, CLIP, N = 1.0, 12, 1.0, 1_000_000
SETTINGS = dict(eta0=40.0, alpha=0.5, beta=0.8, obj_clip=CLIP)


def _queries(X, y, w, g, normaliser):
    problem = make_problem(X, y, loss="logistic", reg=0.001)
    q = ArmijoQueries(problem, w, g, None, normaliser=normaliser, **SETTINGS)
    return np.array([q.value(i) for i in range(MAX_IT)])


def _output_probabilities_without_query_noise(q, threshold_scale):
    """P[first ⊤ = k] when only the threshold is noisy: T̂ ∈ (max_{i<k} q_i, q_k]."""
    running_max = np.maximum.accumulate(np.concatenate([[-np.inf], q[:-1]]))
    upper, lower = laplace.cdf(q, scale=threshold_scale), laplace.cdf(running_max, scale=threshold_scale)
    return np.clip(upper - lower, 0.0, None)


@pytest.fixture(scope="module")
def neighbours():
    rng = np.random.default_rng(7)
    n, d = 40, 3
    X = np.hstack([np.ones((n, 1)), rng.uniform(size=(n, d - 1))])
    y = np.where(X @ np.array([-1.0, 2.0, 1.0]) + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    w = np.array([0.3, -0.5, 0.2])
    problem = make_problem(X, y, loss="logistic", reg=0.001)
    _, g = problem.objective_and_gradient(w)
    L = float(n)  # the public normaliser of a full-batch search
    q_D = _queries(X, y, w, g, L)
    threshold_scale = svt_noise("laplace", sensitivity=CLIP / L, epsilon=EPS_BT).threshold_scale
    p_D = _output_probabilities_without_query_noise(q_D, threshold_scale)
    best = (-np.inf, None)
    for _ in range(400):  # candidate records, judged analytically (no samples)
        x_new = rng.normal(size=d) * 10 ** rng.uniform(-1, 2)
        q_Dp = _queries(np.vstack([X, x_new]), np.append(y, rng.choice([-1.0, 1.0])), w, g, L)
        p_Dp = _output_probabilities_without_query_noise(q_Dp, threshold_scale)
        for k in range(MAX_IT):
            for a, b, pair in ((p_D[k], p_Dp[k], (q_D, q_Dp)), (p_Dp[k], p_D[k], (q_Dp, q_D))):
                if a >= 0.01:
                    loss = np.log(a / max(b, 1e-300))
                    if loss > best[0]:
                        best = (loss, (pair, k))
    assert best[0] > 2 * EPS_BT, f"no neighbouring pair breaks the query-noise-free variant (best loss {best[0]:.3f})"
    return best[1]


def _sample_outputs(q, calibration, rng):
    out = np.empty(N, dtype=np.int64)
    for start in range(0, N, 1 << 16):
        rows = min(1 << 16, N - start)
        noisy_threshold = calibration.threshold_noise(rng, (rows, 1))
        hits = q + calibration.query_noise(rng, (rows, q.size)) >= noisy_threshold
        out[start : start + rows] = np.where(hits.any(axis=1), hits.argmax(axis=1), q.size)
    return out


def _bound(calibration, neighbours, seed):
    (q1, q0), k = neighbours
    k1 = int(np.sum(_sample_outputs(q1, calibration, np.random.default_rng(seed)) == k))
    k0 = int(np.sum(_sample_outputs(q0, calibration, np.random.default_rng(seed + 1)) == k))
    return epsilon_lower_bound(k1, N, k0, N, confidence=0.99)


def test_noisy_btls_uses_this_calibration():
    rng = np.random.default_rng(0)
    X = np.hstack([np.ones((30, 1)), rng.uniform(size=(30, 2))])
    problem = make_problem(X, np.where(rng.random(30) < 0.5, 1.0, -1.0), loss="logistic", reg=0.001)
    ledger = Ledger(100.0, 1e-8, RDPAccountant())
    noisy_btls(
        problem,
        np.zeros(3),
        np.ones(3),
        None,
        max_it=MAX_IT,
        normaliser=30.0,
        noise="laplace",
        budget=EPS_BT,
        rng=rng,
        ledger=ledger,
        **SETTINGS,
    )
    assert ledger.entries[0].event == svt_noise("laplace", sensitivity=CLIP / 30.0, epsilon=EPS_BT).event


@pytest.mark.statistical
def test_laplace_noisy_btls_stays_within_its_claim(neighbours):
    calibration = svt_noise("laplace", sensitivity=CLIP / 40.0, epsilon=EPS_BT)
    assert _bound(calibration, neighbours, seed=11) <= EPS_BT


@pytest.mark.statistical
def test_noisy_btls_without_query_noise_is_caught(neighbours):
    calibration = dataclasses.replace(svt_noise("laplace", sensitivity=CLIP / 40.0, epsilon=EPS_BT), query_scale=0.0)
    assert _bound(calibration, neighbours, seed=21) > EPS_BT
