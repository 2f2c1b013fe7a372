"""The method class is where a hyper-parameter's default lives: a method's own file in conf/algorithm
(the one that sets ``name``) lists every field of the class at the class's default, and a file built
on another (a ``defaults`` entry) sets only what it changes. A default edited in one place and not the
other fails here, naming both values."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from dpbench.algorithms.registry import ALGORITHMS
from dpbench.conf_files import config_dir

NOT_HYPER_PARAMETERS = ("name", "tuning_grid", "defaults")
FILES = sorted((config_dir() / "algorithm").glob("*.yaml"))


def algorithm_section(path: Path) -> dict:
    """The keys a file sets in the algorithm group (under ``algorithm:`` in a ``@package _global_`` file)."""
    text = path.read_text()
    loaded = yaml.safe_load(text) or {}
    return loaded.get("algorithm", {}) if "@package _global_" in text else loaded


def class_defaults(cls) -> dict:
    return {
        field.name: field.default if field.default is not dataclasses.MISSING else field.default_factory()
        for field in dataclasses.fields(cls)
    }


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


@pytest.mark.parametrize("path", [p for p in FILES if "name" not in algorithm_section(p)], ids=lambda p: p.stem)
def test_a_file_built_on_another_sets_only_what_it_changes(path):
    defaults = class_defaults(ALGORITHMS[base_of(path)])
    changed = {key: value for key, value in algorithm_section(path).items() if key not in NOT_HYPER_PARAMETERS}
    assert changed, f"{path.name} changes no hyper-parameter"
    assert set(changed) <= set(defaults), set(changed) - set(defaults)
    repeated = [key for key, value in changed.items() if value == defaults[key]]
    assert not repeated, f"{path.name} repeats the class default of {repeated}"
