"""``dpbench-plot``: regenerate figures from parquet results.

dpbench-plot --list
dpbench-plot accuracy-vs-eps outputs/sweeps/adult_dp_sgd --out figs
dpbench-plot kuru.fig1 --out figs            (analytic figures need no results path)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dpbench.console import console_command
from dpbench.errors import DpbenchError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dpbench-plot", description="Draw dpbench figures from results.parquet files."
    )
    parser.add_argument("figure", nargs="?", help="figure name (see --list)")
    parser.add_argument(
        "results",
        nargs="*",
        help="results.parquet files or directories searched recursively (none for analytic figures)",
    )
    parser.add_argument("--out", type=Path, default=Path("figs"), help="output directory (default: figs)")
    parser.add_argument("--list", action="store_true", help="list the figures and exit")
    return parser


@console_command("dpbench-plot")
def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``dpbench-plot`` console script."""
    from dpbench.plot.registry import FIGURES

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.list:
        width = max(map(len, FIGURES))
        for name, recipe in FIGURES.items():
            print(f"{name:<{width}}  {recipe.description}")
        return
    if args.figure is None:
        parser.error("name a figure (see --list)")
    if args.figure not in FIGURES:
        parser.error(f"unknown figure {args.figure!r}; valid: {', '.join(FIGURES)}")
    recipe = FIGURES[args.figure]
    if recipe.load is None and args.results:
        print(f"dpbench-plot: {recipe.name} is analytic; ignoring the results path(s)", file=sys.stderr)
    if recipe.load is not None and not args.results:
        parser.error("give at least one results path (a sweep directory or a results.parquet)")

    try:
        data = recipe.load(args.results) if recipe.load is not None else None
        figure = recipe.draw(data)
        args.out.mkdir(parents=True, exist_ok=True)
        written = []
        for ext in ("png", "pdf"):
            path = args.out / f"{recipe.filename}.{ext}"
            figure.savefig(path, dpi=150, bbox_inches="tight")
            written.append(str(path))
        if recipe.table is not None:
            path = args.out / f"{recipe.filename}.md"
            path.write_text(recipe.table(data))
            written.append(str(path))
    except DpbenchError as exc:
        print(f"dpbench-plot: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except OSError as exc:  # an output directory that cannot be written
        print(f"dpbench-plot: error: {exc.filename or args.out}: {exc.strerror or exc}", file=sys.stderr)
        sys.exit(2)
    source = "analytic" if data is None else f"{len(data)} result rows"
    print(f"{recipe.name}: {source} → {', '.join(written)}")


if __name__ == "__main__":
    main()
