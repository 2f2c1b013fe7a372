"""``dpbench-verify DIR``: check every job under DIR against what it recorded, before its numbers are published.

    dpbench-verify outputs/sweeps/leaderboard
    dpbench-verify outputs/sweeps --rerun 3 --seed 1
    dpbench-verify outputs/sweeps/leaderboard --json > verify.json

One table line per job (its directory relative to DIR, rows, checks passed and failed, the largest
relative difference between a reported ε and its recomputation, dp-accounting's RDP and PLD verdicts),
one line per failure, and a summary line. Exit status 0 when every check passed, 1 when one failed,
2 when DIR is missing or holds no results. Importing this module loads no pandas, numpy or Hydra:
the checks are imported when they run (docs/verify.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

from dpbench.console import console_command

PROG = "dpbench-verify"
PROGRESS_MIN_JOBS = 20  # fewer jobs than this: no progress lines


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Verify dpbench results on disk: recompute every row's eps from the ledger events in run.json, "
        "price them again with dp-accounting (RDP, PLD) where expressible, check budgets, config hashes and runs, "
        "check what every row means against its configuration (relation, guarantee, stopping order, paid releases, "
        "noise key), and optionally rerun a sample of jobs. Exit status 0 when every check passed, 1 when one failed, 2 for a bad "
        "directory. Nothing is written into DIR.",
    )
    parser.add_argument("dir", type=Path, help="a job directory, a sweep directory or a tree of them")
    parser.add_argument(
        "--rerun",
        type=int,
        default=0,
        metavar="K",
        help="rerun K jobs (a seeded sample) in a temporary directory and compare every results column "
        "but wall time bit for bit (default 0)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the --rerun sample (default 0)")
    parser.add_argument("--no-independent", action="store_true", help="skip the dp-accounting checks")
    parser.add_argument("--json", action="store_true", help="print the report as JSON instead of the table")
    return parser


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    return "0" if value == 0 else f"{value:.1e}"


def _verdict(statuses: set[str], detail: str) -> str:
    """One table cell from a job's per-row dp-accounting statuses."""
    if not statuses:
        return "-"
    for word in ("FAIL", "not installed"):
        if word in statuses:
            return word
    shown = [s for s in ("=", ">=", "<=", "~") if s in statuses]
    if not shown:
        return "n/a"
    text = ",".join(shown) + (f" {detail}" if detail else "")
    return text + ("+n/a" if "n/a" in statuses else "")


def format_table(reports, rerun: dict[str, str | None]) -> list[str]:
    """The table: a header and one line per job."""
    header = f"{'RESULT':<6} {'ROWS':>5} {'PASSED':>6} {'FAILED':>6} {'MAX REL DIFF':>12}  {'RDP (dp-acc)':<14} {'PLD (dp-acc)':<14}"
    header += f" {'RERUN':<6}" if rerun else ""
    lines = [header + " JOB"]
    for r in reports:
        rdp = _verdict(r.rdp, _number(r.rdp_rel) if r.rdp_rel is not None else "")
        pld = _verdict(r.pld, f"{r.pld_ratio:.2f}" if r.pld_ratio is not None else "")
        line = f"{'ok' if r.ok else 'FAILED':<6} {r.rows:>5} {r.passed:>6} {len(r.failures):>6} {_number(r.worst_rel):>12}  {rdp:<14} {pld:<14}"
        if rerun:
            outcome = "-" if r.job not in rerun else ("same" if rerun[r.job] is None else "DIFF")
            line += f" {outcome:<6}"
        lines.append(f"{line} {r.job}")
    return lines


def summary_line(reports) -> str:
    """``6 jobs, 18 rows: 66 checks passed, 0 failed``."""
    rows = sum(r.rows for r in reports)
    passed = sum(r.passed for r in reports)
    failed = sum(len(r.failures) for r in reports)
    bad = sum(not r.ok for r in reports)
    verdict = "all checks passed" if not failed else f"{bad} job{'s' if bad != 1 else ''} FAILED"
    return f"{len(reports)} job{'s' if len(reports) != 1 else ''}, {rows} rows: {passed} checks passed, {failed} failed — {verdict}"


def _progress(done: int, total: int) -> None:
    if total >= PROGRESS_MIN_JOBS and (done % max(1, total // 10) == 0 or done == total):
        print(f"{PROG}: {done}/{total} jobs checked", file=sys.stderr, flush=True)


@console_command(PROG)
def main(argv: list[str] | None = None) -> int:
    """Entry point of ``dpbench-verify`` and ``python -m dpbench.verify``; returns the exit status."""
    args = build_parser().parse_args(argv)
    if args.rerun < 0:
        print(f"{PROG}: error: --rerun must be ≥ 0, got {args.rerun}", file=sys.stderr)
        return 2
    from dpbench.verify.checks import Verifier, VerifyDirError, find_results, job_name
    from dpbench.verify.independent import INSTALL_HINT, load

    try:
        paths = find_results(args.dir)
    except VerifyDirError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    dpa = None if args.no_independent else load()
    verifier = Verifier(args.dir, dpa, independent=not args.no_independent)
    reports = []
    for done, path in enumerate(paths, start=1):
        reports.append(verifier.verify(path))
        _progress(done, len(paths))

    rerun: dict[str, str | None] = {}
    if args.rerun:
        from dpbench.verify.rerun import rerun_job, sample_jobs

        by_job = {r.job: r for r in reports}
        for path in sample_jobs(paths, args.rerun, args.seed):
            name = job_name(args.dir, path)
            print(f"{PROG}: rerunning {name}", file=sys.stderr, flush=True)
            with tempfile.TemporaryDirectory(prefix="dpbench-verify-") as work:
                rerun[name] = difference = rerun_job(path.parent, Path(work))
            by_job[name].check(difference is None, "", f"rerun: {difference}")

    notes = Counter(note for r in reports for note in r.notes)
    if args.json:
        print(
            json.dumps(
                {
                    "dir": str(args.dir),
                    "ok": all(r.ok for r in reports),
                    "summary": summary_line(reports),
                    "dp_accounting": "disabled"
                    if args.no_independent
                    else ("installed" if dpa is not None else "not installed"),
                    "rerun": rerun,
                    "jobs": [r.to_dict() for r in reports],
                },
                indent=2,
                sort_keys=True,
            )
        )
    else:
        print("\n".join(format_table(reports, rerun)))
        for r in reports:
            for failure in r.failures:
                print(failure.line())
        for note, n in sorted(notes.items()):
            print(f"note ({n} job{'s' if n != 1 else ''}): {note}")
        if dpa is None and not args.no_independent:
            print(f"dp-accounting is not installed: the independent RDP and PLD checks did not run ({INSTALL_HINT})")
        print(summary_line(reports))
    return 0 if all(r.ok for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
