"""What dpbench's source means, without its wording: the digest :mod:`dpbench.code_identity` records.

A result is computed by statements, not by their layout. The digest is taken over every top-level
statement of the hashed files, each parsed (:mod:`ast`) and written out canonically, as a sorted
multiset, so that it does not change with

- formatting and comments (the parser drops them) and docstrings (dropped here: the first string
  statement of a module, class or function);
- moving a definition to another module, or a module to another package: imports of dpbench's own
  names are written as *what* they import (the definition, found by following re-exports), never
  *where from*, and the multiset has no file boundaries.

It changes with everything else a statement says: a constant, an operator, a default, an argument,
an import of another library. What it cannot see, by construction: two top-level statements of one
module that rebind the same name swapped in order, and a name imported from a module that makes it
up at run time (``__getattr__``), which is written with its module path (so moving such a module
stales, the safe direction). A name that two modules define is written with its module path too.

The canonical form skips absent (None) and empty fields, so the digest does not depend on which
Python's parser produced the tree (3.12 added ``type_params``; 3.13's ``ast.dump`` omits empties).
"""

from __future__ import annotations

import ast
import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = "dpbench"


def module_name(path: Path, package_dir: Path) -> str:
    """``dpbench.privacy.rdp`` for ``<package_dir>/privacy/rdp.py``; a package's ``__init__`` is the package."""
    parts = list(path.relative_to(package_dir).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([PACKAGE, *parts])


def _without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return body[1:]
    return body


def _bound_names(statement: ast.stmt) -> list[str]:
    """The names a top-level statement defines (functions, classes, assignments)."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [statement.name]
    targets = (
        statement.targets
        if isinstance(statement, ast.Assign)
        else ([statement.target] if isinstance(statement, ast.AnnAssign) else [])
    )
    return [node.id for target in targets for node in ast.walk(target) if isinstance(node, ast.Name)]


@dataclass
class _Index:
    """Every hashed module's top-level definitions and re-exports, to resolve an import to what it imports."""

    defines: dict[str, set[str]] = field(default_factory=dict)
    reexports: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)
    definers: Counter = field(default_factory=Counter)
    basenames: Counter = field(default_factory=Counter)

    def add(self, module: str, tree: ast.Module, is_package: bool) -> None:
        self.basenames[module.rsplit(".", 1)[-1]] += 1
        names = {name for statement in tree.body for name in _bound_names(statement)}
        self.defines[module] = names
        self.definers.update(names)
        self.reexports[module] = {
            alias.asname or alias.name: (source, alias.name)
            for statement in tree.body
            if isinstance(statement, ast.ImportFrom)
            for source in [absolute_module(statement, module, is_package)]
            if _internal(source)
            for alias in statement.names
            if alias.name != "*"
        }

    def token(self, module: str, name: str, seen: frozenset = frozenset()) -> str:
        """What ``from <module> import <name>`` imports, independent of where it lives."""
        submodule = f"{module}.{name}"
        if submodule in self.defines:
            return self.module_token(submodule)
        if name in self.defines.get(module, ()):
            return f"def:{name}" if self.definers[name] == 1 else f"def:{module}.{name}"
        if name in self.reexports.get(module, {}) and (module, name) not in seen:
            return self.token(*self.reexports[module][name], seen | {(module, name)})
        return f"unresolved:{module}.{name}"

    def module_token(self, module: str) -> str:
        base = module.rsplit(".", 1)[-1]
        return f"module:{base}" if self.basenames[base] == 1 else f"module:{module}"


def _internal(module: str) -> bool:
    return module == PACKAGE or module.startswith(f"{PACKAGE}.")


def absolute_module(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module a (possibly relative) ``from … import`` reads from."""
    if not node.level:
        return node.module or ""
    package = module if is_package else module.rsplit(".", 1)[0]
    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
    return f"{base}.{node.module}" if node.module else base


class _Normaliser(ast.NodeTransformer):
    """Drops docstrings and writes imports of dpbench's own names as what they import."""

    def __init__(self, index: _Index, module: str, is_package: bool):
        self.index, self.module, self.is_package = index, module, is_package

    def _body(self, node):
        node.body = _without_docstring(node.body)
        self.generic_visit(node)
        node.body = node.body or [ast.Pass()]
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _body

    def visit_ImportFrom(self, node: ast.ImportFrom) -> list[ast.stmt]:
        source = absolute_module(node, self.module, self.is_package)
        if not _internal(source):
            return _bindings(f"{source}.{alias.name} as {alias.asname or alias.name}" for alias in node.names)
        return _bindings(
            f"*:{source}"
            if alias.name == "*"
            else self._own(self.index.token(source, alias.name), None if alias.asname == alias.name else alias.asname)
            for alias in node.names
        )

    def visit_Import(self, node: ast.Import) -> list[ast.stmt]:
        return _bindings(
            self._own(self.index.module_token(alias.name), alias.asname)
            if _internal(alias.name) and alias.asname
            else f"{alias.name} as {alias.asname or alias.name}"  # `import dpbench.x` binds `dpbench`: uses spell the path
            for alias in node.names
        )

    @staticmethod
    def _own(token: str, asname: str | None) -> str:
        """An import of one of dpbench's own names as what it binds, or "" when it binds the name to its only
        definition under its own name: a re-export or a moved import then changes nothing."""
        unique = not token.startswith(("unresolved:", "*:")) and ":dpbench." not in token
        return "" if unique and asname is None else f"{token} as {asname}"


def _bindings(bindings) -> list[ast.stmt]:
    """One statement per name an import binds (so a module's imports are a set of bindings)."""
    return [ast.Expr(ast.Constant(f"import {binding}")) for binding in bindings if binding]


def canonical(node) -> str:
    """A node written out field by field, skipping absent and empty fields (stable across Pythons)."""
    if isinstance(node, ast.AST):
        fields = (
            f"{name}={canonical(value)}"
            for name in node._fields
            if (value := getattr(node, name, None)) is not None and value != []
        )
        return f"{type(node).__name__}({','.join(fields)})"
    if isinstance(node, list):
        return f"[{','.join(canonical(item) for item in node)}]"
    return repr(node)


def meaning_digest(package_dir: Path, files: Iterable[Path]) -> str:
    """sha256 over the sorted canonical top-level statements of ``files`` (see the module docstring)."""
    trees = {}
    index = _Index()
    for path in files:
        module = module_name(path, package_dir)
        tree = ast.parse(path.read_bytes(), filename=str(path))
        trees[module] = (tree, path.name == "__init__.py")
        index.add(module, tree, path.name == "__init__.py")
    statements, bindings = [], set()
    for module, (tree, is_package) in trees.items():
        normaliser = _Normaliser(index, module, is_package)
        body = _without_docstring(tree.body)
        for statement in body:
            if isinstance(statement, ast.Import | ast.ImportFrom):
                bindings.update(canonical(binding) for binding in normaliser.visit(statement))
            else:
                statements.append(canonical(normaliser.visit(statement)))
    digest = hashlib.sha256()
    for text in [*sorted(bindings), *sorted(statements)]:
        data = text.encode()
        digest.update(f"{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()
