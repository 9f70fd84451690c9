"""The layers hold, read from the source itself: no module below the faces imports a
face, SQL stays inside storage, and no two modules import each other at load time."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import memoryctl
from memoryctl.lineage import cycles

PACKAGE = Path(memoryctl.__file__).parent
FACES = ("memoryctl.cli", "memoryctl.tui", "memoryctl.mcp")
# `python -m memoryctl` runs the CLI: it stands above the faces, not below them.
ENTRY_POINTS = ("memoryctl.__main__",)
STORAGE = "memoryctl.storage"


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    tree: ast.Module

    @property
    def where(self) -> str:
        return self.path.relative_to(PACKAGE.parent).as_posix()

    def is_within(self, package: str) -> bool:
        return self.name == package or self.name.startswith(package + ".")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = [
    Module(module_name(path), path, ast.parse(path.read_text(encoding="utf-8"), str(path)))
    for path in sorted(PACKAGE.rglob("*.py"))
]
NAMES = {module.name for module in MODULES}


def imported(module: Module, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    """The modules of this package an import statement loads, by full name."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
        return
    if node.level:
        base = module.name.split(".")
        if module.path.name != "__init__.py":
            base.pop()
        base = base[: len(base) - (node.level - 1)]
        source = ".".join([*base, node.module] if node.module else base)
    else:
        source = node.module or ""
    for alias in node.names:
        submodule = f"{source}.{alias.name}"
        yield submodule if submodule in NAMES else source


def imports_anywhere(module: Module) -> Iterator[tuple[int, str]]:
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for name in imported(module, node):
                yield node.lineno, name


def is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_at_load(module: Module) -> Iterator[str]:
    """What importing the module runs: its top-level imports, and those in top-level
    blocks and class bodies, but not in functions or under `if TYPE_CHECKING:`."""
    pending: list[ast.stmt] = list(module.tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield from imported(module, node)
        elif isinstance(node, ast.If):
            pending += node.orelse if is_type_checking(node.test) else [*node.body, *node.orelse]
        elif isinstance(node, ast.Try):
            pending += [*node.body, *node.orelse, *node.finalbody]
            pending += [stmt for handler in node.handlers for stmt in handler.body]
        elif isinstance(node, ast.With | ast.ClassDef):
            pending += node.body


def is_face(name: str) -> bool:
    return any(name == face or name.startswith(face + ".") for face in FACES)


def test_the_faces_are_folders_of_the_package() -> None:
    for face in FACES:
        assert face in NAMES, f"{face} is missing: the test would check nothing"


def test_nothing_below_the_faces_imports_a_face_even_inside_a_function() -> None:
    wrong = [
        f"{module.where}:{line} imports {name}"
        for module in MODULES
        if not is_face(module.name) and module.name not in ENTRY_POINTS
        for line, name in imports_anywhere(module)
        if is_face(name)
    ]
    assert wrong == []


# What only storage may touch: the index's connection and statement runner.
INDEX_PRIVATES = ("_execute", "_conn", "_transaction", "_memories")


def sql_in(module: Module) -> list[str]:
    """Each import of sqlite3, each `.execute(` and each use of the index's private
    statement runner or connection in a module."""
    found = []
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if "sqlite3" in [*names, getattr(node, "module", None)]:
                found.append(f"{module.where}:{node.lineno} imports sqlite3")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "execute":
                found.append(f"{module.where}:{node.lineno} calls .execute(")
        elif isinstance(node, ast.Attribute) and node.attr in INDEX_PRIVATES:
            found.append(f"{module.where}:{node.lineno} uses the index's {node.attr}")
    return found


def test_sqlite_is_imported_and_sql_is_run_only_inside_storage() -> None:
    assert [line for m in MODULES if not m.is_within(STORAGE) for line in sql_in(m)] == []


def load_time_cycles(modules: list[Module]) -> list[list[str]]:
    """Each ring of modules that import each other at load time, as a path of imports
    from the ring's first module back to it."""
    names = {m.name for m in modules}
    return cycles({m.name: sorted({n for n in imports_at_load(m) if n in names}) for m in modules})


def test_no_two_modules_import_each_other_at_load_time() -> None:
    assert load_time_cycles(MODULES) == []


# --- the checks themselves catch what they are for -----------------------------------------


def parsed(name: str, source: str) -> Module:
    path = PACKAGE.joinpath(*name.split(".")[1:]).with_suffix(".py")
    return Module(name, path, ast.parse(source))


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from memoryctl.tui.app import make_app", ["memoryctl.tui.app"]),
        ("from memoryctl import tui", ["memoryctl.tui"]),
        ("from .tui import app", ["memoryctl.tui.app"]),
        ("import memoryctl.mcp.server", ["memoryctl.mcp.server"]),
    ],
)
def test_an_import_is_read_as_the_module_it_loads(source: str, expected: list[str]) -> None:
    module = parsed("memoryctl.bundle", source)
    assert [name for _, name in imports_anywhere(module)] == expected


def test_an_import_inside_a_function_or_for_type_checking_is_not_run_at_load() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "import memoryctl.memory\n"
        "if TYPE_CHECKING:\n    import memoryctl.bundle\n"
        "def later():\n    import memoryctl.review\n"
        "class Shape:\n    import memoryctl.tokens\n"
    )
    module = parsed("memoryctl.context", source)
    assert sorted(imports_at_load(module)) == ["memoryctl.memory", "memoryctl.tokens", "typing"]


def test_modules_that_import_each_other_are_found_however_long_the_ring() -> None:
    modules = [
        parsed("memoryctl.bundle", "from memoryctl import tokens\n"),
        parsed("memoryctl.tokens", "import memoryctl.context\n"),
        parsed("memoryctl.context", "from memoryctl.bundle import build_bundle\n"),
        parsed("memoryctl.memory", "def later():\n    import memoryctl.bundle\n"),
    ]
    assert load_time_cycles(modules) == [
        ["memoryctl.bundle", "memoryctl.tokens", "memoryctl.context", "memoryctl.bundle"]
    ]


def test_sql_outside_storage_is_found_however_it_is_reached() -> None:
    module = parsed(
        "memoryctl.review",
        "import sqlite3\n"
        "from sqlite3 import connect\n"
        "def shas(vault):\n"
        "    vault.index.execute('SELECT sha FROM notes')\n"
        "    return vault.index._execute('SELECT 1')\n",
    )
    assert [line.split(" ", 1)[1] for line in sql_in(module)] == [
        "imports sqlite3",
        "imports sqlite3",
        "calls .execute(",
        "uses the index's _execute",
    ]
