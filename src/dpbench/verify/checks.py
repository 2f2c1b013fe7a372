"""The checks of ``dpbench-verify``, one job directory (``results.parquet`` with ``run.json`` beside it) at a time.

Per results row:

* **eps** — ``eps_spent`` equals ε recomputed from the ledger summary the row was charged on
  (:func:`dpbench.privacy.recompute.recompute_epsilon`) to :data:`RTOL` relative, mapped to the
  reported ε as the job did (2ε′ for a method that meets replace-one by group privacy, whose ledger
  holds the add/remove budget :func:`~dpbench.privacy.neighbouring.group_privacy_budget`; plus the
  count ledger's ε for a run that paid for a noisy training size first); the
  summary's own ``eps_spent`` is that recomputation too. ``delta_spent`` (han_pwa, kusner_bo) equals
  Σ count·δ of the recorded (ε, δ) events. A non-private row reports ε = ∞ and has no private ledger.
* **budget** — ``eps_spent ≤ eps`` (and ``delta_spent ≤ delta``) for every private row.
* **rdp**, **pld** — dp-accounting's ε of the same events (:mod:`dpbench.verify.independent`).

Per job:

* **config** — every row's ``config_hash`` is run.json's;
* **configuration** — run.json's ``config`` validates again and hashes to its ``config_hash``: the
  configuration the checks of meaning below compare each row with is the job's. One the current code
  cannot build (a job written by ``run_job`` without its resolved configuration) leaves them n/a: a note;
* **runs** — the rows' (fold, rep) set is the ledgers' set (han_pwa: the reps their blocks cover).

What each row means, against that configuration (:class:`Meaning`):

* **relation** (private rows) — ``neighbouring`` and ``relation_conversion`` are what
  :func:`~dpbench.privacy.neighbouring.resolve` gives for the row's method and hyper-parameters under the
  configured ``privacy.neighbouring`` (a relation the method meets), and the ledger was charged under the
  relation that implies: the row's, or add/remove when it meets replace-one by group privacy;
* **guarantee** (every row) — ``guarantee_kind`` is what :func:`~dpbench.jobs.columns.guarantee_status`
  gives for the configuration (proven, conditional, not_covered, none), and ``guarantee_valid`` is true only
  when its reasons — :func:`~dpbench.jobs.columns.guarantee_breaches` of the configuration, its dataset's
  recorded scaling and the dataset's recorded ``guarantee_breaches`` (run.json ``dataset``; absent: none),
  or the assumption a conditional guarantee rests on — are none, with an
  empty ``guarantee_note``; a false one has a note that says every such reason (it may say more: a job
  kind that records no dataset scaling);
* **stopping order** (private rows whose ``stopping_rule`` names an order α, or whose configuration
  implies one, when the configuration claims the guarantee) — the rule is the one dpbench fixes from
  public values only (:func:`~dpbench.jobs.columns.identity_columns`), and the ledger's ``orders``
  contain its α. Rows outside the guarantee are not checked: under ``tuning=oracle`` each grid point's
  filter is fixed from its own setting, and the column names the chosen point's α, which the
  configuration alone does not determine;
* **releases** (private rows) — every ``release`` column the row fills (:mod:`dpbench.schema`; not
  NaN, not empty, not ``{}``) is paid for by its ledger: any filled one needs a ledger with events, and
  the columns of :data:`PAID_BY` need their event (``tuning_score`` and ``tuned_params``: a
  ``RepeatAndSelectEvent``). :data:`PAID_BY` applies when the configuration claims the guarantee:
  ``tuning=oracle`` fills ``tuned_params`` from the test fold, and its rows say so;
* **count** (private rows) — a run whose configuration pays for a noisy training size (add/remove,
  :func:`~dpbench.jobs.ledgers.count_budget`) has run.json's ``count`` ledger, one Laplace count at that
  ε_n, which its ``eps_count`` reports; a run that pays nothing has none (:func:`check_count`);
* **noise** (private rows) — ``noise_key=secret`` needs run.json's ``noise`` record of a secret key
  file. A row with ``noise_key=seed``, or from a file without the column, is a note
  (:data:`SEED_NOTE`), not a failure: its noise replays from the public seed.

Each check that applies counts as passed or failed; each failure is one :class:`Failure` line
naming the job directory, the row and what differs.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpbench.errors import DpbenchError
from dpbench.results import RESULTS_FILE, RUN_FILE, one_line

#: Relative tolerance of "eps_spent equals its recomputation from run.json".
RTOL = 1e-9
#: Release columns that one kind of event pays for: a row that fills one needs that event in its ledger.
PAID_BY: Mapping[str, str] = {"tuning_score": "RepeatAndSelectEvent", "tuned_params": "RepeatAndSelectEvent"}
#: The note for a private row whose noise came from the public seed.
SEED_NOTE = "not publishable: noise replays from the seed"
#: The results columns the checks of meaning read (``noise_key`` and ``guarantee_note`` are optional: older
#: files lack them).
MEANING_COLUMNS = ("algorithm", "params", "neighbouring", "relation_conversion", "stopping_rule", "guarantee_valid")
#: A stopping rule that names the one Rényi order fixed before the run.
_ORDER_RULE = re.compile(r"(?:renyi_filter|repeat_and_select)\(alpha=([^)]*)\)")


class VerifyDirError(DpbenchError):
    """The directory is missing, not a directory, or holds no results.parquet."""


class ConfigurationRefused(ValueError):
    """run.json's ``config`` is not one the current code builds a configuration from (a job written by
    :func:`~dpbench.engine.run_job` without its resolved configuration records its semantic settings)."""


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
            "job": self.job,
            "rows": self.rows,
            "passed": self.passed,
            "failed": len(self.failures),
            "worst_rel_eps_diff": self.worst_rel,
            "dp_accounting_rdp": sorted(self.rdp),
            "rdp_rel_diff": self.rdp_rel,
            "dp_accounting_pld": sorted(self.pld),
            "pld_ratio": self.pld_ratio,
            "notes": sorted(self.notes),
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


def reporting(
    summary: Mapping[str, Any], eps: float, delta: float
) -> tuple[Callable[[float], float], Callable[[float], float]] | None:
    """(ledger ε → reported ε, reported ε → ledger ε) for a run whose budget is (eps, delta): identity
    when the ledger holds that budget, ε ↦ 2ε when it holds the group-privacy budget (ε/2, δ/(1 + e^{ε/2})),
    ε ↦ ε + ε_n when the run first paid ε_n for a noisy training size (the summary's ``count``, a ledger
    of its own: :mod:`dpbench.privacy.counts`) and the method's ledger holds the rest, eps − ε_n;
    None when it holds none of these."""
    from dpbench.privacy.neighbouring import (
        group_privacy_budget,
        group_privacy_epsilon,
        native_epsilon,
    )
    from dpbench.privacy.recompute import recompute_epsilon

    budget = (summary.get("epsilon"), summary.get("delta"))
    count = summary.get("count")
    if isinstance(count, Mapping):
        method_eps, count_eps = budget[0], count.get("epsilon")
        if not (budget[1] == delta and all(isinstance(e, (int, float)) for e in (method_eps, count_eps))):
            return None
        if not (method_eps + count_eps <= eps and math.isclose(method_eps + count_eps, eps, rel_tol=1e-12)):
            return None
        paid = recompute_epsilon(count)
        return (lambda spent: spent + paid), (lambda reported: reported - paid)
    if budget == (eps, delta):
        return native_epsilon, native_epsilon
    try:
        half = group_privacy_budget(eps, delta)
    except ValueError:
        return None
    if all(
        isinstance(b, (int, float)) and math.isclose(b, h, rel_tol=1e-12, abs_tol=0.0) for b, h in zip(budget, half)
    ):
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


# -------------------------------------------------------------------------------- what a row means
@dataclass(frozen=True)
class Meaning:
    """What a job's configuration implies for its rows: the relation it asked for (``privacy.neighbouring``),
    why its (ε, δ) is not a proven guarantee (empty when it is) and what it is (``kind``,
    :func:`~dpbench.jobs.columns.guarantee_status`), the stopping rule fixed from public values and
    the ε its runs pay for a noisy training size (0: none; :func:`~dpbench.jobs.ledgers.count_budget`)."""

    requested: str
    breaches: tuple[str, ...]
    stopping_rule: str
    count_eps: float = 0.0
    kind: str = "proven"


def job_meaning(meta: Mapping[str, Any]) -> Meaning:
    """The :class:`Meaning` of run.json's ``config`` (validated again) and ``dataset``; a ValueError naming
    why when the configuration does not hash to run.json's ``config_hash`` (guards against checking rows
    against a configuration edited after the run), :class:`ConfigurationRefused` when it cannot be built."""
    from dpbench.jobs.columns import guarantee_status
    from dpbench.jobs.plan import make_plan
    from dpbench.verify.rerun import recorded_config

    try:
        cfg = recorded_config(dict(meta), Path("."))  # no data is read: the data directory does not matter
        if cfg.config_hash != meta.get("config_hash"):
            raise ValueError(
                f"the configuration in {RUN_FILE} hashes to {cfg.config_hash}, not its config_hash "
                f"{meta.get('config_hash')}"
            )
        dataset = meta.get("dataset") or {}
        plan = make_plan(cfg)
        kind, breaches = guarantee_status(
            cfg, plan.method, dataset.get("scaling", "none"), dataset.get("guarantee_breaches") or ()
        )
        return Meaning(
            cfg.privacy.neighbouring, tuple(breaches), plan.identity["stopping_rule"], plan.count.count_eps, kind
        )
    except ValueError:
        raise
    except Exception as exc:  # noqa: BLE001 — Hydra, OmegaConf and the config checks raise many types
        raise ConfigurationRefused(f"the configuration in {RUN_FILE} is refused: {one_line(exc)}") from None


@functools.lru_cache(maxsize=256)
def resolved_relation(algorithm: str, params: str, requested: str) -> tuple[str, str | None]:
    """(relation, mode) of ``algorithm`` with the JSON hyper-parameters ``params`` under
    ``privacy.neighbouring=requested`` (:func:`~dpbench.privacy.neighbouring.resolve`); raises
    :class:`~dpbench.errors.ConfigError` or ValueError when the method cannot be built from them."""
    from dpbench.algorithms.registry import make_algorithm
    from dpbench.privacy.neighbouring import resolve

    return resolve(make_algorithm(algorithm, json.loads(params)), requested)


def check_relation(
    algorithm: str, params: str, neighbouring: Any, conversion: Any, ledger: Any, requested: str
) -> str | None:
    """None when a private row's ``neighbouring`` and ``relation_conversion`` are what its method (with
    ``params``) gives under the configured ``requested`` relation, the method meets it, and its ledger was
    charged under the relation that implies (``ledger``: the ledger's ``neighbouring``; add/remove for
    group privacy); else what differs. Guards against a row relabelled to a relation its noise was not
    calibrated for, and a ledger of another relation than the row's."""
    try:
        relation, mode = resolved_relation(algorithm, params, requested)
    except (DpbenchError, ValueError, TypeError) as exc:
        return f"its method {algorithm} with params {params} cannot be built: {one_line(exc)}"
    if mode is None:
        return f"{algorithm} cannot meet privacy.neighbouring={requested}, the relation its configuration asks for"
    charged = "add_remove" if mode == "group_privacy" else relation
    differences = [
        f"{what} {found!r} in {where}, {expected!r} for {algorithm} under privacy.neighbouring={requested}"
        for what, found, expected, where in (
            ("neighbouring", neighbouring, relation, RESULTS_FILE),
            ("relation_conversion", conversion, mode, RESULTS_FILE),
            ("the ledger's neighbouring", ledger, charged, RUN_FILE),
        )
        if found != expected
    ]
    return "; ".join(differences) or None


