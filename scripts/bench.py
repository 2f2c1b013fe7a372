"""Performance report: every row is a ratio against its floor, both timed in one process.

    python scripts/bench.py --all                 # every row; the Adult rows need DPBENCH_DATA
    python scripts/bench.py --row dp_sgd_step --row sampler --out report.md

Each row runs its sides INTERLEAVED (one untimed warm-up round, then A B A B …), so the drift of
a shared machine hits both sides alike, and reports medians: of each side's times and of the
per-round ratios. One BLAS thread, as every dpbench job runs (dpbench.cli). Nothing is asserted:
this is a report (docs/performance.md). A floor always uses the memory layout the algorithm uses.
"Tracing off" is a tracer that records nothing (:class:`NullTracer`): ``Tracer(every=10**9)`` still
records iteration 0 and the forced last one, two evaluations of F on all n rows.

Rows (Adult = a9a, n = 32561, d = 124; synthetic = kuru's synthetic_logreg, n = 10^5, d = 20):

- dp_sgd_step: one steady-state DP-SGD step on Adult at q = 0.01 (σ = 1 fixed, 1000 steps, tracing
  off, divided by the steps) vs the floor of the same number of fresh Poisson batches B drawn
  beforehand, each gathered from the row-major dense copy the algorithm gathers from
  (``problem._minibatch_rows``) with X_B·w and X_Bᵀr. Fresh batches every round, on both sides.
- dp_sgd_fit: make_problem + a calibrated one-epoch DP-SGD fit on Adult (default batch, tracing off)
  vs the floor of as many gather + two-product steps at that batch size. The RDP prices the
  calibration needs are shared by a process's accountants, so from the second round on they are
  known, as for a job's second and later runs; dp_sgd_fit_cold clears them before each fit, as a
  process's first run.
- full_gradient_logistic, full_gradient_huber: ``clipped_gradient_sum(w, None, C)`` on the
  synthetic data with C = ½·Lipschitz bound (clipping active) vs the two products M·w and Mᵀr on
  the matrix it reads (``problem._signed_X`` if set, else ``problem.X``: column-major either way);
- objective_and_gradient: ``objective_and_gradient(w)`` (logistic) vs the two products on the
  same matrix as full_gradient, the one it reads.
- opacus_epoch_q0.01, opacus_epoch_q0.1: one DP-SGD epoch (1/q Poisson batches) of logistic regression
  on Adult with Opacus (``PrivacyEngine.make_private``, Poisson ``DPDataLoader``, per-sample clipping
  at C = 1, σ = 1, SGD, float32 tensors, set-up untimed) vs dpbench's ``DPSGD`` with the same q, C,
  σ and number of steps (float64, tracing off); the ratio is Opacus's time over dpbench's. Needs
  the ``bench`` extra (torch and opacus); skipped without it.
- float32_gradient_dense, float32_gradient_sparse: ``clipped_gradient_sum(w, None, ½)`` of the hinge
  on float32 data vs the same on float64 data (synthetic_svm: 10^5 × 500 dense; 2·10^5 × 20,000 at
  density 0.0016, rcv1's). Below 1× is the gain of ``data.dtype=float32``.
- trace_share_dp_sgd: a 100-step DP-SGD fit on Adult (q = 0.01, σ = 1 fixed) with the default
  trace cadence, ``Tracer(max_share=TRACE_MAX_SHARE)`` (the engine's ``trace.max_share``), vs
  the same fit with tracing off; the share is
  (traced − untraced)/untraced, the median of the per-round shares. trace_share_dp_sgd_unbounded:
  the same for the old default (max_share None: about 200 records, i.e. every step of a 100-step run).
- trace_share_kuru, trace_share_kuru_unbounded: the same for DP-NAG (T = 100, L = 5.1033, pure ε = 1)
  on the synthetic data.
- import_engine: wall time of ``python -c "import dpbench.engine"`` in a fresh interpreter vs
  ``python -c "pass"`` (the interpreter's own start-up); the goal is on the absolute time.
  cli_help, cli_unknown_option, cli_bad_value, cli_bad_value_composed: the same for ``dpbench --help``,
  ``dpbench algorithm=nope`` and ``dpbench privacy.eps=-1`` (both refused before Hydra loads) and
  ``dpbench cv.test_fraction=2`` (refused after Hydra composes the configuration).
- sweep_job_majority, sweep_job_one_step: ``dpbench -m … hydra/launcher=joblib`` over 4 and over 16
  values of ε (Adult, 3 folds per job, warm prepared-data cache; ``algorithm=majority``, whose fit is
  nothing, and one DP-SGD step, ``algorithm=dp_sgd algorithm.max_iterations=1``), interleaved, 3 rounds:
  the per-job wall time is the slope (t₁₆ − t₄)/12 of each round, the start-up t₄ − 4·slope (imports,
  composition, the joblib workers' start), both medians; the ratio column gives the 16-job sweep's wall.
- leaderboard_cell: ``dpbench -m experiment=leaderboard dataset=adult privacy.eps=0.4 hydra/launcher=joblib``
  (48 jobs: 16 methods tuned three ways, 3 folds each) with a fresh cache (prepared data, F*, trials), once:
  its wall time against the time its jobs ran (each from its log's creation to its results' write) over the
  cores; the ratio is what the launcher, the start-up and the packing of jobs onto cores add. For the record.
- sampler: ``poisson_subsample(32561, 0.01)`` vs its draws alone, ``rng.geometric(q, size=qn)``;
  sampler_old: the sampler it replaced, ``np.sort(rng.choice(n, Binomial(n, q), replace=False))``,
  vs the same draws. For the record.
- loss_value_logistic: ``LogisticLoss.value`` vs ``np.logaddexp(0, −m)`` on DP-AGD's n × 21
  margin block (n = 32561).
- privgene_scorer: PrivGene's ``CoordinateMoveScorer`` on Adult vs the n × 2d population product
  it replaces (``population_fitness``).
- dp_agd_fit: a DP-AGD fit on Adult (logistic, μ = 0.001, ε = 0.4, δ = 1e-8, the leaderboard's
  setting, tracing off) with its noisy mins screened, vs the same fit computing every noisy min's exact
  scores (the fit as it was; the two are bit-identical); below 1× is the gain, 5 rounds.
- dp_blgd_fit: a DP-BLGD fit on Adult (logistic, μ = 0.001, ε = 0.4, δ = 1e-8, the leaderboard's setting,
  tracing off) with its Armijo queries screened, vs the same fit computing every query exactly
  (``ClippedLossLine.approximate`` and ``bounded`` off; the two are bit-identical); below 1× is the gain, 5 rounds.
- privgene_fit: a PrivGene fit on the synthetic data (logistic, μ = 0.001, ε = 1.6, its defaults: r = nε/800
  rounds, tracing off) with its selections screened, vs the same fit computing every candidate's fitness
  (the fit as it was; the two are bit-identical); below 1× is the gain, 3 rounds.
- dp_nag_run: DP-NAG (T = 1000, no subsampling, tracing off) on the synthetic data vs its 2000 bare
  products M·w and Mᵀr on the matrix it reads (``problem._signed_X``).
"""

