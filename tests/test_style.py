"""The house style is pyproject's: ``ruff check`` and ``ruff format --check`` pass over the code, and the
code speaks of itself, not of the issue tracker (no source file names an issue number).

ruff runs as ``python -m ruff`` from the ``test`` extra; without it the two ruff tests are skipped, except
under CI (``CI=true``), where they fail.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LINTED = ("src", "tests", "scripts", "examples")
"""What the ruff tests cover (those present: an sdist has no scripts/ or examples/)."""
SOURCES = ("src", "tests", "scripts", "conf")
SOURCE_SUFFIXES = (".py", ".sh", ".yaml")

# the word, singular or plural, then a number ("#" optional); built from two halves so that this file does
# not match itself
ISSUE_NUMBER = re.compile(r"\b" + "is" + r"sues?\s*#?\s*\d+", re.IGNORECASE)


def _ruff(*args: str) -> subprocess.CompletedProcess:
    if importlib.util.find_spec("ruff") is None:
        (pytest.fail if os.environ.get("CI") == "true" else pytest.skip)(
            "ruff is not installed (pip install '.[test]')"
        )
    paths = [name for name in LINTED if (REPO / name).is_dir()]
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, "--no-cache", *paths],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_ruff_check_passes():
    done = _ruff("check", "--output-format", "concise")
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format_leaves_every_file_as_it_is():
    done = _ruff("format", "--check")
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_source_file_names_an_issue_number():
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for top in SOURCES
        if (REPO / top).is_dir()
        for path in sorted((REPO / top).rglob("*"))
        if path.suffix in SOURCE_SUFFIXES and path.is_file()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if ISSUE_NUMBER.search(line)
    ]
    assert not found, "say what the code does, not which issue asked for it:\n" + "\n".join(found)
