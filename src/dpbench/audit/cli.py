"""``dpbench-audit`` / ``python -m dpbench.audit``: audit dpbench's private mechanisms (see :mod:`dpbench.audit`).

Prints a table (mechanism, claimed ε, δ, ε̂ lower bound, N, event, verdict). Exit status 1 if a real
target is a violation or a control is not caught, 2 for bad arguments, 0 otherwise.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

from dpbench.algorithms.registry import AUDIT_COVERAGE
from dpbench.audit.core import DEFAULT_N, FAMILY_ALPHA
from dpbench.audit.suite import (
    CONTROLS,
    TARGETS,
    SuiteRow,
    build,
    confidence,
    run_suite,
    to_frame,
)
from dpbench.console import console_command

COLUMNS = ("mechanism", "claimed ε", "δ", "ε̂ lower bound", "N", "event", "verdict")


def _number(value: float, digits: int = 4) -> str:
    if value == 0.0:
        return "0"
    if math.isinf(value):
        return "-inf" if value < 0 else "inf"
    return f"{value:.{digits}g}" if abs(value) >= 1e-3 else f"{value:.1e}"


def _cells(row: SuiteRow) -> tuple[str, ...]:
    r = row.result
    bound = f"{r.eps_lower_bound:.3f}"
    return (r.name, _number(r.eps_claimed), _number(r.delta, 2), bound, f"{r.n:,}", r.event, row.status)


def format_table(rows: list[SuiteRow]) -> str:
    """A plain-text table, one line per audit."""
    cells = [COLUMNS] + [_cells(r) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(COLUMNS))]
    lines = ["  ".join(c[i].ljust(widths[i]) for i in range(len(COLUMNS))).rstrip() for c in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="dpbench-audit",
        description="Audit dpbench's private mechanisms: for each, a lower bound on its empirical ε from N draws per side "
        "of the worst-case neighbouring pair of its proof. Exit status 1 if a real target is a violation or a control "
        "is not caught, 2 for bad arguments, 0 otherwise.",
    )
    p.add_argument("--n", type=int, default=DEFAULT_N, help=f"audit draws per side (default {DEFAULT_N:,}; >= 1000)")
    p.add_argument("--seed", type=int, default=0, help="seed of every draw (default 0)")
    p.add_argument("--targets", default=None, help="comma-separated names (default: every real target); see --list")
    p.add_argument("--controls", action="store_true", help="also run every positive control (must all be caught)")
    p.add_argument("--out", default=None, help="write the results as a parquet file")
    p.add_argument(
        "--list",
        action="store_true",
        help="list the targets, the controls and the targets of each private algorithm, then exit",
    )
    return p


def _list() -> str:
    lines = []
    for title, registry in (("targets", TARGETS), ("controls (must be caught)", CONTROLS)):
        lines.append(f"{title}:")
        for name in registry:
            t = build(name)
            lines.append(f"  {name:34s} ε = {_number(t.epsilon)}, δ = {_number(t.delta, 2)}; {t.proof}; pair: {t.pair}")
    lines.append("private algorithms and the targets auditing their releases (each method's audit attribute):")
    for algorithm, coverage in AUDIT_COVERAGE.items():
        gaps = f"; not audited: {coverage.gaps}" if coverage.gaps else ""
        lines.append(f"  {algorithm:34s} {', '.join(coverage.targets)}{gaps}")
    return "\n".join(lines)


@console_command("dpbench-audit")
def main(argv: list[str] | None = None) -> int:
    """Entry point of ``dpbench-audit``; returns the exit status."""
    args = _parser().parse_args(argv)
    if args.list:
        print(_list())
        return 0
    if args.n < 1000:
        print(f"dpbench-audit: --n must be >= 1000, got {args.n}", file=sys.stderr)
        return 2
    names = list(TARGETS) if args.targets is None else [s.strip() for s in args.targets.split(",") if s.strip()]
    unknown = [s for s in names if s not in TARGETS and s not in CONTROLS]
    if unknown or not names:
        print(f"dpbench-audit: unknown target(s) {', '.join(unknown) or '(none given)'}; see --list", file=sys.stderr)
        return 2
    if args.controls:
        names += [c for c in CONTROLS if c not in names]
    started = time.perf_counter()

    def progress(row: SuiteRow) -> None:
        print(f"  {row.result.name}: {row.status} ({row.result.seconds:.1f} s)", file=sys.stderr)

    rows = run_suite(names, n=args.n, seed=args.seed, progress=progress)
    print(format_table(rows))
    print(
        f"\nper-target confidence {confidence():.5f} (Bonferroni: family-wise false-alarm rate ≤ {FAMILY_ALPHA:.0%} "
        f"over {len(TARGETS)} targets); seed {args.seed}; {time.perf_counter() - started:.1f} s"
    )
    if args.out:
        to_frame(rows).to_parquet(args.out, index=False)
    failed = [r.result.name for r in rows if r.failed]
    if failed:
        print(f"FAILED: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