from __future__ import annotations

import os

# One BLAS thread, as every dpbench job runs (dpbench.cli): ratios then compare like with like.
for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import datetime
import functools
import itertools
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dpbench.algorithms.base import FitResult, Tracer
from dpbench.algorithms.chen_lee import DPBLGD
from dpbench.algorithms.dp_agd import DPAGD
from dpbench.algorithms.dp_sgd import DPSGD
from dpbench.algorithms.kuru import DPNAG
from dpbench.algorithms.privgene import (
    CoordinateMoveScorer,
    PrivGene,
    population_fitness,
)
from dpbench.algorithms.sampling import poisson_subsample
from dpbench.data import load_dataset
from dpbench.privacy.accountants import _SHARED_PRICES, RDPAccountant
from dpbench.privacy.filter import filter_accountant
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.screening import ScreenedValues
from dpbench.problems import make_problem
from dpbench.problems.losses import LogisticLoss
from dpbench.problems.screened_losses import ClippedLossLine
from dpbench.settings import TRACE_MAX_SHARE

KURU_SMOOTHNESS = 5.1033  # the L of kuru's Sec 5 (their data's public law)

Timed = Callable[[], float]  # runs one side once and returns the seconds it measured itself


class NullTracer(Tracer):
    """Tracing off. (A cadence of every = 10^9 is not off: it still records iteration 0 and the
    forced last one, two evaluations of F on all n rows.)"""

    def record(self, *args, **kwargs) -> None:
        pass


class Skipped(Exception):
    """A row that cannot run here (its data is missing); the message says why."""


