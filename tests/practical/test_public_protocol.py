"""The practical methods use dpbench's public method protocol only: every import of ``dpbench_practical``
from dpbench is one of the modules docs/add-your-method.md lists, and no name it takes starts with ``_``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import dpbench_practical
from dpbench.algorithms.registry import PLUGIN_SOURCES

REPO = Path(__file__).resolve().parents[2]
PACKAGE = Path(dpbench_practical.__file__).parent


def public_modules() -> set[str]:
    """The modules between the ``public-modules`` markers of docs/add-your-method.md."""
    text = (REPO / "docs" / "add-your-method.md").read_text(encoding="utf-8")
    section = text.split("<!-- public-modules", 1)[1].split("<!-- /public-modules -->", 1)[0]
    return set(re.findall(r"^- `(dpbench[\w.]*)`", section, flags=re.MULTILINE))


def dpbench_imports(path: Path) -> list[tuple[str, str | None, int]]:
    """(module, name or None, line) of every import from dpbench in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "dpbench":
            found += [(node.module, alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, None, node.lineno) for alias in node.names if alias.name.split(".")[0] == "dpbench"]
    return found


def test_the_documented_list_names_real_modules():
    import importlib

    modules = public_modules()
    assert "dpbench.privacy.mechanisms" in modules and "dpbench.algorithms.base" in modules
    for module in modules:
        importlib.import_module(module)


def test_every_import_of_the_practical_methods_is_public():
    allowed = public_modules()
    files = sorted(PACKAGE.rglob("*.py"))
    assert files
    offences = [
        f"{path.relative_to(PACKAGE)}:{line}: {module}{'.' + name if name else ''}"
        for path in files
        for module, name, line in dpbench_imports(path)
        if module not in allowed or (name is not None and name.startswith("_")) or "._" in module
    ]
    assert not offences, "private imports:\n" + "\n".join(offences)


def test_the_practical_methods_join_through_entry_points():
    from dpbench.audit.suite import CONTROLS, TARGETS

    names = ("amp", "amp_hf", "private_fw", "dp_newton", "dp_gd_newton_baseline")
    assert set(names) <= set(PLUGIN_SOURCES)
    assert all(PLUGIN_SOURCES[name].distribution.startswith("dpbench ") for name in names)
    assert {"private_fw_step", "dp_newton_direction"} <= set(TARGETS)
    assert {"control_private_fw_authors_step", "control_dp_newton_single_noise"} <= set(CONTROLS)
