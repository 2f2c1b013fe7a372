"""dpbench's modules import one another without cycles and never from a higher layer of
docs/architecture.md's table, so that there is one way through the code. Every import statement
counts, at module level or inside a function, including those only for type checkers: a cycle
deferred into a function is still a cycle of the design."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import dpbench

PACKAGE_DIR = Path(dpbench.__file__).resolve().parent


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """module → the dpbench modules it imports (``from a.b import c`` names ``a.b.c`` when that is a module)."""
    modules = {module_name(path): path for path in PACKAGE_DIR.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    base = f"{anchor}.{base}" if base else anchor
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names
                ]
            else:
                continue
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path that starts and ends at the same module, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for succ in sorted(graph[node]):
            if state.get(succ) == 1:
                return path[path.index(succ) :] + [succ]
            if succ not in state and (cycle := visit(succ)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def test_the_graph_is_read():
    graph = import_graph()
    assert "dpbench.jobs" in graph["dpbench.engine"] and "dpbench.jobs.glm" in graph and len(graph) > 100


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_dpbench_imports_without_cycles():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


ARCHITECTURE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"


def documented_layers() -> list[tuple[str, list[str]]]:
    """docs/architecture.md's layer table, from the bottom: (layer, the entries of its modules column)."""
    text = ARCHITECTURE.read_text()
    rows = text[text.index("| layer | modules | owns |") :].split("\n\n")[0].splitlines()[2:]
    cells = [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]
    return [(row[0], re.findall(r"`([^`]+)`", row[1])) for row in cells]


def entry_covers(entry: str, path: str) -> bool:
    """Whether a table entry names module ``path`` (dotted, relative to dpbench; "" for the package):
    ``pkg/`` every module under pkg, ``pkg/__init__.py`` the package alone, ``mod.py`` or ``mod`` that module."""
    dotted = entry.removesuffix(".py").replace("/", ".")
    if dotted == "__init__" or dotted.endswith(".__init__"):
        return path == dotted.removesuffix("__init__").rstrip(".")
    if entry.endswith("/"):
        return path == dotted.rstrip(".") or path.startswith(dotted)
    return path == dotted


def layer_of(module: str, layers: list[tuple[str, list[str]]]) -> int | None:
    """The index of the layer whose most specific entry names ``module`` (None: no entry does)."""
    path = module.removeprefix("dpbench").lstrip(".")
    covering = [
        (len(entry), index)
        for index, (_, entries) in enumerate(layers)
        for entry in entries
        if entry_covers(entry, path)
    ]
    return max(covering)[1] if covering else None


def upward_imports(graph: dict[str, set[str]], layers) -> list[str]:
    """Every import of a module from a higher layer than its own, as "module (layer) -> module (layer)"."""
    found = []
    for module, targets in sorted(graph.items()):
        own = layer_of(module, layers)
        for target in sorted(targets):
            theirs = layer_of(target, layers)
            if own is not None and theirs is not None and theirs > own:
                found.append(f"{module} ({layers[own][0]}) -> {target} ({layers[theirs][0]})")
    return found


def test_every_module_is_in_one_layer_of_the_architecture_page():
    layers = documented_layers()
    assert [name for name, _ in layers][:2] == ["foundations", "problems"] and len(layers) >= 9
    assert [module for module in import_graph() if layer_of(module, layers) is None] == []


def test_no_module_imports_a_higher_layer():
    assert upward_imports(import_graph(), documented_layers()) == []


def test_the_layer_check_finds_an_upward_import():
    layers = [("low", ["errors", "jobs/__init__.py"]), ("high", ["jobs/", "engine.py"])]
    assert layer_of("dpbench.jobs", layers) == 0 and layer_of("dpbench.jobs.glm", layers) == 1
    graph = {"dpbench.errors": {"dpbench.engine"}, "dpbench.engine": {"dpbench.errors"}, "dpbench.jobs": set()}
    assert upward_imports(graph, layers) == ["dpbench.errors (low) -> dpbench.engine (high)"]