@dataclass
class Row:
    name: str
    measured: str
    floor: str
    ratio: str
    goal: str


# ----------------------------------------------------------------------------- timing


def elapsed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def repeated(fn: Callable[[], object], calls: int) -> Timed:
    """A side that calls ``fn`` ``calls`` times (for sides too fast to time once)."""
    return lambda: elapsed(lambda: [fn() for _ in range(calls)])


def interleave(sides: dict[str, Timed], rounds: int) -> dict[str, list[float]]:
    """Each side's times over ``rounds`` rounds, the sides run in turn within a round, after one
    untimed warm-up round."""
    for side in sides.values():
        side()
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(rounds):
        for name, side in sides.items():
            times[name].append(side())
    return times


def format_seconds(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def ratio_row(name: str, measured: list[float], floor: list[float], goal: str, per: int = 1, unit: str = "") -> Row:
    """Medians of both sides (divided by ``per``, labelled ``unit``) and of the per-round ratios."""
    ratio = statistics.median(m / f for m, f in zip(measured, floor))
    return Row(
        name,
        format_seconds(statistics.median(measured) / per) + unit,
        format_seconds(statistics.median(floor) / per) + unit,
        f"{ratio:.2f}×",
        goal,
    )


def share_row(name: str, traced: list[float], untraced: list[float], goal: str, records: int) -> Row:
    """Medians of both sides and of the per-round extra share (traced − untraced)/untraced."""
    share = statistics.median((t - u) / u for t, u in zip(traced, untraced))
    return Row(
        name,
        f"{format_seconds(statistics.median(traced))} ({records} records)",
        format_seconds(statistics.median(untraced)),
        f"{100 * share:+.1f} %",
        goal,
    )


# ----------------------------------------------------------------------------- data and floors


@functools.cache
def dataset(name: str):
    """Adult (a9a, from DPBENCH_DATA) or the generated synthetic_logreg."""
    if name == "synthetic_logreg":
        return load_dataset(name, {}, data_dir=Path("."), allow_download=False)
    if not os.environ.get("DPBENCH_DATA"):
        raise Skipped("DPBENCH_DATA unset")
    return load_dataset("adult", {"encoding": "a9a"}, data_dir=Path(os.environ["DPBENCH_DATA"]), allow_download=False)


def problem_for(name: str, loss: str, reg: float):
    """The training problem on all of a dataset, with its declared public bounds (as the engine builds it)."""
    data = dataset(name)
    return make_problem(
        data.X,
        data.y,
        loss=loss,
        reg=reg,
        public_row_norm=data.info.get("row_norm_bound"),
        public_feature_bound=data.info.get("feature_bound"),
        public_row_l1_norm=data.info.get("row_l1_bound"),
    )


def seeded_rngs() -> Callable[[], np.random.Generator]:
    """Generators seeded 0, 1, 2, …: a side calling it once per round gets round k's seed."""
    seeds = itertools.count()
    return lambda: np.random.default_rng(next(seeds))


def gather_floor(rows: np.ndarray, rate: float, steps: int) -> Timed:
    """``steps`` fresh Poisson batches (drawn untimed), each gathered from ``rows`` with X_B·w and X_Bᵀr."""
    rng = seeded_rngs()
    w = np.random.default_rng(0).normal(scale=0.1, size=rows.shape[1])

    def run() -> float:
        generator = rng()
        batches = [poisson_subsample(rows.shape[0], rate, generator) for _ in range(steps)]

        def products() -> None:
            for batch in batches:
                gathered = rows[batch]
                gathered.T @ (gathered @ w)

        return elapsed(products)

    return run


def two_products(matrix: np.ndarray, w: np.ndarray) -> Callable[[], None]:
    """M·w into a reused buffer (as the problem does), then Mᵀr."""
    margins = np.empty(matrix.shape[0])

    def products() -> None:
        np.matmul(matrix, w, out=margins)
        matrix.T @ margins

    return products


# ----------------------------------------------------------------------------- rows


def dp_sgd_step_rows() -> list[Row]:
    problem, rate, steps = problem_for("adult", "logistic", 0.001), 0.01, 1000
    rng = seeded_rngs()

    def algorithm() -> float:
        ledger, tracer = Ledger(1e6, 1e-8, RDPAccountant()), NullTracer(problem, None)
        sgd = DPSGD(noise="fixed", noise_multiplier=1.0, batch_size=int(rate * problem.n), max_iterations=steps)
        return elapsed(lambda: sgd.fit(problem, ledger, rng(), tracer))

    times = interleave({"dp_sgd": algorithm, "floor": gather_floor(problem._minibatch_rows, rate, steps)}, rounds=21)
    return [ratio_row("dp_sgd_step", times["dp_sgd"], times["floor"], "≤ 1.5×", per=steps, unit="/step")]


def dp_sgd_fit_rows() -> list[Row]:
    rng = seeded_rngs()

    def fit():
        problem = problem_for("adult", "logistic", 0.001)
        ledger = Ledger(1.0, 1e-8, RDPAccountant())
        return DPSGD(epochs=1).fit(problem, ledger, rng(), NullTracer(problem, None))

    probe = fit()  # its batch rate and number of steps set the floor
    floor_rows = problem_for("adult", "logistic", 0.001)._minibatch_rows
    floor = gather_floor(floor_rows, probe.info["sampling_rate"], probe.n_iterations)

    def cold_fit() -> float:
        _SHARED_PRICES.clear()  # as a process's first run: no RDP curve priced yet
        return elapsed(fit)

    times = interleave({"fit": lambda: elapsed(fit), "cold": cold_fit, "floor": floor}, rounds=15)
    return [
        ratio_row("dp_sgd_fit", times["fit"], times["floor"], "≤ 2×"),
        ratio_row("dp_sgd_fit_cold", times["cold"], times["floor"], "≤ 2×"),
    ]


def full_gradient_rows() -> list[Row]:
    rows, calls, rounds = [], 20, 21
    w = np.random.default_rng(0).normal(scale=0.1, size=dataset("synthetic_logreg").X.shape[1])
    for name, loss in (("full_gradient_logistic", "logistic"), ("full_gradient_huber", "huber_hinge")):
        problem = problem_for("synthetic_logreg", loss, 0.02)
        clip = 0.5 * problem.lipschitz()
        matrix = problem._signed_X if problem._signed_X is not None else problem.X
        sides = {
            "gradient": repeated(lambda p=problem, c=clip: p.clipped_gradient_sum(w, None, c), calls),
            "floor": repeated(two_products(matrix, w), calls),
        }
        times = interleave(sides, rounds)
        rows.append(ratio_row(name, times["gradient"], times["floor"], "≤ 1.3×", per=calls, unit="/call"))
    problem = problem_for("synthetic_logreg", "logistic", 0.02)
    matrix = problem._signed_X if problem._signed_X is not None else problem.X
    sides = {
        "both": repeated(lambda: problem.objective_and_gradient(w), calls),
        "floor": repeated(two_products(matrix, w), calls),
    }
    times = interleave(sides, rounds)
    rows.append(ratio_row("objective_and_gradient", times["both"], times["floor"], "≤ 1.3×", per=calls, unit="/call"))
    return rows


def float32_rows() -> list[Row]:
    """A full clipped hinge subgradient on float32 data vs the same on float64 (the ratio < 1 is the gain)."""
    from dpbench.data.synthetic_svm import make_svm

    rows, calls, rounds = [], 5, 15
    for name, n, d, density in (
        ("float32_gradient_dense", 100_000, 500, 1.0),
        ("float32_gradient_sparse", 200_000, 20_000, 0.0016),
    ):
        X, y, *_ = make_svm(n, 0, d, density, 0.05, 0)
        w = np.random.default_rng(0).normal(scale=0.1, size=d)
        problems = {
            dtype: make_problem(X.astype(dtype), y, loss="hinge", reg=0.0005, public_row_norm=1.0)
            for dtype in ("float32", "float64")
        }
        sides = {
            dtype: repeated(functools.partial(p.clipped_gradient_sum, w, None, 0.5), calls)
            for dtype, p in problems.items()
        }
        times = interleave(sides, rounds)
        rows.append(
            ratio_row(name, times["float32"], times["float64"], "< 1× (CSR was 1.6–2.3×)", per=calls, unit="/call")
        )
    return rows


def trace_share_rows(name: str, problem, fit: Callable, make_ledger: Callable[[], Ledger], rounds: int) -> list[Row]:
    """The share of ``fit``'s time spent tracing with the default cadence (max_share = TRACE_MAX_SHARE) and with
    the old unbounded one, against the same fit untraced; the fits of one round draw the same seed."""
    records: dict[str, int] = {}

    def traced(label: str, make_tracer: Callable[[Ledger], Tracer]) -> Timed:
        rng = seeded_rngs()

        def run() -> float:
            ledger = make_ledger()
            tracer = make_tracer(ledger)
            seconds = elapsed(lambda: fit(problem, ledger, rng(), tracer))
            records[label] = len(tracer.rows)
            return seconds

        return run

    sides = {
        "off": traced("off", lambda ledger: NullTracer(problem, ledger)),
        "share": traced("share", lambda ledger: Tracer(problem, ledger, max_share=TRACE_MAX_SHARE)),
        "unbounded": traced("unbounded", lambda ledger: Tracer(problem, ledger)),
    }
    times = interleave(sides, rounds)
    return [
        share_row(name, times["share"], times["off"], "≤ 10 %", records["share"]),
        share_row(f"{name}_unbounded", times["unbounded"], times["off"], "— (old default)", records["unbounded"]),
    ]


def trace_share_dp_sgd_rows() -> list[Row]:
    problem = problem_for("adult", "logistic", 0.001)
    sgd = DPSGD(noise="fixed", noise_multiplier=1.0, batch_size=int(0.01 * problem.n), max_iterations=100)
    return trace_share_rows(
        "trace_share_dp_sgd", problem, sgd.fit, lambda: Ledger(1e6, 1e-8, RDPAccountant()), rounds=41
    )


def trace_share_kuru_rows() -> list[Row]:
    problem = problem_for("synthetic_logreg", "logistic", 0.02)
    nag = DPNAG(iterations=100, smoothness=KURU_SMOOTHNESS)
    return trace_share_rows("trace_share_kuru", problem, nag.fit, lambda: Ledger(1.0, 1e-8, "pure"), rounds=15)


def import_engine_rows() -> list[Row]:
    def interpreter(*args: str) -> Timed:
        return lambda: elapsed(lambda: subprocess.run([sys.executable, *args], check=False, capture_output=True))

    commands = {
        "import_engine": ("-c", "import dpbench.engine"),
        "cli_help": ("-m", "dpbench.cli", "--help"),
        "cli_unknown_option": ("-m", "dpbench.cli", "algorithm=nope"),
        "cli_bad_value": ("-m", "dpbench.cli", "privacy.eps=-1"),
        "cli_bad_value_composed": ("-m", "dpbench.cli", "cv.test_fraction=2"),
    }
    times = interleave(
        {name: interpreter(*args) for name, args in commands.items()} | {"bare": interpreter("-c", "pass")}, rounds=7
    )
    return [ratio_row(name, times[name], times["bare"], "measured ≤ 0.3 s") for name in commands]


SWEEP_SIZES = (4, 16)  # the per-job cost is the slope between them, the start-up the rest


def sweep_of(jobs: int, method: list[str]) -> Timed:
    """The wall time of ``dpbench -m`` over ``jobs`` values of ε (``method``'s jobs on Adult, 3 folds
    each, the joblib launcher, a fresh sweep directory), as a user runs it."""
    epsilons = ",".join(f"{(k + 1) / 10:g}" for k in range(jobs))
    args = ["-m", *method, "dataset=adult", "cv.folds=3", f"privacy.eps={epsilons}", "hydra/launcher=joblib"]

    def run() -> float:
        with tempfile.TemporaryDirectory() as tmp:
            command = [sys.executable, "-m", "dpbench.cli", *args, f"hydra.sweep.dir={tmp}/sweep", "progress=false"]
            return elapsed(lambda: subprocess.run(command, check=True, capture_output=True, cwd=tmp))

    return run


def sweep_job_rows() -> list[Row]:
    """Per-job wall time in a joblib sweep: the slope between sweeps of 4 and 16 jobs, per round."""
    if not os.environ.get("DPBENCH_DATA"):
        raise Skipped("DPBENCH_DATA unset")
    rows = []
    for name, method in (
        ("sweep_job_majority", ["algorithm=majority"]),
        ("sweep_job_one_step", ["algorithm=dp_sgd", "algorithm.max_iterations=1"]),
    ):
        small, large = SWEEP_SIZES
        times = interleave({size: sweep_of(size, method) for size in SWEEP_SIZES}, rounds=3)
        per_job = [(b - a) / (large - small) for a, b in zip(times[small], times[large])]
        start_up = [a - small * p for a, p in zip(times[small], per_job)]
        rows.append(
            Row(
                name,
                f"{format_seconds(statistics.median(per_job))} per job",
                f"start-up {format_seconds(statistics.median(start_up))}",
                f"{large} jobs: {format_seconds(statistics.median(times[large]))}",
                "≤ 1.0 s per job",
            )
        )
    return rows


def leaderboard_cell_rows() -> list[Row]:
    """One cell of the leaderboard preset as a user first runs it: its wall time against the time its jobs ran."""
    if not os.environ.get("DPBENCH_DATA"):
        raise Skipped("DPBENCH_DATA unset")
    import pandas as pd

    with tempfile.TemporaryDirectory() as tmp:
        sweep = Path(tmp, "sweep")
        command = [sys.executable, "-m", "dpbench.cli", "-m", "experiment=leaderboard", "dataset=adult"]
        command += ["privacy.eps=0.4", "hydra/launcher=joblib", f"hydra.sweep.dir={sweep}", "progress=false"]
        env = os.environ | {"DPBENCH_CACHE": str(Path(tmp, "cache"))}
        wall = elapsed(lambda: subprocess.run(command, check=True, capture_output=True, cwd=tmp, env=env))
        results = sorted(sweep.glob("*/results.parquet"))
        job_seconds = sum(r.stat().st_mtime - (r.parent / "dpbench.log").stat().st_mtime for r in results)
        fits = sum(float(pd.read_parquet(r, columns=["wall_time_s"])["wall_time_s"].sum()) for r in results)
    cores = len(os.sched_getaffinity(0))
    return [
        Row(
            "leaderboard_cell",
            f"{format_seconds(wall)} ({len(results)} jobs)",
            f"jobs {format_seconds(job_seconds)} / {cores} cores",
            f"{wall / (job_seconds / cores):.2f}×",
            f"— (runs' wall_time_s {format_seconds(fits)})",
        )
    ]


def sampler_rows() -> list[Row]:
    n, rate, calls = 32561, 0.01, 2000
    rng = np.random.default_rng(0)
    sides = {
        "poisson": repeated(lambda: poisson_subsample(n, rate, rng), calls),
        "choice": repeated(lambda: np.sort(rng.choice(n, rng.binomial(n, rate), replace=False)), calls),
        "draws": repeated(lambda: rng.geometric(rate, size=int(rate * n)), calls),
    }
    times = interleave(sides, rounds=21)
    return [
        ratio_row("sampler", times["poisson"], times["draws"], "— (record)", per=calls, unit="/call"),
        ratio_row("sampler_old", times["choice"], times["draws"], "— (record)", per=calls, unit="/call"),
    ]


def loss_value_rows() -> list[Row]:
    margins, calls, loss = np.random.default_rng(0).normal(scale=3.0, size=(32561, 21)), 10, LogisticLoss()
    sides = {
        "loss": repeated(lambda: loss.value(margins), calls),
        "logaddexp": repeated(lambda: np.logaddexp(0.0, -margins), calls),
    }
    times = interleave(sides, rounds=15)
    return [ratio_row("loss_value_logistic", times["loss"], times["logaddexp"], "< 1×", per=calls, unit="/call")]


def privgene_scorer_rows() -> list[Row]:
    problem = problem_for("adult", "logistic", 0.001)
    rng = np.random.default_rng(0)
    child = rng.normal(scale=0.1, size=problem.dim)
    population = PrivGene()._mutants(child[None, :], 0.1, rng)
    scorer = CoordinateMoveScorer(problem, None)
    sides = {
        "scorer": lambda: elapsed(lambda: scorer(child, 0.1)),
        "product": lambda: elapsed(lambda: population_fitness(problem, population.T, None)),
    }
    times = interleave(sides, rounds=11)
    return [ratio_row("privgene_scorer", times["scorer"], times["product"], "< 1×")]


class ExactDPAGD(DPAGD):
    """DP-AGD computing every noisy min's exact float64 scores (no screening): the fit as it was."""

    def _screened_scores(self, problem, at_w, along, steps, candidates, exact):
        return ScreenedValues(np.zeros(steps.size), np.full(steps.size, np.inf), lambda: -exact())


def dp_agd_fit_rows() -> list[Row]:
    problem = problem_for("adult", "logistic", 0.001)

    def side(method: DPAGD) -> Timed:
        rng = seeded_rngs()

        def run() -> float:
            ledger = Ledger(0.4, 1e-8, "zcdp")
            return elapsed(lambda: method.fit(problem, ledger, rng(), NullTracer(problem, ledger)))

        return run

    times = interleave({"screened": side(DPAGD()), "exact": side(ExactDPAGD())}, rounds=5)
    return [ratio_row("dp_agd_fit", times["screened"], times["exact"], "≤ 0.33×")]


class ExactPrivGene(PrivGene):
    """PrivGene computing every candidate's fitness (no screened selection): the fit as it was."""

    def _screening_bounds(self, problem):
        return None


def privgene_fit_rows() -> list[Row]:
    problem = problem_for("synthetic_logreg", "logistic", 0.001)

    def side(method: PrivGene) -> Timed:
        rng = seeded_rngs()

        def run() -> float:
            ledger = Ledger(1.6, 1e-8, "pure")
            return elapsed(lambda: method.fit(problem, ledger, rng(), NullTracer(problem, ledger)))

        return run

    times = interleave({"screened": side(PrivGene()), "exact": side(ExactPrivGene())}, rounds=3)
    return [ratio_row("privgene_fit", times["screened"], times["exact"], "< 1×")]


def _no_bound(self, *args) -> None:
    """A :class:`ClippedLossLine` screening method that bounds nothing (None): every Armijo query is answered exactly."""


def dp_blgd_fit_rows() -> list[Row]:
    problem, method = problem_for("adult", "logistic", 0.001), DPBLGD()

    def side(exact: bool) -> Timed:
        rng = seeded_rngs()

        def fit() -> FitResult:
            accountant = filter_accountant(method.planned_step(0.4), 0.4, 1e-8, **method.accountant_options())
            ledger = Ledger(0.4, 1e-8, accountant)
            return method.fit(problem, ledger, rng(), NullTracer(problem, ledger))

        def run() -> float:
            if not exact:
                return elapsed(fit)
            real = ClippedLossLine.approximate, ClippedLossLine.bounded_drop, ClippedLossLine.expect_steps
            ClippedLossLine.approximate = ClippedLossLine.bounded_drop = ClippedLossLine.expect_steps = _no_bound
            try:
                return elapsed(fit)
            finally:
                ClippedLossLine.approximate, ClippedLossLine.bounded_drop, ClippedLossLine.expect_steps = real

        return run

    times = interleave({"screened": side(False), "exact": side(True)}, rounds=5)
    return [ratio_row("dp_blgd_fit", times["screened"], times["exact"], "< 1× (a gain)")]


def dp_nag_run_rows() -> list[Row]:
    problem, iterations = problem_for("synthetic_logreg", "logistic", 0.02), 1000
    nag = DPNAG(iterations=iterations, smoothness=KURU_SMOOTHNESS)
    rng = seeded_rngs()

    def algorithm() -> float:
        ledger = Ledger(1.0, 1e-8, "pure")
        tracer = NullTracer(problem, ledger)
        return elapsed(lambda: nag.fit(problem, ledger, rng(), tracer))

    products = two_products(problem._signed_X, np.full(problem.dim, 0.1))
    floor = repeated(products, iterations)
    times = interleave({"dp_nag": algorithm, "floor": floor}, rounds=7)
    return [ratio_row("dp_nag_run", times["dp_nag"], times["floor"], "≤ 1.5×")]


def opacus_rows() -> list[Row]:
    """One DP-SGD epoch on Adult, Opacus vs dpbench, at q = 0.01 and q = 0.1 (module docstring)."""
    try:
        import torch
        from opacus import PrivacyEngine
    except ImportError:
        raise Skipped(
            "needs torch and opacus: a CPU build of torch, then pip install -e '.[bench]' (docs/performance.md)"
        ) from None
    torch.set_num_threads(1)
    problem = problem_for("adult", "logistic", 0.001)
    features = torch.from_numpy(problem._minibatch_rows.astype(np.float32))
    labels = torch.from_numpy(problem.y.astype(np.float32))
    rows = []
    for rate, goal in ((0.01, "≥ 30×"), (0.1, "≥ 50×")):
        batch = int(rate * problem.n)
        steps = round(1 / rate)  # an epoch: Opacus's Poisson loader draws len(loader) = ⌈n/batch⌉ batches
        rng = seeded_rngs()

        def dpbench_epoch(batch=batch, steps=steps, rng=rng) -> float:
            ledger, tracer = Ledger(1e6, 1e-8, RDPAccountant()), NullTracer(problem, None)
            sgd = DPSGD(noise="fixed", noise_multiplier=1.0, batch_size=batch, max_iterations=steps, clip=1.0)
            return elapsed(lambda: sgd.fit(problem, ledger, rng(), tracer))

        def opacus_epoch(batch=batch) -> float:
            torch.manual_seed(0)
            model = torch.nn.Linear(problem.dim, 1, bias=False)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(features, labels), batch_size=batch)
            model, optimizer, loader = PrivacyEngine(accountant="rdp").make_private(
                module=model,
                optimizer=optimizer,
                data_loader=loader,
                noise_multiplier=1.0,
                max_grad_norm=1.0,
                poisson_sampling=True,
            )

            def epoch() -> None:
                for x, y in loader:
                    optimizer.zero_grad()
                    torch.nn.functional.softplus(-y * model(x).squeeze(1)).mean().backward()
                    optimizer.step()

            return elapsed(epoch)

        times = interleave({"opacus": opacus_epoch, "dpbench": dpbench_epoch}, rounds=7)
        rows.append(ratio_row(f"opacus_epoch_q{rate:g}", times["opacus"], times["dpbench"], goal))
    return rows


