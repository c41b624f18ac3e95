"""The package layout keeps its shape: layers import only the layers before them, third-party
frameworks stay in their packages, no module cycle, no oversized class.

Every ``import`` statement counts, also those inside functions and ``if TYPE_CHECKING:`` blocks:
a lazy import still ties the two modules together.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import pytest_llmjudge

PACKAGE_DIR = Path(pytest_llmjudge.__file__).parent
PACKAGE = PACKAGE_DIR.name
REPO = PACKAGE_DIR.parent

# The layers in order: each imports only itself and the layers before it.
LAYERS = (
    "suite",
    "local",
    "cost",
    "tasks",
    "compile",
    "models",
    "judging",
    "execution",
    "pipeline",
    "gating",
    "reporting",
    "glue",
)
GLUE_MODULES = {"plugin", "hookspecs"}  # top-level modules that are pytest glue too
COMMANDS = {"cli", "lint"}  # beside the layers: they use these, and each other, never glue
COMMANDS_MAY_IMPORT = {*LAYERS[:-1], *COMMANDS} - {"local"}
GLUE_MAY_IMPORT = {*LAYERS, "lint"}  # lint items (--llmjudge-lint) are pytest glue over the linter
ROOT = "root"  # pytest_llmjudge/__init__.py (the version): importable from anywhere

PYTEST_FRAMEWORK = {"pytest", "_pytest", "syrupy", "xdist"}
JUDGE_LIBRARIES = {"pydantic_ai", "pydantic_evals"}
MAX_CLASS_LINES = 250


@dataclass(frozen=True)
class Import:
    """One imported module, where it is imported."""

    importer: str  # dotted module name
    imported: str  # dotted module name (a package-internal one is resolved to the module)
    path: Path
    line: int

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def source_files() -> list[Path]:
    return sorted(PACKAGE_DIR.rglob("*.py"))


MODULES = {module_name(path): path for path in source_files()}


def _absolute(path: Path, node: ast.ImportFrom) -> str:
    """The module a ``from ... import`` names, relative imports resolved."""
    if not node.level:
        return node.module or ""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def imports_of(path: Path) -> Iterator[Import]:
    """Every module ``path`` imports, wherever the statement is (functions, TYPE_CHECKING)."""
    importer = module_name(path)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(importer, alias.name, path, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(path, node)
            if module == "__future__":
                continue
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                yield Import(importer, submodule if submodule in MODULES else module, path, node.lineno)


ALL_IMPORTS = sorted(
    (found for path in source_files() for found in imports_of(path)), key=lambda i: (i.path, i.line)
)
INTERNAL = [i for i in ALL_IMPORTS if i.imported == PACKAGE or i.imported.startswith(PACKAGE + ".")]


def layer_of(module: str) -> str:
    parts = module.split(".")
    if parts == [PACKAGE]:
        return ROOT
    top = parts[1]
    if top in GLUE_MODULES:
        return "glue"
    return top


def may_import(importer: str, imported: str) -> bool:
    if imported == ROOT or importer == imported:
        return True
    if importer == ROOT:
        return False  # the package's __init__ (imported by every module) imports none of them
    if importer in COMMANDS:
        return imported in COMMANDS_MAY_IMPORT
    if importer == "glue":
        return imported in GLUE_MAY_IMPORT
    return imported in LAYERS and LAYERS.index(imported) <= LAYERS.index(importer)


def top_name(module: str) -> str:
    return module.split(".", 1)[0]


def listing(lines: list[str]) -> str:
    return "\n" + "\n".join(lines)


# -- the walk itself ----------------------------------------------------------------------------


def test_every_module_belongs_to_a_known_layer() -> None:
    known = {*LAYERS, *COMMANDS, ROOT}
    unknown = [f"{module} ({layer_of(module)})" for module in MODULES if layer_of(module) not in known]
    assert not unknown, "modules outside every layer; add them to a layer:" + listing(unknown)


def test_the_walk_sees_lazy_and_type_checking_imports() -> None:
    """The rules below would pass vacuously if the walk missed imports inside functions or blocks."""
    seen = {(i.importer, i.imported) for i in INTERNAL}
    judging = f"{PACKAGE}.glue.judging_plugin"
    assert (judging, f"{PACKAGE}.pipeline.service") in seen  # under TYPE_CHECKING and in methods
    assert (f"{PACKAGE}.glue.reporting_plugin", f"{PACKAGE}.reporting.summary") in seen  # in a function
    assert (f"{PACKAGE}.glue.nodes", f"{PACKAGE}.suite.files") in seen  # ``from ..suite import files``
    assert (f"{PACKAGE}.plugin", f"{PACKAGE}.hookspecs") in seen  # ``from . import hookspecs``


# -- (a) layer order ----------------------------------------------------------------------------


def test_each_layer_imports_only_itself_and_the_layers_before_it() -> None:
    wrong = [
        f"{i.where}: {i.importer} ({layer_of(i.importer)}) imports {i.imported} ({layer_of(i.imported)})"
        for i in INTERNAL
        if not may_import(layer_of(i.importer), layer_of(i.imported))
    ]
    order = " → ".join(LAYERS)
    assert not wrong, (
        f"imports against the layer order {order} (cli/ and lint/ beside them, never importing glue):"
        + listing(wrong)
    )


# -- (b), (c) third-party frameworks stay in their packages ----------------------------------------


@pytest.mark.parametrize(
    ("libraries", "owners"),
    [(PYTEST_FRAMEWORK, {"glue"}), (JUDGE_LIBRARIES, {"models", "judging", "tasks"})],
    ids=["pytest-syrupy-xdist-only-in-glue", "pydantic-ai-and-evals-only-in-models-judging-tasks"],
)
def test_frameworks_are_imported_only_by_their_layer(libraries: set[str], owners: set[str]) -> None:
    wrong = [
        f"{i.where}: {i.importer} ({layer_of(i.importer)}) imports {i.imported}"
        for i in ALL_IMPORTS
        if top_name(i.imported) in libraries and layer_of(i.importer) not in owners
    ]
    names = ", ".join(sorted(libraries))
    assert not wrong, f"only {', '.join(sorted(owners))} may import {names}:" + listing(wrong)


# -- (d) no import cycle ---------------------------------------------------------------------------


def find_cycles(edges: dict[str, dict[str, Import]]) -> list[list[Import]]:
    """One cycle per back edge of a depth-first search: the imports that lead round it."""
    cycles: list[list[Import]] = []
    done: set[str] = set()
    stack: list[str] = []  # modules on the current DFS path
    steps: list[Import] = []  # steps[n] leads from stack[n] to stack[n + 1]

    def visit(module: str) -> None:
        stack.append(module)
        for target, step in sorted(edges.get(module, {}).items()):
            if target in stack:
                cycles.append([*steps[stack.index(target) :], step])
            elif target not in done:
                steps.append(step)
                visit(target)
                steps.pop()
        stack.pop()
        done.add(module)

    for module in sorted(edges):
        if module not in done:
            visit(module)
    return cycles


def module_graph(imports: list[Import]) -> dict[str, dict[str, Import]]:
    edges: dict[str, dict[str, Import]] = {}
    for i in imports:
        if i.imported != i.importer:
            edges.setdefault(i.importer, {}).setdefault(i.imported, i)
    return edges


def test_find_cycles_reports_the_path() -> None:
    a, b, c = (
        Import("m.a", "m.b", PACKAGE_DIR / "a.py", 1),
        Import("m.b", "m.c", PACKAGE_DIR / "b.py", 2),
        Import("m.c", "m.a", PACKAGE_DIR / "c.py", 3),
    )
    graph = {"m.a": {"m.b": a}, "m.b": {"m.c": b}, "m.c": {"m.a": c}}
    assert find_cycles(graph) == [[a, b, c]]
    assert find_cycles({"m.a": {"m.b": a}, "m.b": {"m.c": b}}) == []


def test_no_import_cycle_between_modules() -> None:
    cycles = find_cycles(module_graph(INTERNAL))
    shown = [
        " → ".join([cycle[0].importer, *(step.imported for step in cycle)])
        + "".join(f"\n    {step.where}: {step.importer} imports {step.imported}" for step in cycle)
        for cycle in cycles
    ]
    assert not cycles, "import cycles (lazy and TYPE_CHECKING imports included):" + listing(shown)


# -- (e) class size --------------------------------------------------------------------------------


def test_no_class_is_longer_than_250_lines() -> None:
    long = [
        f"{path.relative_to(REPO)}:{node.lineno}: class {node.name} has {length} lines"
        for path in source_files()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef)
        and (length := (node.end_lineno or node.lineno) - node.lineno + 1) > MAX_CLASS_LINES
    ]
    assert not long, f"classes over {MAX_CLASS_LINES} lines:" + listing(long)
