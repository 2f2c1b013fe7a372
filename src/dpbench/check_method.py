"""``dpbench check-method NAME``: the self-test a method's author runs before comparing it (as
``benchopt test`` or scikit-learn's ``check_estimator``), for a built-in method or a plugin's.

In order, each check one line:

1. **declared**: every hyper-parameter has a constraint (``parameter_constraints``, :mod:`dpbench.constraints`)
   and the class defaults meet them; a method is refused when a bad value could reach ``fit`` unchecked.
2. **jobs**: a tiny job of the method's kind (:attr:`dpbench.jobs.Kind.tiny`) for each neighbouring relation
   (a relation the class does not meet must be refused by the configuration) and, for a method with a tuning
   grid, under ``tuning=private``; a spend above the budget is the method's overspend.
3. **ledger**: every run's ε recomputed from the releases its ledger recorded (and by Google's dp-accounting
   where it prices them) equals the rows' (``dpbench-verify``'s checks).
4. **deterministic**: each job run again with the same noise key gives the same rows
   (``dpbench-verify --rerun``'s comparison).
5. **audit** (GLM methods): a black-box audit of the whole ``fit`` on a tiny neighbouring pair under the
   method's relation — D: 20 rows x = 0, D′: D with the record x = e₁, y = +1 added (add/remove) or in place
   of record 0 (replace-one) — with :func:`dpbench.audit.audit` at 99 % confidence on a statistic a pilot
   sample fixes (:func:`discriminant`): the empirical lower bound ε̂ on the whole fit's ε must not exceed
   the ε its ledger claims. Its **planted control**, the same fit
   that also releases the differing feature's exact sum unpaid, must be caught (ε̂ above the claim): else the
   audit had no power on the pair, and says so.

The exit status is 0 when every check passes; otherwise 1, and the last line names the method (and the plugin
it comes from) and the first failure.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

PROG = "dpbench check-method"
AUDIT_ROWS = 20
"""Rows of D in the audit's pair (D′ has one more under add/remove)."""
AUDIT_CONFIDENCE = 0.99
PILOT_FITS = 200
"""Fits a side that fix the audit's statistic before its calibration and audit draws (:func:`discriminant`)."""
EPS, DELTA = 1.0, 1e-5
"""The budget of every check's job and fit."""


@dataclass(frozen=True)
class Outcome:
    """One check: its name, whether it passed, and what it found (one sentence)."""

    check: str
    ok: bool
    detail: str

    def line(self) -> str:
        return f"  {'ok  ' if self.ok else 'FAIL'}  {self.check}: {self.detail}"


def _parser() -> argparse.ArgumentParser:
    summary = __doc__.split("\n\n")[0].replace("``", "")  # the docstring's reST literals, as plain text
    parser = argparse.ArgumentParser(prog=PROG, description=summary)
    parser.add_argument("name", help="the method's name, its class's name (not a preset's)")
    parser.add_argument(
        "--draws",
        type=int,
        default=1000,
        help="fits per side of the black-box audit (≥ 1000; a calibration sample as large comes first; default 1000)",
    )
    return parser


def declared(cls) -> Outcome:
    """What its kind's job calls defined (``Kind.entry``), every hyper-parameter constrained, and the
    defaults within the constraints."""
    from dpbench.jobs import KINDS

    if cls.problem_kind not in KINDS:
        return Outcome("declared", False, f"it runs problem_kind={cls.problem_kind!r}, which no job kind runs")
    entry = KINDS[cls.problem_kind].entry
    if not callable(getattr(cls, entry, None)):
        return Outcome(
            "declared", False, f"it defines no {entry}(…), which a job of its kind ({cls.problem_kind}) calls"
        )
    fields = [field.name for field in dataclasses.fields(cls)]
    unconstrained = [key for key in fields if key not in cls.constraints()]
    if unconstrained:
        return Outcome(
            "declared",
            False,
            f"hyper-parameter {unconstrained[0]} has no constraint (parameter_constraints): "
            "a bad value would reach fit unchecked",
        )
    try:
        cls()
    except (TypeError, ValueError) as exc:
        return Outcome("declared", False, f"its defaults break its own constraints: {exc}")
    return Outcome("declared", True, f"{len(fields)} hyper-parameters, each constrained; the defaults pass")


def _compose(overrides: list[str]):
    """The Hydra config ``dpbench OVERRIDES`` composes (the shipped conf/, plugins' and class presets)."""
    from hydra import compose, initialize_config_dir

    from dpbench.conf_files import config_dir
    from dpbench.resolvers import register_resolvers

    register_resolvers()
    with initialize_config_dir(version_base="1.3", config_dir=str(config_dir())):
        return compose(config_name="config", overrides=overrides)


