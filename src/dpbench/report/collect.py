"""What the report shows of one sweep directory, gathered without drawing HTML.

Figures come from ``dpbench-plot``'s recipes (:data:`dpbench.plot.registry.FIGURES`): the recipe whose
file name is the longest prefix of the sweep's ``experiment`` (``kuru_fig3`` → ``kuru.fig3``,
``kusner_utility_logreg`` → ``kusner.utility``), else accuracy against ε for a sweep over ε. A
recipe's markdown summary states each claim in one of two forms, and both become the figure's verdicts
with the numbers under them: ``**claim: VERDICT**`` (han, kuru, liu, kusner; VERDICT is HOLDS, FAILS,
PARTLY, NO MEASURABLE DIFFERENCE, NOT TESTABLE or CANNOT BE EVALUATED), or ``**"claim"** (how it is
checked):`` with one bullet per case ending ``: holds``, ``: holds in part`` or ``: fails`` (chen_lee
and the leaderboard), whose verdict is HOLDS when every case holds, FAILS when every case fails, PARTLY
otherwise, and NO VERDICT when the bullets only give the numbers.
"""

from __future__ import annotations

import base64
import io
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from dpbench.algorithms.registry import AUDIT_COVERAGE
from dpbench.errors import DpbenchError
from dpbench.results import RUN_FILE, load

VERDICTS = ("HOLDS", "FAILS", "PARTLY", "NO MEASURABLE DIFFERENCE", "NOT TESTABLE", "CANNOT BE EVALUATED", "NO VERDICT")
CLAIM_LINE = re.compile(r"^\*\*(?P<claim>.+): (?P<verdict>" + "|".join(VERDICTS[:-1]) + r")\*\*$")
QUOTED_CLAIM = re.compile(r'^\*\*"(?P<claim>[^"]+)"\*\*')
CASE_VERDICT = re.compile(r": (?P<verdict>holds in part|holds|fails)\b")
AUDIT_FILE = "audit.parquet"  # `dpbench-audit --out SWEEP_DIR/audit.parquet` puts a sweep's audit beside it


@dataclass
class Claim:
    claim: str
    verdict: str  # one of VERDICTS
    evidence: list[str]


@dataclass
class FigureSection:
    """One figure of a sweep: its recipe, the PNG (base64), its markdown summary, the claims in it,
    or the error that stopped it."""

    name: str
    description: str
    png_base64: str | None = None
    summary_markdown: str | None = None
    claims: list[Claim] = field(default_factory=list)
    error: str | None = None


@dataclass
class MethodLedger:
    """The privacy ledger of one method in a sweep: how its ε is accounted and what it spent."""

    algorithm: str
    paper: str
    private: bool
    accountants: list[str]
    neighbouring: list[str]
    privacy_units: list[str]
    conversions: list[str]
    stopping_rules: list[str]
    budgets: list[float]
    eps_spent_max: float
    spent_share_max: float  # max over runs of eps_spent / eps
    within_budget: bool
    runs: int
    events: dict[str, int]
    audit: list[dict[str, Any]]  # rows of the audit targets covering this method's releases
    audit_gaps: str = (
        ""  # the releases no audit target covers (each method's ``audit``, dpbench.algorithms.base.AuditCoverage)
    )


@dataclass
class SweepSummary:
    """Everything the report shows of one sweep directory."""

    path: Path
    experiments: list[str]
    status_line: str
    failed: list[tuple[str, str]]  # (job overrides, error line)
    unfinished: list[tuple[str, str]]  # (job overrides, status)
    stale: list[tuple[str, str]]  # (job overrides, which code computed it): results of other code than this
    results: pd.DataFrame
    figures: list[FigureSection]
    ledgers: list[MethodLedger]
    provenance: dict[str, Any]


