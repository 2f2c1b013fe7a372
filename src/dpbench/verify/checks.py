"""The checks of ``dpbench-verify``, one job directory (``results.parquet`` with ``run.json`` beside it) at a time.

Per results row:

* **eps** — ``eps_spent`` equals ε recomputed from the ledger summary the row was charged on
  (:func:`dpbench.privacy.recompute.recompute_epsilon`) to :data:`RTOL` relative, mapped to the
  reported ε as the job did (2ε′ for a method that meets replace-one by group privacy, whose ledger
  holds the add/remove budget :func:`~dpbench.privacy.neighbouring.group_privacy_budget`); the
  summary's own ``eps_spent`` is that recomputation too. ``delta_spent`` (han_pwa, kusner_bo) equals
  Σ count·δ of the recorded (ε, δ) events. A non-private row reports ε = ∞ and has no private ledger.
* **budget** — ``eps_spent ≤ eps`` (and ``delta_spent ≤ delta``) for every private row.
* **rdp**, **pld** — dp-accounting's ε of the same events (:mod:`dpbench.verify.independent`).

Per job:

* **config** — every row's ``config_hash`` is run.json's;
* **runs** — the rows' (fold, rep) set is the ledgers' set (han_pwa: the reps their blocks cover).

Each check that applies counts as passed or failed; each failure is one :class:`Failure` line
naming the job directory, the row and what differs.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpbench.errors import DpbenchError
from dpbench.results import RESULTS_FILE, RUN_FILE

#: Relative tolerance of "eps_spent equals its recomputation from run.json".
RTOL = 1e-9


class VerifyDirError(DpbenchError):
    """The directory is missing, not a directory, or holds no results.parquet."""


@dataclass(frozen=True)
class Failure:
    """One failed check: the job directory (relative to the verified one), the row ("fold 0 rep 1",
    empty for the whole job) and what differs."""

    job: str
    row: str
    message: str

    def line(self) -> str:
        return f"FAIL {self.job}{' ' + self.row if self.row else ''}: {self.message}"


@dataclass
class JobReport:
    """What the checks found in one job directory. ``worst_rel``: the largest relative difference
    between a row's eps_spent and its recomputation; ``rdp`` / ``pld``: dp-accounting's verdicts per
    row (``=``, ``>=``, ``<=``, ``~``, ``n/a``, ``FAIL``, ``not installed``) with ``rdp_rel`` the largest
    relative difference where equality is expected and ``pld_ratio`` the largest PLD ε / reported ε;
    ``notes``: why a check was n/a."""

    job: str
    rows: int = 0
    passed: int = 0
    failures: list[Failure] = field(default_factory=list)
    worst_rel: float | None = None
    rdp: set[str] = field(default_factory=set)
    pld: set[str] = field(default_factory=set)
    rdp_rel: float | None = None
    pld_ratio: float | None = None
    notes: set[str] = field(default_factory=set)

    @property
    def ok(self) -> bool:
        return not self.failures

    def fail(self, row: str, message: str) -> None:
        self.failures.append(Failure(self.job, row, message))

    def check(self, passed: bool, row: str, message: str | Callable[[], str]) -> bool:
        """Count one check; on failure record ``message`` (a callable is called only then)."""
        if passed:
            self.passed += 1
        else:
            self.fail(row, message() if callable(message) else message)
        return passed

    def to_dict(self) -> dict[str, Any]:
        return {
            "job": self.job, "rows": self.rows, "passed": self.passed, "failed": len(self.failures),
            "worst_rel_eps_diff": self.worst_rel, "dp_accounting_rdp": sorted(self.rdp), "rdp_rel_diff": self.rdp_rel,
            "dp_accounting_pld": sorted(self.pld), "pld_ratio": self.pld_ratio, "notes": sorted(self.notes),
            "failures": [f.line() for f in self.failures],
        }


def _max(a: float | None, b: float) -> float:
    return b if a is None or b > a else a


# -------------------------------------------------------------------------------- finding jobs
def find_results(root: Path) -> list[Path]:
    """Every results.parquet under ``root`` (itself a job directory, a sweep or a tree of them), sorted;
    :class:`VerifyDirError` when ``root`` is not a directory or holds none."""
    root = Path(root)
    if not root.exists():
        raise VerifyDirError(f"{root}: no such directory")
    if not root.is_dir():
        raise VerifyDirError(f"{root}: not a directory")
    found = sorted(p for p in root.rglob(RESULTS_FILE) if p.is_file())
    if not found:
        raise VerifyDirError(f"{root}: no {RESULTS_FILE} found under it (is this a dpbench output directory?)")
    return found


def job_name(root: Path, results_path: Path) -> str:
    """The job's directory relative to ``root`` ("." for ``root`` itself)."""
    return results_path.parent.relative_to(root).as_posix()