def tiny_overrides(name: str, cls) -> list[str]:
    """A tiny job of ``name``: its kind's tiny case, with a model the method supports."""
    from dpbench.jobs import KINDS
    from dpbench.resolve import models_for

    kind = KINDS[cls.problem_kind]
    overrides = [f"algorithm={name}", *kind.tiny, "progress=false", f"privacy.eps={EPS}", f"privacy.delta={DELTA}"]
    if kind.model == "linear" and cls.supported_losses is not None and "logistic" not in cls.supported_losses:
        models = models_for(name)
        if models:
            overrides.append(f"model={models[0]}")
    return overrides


def job_cases(name: str, cls) -> Iterator[tuple[str, list[str], str | None]]:
    """(label, overrides, why it must be refused or None) for each tiny job: one per relation, and
    ``tuning=private`` under the first relation the method meets when it has a tuning grid (refused when
    the method's accountant cannot price repeat-and-select)."""
    from dpbench.jobs import KINDS

    method = cls()
    base = tiny_overrides(name, cls)
    met = []
    for relation in ("add_remove", "replace_one"):
        mode = method.relation_mode(relation)
        label = f"{relation}" + (f" ({mode})" if mode and mode != "native" else "")
        refusal = None if mode else (cls.relation_reason or "the class does not meet it")
        if mode:
            met.append(relation)
        yield label, [*base, f"privacy.neighbouring={relation}"], refusal
    if cls.private and cls.tuning_grid and KINDS[cls.problem_kind].tunes and met:
        untunable = method._private_tuning_refusal(met[0])
        refusal = untunable.reason if untunable is not None else None
        yield f"{met[0]}, tuning=private", [*base, f"privacy.neighbouring={met[0]}", "tuning=private"], refusal


def run_tiny(label: str, overrides: list[str], refusal: str | None, out: Path) -> tuple[Outcome, Path | None]:
    """Run one tiny job into ``out``: (its outcome, the job directory when it ran)."""
    from omegaconf import OmegaConf

    from dpbench.engine import run_job
    from dpbench.errors import ConfigError, PrivacyViolation
    from dpbench.jobs.plan import make_plan
    from dpbench.privacy.ledger import BudgetExceeded
    from dpbench.resolve import run_config
    from dpbench.results import one_line

    check = f"job {label}"
    try:
        cfg = _compose(overrides)
        plan = make_plan(run_config(cfg))
    except ConfigError as exc:
        if refusal is not None:
            return Outcome(check, True, f"refused, as the class says ({one_line(exc)})"), None
        return Outcome(check, False, f"the configuration refuses it: {one_line(exc)}"), None
    if refusal is not None:
        return Outcome(
            check, False, f"the class does not meet this relation ({refusal}), yet the job was accepted"
        ), None
    try:
        results = run_job(plan, out, resolved_config=OmegaConf.to_container(cfg, resolve=True))
    except (BudgetExceeded, PrivacyViolation) as exc:
        return Outcome(check, False, f"overspent its privacy budget ({type(exc).__name__}: {one_line(exc)})"), None
    except Exception as exc:  # noqa: BLE001 — any failure of the method's job is the finding
        return Outcome(check, False, f"the job failed: {type(exc).__name__}: {one_line(exc)}"), None
    spent = float(results["eps_spent"].max())
    budget = float(results["eps"].max())
    if not spent <= budget * (1 + 1e-9):
        return Outcome(check, False, f"overspent its privacy budget: ε spent {spent:.6g} > {budget:g}"), out
    return Outcome(check, True, f"{len(results)} runs, ε spent ≤ {spent:.4g} of {budget:g}"), out


def ledger_check(root: Path, jobs: list[Path]) -> Outcome:
    """``dpbench-verify``'s checks of every job: ε recomputed from each run's ledger equals the rows'."""
    from dpbench.verify.checks import Verifier
    from dpbench.verify.independent import load

    dpa = load()
    verifier = Verifier(root, dpa, independent=dpa is not None)
    failures = [failure.line() for job in jobs for failure in verifier.verify(job / "results.parquet").failures]
    if failures:
        return Outcome("ledger", False, failures[0])
    by = " and by dp-accounting" if dpa is not None else ""
    return Outcome("ledger", True, f"ε recomputed from every run's ledger{by} equals the rows' ({len(jobs)} jobs)")


