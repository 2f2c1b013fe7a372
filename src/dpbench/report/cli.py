"""``dpbench-report``: one HTML page for one or more sweeps.

    dpbench-report outputs/sweeps/leaderboard outputs/sweeps/kuru_fig3 --out report.html
    dpbench-report outputs/sweeps/chen_lee_fig3 --audit audit.parquet --out chen_lee.html

The page opens offline (see :mod:`dpbench.report.page`). An audit file (``dpbench-audit --out``) is
read from ``--audit``, or from ``audit.parquet`` inside a sweep directory.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dpbench.console import console_command
from dpbench.errors import DpbenchError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dpbench-report", description="Write one self-contained HTML report for sweeps.")
    parser.add_argument("sweeps", nargs="+", type=Path, help="sweep directories (or job directories)")
    parser.add_argument("--out", type=Path, default=Path("report.html"), help="the HTML file to write (default: report.html)")
    parser.add_argument("--audit", type=Path, default=None, help="a dpbench-audit --out parquet file to show with the ledgers")
    return parser


@console_command("dpbench-report")
def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``dpbench-report`` console script."""
    import pandas as pd

    from dpbench.report.collect import summarise
    from dpbench.report.page import render

    args = build_parser().parse_args(argv)
    try:
        audit = pd.read_parquet(args.audit) if args.audit is not None else None
        summaries = []
        for sweep in args.sweeps:
            if not sweep.is_dir():
                raise DpbenchError(f"{sweep}: not a directory")
            summaries.append(summarise(sweep, audit, progress=lambda line: print(f"dpbench-report: {line}", file=sys.stderr)))
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(render(summaries), encoding="utf-8")
    except DpbenchError as exc:
        print(f"dpbench-report: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except OSError as exc:
        print(f"dpbench-report: error: {exc.filename or args.out}: {exc.strerror or exc}", file=sys.stderr)
        sys.exit(2)
    rows = sum(len(s.results) for s in summaries)
    print(f"dpbench-report: {len(summaries)} sweep(s), {rows} result rows → {args.out}")


if __name__ == "__main__":
    main()