def check_guarantee(valid: bool, note: str | None, breaches: Sequence[str]) -> str | None:
    """None when ``guarantee_valid`` and ``guarantee_note`` agree with ``breaches`` (what the configuration
    and the dataset's record imply): valid with an empty note only when there is none; not valid with a
    note that says every one (``note`` None: a file without the column, whose validity alone is checked).
    Guards against a row claiming a guarantee its preparation (whole-file scaling, unsourced ranges),
    tuning (oracle) or fidelity mode breaks."""
    if valid and breaches:
        return f"guarantee_valid true in {RESULTS_FILE}, but its configuration in {RUN_FILE} breaks it: {'; '.join(breaches)}"
    if note is None:
        return None
    if valid and note:
        return f"guarantee_valid true in {RESULTS_FILE} with a guarantee_note {note!r}"
    if not valid and not note:
        return f"guarantee_valid false in {RESULTS_FILE} without a guarantee_note saying why"
    unsaid = [b for b in breaches if b not in note]
    return f"guarantee_note {note!r} in {RESULTS_FILE} does not say {'; '.join(unsaid)}" if unsaid else None


def names_order(rule: Any) -> bool:
    """Whether a ``stopping_rule`` names the one Rényi order fixed before the run."""
    return isinstance(rule, str) and _ORDER_RULE.fullmatch(rule) is not None


