"""The method class is where a hyper-parameter's default and its tuning grid live: a method's own file in
conf/algorithm (the one that sets ``name``) lists every field of the class at the class's default and the
class's grid, and a file built on another (a ``defaults`` entry) sets only what it changes. A default
edited in one place and not the other fails here, naming both values. A method needs no file at all:
``algorithm=NAME`` composes its class (:mod:`dpbench.class_presets`), and the names the command line
accepts before any method loads are the registry's."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from dpbench.algorithms.registry import ALGORITHMS, class_defaults, class_preset
from dpbench.conf_files import config_dir
from dpbench.method_names import method_names

NOT_HYPER_PARAMETERS = ("name", "tuning_grid", "defaults")
FILES = sorted((config_dir() / "algorithm").glob("*.yaml"))


def algorithm_section(path: Path) -> dict:
    """The keys a file sets in the algorithm group (under ``algorithm:`` in a ``@package _global_`` file)."""
    text = path.read_text()
    loaded = yaml.safe_load(text) or {}
    return loaded.get("algorithm", {}) if "@package _global_" in text else loaded


def base_of(path: Path) -> str:
    """The method a file builds on: its own ``name``, or the first algorithm file its defaults list names."""
    section = algorithm_section(path)
    if "name" in section:
        return section["name"]
    own = [entry for entry in (yaml.safe_load(path.read_text()) or {}).get("defaults", []) if isinstance(entry, str)]
    names = [entry for entry in own if entry != "_self_"]
    assert names, f"{path.name}: neither a name nor a file it builds on"
    return base_of(path.with_name(f"{names[0]}.yaml"))


@pytest.mark.parametrize("path", [p for p in FILES if "name" in algorithm_section(p)], ids=lambda p: p.stem)
def test_a_methods_own_file_lists_every_field_at_the_class_default(path):
    section = algorithm_section(path)
    defaults = class_defaults(ALGORITHMS[section["name"]])
    listed = {key: value for key, value in section.items() if key not in NOT_HYPER_PARAMETERS}
    assert set(listed) == set(defaults), (set(defaults) - set(listed), set(listed) - set(defaults))
    differing = {key: (value, defaults[key]) for key, value in listed.items() if value != defaults[key]}
    assert not differing, f"{path.name}: (file, class) = {differing}"
    grid = ALGORITHMS[section["name"]].tuning_grid
    assert section.get("tuning_grid", grid) == grid, f"{path.name}: (file, class) = {section['tuning_grid'], grid}"


@pytest.mark.parametrize("path", [p for p in FILES if "name" not in algorithm_section(p)], ids=lambda p: p.stem)
def test_a_file_built_on_another_sets_only_what_it_changes(path):
    defaults = class_defaults(ALGORITHMS[base_of(path)])
    changed = {key: value for key, value in algorithm_section(path).items() if key not in NOT_HYPER_PARAMETERS}
    assert changed, f"{path.name} changes no hyper-parameter"
    assert set(changed) <= set(defaults), set(changed) - set(defaults)
    repeated = [key for key, value in changed.items() if value == defaults[key]]
    assert not repeated, f"{path.name} repeats the class default of {repeated}"


def test_the_names_read_from_the_sources_are_the_registrys():
    assert set(method_names()) == set(ALGORITHMS)


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_a_methods_class_preset_lists_every_field_and_builds_the_method(name):
    cls = ALGORITHMS[name]
    preset = class_preset(cls)
    assert preset["name"] == name and preset["tuning_grid"] == cls.tuning_grid
    assert {k for k in preset if k not in NOT_HYPER_PARAMETERS} == {f.name for f in dataclasses.fields(cls)}
    assert cls(**{k: v for k, v in preset.items() if k not in NOT_HYPER_PARAMETERS}) == cls()
