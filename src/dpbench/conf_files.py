"""Where dpbench's files are: the shipped ``conf/``, its config groups, and the cache directory.

Standard library only, so that ``dpbench --help`` and a misspelt group option are answered
before omegaconf or Hydra is imported (the start-up goals of docs/performance.md).
"""

from __future__ import annotations

import os
from pathlib import Path


def default_cache_dir() -> Path:
    """``$DPBENCH_CACHE``, else ``$XDG_CACHE_HOME/dpbench``, else ``~/.cache/dpbench``."""
    if os.environ.get("DPBENCH_CACHE"):
        return Path(os.environ["DPBENCH_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "dpbench"


def config_dir() -> Path:
    """Absolute path of the shipped ``conf/`` (inside the wheel, or the repo root in a checkout)."""
    package_dir = Path(__file__).resolve().parent
    for candidate in (package_dir / "conf", package_dir.parents[1] / "conf"):
        if (candidate / "config.yaml").is_file():
            return candidate
    raise FileNotFoundError(f"dpbench's conf/ directory is missing next to {package_dir}")


def group_choices(group: str) -> list[str]:
    """The option names of a config group (the YAML files in ``conf/<group>/``)."""
    return sorted(p.stem for p in (config_dir() / group).glob("*.yaml"))