ROWS: dict[str, Callable[[], list[Row]]] = {
    "dp_sgd_step": dp_sgd_step_rows,
    "dp_sgd_fit": dp_sgd_fit_rows,
    "full_gradient": full_gradient_rows,
    "float32": float32_rows,
    "trace_share_dp_sgd": trace_share_dp_sgd_rows,
    "trace_share_kuru": trace_share_kuru_rows,
    "import_engine": import_engine_rows,
    "sweep_job": sweep_job_rows,
    "leaderboard_cell": leaderboard_cell_rows,
    "sampler": sampler_rows,
    "loss_value_logistic": loss_value_rows,
    "privgene_scorer": privgene_scorer_rows,
    "dp_nag_run": dp_nag_run_rows,
    "dp_agd_fit": dp_agd_fit_rows,
    "dp_blgd_fit": dp_blgd_fit_rows,
    "privgene_fit": privgene_fit_rows,
    "opacus": opacus_rows,
}


# ----------------------------------------------------------------------------- report


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def ram_gb() -> str:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return f"{int(line.split()[1]) / 2**20:.1f} GiB"
    return "unknown"


def blas() -> str:
    """The BLAS libraries loaded (numpy's first) as threadpoolctl sees them: library, version, where
    from, threads; else numpy's as it was built."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        config = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{config['name']} {config['version']} (numpy's build; threads unknown)"
    pools = sorted(
        (p for p in threadpool_info() if p["user_api"] == "blas"), key=lambda p: "numpy" not in p["filepath"]
    )
    return "; ".join(
        f"{p['internal_api']} {p['version']} ({Path(p['filepath']).parent.name}, {p.get('architecture', '?')}, "
        f"{p['num_threads']} thread{'s' if p['num_threads'] > 1 else ''})"
        for p in pools
    )


def machine() -> list[str]:
    return [
        f"- CPU: {cpu_model()}, {os.cpu_count()} logical cores ({len(os.sched_getaffinity(0))} usable)",
        f"- RAM: {ram_gb()}",
        f"- Python {platform.python_version()}, numpy {np.__version__}, BLAS: {blas()}",
        f"- date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
    ]


def markdown(rows: list[Row]) -> str:
    lines = [*machine(), "", "| row | measured | floor | ratio | goal |", "|---|---|---|---|---|"]
    lines += [f"| {r.name} | {r.measured} | {r.floor} | {r.ratio} | {r.goal} |" for r in rows]
    return "\n".join(lines) + "\n"


def run(names: list[str]) -> list[Row]:
    rows = []
    for name in names:
        start = time.perf_counter()
        try:
            produced = ROWS[name]()
        except Skipped as why:
            print(f"{name}: skipped ({why})", file=sys.stderr)
            produced = [Row(name, f"skipped: {why}", "", "", "")]
        print(f"{name}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
        rows += produced
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--all", action="store_true", help="run every row")
    which.add_argument("--row", action="append", choices=list(ROWS), help="run this row (repeatable)")
    parser.add_argument("--out", type=Path, help="also write the Markdown table here")
    args = parser.parse_args()
    report = markdown(run(list(ROWS) if args.all else args.row))
    print(report)
    if args.out:
        args.out.write_text(report)


if __name__ == "__main__":
    main()
