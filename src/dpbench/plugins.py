"""Plugins: methods, kinds of job and config groups that other installed packages bring to dpbench.

A package joins dpbench through entry points in its ``pyproject.toml``, without editing dpbench:

- ``[project.entry-points."dpbench.methods"]``: ``my_method = "my_package.my_method:MyMethod"`` (one
  :class:`~dpbench.algorithms.base.Algorithm` subclass) or ``my_methods = "my_package.methods"`` (every
  class of that module that names itself); the registry adds them to the built-in methods.
- ``[project.entry-points."dpbench.kinds"]``: ``my_kind = "my_package.kind:MY_KIND"`` (a
  :class:`~dpbench.jobs.Kind`), registered under the entry point's name.
- ``[project.entry-points."dpbench.audit_targets"]``: ``my_step = "my_package.audit:my_step_target"`` (a
  function of no argument that returns a :class:`~dpbench.audit.core.Target`), registered under the entry
  point's name: ``dpbench-audit`` audits it with the built-in targets, or, when the name starts with
  ``control_``, expects it caught with the built-in controls.
- ``[project.entry-points."dpbench.conf"]``: ``my_package = "my_package"``: the package's ``conf/``
  directory (``algorithm/``, ``dataset/``, ``experiment/``, … as in dpbench's own ``conf/``) joins
  Hydra's search path after dpbench's, so its presets compose like the shipped ones.

Every process that imports the registry (a sweep's workers too) reads the same entry points, so a
plugin's method runs under every launcher. Standard library only: the group options a plugin adds
are checked before Hydra or numpy load (:mod:`dpbench.conf_files`).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

from dpbench.errors import ConfigError

METHODS_GROUP = "dpbench.methods"
KINDS_GROUP = "dpbench.kinds"
AUDIT_GROUP = "dpbench.audit_targets"
CONF_GROUP = "dpbench.conf"


@dataclass(frozen=True)
class PluginSource:
    """Where a plugin's contribution comes from: the distribution (``name version``) and the entry point."""

    distribution: str
    entry_point: str

    def __str__(self) -> str:
        return f"{self.distribution} (entry point {self.entry_point})"


def source_of(entry_point: EntryPoint) -> PluginSource:
    """The :class:`PluginSource` of ``entry_point``."""
    dist = entry_point.dist
    distribution = f"{dist.metadata['Name']} {dist.version}" if dist is not None else "an unnamed distribution"
    return PluginSource(distribution, f"{entry_point.group}:{entry_point.name} = {entry_point.value}")


def plugin_entry_points(group: str) -> list[EntryPoint]:
    """The installed entry points of ``group``, in a fixed order (by name, then value)."""
    return sorted(entry_points(group=group), key=lambda ep: (ep.name, ep.value))


def load_entry_point(entry_point: EntryPoint):
    """The object ``entry_point`` names; a plugin that fails to import is refused in one line naming it."""
    try:
        return entry_point.load()
    except Exception as exc:  # noqa: BLE001 — any error of a plugin's own code is the plugin's, named as such
        raise ConfigError(f"plugin {source_of(entry_point)} failed to load: {type(exc).__name__}: {exc}") from None


def package_dir(module_name: str) -> Path | None:
    """The directory of package (or module) ``module_name``, found without running its code; None if absent."""
    try:
        spec = importlib.util.find_spec(module_name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(spec.origin).parent if spec.origin else None


@cache
def plugin_conf_dirs() -> tuple[tuple[Path, PluginSource], ...]:
    """The ``conf/`` directory of every ``dpbench.conf`` entry point, with its source. A package named
    there without a ``conf/`` directory is refused in one line naming the plugin. Read once per process:
    the installed distributions do not change while a command runs, and every group lookup asks."""
    dirs = []
    for entry_point in plugin_entry_points(CONF_GROUP):
        found = package_dir(entry_point.value)
        conf = found / "conf" if found is not None else None
        if conf is None or not conf.is_dir():
            raise ConfigError(
                f"plugin {source_of(entry_point)} names no package with a conf/ directory "
                f"({entry_point.value!r} {'has none' if found is not None else 'is not importable'})"
            )
        dirs.append((conf.resolve(), source_of(entry_point)))
    return tuple(dirs)
