"""The documentation: a README that is a front door (≤ 12 KB, every link resolving), and a
mkdocs site that builds with ``--strict`` (broken links, missing anchors and missing included files
are errors) in which every paper page shows its measured figures with their claim verdicts, generated
by ``dpbench-plot`` into docs/results and included as written. The CLI reference is written from the
installed commands when the site builds (scripts/cli_reference.py, a mkdocs hook), so it lists every method
without a file to keep current. In CI (``CI=true``) a missing mkdocs is a failure, not a skip."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.xdist_group("test_docs_site")  # its module-scoped fixture is made once, on one worker

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
RESULTS = DOCS / "results"
PAPERS = ("chen_lee", "kuru_acc", "han_pwa", "liu_dda", "kusner_bo")
README_LIMIT = 12 * 1024  # bytes


def test_readme_is_a_front_door():
    size = len((REPO / "README.md").read_bytes())
    assert size <= README_LIMIT, f"README.md is {size:,} bytes, over {README_LIMIT:,}: move detail into docs/"


def test_every_relative_link_of_the_readme_resolves():
    text = (REPO / "README.md").read_text()
    links = [target for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text) if "://" not in target]
    assert len(links) >= 10
    for target in links:
        assert (REPO / target).exists(), target


def test_every_generated_result_is_shown_on_exactly_one_page():
    pages = {page: page.read_text() for page in DOCS.rglob("*.md") if RESULTS not in page.parents}
    for result in sorted(RESULTS.glob("*.*")):
        if result.suffix not in (".md", ".png"):
            continue
        pattern = f"results/{result.name}"
        showing = [page.relative_to(DOCS) for page, text in pages.items() if pattern in text]
        assert len(showing) == 1, f"{pattern} is shown on {showing or 'no page'}"


def test_every_preset_is_listed_in_reproducing_the_papers():
    page = (DOCS / "reproducing.md").read_text()
    for preset in sorted((REPO / "conf" / "experiment").glob("*.yaml")):
        assert f"`{preset.stem}`" in page, preset.stem


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site, built with ``mkdocs build --strict`` into a temporary directory."""
    try:
        import material  # noqa: F401  (the theme mkdocs.yml names)
        import mkdocs  # noqa: F401
    except ImportError:
        (pytest.fail if os.environ.get("CI") == "true" else pytest.skip)(
            "mkdocs-material is not installed (pip install '.[test]')"
        )
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(REPO / "mkdocs.yml"),
            "--site-dir",
            str(out),
        ],
        cwd=REPO,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return out


def test_the_site_builds_strictly_with_every_page_of_the_nav(site):
    for page in (
        "index",
        "usage",
        "reproducing",
        "accounting",
        "privacy",
        "tuning",
        "leaderboard",
        "datasets",
        "results-files",
        "schema",
        "cli",
        "performance",
        "architecture",
    ):
        assert (site / f"{page}.html").exists(), page


def test_the_cli_reference_is_written_from_the_installed_commands_at_build(site):
    """Every method the registry finds is on the built CLI page (``dpbench --help`` lists it), and git keeps
    no copy of the generated part (docs/cli.md names no method): adding a method touches no documentation file."""
    from dpbench.algorithms.registry import ALGORITHMS

    html = (site / "cli.html").read_text()
    assert "$ dpbench --help" in html and "$ dpbench-audit --list" in html
    missing = [name for name in ALGORITHMS if name not in html]
    assert not missing, f"the CLI page lacks {missing}"
    kept = (DOCS / "cli.md").read_text()
    assert not [name for name in ALGORITHMS if name in kept]


@pytest.mark.parametrize("paper", PAPERS)
def test_every_paper_page_shows_its_figures_and_claim_verdicts(site, paper):
    html = (site / "papers" / f"{paper}.html").read_text()
    figures = sorted(RESULTS.glob(f"{paper.split('_')[0]}_*.png"))
    assert figures, paper
    for figure in figures:
        assert f'src="../results/{figure.name}"' in html, figure.name
        assert (site / "results" / figure.name).exists(), figure.name
    for summary in sorted(RESULTS.glob(f"{paper.split('_')[0]}_*.md")):
        last_line = summary.read_text().strip().splitlines()[-1]
        words = re.sub(r"[*_`|#<>]", " ", last_line).split()[:6]
        assert all(word in html for word in words), f"{summary.name} is not included: {words}"
    verdicts = re.findall(r"\b(HOLDS|FAILS|PARTLY|holds in part|holds|fails)\b", html)
    assert verdicts, f"{paper}: no claim verdict on the page"