# -------------------------------------------------------------------------------- pure checks
def row_key(fold: Any, rep: Any) -> str:
    return f"fold {int(fold)} rep {int(rep)}"


def summaries_by_run(ledgers: list[Mapping[str, Any]]) -> tuple[dict[tuple[int, int], Mapping[str, Any]], list[str]]:
    """(fold, rep) → the ledger summary that run was charged on, and the problems found: GLM and kusner_bo
    ledgers name their run (``fold`` is 0 when absent); a han_pwa ledger stands for ``runs`` consecutive
    reps of fold 0 (blocks in order). A run named twice is a problem."""
    by_run: dict[tuple[int, int], Mapping[str, Any]] = {}
    problems: list[str] = []
    start = 0
    for summary in ledgers:
        if "runs" in summary:
            keys = [(0, rep) for rep in range(start, start + int(summary["runs"]))]
            start += int(summary["runs"])
        elif "rep" in summary:
            keys = [(int(summary.get("fold", 0)), int(summary["rep"]))]
        else:
            problems.append(f"a ledger in {RUN_FILE} names no run (no rep, no runs): {sorted(summary)}")
            continue
        for key in keys:
            if key in by_run:
                problems.append(f"{row_key(*key)} has two ledgers in {RUN_FILE}")
            by_run[key] = summary
    return by_run, problems


def check_runs(rows: set[tuple[int, int]], ledgers: set[tuple[int, int]]) -> str | None:
    """None when the rows' (fold, rep) set is the ledgers' set, else what differs."""
    if rows == ledgers:
        return None
    parts = []
    if rows - ledgers:
        parts.append(f"rows without a ledger: {', '.join(row_key(*k) for k in sorted(rows - ledgers)[:5])}")
    if ledgers - rows:
        parts.append(f"ledgers without a row: {', '.join(row_key(*k) for k in sorted(ledgers - rows)[:5])}")
    return "; ".join(parts)


def check_config_hash(hashes: set[str], recorded: Any) -> str | None:
    """None when every row's config_hash is run.json's, else what differs."""
    if hashes == {recorded}:
        return None
    return f"config_hash {', '.join(sorted(hashes))} in {RESULTS_FILE}, {recorded} in {RUN_FILE}"


def reporting(summary: Mapping[str, Any], eps: float, delta: float) -> tuple[Callable[[float], float], Callable[[float], float]] | None:
    """(ledger ε → reported ε, reported ε → ledger ε) for a run whose budget is (eps, delta): identity
    when the ledger holds that budget, ε ↦ 2ε when it holds the group-privacy budget (ε/2, δ/(1 + e^{ε/2}));
    None when it holds neither."""
    from dpbench.privacy.neighbouring import (
        group_privacy_budget,
        group_privacy_epsilon,
        native_epsilon,
    )

    budget = (summary.get("epsilon"), summary.get("delta"))
    if budget == (eps, delta):
        return native_epsilon, native_epsilon
    try:
        half = group_privacy_budget(eps, delta)
    except ValueError:
        return None
    if all(isinstance(b, (int, float)) and math.isclose(b, h, rel_tol=1e-12, abs_tol=0.0) for b, h in zip(budget, half)):
        return group_privacy_epsilon, lambda reported: reported / 2.0
    return None


def relative_difference(a: float, b: float) -> float:
    """|a − b| / |b| (0 when equal, including two equal infinities; inf when b = 0 ≠ a or either is NaN)."""
    if a == b:
        return 0.0
    if math.isnan(a) or math.isnan(b) or b == 0 or math.isinf(a) or math.isinf(b):
        return math.inf
    return abs(a - b) / abs(b)


def check_budget(eps_spent: float, eps: float) -> str | None:
    """None when the row's ε is within its budget, else what exceeds it."""
    return None if eps_spent <= eps else f"eps_spent {eps_spent!r} exceeds the budget eps {eps!r}"