def summarise(
    sweep_dir: Path,
    audit: pd.DataFrame | None = None,
    progress=None,
    figures: bool = True,
    status_of: Path | None = None,
) -> SweepSummary:
    """Gather ``sweep_dir`` (a sweep directory, or one job's) for the report; ``figures=False`` draws
    none and ``status_of`` names the sweep whose jobs' status to show (the publishable view of a sweep
    holds no measurement to draw, and its jobs' status is the original sweep's)."""
    from dpbench.status import sweep_status

    sweep_dir = Path(sweep_dir)
    results = load(sweep_dir)
    try:
        report = sweep_status(Path(status_of) if status_of is not None else sweep_dir)
    except DpbenchError:  # one job's directory, not a sweep: its results are all there is
        report = None
    experiments = sorted({str(e) for e in results.get("experiment", pd.Series(dtype=object)).dropna().unique()})
    runs = _run_files(sweep_dir)
    audit = audit if audit is not None else _audit_beside(sweep_dir)
    return SweepSummary(
        path=sweep_dir,
        experiments=experiments,
        status_line=report.summary()
        if report
        else f"one job directory, {results['job_dir'].nunique()} results file(s)",
        failed=[(" ".join(job.overrides), job.error or "") for job in report.jobs if job.status == "failed"]
        if report
        else [],
        unfinished=[(" ".join(j.overrides), j.status) for j in report.jobs if j.status in ("incomplete", "missing")]
        if report
        else [],
        stale=[(" ".join(j.overrides), j.note or "") for j in report.jobs if j.status == "stale"] if report else [],
        results=results,
        figures=figures_for(sweep_dir, results, experiments, progress) if figures else [],
        ledgers=method_ledgers(results, runs, audit),
        provenance=provenance(results, runs),
    )


# -------------------------------------------------------------------------------- figures
def recipes_for(experiments: list[str], results: pd.DataFrame) -> list:
    """The ``dpbench-plot`` recipes a sweep's experiments draw (see the module docstring)."""
    from dpbench.plot.registry import FIGURES

    chosen = []
    for experiment in experiments:
        matches = [r for r in FIGURES.values() if r.load is not None and experiment.startswith(r.filename)]
        if matches:
            best = max(matches, key=lambda r: len(r.filename))
            if best not in chosen:
                chosen.append(best)
    if not chosen and "eps" in results and results["eps"].nunique() > 1 and results["test_accuracy"].notna().any():
        chosen.append(FIGURES["accuracy-vs-eps"])
    return chosen


def figures_for(sweep_dir: Path, results: pd.DataFrame, experiments: list[str], progress=None) -> list[FigureSection]:
    """Draw every recipe of the sweep; a recipe that refuses the data shows its message instead."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sections = []
    for recipe in recipes_for(experiments, results):
        if progress:
            progress(f"drawing {recipe.name} from {sweep_dir}")
        section = FigureSection(recipe.name, recipe.description)
        try:
            data = recipe.load([str(sweep_dir)])
            figure = recipe.draw(data)
            buffer = io.BytesIO()
            figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
            plt.close(figure)
            section.png_base64 = base64.b64encode(buffer.getvalue()).decode("ascii")
            if recipe.table is not None:
                section.summary_markdown = recipe.table(data)
                section.claims = claims_in(section.summary_markdown)
        except DpbenchError as exc:
            section.error = str(exc)
        sections.append(section)
    return sections


def claims_in(markdown: str) -> list[Claim]:
    """The claims of a figure summary (both forms of the module docstring), each with the bullet lines
    under it (up to the next claim or heading)."""
    claims: list[Claim] = []
    current: Claim | None = None
    for line in markdown.splitlines():
        stated, quoted = CLAIM_LINE.match(line.strip()), QUOTED_CLAIM.match(line.strip())
        if stated or quoted:
            current = (
                Claim(stated["claim"], stated["verdict"], []) if stated else Claim(quoted["claim"], "NO VERDICT", [])
            )
            claims.append(current)
        elif line.startswith("#"):
            current = None
        elif current is not None and line.startswith("- "):
            current.evidence.append(line[2:])
    for claim in claims:
        if claim.verdict == "NO VERDICT":
            claim.verdict = _verdict_of_cases(claim.evidence)
    return claims


def _verdict_of_cases(evidence: list[str]) -> str:
    """HOLDS if every case that states a verdict holds, FAILS if every one fails, PARTLY otherwise;
    NO VERDICT when no case states one."""
    cases = [match["verdict"] for line in evidence if (match := CASE_VERDICT.search(line))]
    if not cases:
        return "NO VERDICT"
    if all(case == "holds" for case in cases):
        return "HOLDS"
    if all(case == "fails" for case in cases):
        return "FAILS"
    return "PARTLY"


# -------------------------------------------------------------------------------- ledgers
def _run_files(sweep_dir: Path) -> dict[str, dict[str, Any]]:
    """run.json of every job under ``sweep_dir``, by the job's directory relative to it."""
    runs = {}
    for path in sorted(sweep_dir.rglob(RUN_FILE)):
        try:
            runs[path.parent.relative_to(sweep_dir).as_posix()] = json.loads(path.read_text())
        except (OSError, ValueError):
            continue  # an unreadable run.json: the status section reports its job
    return runs


