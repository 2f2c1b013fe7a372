"""Shared fixtures: real-data location, an isolated cache, and a CLI runner."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest


def pytest_configure(config):
    """Parse dpbench's source for its code identity once, here, before the xdist workers start: they and every
    dpbench subprocess a test runs take it from the environment (dpbench.code_identity.HANDED_DOWN)."""
    from dpbench import code_identity

    code_identity.source_sha256()


def pytest_collection_modifyitems(items):
    """Run the long tests first — those marked ``slow`` (end-to-end runs) or ``statistical`` (fixed-seed
    audits), in their collected order — so that pytest-xdist's workers, which take tests in this order,
    do not end the session waiting on one long test started last. Every worker sorts alike."""
    items.sort(
        key=lambda item: item.get_closest_marker("slow") is None and item.get_closest_marker("statistical") is None
    )


def _unavailable(reason: str) -> None:
    """Fail in CI (CI=true), where the real data must be present; skip elsewhere."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (required in CI)")
    pytest.skip(reason)


@pytest.fixture
def shared_data():
    """``shared_data(*relative_paths)`` → the $DPBENCH_DATA folder, once every named file is there."""

    def need(*relative_paths: str) -> Path:
        value = os.environ.get("DPBENCH_DATA")
        if not value:
            _unavailable("DPBENCH_DATA is not set")
        root = Path(value).resolve()
        for rel in relative_paths:
            if not (root / rel).is_file():
                _unavailable(f"{rel} not found under DPBENCH_DATA={root}")
        return root

    return need


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path_factory, monkeypatch):
    """Keep F* and download caches out of the user's home during tests. The cache is shared by a worker's
    tests, so whole-budget trials (:mod:`dpbench.trials`) are not kept in process: a test that changes a
    method's behaviour in place would otherwise be handed another test's trial of the same configuration.
    A command run by ``cli`` keeps them, in its own directory."""
    monkeypatch.setenv("DPBENCH_CACHE", str(tmp_path_factory.getbasetemp() / "dpbench-cache"))
    monkeypatch.setenv("DPBENCH_TRIAL_CACHE", "0")


@pytest.fixture
def cli(isolated_cache):
    """``cli(args, cwd, module="dpbench", env=None)`` runs ``python -m <module> args`` in a subprocess."""

    def run(args: list[str], cwd: Path, *, module: str = "dpbench", env: dict | None = None, timeout: int = 900):
        inherited = {k: v for k, v in os.environ.items() if k != "DPBENCH_TRIAL_CACHE"}
        full_env = {**inherited, "DPBENCH_CACHE": str(cwd / ".cache"), **(env or {})}
        return subprocess.run(
            [sys.executable, "-m", module, *args],
            cwd=cwd,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    return run


@pytest.fixture
def compose_run_config():
    """``compose_run_config(*overrides)`` → a validated RunConfig composed from the shipped conf/."""
    from hydra import compose, initialize_config_dir

    from dpbench.conf_files import config_dir
    from dpbench.resolve import run_config
    from dpbench.resolvers import register_resolvers

    register_resolvers()

    def make(*overrides: str):
        with initialize_config_dir(version_base="1.3", config_dir=str(config_dir())):
            cfg = compose(config_name="config", overrides=list(overrides))
        return run_config(cfg)

    return make


@pytest.fixture
def sigint_default():
    """``preexec_fn`` for a subprocess a test interrupts with SIGINT (Ctrl-C): a shell that runs CI in
    the background starts every command with SIGINT ignored (POSIX, for asynchronous lists without job
    control), which Python keeps, installing no KeyboardInterrupt; in a terminal, Ctrl-C reaches a
    process whose SIGINT is at its default, as this restores."""

    def restore() -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    return restore