def check_independent(verdict, ours: float, row_context: str = "") -> tuple[str, str | None, str, str | None]:
    """dp-accounting's verdicts on a reported (ledger-level) ε ``ours``: (rdp status, rdp failure or None,
    pld status, pld failure or None); statuses ``=``, ``>=``, ``<=``, ``n/a``, ``FAIL``, and ``~`` for a PLD ε
    above ``ours`` by less than its discretisation allowance (not proven to under-count: a note, not a failure)."""
    rdp_status, rdp_failure = "n/a", None
    if verdict.rdp_eps is not None:
        theirs = verdict.rdp_eps
        if verdict.rdp_expect == "equal":
            if relative_difference(ours, theirs) <= 1e-6:
                rdp_status = "="
            else:
                rdp_status = "FAIL"
                rdp_failure = f"eps {ours!r}{row_context} differs from dp-accounting's RDP eps {theirs!r} (same events, orders and conversion)"
        elif ours >= theirs * (1.0 - 1e-6):
            rdp_status = ">="
        else:
            rdp_status = "FAIL"
            rdp_failure = f"eps {ours!r}{row_context} is below dp-accounting's RDP eps {theirs!r}: an under-count"
    pld_status, pld_failure = "n/a", None
    if verdict.pld_eps is not None:
        if verdict.pld_eps <= ours:
            pld_status = "<="
        elif verdict.pld_eps <= ours + verdict.pld_allowance:  # above, but not proven to under-count
            pld_status = "~"
        else:
            pld_status = "FAIL"
            pld_failure = (
                f"eps {ours!r}{row_context} is below dp-accounting's PLD eps {verdict.pld_eps!r} "
                f"(discretisation allowance {verdict.pld_allowance:.2g}): an under-count"
            )
    return rdp_status, rdp_failure, pld_status, pld_failure


