"""Where dpbench's files are: the config directories and their groups, and the cache directory.

The options of a config group are the YAML files of ``<dir>/<group>/`` in every config directory:
the shipped ``conf/``, each plugin's (``dpbench.conf`` entry points, :mod:`dpbench.plugins`) and the
ones the command line adds (``--config-dir DIR``, ``hydra.searchpath=[...]``), as Hydra's search path;
the ``algorithm`` group has every installed method besides (:mod:`dpbench.method_names`).
Standard library only, so that ``dpbench --help`` and a misspelt group option are answered
before omegaconf or Hydra is imported (the start-up goals of docs/performance.md).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from dpbench.errors import ConfigError
from dpbench.method_names import method_names
from dpbench.plugins import package_dir, plugin_conf_dirs

#: The config directories the command line added (``--config-dir``, ``hydra.searchpath``), set by the cli.
_COMMAND_LINE_DIRS: list[Path] = []
_SEARCHPATH = re.compile(r"^\+{0,2}hydra\.searchpath=\[(?P<entries>.*)\]$")


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


def _search_dir(entry: str, origin: str) -> Path:
    """The directory a search-path entry names (``file://DIR``, ``pkg://package/sub``, or a plain
    path); one that is not a directory is refused naming ``origin``."""
    entry = entry.strip().strip("'\"")
    if entry.startswith("pkg://"):
        module, _, sub = entry.removeprefix("pkg://").replace("/", ".").partition(".")
        found = package_dir(module)
        path = found.joinpath(*sub.split(".")) if found is not None and sub else found
    else:
        path = Path(entry.removeprefix("file://")).expanduser()
    if path is None or not path.is_dir():
        raise ConfigError(f"{origin}: {entry} is not a directory")
    return path.resolve()


def command_line_config_dirs(args: list[str]) -> list[Path]:
    """The config directories ``args`` add: ``--config-dir DIR`` (``-cd DIR``, ``--config-dir=DIR``) and
    each entry of ``hydra.searchpath=[...]``, each checked to be a directory."""
    dirs = []
    for i, arg in enumerate(args):
        if arg in ("--config-dir", "-cd") and i + 1 < len(args):
            dirs.append(_search_dir(args[i + 1], arg))
        elif arg.startswith("--config-dir="):
            dirs.append(_search_dir(arg.partition("=")[2], "--config-dir"))
        elif match := _SEARCHPATH.match(arg):
            dirs += [_search_dir(e, "hydra.searchpath") for e in match["entries"].split(",") if e.strip()]
    return dirs


def use_command_line_config_dirs(args: list[str]) -> None:
    """Add the config directories of ``args`` (:func:`command_line_config_dirs`) to :func:`config_dirs`."""
    _COMMAND_LINE_DIRS[:] = command_line_config_dirs(args)


def _hydra_job_dirs() -> list[Path]:
    """In a job Hydra composed (a sweep's worker too): the file directories of its search path."""
    if "hydra.core.hydra_config" not in sys.modules:
        return []
    from hydra.core.hydra_config import HydraConfig

    if not HydraConfig.initialized():
        return []
    sources = HydraConfig.get().runtime.config_sources
    return [Path(source.path) for source in sources if source.schema == "file" and Path(source.path).is_dir()]


def config_dirs() -> list[Path]:
    """Every config directory, the shipped ``conf/`` first, each once."""
    dirs = [config_dir(), *(conf for conf, _ in plugin_conf_dirs()), *_COMMAND_LINE_DIRS, *_hydra_job_dirs()]
    return list(dict.fromkeys(path.resolve() for path in dirs))


def group_choices(group: str) -> list[str]:
    """The option names of a config group: the YAML files of ``<dir>/<group>/`` in every config directory,
    and for ``algorithm`` every installed method too (its class is its preset, :mod:`dpbench.class_presets`)."""
    files = {p.stem for root in config_dirs() for p in (root / group).glob("*.yaml")}
    return sorted(files | set(method_names()) if group == "algorithm" else files)


def option_file(group: str, name: str) -> Path | None:
    """The YAML file of option ``name`` of ``group``, from the first config directory that has one."""
    for root in config_dirs():
        path = root / group / f"{name}.yaml"
        if path.is_file():
            return path
    return None