def check_stopping_order(rule: Any, expected: str, orders: Any) -> str | None:
    """None when a row's ``stopping_rule`` is ``expected`` (the rule dpbench fixes from public values) and
    the ledger's ``orders`` contain its α (compared as the column writes it, ``{α:g}``: the orders are
    integers); else what differs, naming both. Guards against an order chosen after seeing the run (a
    post-hoc minimum over orders is no guarantee for an adaptive run) passed off as a filter's."""
    if rule != expected:
        return f"stopping_rule {rule!r} in {RESULTS_FILE}, but dpbench fixes {expected!r} from the public values of its configuration"
    alpha = _ORDER_RULE.fullmatch(rule).group(1)
    if not any(f"{float(order):g}" == alpha for order in orders or ()):
        return f"stopping_rule {rule!r}, but its ledger's orders in {RUN_FILE} are {orders!r}"
    return None


def filled(value: Any) -> bool:
    """Whether a results cell holds a value: not None or NaN, not an empty string, ``{}`` or ``[]``."""
    if value is None:
        return False
    if isinstance(value, str):
        return value.strip() not in ("", "{}", "[]")
    try:
        return not math.isnan(float(value))
    except (TypeError, ValueError):
        return True


def event_types(node: Any) -> set[str]:
    """Every event type a ledger's JSON ``events`` name, nested ones included."""
    if isinstance(node, Mapping):
        found = {node["type"]} if isinstance(node.get("type"), str) else set()
        return found.union(*(event_types(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(event_types(v) for v in node))
    return set()


def check_releases(released: Sequence[str], events: set[str], guarantee: bool) -> str | None:
    """None when the release columns a private row fills (``released``) are paid for by its ledger, whose
    event types are ``events``: any needs an event, and a :data:`PAID_BY` column its event when the
    configuration claims the guarantee (``guarantee``); else what is unpaid. Guards against a release
    (a tuned setting, a noisy score) published under an ε that never paid for it."""
    if released and not events:
        return f"it releases {', '.join(released)}, but its ledger in {RUN_FILE} holds no events"
    unpaid = [
        f"{c} (needs a {PAID_BY[c]})" for c in released if guarantee and c in PAID_BY and PAID_BY[c] not in events
    ]
    return f"it releases {', '.join(unpaid)}, which its ledger in {RUN_FILE} does not pay for" if unpaid else None


def check_count(count_eps: float, count: Any, row_eps_count: Any) -> str | None:
    """None when a private row paid for its training size as its configuration says: a ``count`` ledger of
    budget ``count_eps`` holding one LaplaceEvent, whose ε the row's ``eps_count`` reports, when
    ``count_eps`` > 0; no ``count`` ledger (and ``eps_count`` 0 or absent) when it is 0. Guards against an
    n̄ read off the data under add/remove without being paid for, and against a count paid but not reported."""
    from dpbench.privacy.recompute import recompute_epsilon

    if count_eps == 0.0:
        if count is not None:
            return f"its ledger in {RUN_FILE} pays for a training-size count its configuration does not ask for"
        return (
            None
            if row_eps_count is None or not filled(row_eps_count) or float(row_eps_count) == 0.0
            else (f"eps_count {row_eps_count!r}, but its configuration pays nothing for the training size")
        )
    if not isinstance(count, Mapping):
        return (
            f"its configuration pays ε_n = {count_eps!r} for a noisy training size under add/remove, but its ledger in "
            f"{RUN_FILE} records no count: n̄ was read off the data"
        )
    if not math.isclose(
        float(count.get("epsilon", math.nan)), count_eps, rel_tol=1e-12
    ) or "LaplaceEvent" not in event_types(count.get("events") or []):
        return f"its count ledger in {RUN_FILE} is not one Laplace count at ε_n = {count_eps!r}"
    paid = recompute_epsilon(count)
    if row_eps_count is None or relative_difference(float(row_eps_count), paid) > RTOL:
        return f"eps_count {row_eps_count!r} in {RESULTS_FILE}, {paid!r} recomputed from its count ledger in {RUN_FILE}"
    return None


def check_noise(noise_key: Any, record: Any) -> str | None:
    """None when a private row with ``noise_key=secret`` comes from a job whose run.json ``noise`` record
    names a secret key file; else what is missing (a private row's key is secret or seed). Guards
    against a row claiming secret noise whose noise may replay from the public seed."""
    if noise_key != "secret":
        return f"a private row with noise_key {noise_key!r} (secret or seed expected)"
    if isinstance(record, Mapping) and record.get("key") == "secret" and record.get("key_file"):
        return None
    return f"noise_key secret in {RESULTS_FILE}, but {RUN_FILE} records no secret key file (noise: {record!r})"


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
            report.fail(
                "", f"{RESULTS_FILE} is unreadable: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
            )
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
        self._meaning(report, results, meta, private, keys, by_run)
        return report

    def _meaning(self, report: JobReport, results, meta, private, keys, by_run) -> None:
        """The checks of what each row means, against the job's configuration (module docstring)."""
        from dpbench.schema import RELEASE, column_class

        missing = [c for c in MEANING_COLUMNS if c not in results.columns]
        if missing:
            report.fail("", f"{RESULTS_FILE} has no column {', '.join(missing)}: what its rows mean is not checked")
            return
        try:
            meaning = job_meaning(meta)
        except ConfigurationRefused as exc:  # n/a, as an event dp-accounting cannot price: a note, never a pass
            report.notes.add(f"what its rows mean is not checked: {exc}")
            return
        except ValueError as exc:
            report.fail("", f"{exc}: what its rows mean is not checked")
            return
        report.check(True, "", "")  # the configuration is the job's
        releases = [c for c in results.columns if column_class("results", c) == RELEASE]
        for i, key in enumerate(keys):
            row, where = results.iloc[i], row_key(*key)
            note = row.get("guarantee_note")
            message = check_guarantee(
                bool(row["guarantee_valid"]), None if note is None else str(note), meaning.breaches
            )
            report.check(message is None, where, message or "")
            kind = row.get("guarantee_kind")
            if kind is not None:  # older files lack the column
                report.check(
                    kind == meaning.kind,
                    where,
                    f"guarantee_kind {kind!r} in {RESULTS_FILE}, but its configuration in "
                    f"{RUN_FILE} makes it {meaning.kind!r}",
                )
            if private.iloc[i]:
                self._private_meaning(report, row, where, meaning, by_run.get(key), meta.get("noise"), releases)

    def _private_meaning(self, report: JobReport, row, where: str, meaning: Meaning, summary, noise, releases) -> None:
        noise_key = row.get("noise_key")
        if noise_key is None or noise_key == "seed":
            report.notes.add(SEED_NOTE)
        else:
            message = check_noise(noise_key, noise)
            report.check(message is None, where, message or "")
        if summary is None:
            return  # the runs check names it
        message = check_relation(
            row["algorithm"],
            str(row["params"]),
            row["neighbouring"],
            row["relation_conversion"],
            summary.get("neighbouring"),
            meaning.requested,
        )
        report.check(message is None, where, message or "")
        guarantee = meaning.kind in ("proven", "conditional")  # what the run claims, whether or not it is proven
        if guarantee and (names_order(row["stopping_rule"]) or names_order(meaning.stopping_rule)):
            message = check_stopping_order(row["stopping_rule"], meaning.stopping_rule, summary.get("orders"))
            report.check(message is None, where, message or "")
        message = check_count(meaning.count_eps, summary.get("count"), row.get("eps_count"))
        report.check(message is None, where, message or "")
        released = [c for c in releases if filled(row[c])]
        message = check_releases(released, event_types(summary.get("events") or []), guarantee)
        report.check(message is None, where, message or "")

    def _non_private_row(self, report: JobReport, row, key, summary) -> None:
        where = row_key(*key)
        eps_spent = float(row["eps_spent"])
        report.check(
            math.isinf(eps_spent) and eps_spent > 0,
            where,
            f"a non-private row reports eps_spent {eps_spent!r}, not inf",
        )
        if summary is not None:
            report.check(
                summary.get("accountant") == "none" and not summary.get("events"),
                where,
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
            report.fail(
                where,
                f"a private row whose ledger in {RUN_FILE} records no events (accountant {summary.get('accountant')!r})",
            )
            return
        maps = reporting(summary, eps, delta)
        if maps is None:
            report.fail(
                where,
                f"its ledger's budget ({summary.get('epsilon')!r}, {summary.get('delta')!r}) is neither the row's "
                f"({eps!r}, {delta!r}) nor its group-privacy budget",
            )
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
        report.check(
            rel <= RTOL, where, f"eps_spent {eps_spent!r} in {RESULTS_FILE}, {expected!r} recomputed from {RUN_FILE}"
        )
        recorded = summary.get("eps_spent")
        if isinstance(recorded, (int, float)):
            report.check(
                relative_difference(float(recorded), recomputed) <= RTOL,
                where,
                f"the ledger in {RUN_FILE} records eps_spent {recorded!r}, its events give {recomputed!r}",
            )
        if "delta_spent" in row.index and not math.isnan(float(row["delta_spent"])):
            delta_spent, again = float(row["delta_spent"]), recompute_delta(summary)
            report.check(
                relative_difference(delta_spent, again) <= RTOL,
                where,
                f"delta_spent {delta_spent!r} in {RESULTS_FILE}, {again!r} recomputed from {RUN_FILE}",
            )
        if self.independent:
            self._independent(report, where, summary, ledger_eps(eps_spent), recomputed, report_eps is not ledger_eps)

    def _independent(self, report: JobReport, where: str, summary, ours: float, recomputed: float, group: bool) -> None:
        from dpbench.verify.independent import independent_epsilon

        if self.dpa is None:
            report.rdp.add("not installed")
            report.pld.add("not installed")
            return
        key = json.dumps(
            {
                k: summary.get(k)
                for k in ("accountant", "conversion", "gaussian_amplification", "orders", "delta", "events")
            },
            sort_keys=True,
        )
        if key not in self._verdicts:
            self._verdicts[key] = independent_epsilon(self.dpa, summary, recomputed)
        verdict = self._verdicts[key]
        context = " (half the reported eps: group privacy)" if group else ""
        rdp, rdp_failure, pld, pld_failure = check_independent(verdict, ours, context)
        for status, failure, note, kind in (
            (rdp, rdp_failure, verdict.rdp_note, "RDP"),
            (pld, pld_failure, verdict.pld_note, "PLD"),
        ):
            (report.rdp if kind == "RDP" else report.pld).add(status)
            if status == "n/a":
                report.notes.add(f"dp-accounting {kind} n/a: {note}")
            elif status == "~":
                report.notes.add(
                    f"dp-accounting PLD: its eps {verdict.pld_eps!r} is above the reported {ours!r}{context} by less "
                    f"than its discretisation allowance {verdict.pld_allowance:.2g} (not proven to under-count)"
                )
            else:
                report.check(failure is None, where, failure or "")
        if rdp == "=":
            report.rdp_rel = _max(report.rdp_rel, relative_difference(ours, verdict.rdp_eps))
        if verdict.pld_eps is not None and ours > 0:
            report.pld_ratio = _max(report.pld_ratio, verdict.pld_eps / ours)