# -------------------------------------------------------------------------------- one job
class Verifier:
    """Checks job directories; dp-accounting's verdicts are cached per distinct ledger (``dpa``: the
    dp_accounting module, or None when not installed; ``independent=False`` skips those checks)."""

    def __init__(self, root: Path, dpa=None, independent: bool = True) -> None:
        self.root = Path(root)
        self.dpa = dpa
        self.independent = independent
        self._verdicts: dict[str, Any] = {}

    def verify(self, results_path: Path) -> JobReport:
        """Every check on the job whose results file is ``results_path``."""
        import pandas as pd

        report = JobReport(job_name(self.root, results_path))
        try:
            results = pd.read_parquet(results_path)
        except Exception as exc:  # noqa: BLE001 — pyarrow raises many types for a damaged file
            report.fail("", f"{RESULTS_FILE} is unreadable: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
            return report
        report.rows = len(results)
        try:
            meta = json.loads((results_path.parent / RUN_FILE).read_text())
        except (OSError, ValueError) as exc:
            report.fail("", f"{RUN_FILE} is missing or unreadable beside {RESULTS_FILE} ({exc})")
            return report
        if not isinstance(meta, dict):
            report.fail("", f"{RUN_FILE} is not a JSON object")
            return report
        missing = [c for c in ("eps", "delta", "eps_spent", "fold", "rep", "config_hash") if c not in results.columns]
        if missing:
            report.fail("", f"{RESULTS_FILE} has no column {', '.join(missing)}")
            return report

        message = check_config_hash({str(h) for h in results["config_hash"]}, meta.get("config_hash"))
        report.check(message is None, "", message or "")
        by_run, problems = summaries_by_run(meta.get("ledgers") or [])
        for problem in problems:
            report.fail("", problem)
        private = results["private"].astype(bool) if "private" in results.columns else results["eps_spent"] < math.inf
        keys = [(int(f), int(r)) for f, r in zip(results["fold"], results["rep"])]
        if private.any() or by_run:
            message = check_runs(set(keys), set(by_run))
            report.check(message is None, "", message or "")
        for i, key in enumerate(keys):
            row = results.iloc[i]
            if private.iloc[i]:
                self._private_row(report, row, key, by_run.get(key))
            else:
                self._non_private_row(report, row, key, by_run.get(key))
        return report

    def _non_private_row(self, report: JobReport, row, key, summary) -> None:
        where = row_key(*key)
        eps_spent = float(row["eps_spent"])
        report.check(math.isinf(eps_spent) and eps_spent > 0, where, f"a non-private row reports eps_spent {eps_spent!r}, not inf")
        if summary is not None:
            report.check(
                summary.get("accountant") == "none" and not summary.get("events"), where,
                f"a non-private row has a private ledger in {RUN_FILE} (accountant {summary.get('accountant')!r})",
            )

    def _private_row(self, report: JobReport, row, key, summary) -> None:
        from dpbench.privacy.recompute import recompute_delta, recompute_epsilon

        where = row_key(*key)
        eps_spent, eps, delta = float(row["eps_spent"]), float(row["eps"]), float(row["delta"])
        report.check(check_budget(eps_spent, eps) is None, where, lambda: check_budget(eps_spent, eps))
        if "delta_spent" in row.index and not math.isnan(float(row["delta_spent"])):
            delta_spent = float(row["delta_spent"])
            report.check(delta_spent <= delta, where, f"delta_spent {delta_spent!r} exceeds the budget delta {delta!r}")
        if summary is None:
            return  # the runs check names it
        if summary.get("accountant") in (None, "none") or "events" not in summary:
            report.fail(where, f"a private row whose ledger in {RUN_FILE} records no events (accountant {summary.get('accountant')!r})")
            return
        maps = reporting(summary, eps, delta)
        if maps is None:
            report.fail(where, f"its ledger's budget ({summary.get('epsilon')!r}, {summary.get('delta')!r}) is neither the row's "
                               f"({eps!r}, {delta!r}) nor its group-privacy budget")
            return
        report_eps, ledger_eps = maps
        try:
            recomputed = recompute_epsilon(summary)
        except (ValueError, TypeError, KeyError) as exc:
            report.fail(where, f"eps cannot be recomputed from {RUN_FILE}: {exc}")
            return
        expected = report_eps(recomputed)
        rel = relative_difference(eps_spent, expected)
        report.worst_rel = _max(report.worst_rel, rel)
        report.check(rel <= RTOL, where, f"eps_spent {eps_spent!r} in {RESULTS_FILE}, {expected!r} recomputed from {RUN_FILE}")
        recorded = summary.get("eps_spent")
        if isinstance(recorded, (int, float)):
            report.check(relative_difference(float(recorded), recomputed) <= RTOL, where,
                         f"the ledger in {RUN_FILE} records eps_spent {recorded!r}, its events give {recomputed!r}")
        if "delta_spent" in row.index and not math.isnan(float(row["delta_spent"])):
            delta_spent, again = float(row["delta_spent"]), recompute_delta(summary)
            report.check(relative_difference(delta_spent, again) <= RTOL, where,
                         f"delta_spent {delta_spent!r} in {RESULTS_FILE}, {again!r} recomputed from {RUN_FILE}")
        if self.independent:
            self._independent(report, where, summary, ledger_eps(eps_spent), recomputed, report_eps is not ledger_eps)

    def _independent(self, report: JobReport, where: str, summary, ours: float, recomputed: float, group: bool) -> None:
        from dpbench.verify.independent import independent_epsilon

        if self.dpa is None:
            report.rdp.add("not installed")
            report.pld.add("not installed")
            return
        key = json.dumps({k: summary.get(k) for k in ("accountant", "conversion", "gaussian_amplification", "orders",
                                                       "delta", "events")}, sort_keys=True)
        if key not in self._verdicts:
            self._verdicts[key] = independent_epsilon(self.dpa, summary, recomputed)
        verdict = self._verdicts[key]
        context = " (half the reported eps: group privacy)" if group else ""
        rdp, rdp_failure, pld, pld_failure = check_independent(verdict, ours, context)
        for status, failure, note, kind in ((rdp, rdp_failure, verdict.rdp_note, "RDP"), (pld, pld_failure, verdict.pld_note, "PLD")):
            (report.rdp if kind == "RDP" else report.pld).add(status)
            if status == "n/a":
                report.notes.add(f"dp-accounting {kind} n/a: {note}")
            elif status == "~":
                report.notes.add(f"dp-accounting PLD: its eps {verdict.pld_eps!r} is above the reported {ours!r}{context} by less "
                                 f"than its discretisation allowance {verdict.pld_allowance:.2g} (not proven to under-count)")
            else:
                report.check(failure is None, where, failure or "")
        if rdp == "=":
            report.rdp_rel = _max(report.rdp_rel, relative_difference(ours, verdict.rdp_eps))
        if verdict.pld_eps is not None and ours > 0:
            report.pld_ratio = _max(report.pld_ratio, verdict.pld_eps / ours)
