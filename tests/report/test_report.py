"""``dpbench-report`` (issue 20): one self-contained HTML page for several sweeps, rendered offline.

Two small sweeps are run once for the module: a leaderboard (two private methods and the
non-private reference on the synthetic data at two budgets, 3 folds) and han_pwa's Fig. 2 at two box
sizes with 20 repetitions (every mechanism, so the figure's claims are computed). The page is then
checked as text (every section, no external URL) and in headless Chromium: the browser's every
request is routed to a local proxy that records where it was going, so a request leaving the page
cannot go unseen. Chromium itself calls Google's services whatever the page (its clock, its account
service); those hosts are learnt from an empty page and set aside, and a control page with one
external image proves that a page's own request is still seen. Chromium is needed in CI (``.ci/run``
installs it); elsewhere the browser tests are skipped without it.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LEADERBOARD = ("-m", "experiment=leaderboard", "dataset=synthetic_logreg", "dataset.n=1500", "privacy.eps=0.4,1.6",
               "algorithm=dp_sgd,dp_gd,nonprivate", "tuning=fixed", "progress=false")
HAN_FIG2 = ("-m", "experiment=han_fig2", "reps=20", "dataset.c=0.1,1.0", "progress=false")
SECTIONS = ("index", "leaderboard", "sweep-0", "sweep-0-figures", "sweep-0-ledgers", "sweep-0-status", "sweep-0-provenance",
            "sweep-1", "sweep-1-figures", "sweep-1-ledgers", "sweep-1-status", "sweep-1-provenance")


def _command(name: str) -> list[str]:
    return [str(Path(sys.executable).with_name(name))]


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    """The report of the two sweeps (run in a fresh directory with their own cache)."""
    work = tmp_path_factory.mktemp("report")
    env = {**os.environ, "DPBENCH_CACHE": str(work / "cache"), "HYDRA_FULL_ERROR": "1"}
    for args in (LEADERBOARD, HAN_FIG2):
        done = subprocess.run([*_command("dpbench"), *args], cwd=work, env=env, capture_output=True, text=True, timeout=900, check=False)
        assert done.returncode == 0, done.stderr[-3000:]
    out = work / "report.html"
    done = subprocess.run(
        [*_command("dpbench-report"), "outputs/sweeps/leaderboard", "outputs/sweeps/han_fig2", "--out", str(out)],
        cwd=work, env=env, capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "2 sweep(s)" in done.stdout
    return out


def test_every_section_is_in_the_page(report):
    page = report.read_text()
    for section in SECTIONS:
        assert f'id="{section}"' in page, section
    leaderboard = page[page.index('id="leaderboard"'):page.index('id="sweep-0"')]
    assert "data:image/png;base64," in leaderboard  # the board's figure, drawn
    han = page[page.index('id="sweep-1"'):]
    assert 'data-figure="han.fig2"' in han and re.search(r'class="verdict (HOLDS|FAILS)"', han)
    assert "pwa_subgradient" in page[page.index('id="sweep-1-ledgers"'):page.index('id="sweep-1-status"')]
    assert "12 jobs: 12 finished, 0 failed" in han


def test_nothing_in_the_page_points_outside_it(report):
    page = report.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["'](?!data:|#)""", page)
    assert not re.search(r"https?://|@import|url\(", page)


# -------------------------------------------------------------------------------- the browser
class RecordingProxy:
    """A TCP listener standing in for the network: Chromium sends every request to it; it records
    each request's destination (``host:port`` of a CONNECT, the host of a plain GET) and answers none."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.destinations: set[str] = set()
        self.server.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self):
        while not self._stop.is_set():
            try:
                conn, _ = self.server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    first = conn.recv(2048).split(b"\r\n")[0].decode("latin-1")
                except OSError:
                    first = "unreadable"
            self.destinations.add(_destination(first))

    def close(self):
        self._stop.set()
        self._thread.join()
        self.server.close()


def _destination(request_line: str) -> str:
    """``CONNECT host:443 HTTP/1.1`` → ``host:443``; ``GET http://host/path HTTP/1.1`` → ``host``."""
    parts = request_line.split()
    if len(parts) < 2:
        return request_line
    return parts[1] if parts[0] == "CONNECT" else re.sub(r"^[a-z]+://([^/]+).*$", r"\1", parts[1])


@pytest.fixture
def chromium():
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("headless Chromium is needed in CI (.ci/run installs Debian's chromium)")
        pytest.skip("chromium is not installed")
    return path


def browse(chromium: str, url: str, tmp_path: Path, *extra: str) -> tuple[str, set[str]]:
    """Load ``url`` in headless Chromium with every request sent to a recording proxy: (the DOM after
    the scripts ran, with ``--dump-dom``), the destinations of the requests the proxy saw."""
    proxy = RecordingProxy()
    try:
        done = subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'chromium-profile'}", f"--proxy-server=http://127.0.0.1:{proxy.port}",
             "--proxy-bypass-list=<-loopback>", "--virtual-time-budget=3000", *extra, url],
            capture_output=True, text=True, timeout=120, check=False,
        )
    finally:
        proxy.close()
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, proxy.destinations


@pytest.fixture
def browser_own(chromium, tmp_path) -> set[str]:
    """Where Chromium goes by itself: the destinations of an empty page."""
    empty = tmp_path / "empty.html"
    empty.write_text("<!DOCTYPE html><html><body></body></html>")
    return browse(chromium, empty.as_uri(), tmp_path / "empty", "--dump-dom")[1]


def test_the_proxy_sees_a_page_that_reaches_out(chromium, browser_own, tmp_path):
    control = tmp_path / "control.html"
    control.write_text('<!DOCTYPE html><html><body><img src="http://example.org/x.png"></body></html>')
    _, destinations = browse(chromium, control.as_uri(), tmp_path, "--dump-dom")
    assert destinations - browser_own == {"example.org"}


def test_the_page_renders_offline_with_every_section(chromium, browser_own, report, tmp_path):
    dom, destinations = browse(chromium, report.as_uri(), tmp_path, "--dump-dom")
    assert destinations - browser_own == set()
    for section in SECTIONS:
        assert f'id="{section}"' in dom, section
    assert dom.count("<img") >= 2


HIDDEN = {  # what a screenshot hides to show one section at the top of the window
    "leaderboard": "#index, #sweep-0, #sweep-1",
    "sweep-1-figures": "#index, #leaderboard, #sweep-0, #sweep-1-ledgers, #sweep-1-status, #sweep-1-provenance",
}


@pytest.mark.parametrize(("section", "name"), [("leaderboard", "report_leaderboard.png"), ("sweep-1-figures", "report_paper_section.png")])
def test_screenshots(chromium, browser_own, report, tmp_path, section, name):
    """Screenshots of the leaderboard and a paper section, each shown alone by a copy of the page with
    one more style rule (docs/ holds screenshots made this way)."""
    view = tmp_path / "view.html"
    view.write_text(report.read_text().replace("</head>", f"<style>{HIDDEN[section]} {{ display: none; }}</style></head>", 1))
    shot = tmp_path / name
    _, destinations = browse(chromium, view.as_uri(), tmp_path, f"--screenshot={shot}", "--window-size=1280,1400")
    assert destinations - browser_own == set()
    assert shot.is_file() and shot.stat().st_size > 20_000
