"""``dpbench-report``: one HTML page for one or more sweeps.

    dpbench-report outputs/sweeps/leaderboard outputs/sweeps/kuru_fig3 --out report.html
    dpbench-report outputs/sweeps/chen_lee_fig3 --audit audit.parquet --out chen_lee.html

The page opens offline (see :mod:`dpbench.report.page`). An audit file (``dpbench-audit --out``) is
read from ``--audit``, or from ``audit.parquet`` inside a sweep directory.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from pathlib import Path

from dpbench.console import console_command
from dpbench.errors import DpbenchError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dpbench-report", description="Write one self-contained HTML report for sweeps."
    )
    parser.add_argument("sweeps", nargs="+", type=Path, help="sweep directories (or job directories)")
    parser.add_argument(
        "--out", type=Path, default=Path("report.html"), help="the HTML file to write (default: report.html)"
    )
    parser.add_argument(
        "--audit", type=Path, default=None, help="a dpbench-audit --out parquet file to show with the ledgers"
    )
    parser.add_argument(
        "--publishable",
        action="store_true",
        help="show only what dpbench-publish would publish: rows whose guarantee holds, their public and release columns "
        "(no test accuracy, objective, timing or figure)",
    )
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
        with tempfile.TemporaryDirectory(prefix="dpbench-publishable-") as work:
            summaries = []
            for i, sweep in enumerate(args.sweeps):
                if not sweep.is_dir():
                    raise DpbenchError(f"{sweep}: not a directory")
                source = _publishable(sweep, Path(work) / str(i)) if args.publishable else sweep
                summary = summarise(source, audit, progress=_progress, figures=not args.publishable, status_of=sweep)
                summaries.append(dataclasses.replace(summary, path=sweep))
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(render(summaries, publishable=args.publishable), encoding="utf-8")
    except DpbenchError as exc:
        print(f"dpbench-report: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except OSError as exc:
        print(f"dpbench-report: error: {exc.filename or args.out}: {exc.strerror or exc}", file=sys.stderr)
        sys.exit(2)
    rows = sum(len(s.results) for s in summaries)
    print(f"dpbench-report: {len(summaries)} sweep(s), {rows} result rows → {args.out}")


def _progress(line: str) -> None:
    print(f"dpbench-report: {line}", file=sys.stderr)


def _publishable(sweep: Path, work: Path) -> Path:
    """``sweep``'s publishable view (:func:`dpbench.publish.publish`) in ``work``/``sweep``'s name."""
    from dpbench.publish import publish

    out = work / sweep.resolve().name
    publication = publish(sweep, out)
    _progress(f"publishable view of {sweep}: {publication.line(out)}")
    if publication.rows == 0:
        raise DpbenchError(f"{sweep}: nothing is publishable ({publication.line(out)})")
    return out


if __name__ == "__main__":
    main()
