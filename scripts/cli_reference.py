"""The CLI reference's body: the help of every dpbench command, as the installed commands print it.

docs/cli.md includes ``docs/generated/cli-reference.md``, which this module writes and git does not keep, so a
change that adds a method or an option touches no documentation file:

    python scripts/cli_reference.py     # write docs/generated/cli-reference.md (read it, or build the site)

mkdocs runs it as a hook before every build (``hooks:`` in mkdocs.yml; :func:`on_pre_build`), writing the file
only when it changed so that ``mkdocs serve`` does not rebuild in a loop. The commands are the console scripts
of pyproject.toml, run from the environment of this interpreter (beside ``sys.executable``) with
``COLUMNS=100``, so the text does not depend on the terminal. tests/test_docs_site.py checks that the built
page lists every method.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "docs" / "generated" / "cli-reference.md"

# (command, arguments, what the section says about it)
SECTIONS = (
    (
        "dpbench",
        ("--help",),
        (
            "Runs one job, or a sweep with `-m`. Every setting is a Hydra override `KEY=VALUE`; "
            "[Using dpbench](usage.md) explains them and the messages bad values get."
        ),
    ),
    (
        "dpbench-plot",
        ("--help",),
        "Draws the figures and writes the claim summaries of [Reproducing the papers](reproducing.md).",
    ),
    ("dpbench-plot", ("--list",), None),
    (
        "dpbench-report",
        ("--help",),
        "One self-contained HTML page for one or more sweeps ([Using dpbench](usage.md#the-report)).",
    ),
    (
        "dpbench-status",
        ("--help",),
        (
            "Which jobs of a sweep finished, failed, are incomplete or missing "
            "([Using dpbench](usage.md#sweeps-resume-status-manifest))."
        ),
    ),
    (
        "dpbench-verify",
        ("--help",),
        (
            "Checks results on disk against what their runs recorded, before their numbers are published "
            "([Verifying results](verify.md))."
        ),
    ),
    (
        "dpbench-publish",
        ("--help",),
        (
            "Writes the publishable view of results: what a run's ε covers and nothing else "
            "([What a reported ε covers](privacy.md#what-is-secret-what-is-public-what-is-published))."
        ),
    ),
    ("dpbench-audit", ("--help",), "The statistical audit of every mechanism ([Privacy accounting](accounting.md))."),
    ("dpbench-audit", ("--list",), None),
)


def _command(name: str) -> str:
    beside = Path(sys.executable).with_name(name)
    if not beside.exists():
        raise SystemExit(f"cli_reference: {name} is not installed beside {sys.executable} (pip install . first)")
    return str(beside)


def render() -> str:
    """The page: each command's output in a code block, under its name."""
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}
    parts = []
    for name, args, about in SECTIONS:
        done = subprocess.run(
            [_command(name), *args], env=env, capture_output=True, text=True, timeout=120, check=False
        )
        if done.returncode != 0:
            raise SystemExit(
                f"cli_reference: {name} {' '.join(args)} exited {done.returncode}: {done.stderr.strip()[-500:]}"
            )
        if about is not None:
            parts.append(f"\n## `{name}`\n\n{about}\n")
        parts.append(f"\n```text\n$ {name} {' '.join(args)}\n{done.stdout.rstrip()}\n```\n")
    return "".join(parts)


def write() -> bool:
    """Write :data:`OUT` when what the commands print differs from it; True when it was written."""
    page = render()
    if OUT.exists() and OUT.read_text() == page:
        return False
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(page)
    return True


def on_pre_build(config) -> None:
    """mkdocs hook: the page is current before the site includes it."""
    write()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    print(f"{OUT.relative_to(REPO)} {'written' if write() else 'already current'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
