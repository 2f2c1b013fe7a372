"""The names of the installed methods, read from their source files without running them.

``algorithm=NAME`` is checked before numpy, Hydra or any method loads (docs/performance.md's start-up
goals), yet a method needs no preset file: its class is its preset. So the names are read the way a
person reads them, from the class statements: every class of the modules of :data:`METHOD_SOURCES` and
of each ``dpbench.methods`` entry point (:mod:`dpbench.plugins`) that assigns its ``name`` a string
literal in its own body (``name: ClassVar[str] = "dp_sgd"``). :mod:`dpbench.algorithms.registry`, which
imports the classes, finds the same names (a test); a ``name`` computed at run time is not seen here.
Standard library only.
"""

from __future__ import annotations

import ast
import importlib.util
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from dpbench.plugins import METHODS_GROUP, PluginSource, plugin_entry_points, source_of

METHOD_SOURCES = ("dpbench.algorithms", "dpbench.pwa.algorithms", "dpbench.bo.algorithms")
"""Where the built-in methods live: a module, or a package every module of which is read."""

NOT_METHOD_MODULES = ("__init__", "registry")
"""Modules of a package in :data:`METHOD_SOURCES` that define no method."""

_PACKAGE_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class MethodName:
    """A method as its source file shows it: its ``name``, the first line of its class docstring and,
    for a plugin's method, where it comes from (None for a built-in one)."""

    name: str
    summary: str
    source: PluginSource | None = None


def source_modules(source: str) -> list[str]:
    """The modules of a :data:`METHOD_SOURCES` entry: the module itself, or each module of the package."""
    path = _PACKAGE_DIR.joinpath(*source.split(".")[1:])
    if not path.is_dir():
        return [source]
    names = sorted(p.stem for p in path.glob("*.py") if p.stem not in NOT_METHOD_MODULES)
    return [f"{source}.{name}" for name in names]


def _own_name(node: ast.ClassDef) -> str | None:
    """The string literal a class statement assigns to ``name`` in its own body, if any."""
    for statement in node.body:
        if isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets, value = [statement.target], statement.value
        else:
            continue
        named = any(isinstance(t, ast.Name) and t.id == "name" for t in targets)
        if named and isinstance(value, ast.Constant) and isinstance(value.value, str):
            return value.value
    return None


def _named_classes(path: Path, only: str | None = None) -> list[tuple[str, str]]:
    """``(name, summary)`` of each class statement at the top of the file ``path`` that names itself
    (``only``: just the class of that name)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or (only is not None and node.name != only):
            continue
        name = _own_name(node)
        if name is not None:
            docstring = ast.get_docstring(node) or ""
            found.append((name, docstring.strip().split("\n")[0]))
    return found


def _module_file(module: str) -> Path | None:
    """The source file of ``module``, found without running it (its parent packages are imported)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin)


@cache
def unreadable_plugin_methods() -> tuple[str, ...]:
    """The ``dpbench.methods`` entry points whose module is not found or names no method here (e.g. a typo
    in the class name): the registry's import refuses them, naming the plugin, so a name missing from
    :func:`method_names` may be one of theirs."""
    unread = []
    for entry_point in plugin_entry_points(METHODS_GROUP):
        module, _, attribute = entry_point.value.partition(":")
        path = _module_file(module.strip())
        if path is None or not _named_classes(path, only=attribute.strip() or None):
            unread.append(entry_point.value)
    return tuple(unread)


@cache
def method_names() -> dict[str, MethodName]:
    """Every installed method by name: the built-in ones, then each plugin's (read once per process)."""
    methods: dict[str, MethodName] = {}
    for source in METHOD_SOURCES:
        for module in source_modules(source):
            path = _PACKAGE_DIR.joinpath(*module.split(".")[1:]).with_suffix(".py")
            for name, summary in _named_classes(path):
                methods[name] = MethodName(name, summary)
    for entry_point in plugin_entry_points(METHODS_GROUP):
        module, _, attribute = entry_point.value.partition(":")
        path = _module_file(module.strip())
        if path is None:
            continue  # the registry refuses it, in one line naming the plugin, when it loads
        for name, summary in _named_classes(path, only=attribute.strip() or None):
            methods.setdefault(name, MethodName(name, summary, source_of(entry_point)))
    return methods