def _audit_beside(sweep_dir: Path) -> pd.DataFrame | None:
    path = sweep_dir / AUDIT_FILE
    return pd.read_parquet(path) if path.is_file() else None


def _distinct(values) -> list:
    return sorted({v for v in values if v is not None and not (isinstance(v, float) and pd.isna(v))}, key=str)


def method_ledgers(
    results: pd.DataFrame, runs: dict[str, dict[str, Any]], audit: pd.DataFrame | None
) -> list[MethodLedger]:
    """One ledger summary per method: accountant, relation, budgets, the largest ε spent (and
    whether every run stayed within its budget), the releases one run charged, the audit verdicts
    of the targets that cover its releases and what they leave unaudited."""
    ledgers = []
    for algorithm, rows in results.groupby("algorithm", sort=True):
        private = bool(rows["private"].iloc[0]) if "private" in rows else True
        spent = rows["eps_spent"].astype(float)
        within = bool((spent <= rows["eps"].astype(float)).all()) if private else True
        ledgers.append(
            MethodLedger(
                algorithm=str(algorithm),
                paper=str(rows["paper"].iloc[0]) if "paper" in rows else "",
                private=private,
                accountants=_distinct(rows.get("accountant", [])),
                neighbouring=_distinct(rows.get("neighbouring", [])),
                privacy_units=_distinct(rows.get("privacy_unit", [])),
                conversions=_distinct(rows.get("conversion", [])),
                stopping_rules=_distinct(rows.get("stopping_rule", [])),
                budgets=sorted({float(e) for e in rows["eps"]}),
                eps_spent_max=float(spent.max()) if private else float("nan"),
                spent_share_max=float((spent / rows["eps"].astype(float)).max()) if private else float("nan"),
                within_budget=within,
                runs=len(rows),
                events=_first_run_events(rows, runs) if private else {},
                audit=_audit_rows(str(algorithm), audit),
                audit_gaps=_audit_gaps(str(algorithm)),
            )
        )
    return ledgers


def _first_run_events(rows: pd.DataFrame, runs: dict[str, dict[str, Any]]) -> dict[str, int]:
    """Releases per event kind charged by the first run of the method's first job."""
    for job_dir in sorted(rows["job_dir"].unique()):
        for summary in runs.get(job_dir, {}).get("ledgers", []):
            if summary.get("counts"):
                return dict(summary["counts"])
    return {}


def _audit_rows(algorithm: str, audit: pd.DataFrame | None) -> list[dict[str, Any]]:
    """The audit rows of the targets that cover ``algorithm``'s releases (:data:`AUDIT_COVERAGE`)."""
    coverage = AUDIT_COVERAGE.get(algorithm)
    if audit is None or "name" not in audit or coverage is None:
        return []
    return audit[audit["name"].astype(str).isin(coverage.targets)].to_dict(orient="records")


def _audit_gaps(algorithm: str) -> str:
    coverage = AUDIT_COVERAGE.get(algorithm)
    return coverage.gaps if coverage is not None else ""


# -------------------------------------------------------------------------------- provenance
def _machine(machine: dict[str, Any]) -> str:
    return f"{machine.get('machine')}, {machine.get('cpus')} CPUs, {machine.get('platform')}"


def provenance(results: pd.DataFrame, runs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Versions, config hashes, dataset checksums and the machines the jobs ran on."""
    packages: Counter[str] = Counter()
    for run in runs.values():
        packages.update(f"{name} {version}" for name, version in (run.get("packages") or {}).items() if version)
    datasets = results.groupby("dataset")["dataset_checksum"].agg(lambda c: ", ".join(sorted(set(map(str, c)))))
    return {
        "dpbench_versions": _distinct(results.get("dpbench_version", [])),
        "code_identities": _distinct(results.get("code_identity", ["unrecorded"])),
        "config_hashes": len(set(results["config_hash"])),
        "jobs_with_run_json": len(runs),
        "datasets": datasets.to_dict(),
        "python": _distinct(run.get("python") for run in runs.values()),
        "packages": sorted(packages),
        "machines": _distinct(_machine(run["machine"]) for run in runs.values() if run.get("machine")),
    }
