"""Name → method class (every built-in method, found in its module, and every method a plugin's
``dpbench.methods`` entry point names, :mod:`dpbench.plugins`), construction from config, and model
compatibility checks."""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping
from typing import Any

from dpbench.algorithms.base import Algorithm
from dpbench.errors import ConfigError
from dpbench.method_names import METHOD_SOURCES, source_modules
from dpbench.plugins import METHODS_GROUP, PluginSource, load_entry_point, plugin_entry_points, source_of


def _methods_in(module) -> list[type[Algorithm]]:
    """The methods ``module`` defines: subclasses of :class:`Algorithm` that name themselves (an
    intermediate base class shares code and has no ``name``), in the order of the module."""
    return [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, Algorithm)
        and value.__module__ == module.__name__
        and "name" in vars(value)
    ]


def _built_in_methods() -> dict[str, type[Algorithm]]:
    """Every built-in method by name: a new method is a new class in a module of
    :data:`METHOD_SOURCES`, and nothing else names it."""
    methods: dict[str, type[Algorithm]] = {}
    for source in METHOD_SOURCES:
        modules = [importlib.import_module(module) for module in source_modules(source)]
        for cls in (cls for module in modules for cls in _methods_in(module)):
            if cls.name in methods:
                raise TypeError(f"two methods are named {cls.name!r}: {methods[cls.name]} and {cls}")
            methods[cls.name] = cls
    return methods


def _plugin_methods(taken: Mapping[str, type[Algorithm]]) -> dict[str, tuple[type[Algorithm], PluginSource]]:
    """Every method of an installed plugin by name, with its source. An entry point names a class or a
    module (every class of it that names itself); one that names anything else, or a method whose name
    is taken, is refused in one line naming the plugin."""
    methods: dict[str, tuple[type[Algorithm], PluginSource]] = {}
    for entry_point in plugin_entry_points(METHODS_GROUP):
        source = source_of(entry_point)
        loaded = load_entry_point(entry_point)
        if isinstance(loaded, type) and issubclass(loaded, Algorithm) and "name" in vars(loaded):
            classes = [loaded]
        elif not isinstance(loaded, type) and hasattr(loaded, "__name__"):
            classes = _methods_in(loaded)
        else:
            classes = []
        if not classes:
            raise ConfigError(
                f"plugin {source} names no method: a subclass of Algorithm with a name, or a module of them"
            )
        for cls in classes:
            if cls.name in taken or cls.name in methods:
                other = "a built-in method" if cls.name in taken else f"plugin {methods[cls.name][1]}"
                raise ConfigError(f"plugin {source}: method name {cls.name!r} is taken by {other}")
            methods[cls.name] = (cls, source)
    return methods


_BUILT_IN = _built_in_methods()
_PLUGINS = _plugin_methods(_BUILT_IN)
ALGORITHMS: dict[str, type[Algorithm]] = {**_BUILT_IN, **{name: cls for name, (cls, _) in _PLUGINS.items()}}
"""Name → method class: the built-in methods, then the plugins'."""
PLUGIN_SOURCES: dict[str, PluginSource] = {name: source for name, (_, source) in _PLUGINS.items()}
"""Name → where a plugin's method comes from (built-in methods are not listed)."""
AUDIT_COVERAGE = {name: cls.audit for name, cls in ALGORITHMS.items() if cls.private}
"""Private method name → its :class:`~dpbench.algorithms.base.AuditCoverage` (None: a method that declares none)."""


def algorithm_class(name: str) -> type[Algorithm]:
    """The class registered under ``name``; unknown names list the valid choices."""
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise ConfigError(f"unknown algorithm {name!r}; valid choices: {', '.join(sorted(ALGORITHMS))}") from None


def class_defaults(cls: type[Algorithm]) -> dict[str, Any]:
    """Each hyper-parameter of ``cls`` with a default, at that default (in the order of its fields)."""
    defaults = {}
    for field in dataclasses.fields(cls):
        if field.default is not dataclasses.MISSING:
            defaults[field.name] = field.default
        elif field.default_factory is not dataclasses.MISSING:
            defaults[field.name] = field.default_factory()
    return defaults


def class_preset(cls: type[Algorithm]) -> dict[str, Any]:
    """The ``algorithm`` section that ``algorithm=<name>`` composes for a method without a preset file:
    its name, every hyper-parameter at the class default and the class's tuning grid."""
    return {"name": cls.name, **class_defaults(cls), "tuning_grid": {k: list(v) for k, v in cls.tuning_grid.items()}}


def make_algorithm(name: str, params: Mapping[str, Any]) -> Algorithm:
    """Instantiate ``name`` with hyper-parameters ``params``; unknown or invalid ones are named."""
    cls = algorithm_class(name)
    valid = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(params) - valid)
    if unknown:
        raise ConfigError(
            f"algorithm.{unknown[0]} is not a parameter of {name}; valid: {', '.join(sorted(valid)) or '(none)'}"
        )
    try:
        return cls(**params)
    except (TypeError, ValueError) as exc:
        message = str(exc).removeprefix(f"{name}: ")  # the constraints name the method already
        raise ConfigError(f"algorithm {name}: {message}") from None