def determinism(jobs: list[Path]) -> Outcome:
    """Each job run again with its noise key reproduces its rows."""
    from dpbench.verify.rerun import rerun_job

    for job in jobs:
        with tempfile.TemporaryDirectory(prefix="dpbench-check-") as work:
            difference = rerun_job(job, Path(work))
        if difference is not None:
            return Outcome(
                "deterministic", False, f"not deterministic: {job.name} run again with its noise key: {difference}"
            )
    return Outcome("deterministic", True, f"each job run again with its noise key gives the same rows ({len(jobs)})")


def audit_pair(relation: str, loss: str, reg: float, d: int = 2):
    """The audit's neighbouring problems (D, D′) under ``relation``: D has AUDIT_ROWS rows x = 0 (labels
    alternating), D′ adds the record (e₁, +1) (``add_remove``, n̄ = AUDIT_ROWS + 1 on both) or puts it in
    place of record 0 (``replace_one``). Public bounds: ‖x‖₂ ≤ 1, |x_j| ≤ 1, ‖x‖₁ ≤ √d."""
    import numpy as np

    from dpbench.problems import make_problem

    X = np.zeros((AUDIT_ROWS, d))
    y = np.where(np.arange(AUDIT_ROWS) % 2 == 0, 1.0, -1.0)
    record = np.eye(d)[:1]
    if relation == "add_remove":
        X2, y2, n_public = np.vstack([X, record]), np.append(y, 1.0), AUDIT_ROWS + 1
    else:
        X2, y2, n_public = np.vstack([record, X[1:]]), np.append(1.0, y[1:]), AUDIT_ROWS
    bounds = {"public_row_norm": 1.0, "public_feature_bound": 1.0, "public_row_l1_norm": math.sqrt(d)}
    return [make_problem(X_, y_, loss=loss, reg=reg, public_n=n_public, **bounds) for X_, y_ in ((X, y), (X2, y2))]


class FitPool:
    """Fits of one method on each side of the pair, drawn once and handed out in order: the audit and its
    planted control read the same fits (each audit's pilot, calibration and audit draws stay disjoint),
    so the control costs no fit of its own. Each side's fits use a generator of their own."""

    def __init__(self, method, problems, new_ledger: Callable, seed: int = 0) -> None:
        import numpy as np

        self.method, self.problems, self.new_ledger = method, problems, new_ledger
        self.rngs = [np.random.default_rng([seed, side]) for side in (0, 1)]
        self.fits: list[list] = [[], []]

    def _fit(self, side: int):
        import numpy as np

        from dpbench.algorithms.base import Tracer

        problem = self.problems[side]
        ledger, _ = self.new_ledger()
        w = self.method.fit(problem, ledger, self.rngs[side], Tracer(problem, ledger)).w
        return np.asarray(w, dtype=float)

    def sampler(self, leak: bool) -> Callable:
        """``sample(side, n, rng)``: the next n fits of the side (``rng`` is not used: the pool's own
        generators draw them); with ``leak``, each followed by the differing feature's exact sum (the
        planted control's unpaid release)."""
        import numpy as np

        used = [0, 0]

        def sample(side: int, n: int, rng) -> np.ndarray:
            start, used[side] = used[side], used[side] + n
            while len(self.fits[side]) < used[side]:
                self.fits[side].append(self._fit(side))
            outputs = np.array(self.fits[side][start : used[side]])
            if leak:
                outputs = np.column_stack([outputs, np.full(n, self.problems[side].X[:, 0].sum())])
            return outputs

        return sample


def discriminant(sample: Callable, pilot: int) -> Callable:
    """The audit's statistic, fixed from a pilot sample of its own (``pilot`` fits a side, never reused):
    the projection x·u onto u ∝ Δμ / σ², the per-coordinate mean difference over the pooled variance
    (a diagonal Fisher discriminant). A coordinate that differs exactly (variance 0) dominates it, where
    the plain mean difference would drown it in the noise of the others."""
    import numpy as np

    a, b = (np.asarray(sample(side, pilot, None), dtype=float).reshape(pilot, -1) for side in (0, 1))
    variance = (a.var(axis=0) + b.var(axis=0)) / 2
    floor = 1e-12 * max(float(variance.max()), 1.0)
    u = (b.mean(axis=0) - a.mean(axis=0)) / np.maximum(variance, floor)
    norm = float(np.linalg.norm(u))
    u = u / norm if norm > 0 and np.isfinite(norm) else np.eye(u.size)[0]
    return lambda x: np.asarray(x, dtype=float).reshape(len(x), -1) @ u


