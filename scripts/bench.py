"""Performance benchmarks, reported as ratios against a baseline timed in the same process.

    python scripts/bench.py            # needs DPBENCH_DATA for the Adult rows; synthetic always runs

Rows:
- clipped gradient sum (one mat-vec each way, DESIGN.md) vs the floor of the two bare products
  X_B·w and X_Bᵀr on the same minibatch;
- one DP-SGD step (subsample + clipped sum + noise + ledger charge) vs the same floor;
- the explicit per-example loop the vectorised code replaces, to show what it saves;
- one DP-NAG run (kuru_acc, T = 1000, m = n, synthetic n = 10^5, d = 20) vs the 2000 bare products
  X·w and Xᵀr it needs (target ≤ 1.5×), without and with the default trace (~200 objective
  evaluations);
- candidate scoring: the logistic loss against np.logaddexp on DP-AGD's n × 21 margin block, and
  PrivGene's nonzero-only scorer of all 2d coordinate moves against the n × 2d product it replaces.
"""

from __future__ import annotations

import os

# One BLAS thread, as every dpbench job runs (dpbench.cli): ratios then compare like with like.
for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from dpbench.algorithms.base import Tracer  # noqa: E402
from dpbench.algorithms.dp_sgd import DPSGD  # noqa: E402
from dpbench.algorithms.kuru import DPNAG  # noqa: E402
from dpbench.algorithms.privgene import CoordinateMoveScorer, PrivGene, population_fitness  # noqa: E402
from dpbench.algorithms.sampling import poisson_subsample  # noqa: E402
from dpbench.data import load_dataset  # noqa: E402
from dpbench.privacy.accountant import Ledger, RDPAccountant  # noqa: E402
from dpbench.problems import make_problem  # noqa: E402


def _best_of(fn, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def bench(name: str, X, y, q: float, steps: int = 500) -> None:
    problem = make_problem(X, y, loss="logistic", reg=0.001)
    rng = np.random.default_rng(0)
    batches = [poisson_subsample(problem.n, q, rng) for _ in range(steps)]
    w = rng.normal(size=problem.dim) * 0.1

    def floor():
        for b in batches:
            Xb = problem.X[b]
            Xb.T @ (Xb @ w)

    def clipped():
        for b in batches:
            problem.clipped_gradient_sum(w, b, 3.0)

    def loop():
        for b in batches[:20]:
            total = np.zeros(problem.dim)
            for i in b:
                xi = problem.X[i]
                xi = xi.toarray().ravel() if hasattr(xi, "toarray") else xi
                g = problem.loss.derivative(np.array([y[i] * xi @ w]))[0] * y[i] * xi
                total += g / max(1.0, np.linalg.norm(g) / 3.0)

    def dp_sgd():
        ledger = Ledger(1e6, 1e-8, RDPAccountant())
        DPSGD(batch_size=int(q * problem.n), max_iterations=steps).fit(problem, ledger, np.random.default_rng(1), Tracer(problem, None, every=10**9))

    t_floor = _best_of(floor)
    t_clip = _best_of(clipped)
    t_loop = _best_of(loop, repeats=2) * steps / 20
    t_sgd = _best_of(dp_sgd, repeats=3)
    print(f"{name}: n={problem.n} d={problem.dim} q={q} ({steps} minibatches)")
    print(f"  floor X_B·w + X_Bᵀr        {t_floor * 1e6 / steps:9.1f} µs/step  1.00×")
    print(f"  clipped gradient sum        {t_clip * 1e6 / steps:9.1f} µs/step  {t_clip / t_floor:5.2f}×")
    print(f"  DP-SGD step (with ledger)   {t_sgd * 1e6 / steps:9.1f} µs/step  {t_sgd / t_floor:5.2f}×")
    print(f"  per-example Python loop     {t_loop * 1e6 / steps:9.1f} µs/step  {t_loop / t_floor:5.2f}×")


def bench_dp_nag(X, y, iterations: int = 1000) -> None:
    problem = make_problem(X, y, loss="logistic", reg=0.02)
    w, r = np.full(problem.dim, 0.1), np.full(problem.n, 0.1)

    def floor():
        for _ in range(iterations):
            problem.X @ w
            problem.X.T @ r

    def run(every):
        ledger = Ledger(1.0, 1e-8, "pure")
        DPNAG(iterations=iterations, smoothness=5.1033).fit(problem, ledger, np.random.default_rng(0), Tracer(problem, ledger, every=every))

    # interleaved, best of 5 each: this VM's speed drifts by tens of percent between seconds
    t_floor, t_bare, t_traced = (min(ts) for ts in zip(*(
        (_best_of(floor, 1), _best_of(lambda: run(10**9), 1), _best_of(lambda: run(0), 1)) for _ in range(5)
    )))
    print(f"DP-NAG, T = {iterations}, n = {problem.n}, d = {problem.dim}, no subsampling")
    print(f"  floor: {2 * iterations} products X·w, Xᵀr  {t_floor * 1e3:8.1f} ms  1.00×")
    print(f"  DP-NAG run (no trace)            {t_bare * 1e3:8.1f} ms  {t_bare / t_floor:5.2f}×  (target ≤ 1.5×)")
    print(f"  DP-NAG run (default trace)       {t_traced * 1e3:8.1f} ms  {t_traced / t_floor:5.2f}×")


def bench_scoring(name: str, X, y) -> None:
    problem = make_problem(X, y, loss="logistic", reg=0.001)
    rng = np.random.default_rng(0)
    margins = rng.normal(scale=3.0, size=(problem.n, 21))
    child = rng.normal(scale=0.1, size=problem.dim)
    population = PrivGene()._mutants(child[None, :], 0.1, rng)
    scorer = CoordinateMoveScorer(problem, None)
    t_logaddexp = _best_of(lambda: np.logaddexp(0.0, -margins))
    t_loss = _best_of(lambda: problem.loss.value(margins))
    t_product = _best_of(lambda: population_fitness(problem, population.T, None), repeats=3)
    t_scorer = _best_of(lambda: scorer(child, 0.1), repeats=3)
    print(f"{name}: candidate scoring")
    print(f"  np.logaddexp, n × 21 margins           {t_logaddexp * 1e3:8.2f} ms  1.00×")
    print(f"  LogisticLoss.value, same margins       {t_loss * 1e3:8.2f} ms  {t_loss / t_logaddexp:5.2f}×")
    print(f"  PrivGene population, X @ W (n × {2 * problem.dim})  {t_product * 1e3:8.2f} ms  1.00×")
    print(f"  PrivGene CoordinateMoveScorer          {t_scorer * 1e3:8.2f} ms  {t_scorer / t_product:5.2f}×")


def main() -> None:
    data = load_dataset("synthetic_logreg", {}, data_dir=Path("."), allow_download=False)
    bench("synthetic_logreg", data.X, data.y, q=0.01)
    if os.environ.get("DPBENCH_DATA"):
        adult = load_dataset("adult", {}, data_dir=Path(os.environ["DPBENCH_DATA"]), allow_download=False)
        bench("adult (a9a, sparse)", adult.X, adult.y, q=0.01)
        bench_scoring("adult (a9a, sparse)", adult.X, adult.y)
    bench_scoring("synthetic_logreg", data.X, data.y)
    bench_dp_nag(data.X, data.y)


if __name__ == "__main__":
    main()