def black_box_audit(name: str, cls, draws: int) -> list[Outcome]:
    """The audit of the whole fit and of its planted control (module docstring)."""
    import numpy as np

    from dpbench.algorithms.base import Tracer
    from dpbench.algorithms.registry import make_algorithm
    from dpbench.audit import Target, audit
    from dpbench.jobs.ledgers import run_ledger
    from dpbench.resolve import run_config

    method = cls()
    relation = next((r for r in ("add_remove", "replace_one") if method.relation_mode(r) == "native"), None)
    if relation is None:
        return [Outcome("audit", True, "skipped: the method meets no relation natively")]
    run = run_config(_compose([*tiny_overrides(name, cls), f"privacy.neighbouring={relation}"]))
    method = make_algorithm(name, run.algorithm_params)
    problems = audit_pair(relation, run.model.loss, run.model.reg)

    def new_ledger():
        return run_ledger(method, run)

    ledger, reported = new_ledger()
    method.fit(problems[0], ledger, np.random.default_rng(0), Tracer(problems[0], ledger))
    claim = float(reported(ledger.eps_spent))
    pair = f"{relation}: D = {AUDIT_ROWS} rows x = 0, D′ with (e₁, +1) {'added' if relation == 'add_remove' else 'in place of row 0'}"
    outcomes = []
    pool = FitPool(method, problems, new_ledger)
    for check, leak in (("audit", False), ("planted control", True)):
        sample = pool.sampler(leak)
        target = Target(
            f"check-method {name}{' control' if leak else ''}",
            claim,
            run.privacy.delta,
            sample,
            pair=pair,
            proof=f"{name}'s ledger",
            statistic=discriminant(sample, PILOT_FITS),
        )
        result = audit(target, n=draws, seed=0, confidence=AUDIT_CONFIDENCE)
        found = f"ε̂ ≥ {max(result.eps_lower_bound, 0.0):.3g} against the claimed ε = {claim:.3g} ({pair}; {result.n} fits a side)"
        if leak:
            ok = result.violation
            detail = (
                f"the fit plus an unpaid exact sum is caught: {found}"
                if ok
                else f"the audit has no power on this pair: its planted leak was not caught: {found}"
            )
        else:
            ok = not result.violation
            detail = found if ok else f"the fit leaks more than its ledger pays for: {found}"
        outcomes.append(Outcome(check, ok, detail))
    return outcomes


def _owner(name: str) -> str:
    from dpbench.algorithms.registry import PLUGIN_SOURCES

    return f"plugin {PLUGIN_SOURCES[name]}: method {name}" if name in PLUGIN_SOURCES else f"method {name}"


def check(name: str, draws: int, emit: Callable[[str], None]) -> list[Outcome]:
    """Run every check of method ``name``, emitting each outcome's line as it is known."""
    from dpbench.algorithms.registry import ALGORITHMS, algorithm_class
    from dpbench.conf_files import option_file
    from dpbench.errors import ConfigError
    from dpbench.jobs import KINDS

    preset = option_file("algorithm", name)
    if name not in ALGORITHMS and preset is not None:
        raise ConfigError(
            f"algorithm={name} is a preset ({preset}), not a method: check-method checks a method by its class's "
            f"name, the one the preset configures; methods: {', '.join(sorted(ALGORITHMS))}"
        )
    cls = algorithm_class(name)
    outcomes: list[Outcome] = []

    def record(outcome: Outcome) -> None:
        outcomes.append(outcome)
        emit(outcome.line())

    record(declared(cls))
    if not outcomes[-1].ok:
        return outcomes
    with tempfile.TemporaryDirectory(prefix="dpbench-check-") as tmp:
        root = Path(tmp)
        jobs = []
        for i, (label, overrides, refusal) in enumerate(job_cases(name, cls)):
            outcome, job = run_tiny(label, overrides, refusal, root / f"job{i}")
            record(outcome)
            if job is not None:
                jobs.append(job)
        if not all(o.ok for o in outcomes):
            return outcomes
        if cls.private and jobs:
            record(ledger_check(root, jobs))
        if jobs:
            record(determinism(jobs))
    if cls.private and KINDS[cls.problem_kind].model == "linear" and all(o.ok for o in outcomes):
        for outcome in black_box_audit(name, cls, draws):
            record(outcome)
    return outcomes


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``dpbench check-method``; returns the exit status."""
    args = _parser().parse_args(argv)
    from dpbench.errors import DpbenchError

    if args.draws < 1000:
        print(f"{PROG}: error: --draws must be ≥ 1000, got {args.draws}", file=sys.stderr)
        return 2
    try:
        outcomes = check(args.name, args.draws, lambda line: print(line, flush=True))
    except DpbenchError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    failed = [o for o in outcomes if not o.ok]
    if failed:
        print(f"{PROG}: {_owner(args.name)} fails {failed[0].check}: {failed[0].detail}", file=sys.stderr)
        return 1
    print(f"{PROG}: {args.name} passed {len(outcomes)} checks")
    return 0
