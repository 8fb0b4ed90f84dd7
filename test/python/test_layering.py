"""
The package's layers: a module imports only from its own package, a lower
layer, or (the package's `__init__`, its facade) anything; never from another
package of its own layer, and no chain of imports comes back to where it
started (README, "Layout"). Every import counts, deferred and type-checking
ones included.
"""

import ast
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "hyperoffload"

LAYERS: dict[str, int] = {
    "support": 0,
    "dialects": 1,
    "ir": 2,
    "model": 3,
    "sim": 4,
    "analysis": 5,
    "planning": 6,
    "policies": 7,
    "evaluators": 7,
    "passes": 8,
    "frontend": 8,
    "targets": 8,
    "benchmark": 9,
    "tools": 10,
    "api": 10,
    "universe": 10,
    "__init__": 10,
}


def _layer(parts: tuple[str, ...]) -> str:
    """The layer of `hyperoffload.<parts>` (a subpackage or a top-level module)."""
    return parts[0] if parts else "__init__"


def _modules() -> list[Path]:
    """Every module, through the links to the top-level `dialects/`, `passes/`, `tools/`."""
    return sorted(
        Path(folder, name)
        for folder, _, names in os.walk(PACKAGE, followlinks=True)
        for name in names
        if name.endswith(".py")
    )


def _imports(path: Path) -> list[tuple[int, tuple[str, ...]]]:
    """(line, parts after `hyperoffload.`) of each import of our package."""
    found: list[tuple[int, tuple[str, ...]]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
            if node.module == "hyperoffload":
                names = [f"hyperoffload.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "hyperoffload":
                found.append((node.lineno, tuple(parts[1:])))
    return found


def test_every_module_belongs_to_a_layer() -> None:
    unknown = {
        _layer(p.relative_to(PACKAGE).with_suffix("").parts) for p in _modules()
    } - LAYERS.keys()
    assert not unknown, (
        f"add these to LAYERS (and the README's layout table): {unknown}"
    )


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_imports_from_a_higher_layer(path: Path) -> None:
    own = _layer(path.relative_to(PACKAGE).with_suffix("").parts)
    upward = [
        f"line {line}: hyperoffload.{'.'.join(parts)} ({_layer(parts)})"
        for line, parts in _imports(path)
        if LAYERS[_layer(parts)] > LAYERS[own]
    ]
    assert not upward, f"{own} imports from a higher layer: {upward}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_imports_from_another_package_of_its_layer(path: Path) -> None:
    own = _layer(path.relative_to(PACKAGE).with_suffix("").parts)
    if own == "__init__":
        return  # the package's facade re-exports the API
    sideways = [
        f"line {line}: hyperoffload.{'.'.join(parts)} ({_layer(parts)})"
        for line, parts in _imports(path)
        if _layer(parts) != own and LAYERS[_layer(parts)] == LAYERS[own]
    ]
    assert not sideways, f"{own} imports from its own layer: {sideways}"


def _module_graph() -> dict[str, set[str]]:
    """Each module's name, with the modules of ours it imports."""
    modules = {
        _dotted(p.relative_to(PACKAGE).with_suffix("").parts): p for p in _modules()
    }
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for _, parts in _imports(path):
            while parts and ".".join(parts) not in modules:
                parts = parts[:-1]  # `from hyperoffload.x.y import name`
            if parts and ".".join(parts) != name:
                targets.add(".".join(parts))
        graph[name] = targets
    return graph


def _dotted(parts: tuple[str, ...]) -> str:
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _cycles(graph: dict[str, set[str]]) -> Iterator[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> Iterator[list[str]]:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                yield from visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = stack[stack.index(node) :]
            del stack[stack.index(node) :]
            if len(component) > 1:
                yield sorted(component)

    for node in sorted(graph):
        if node not in index:
            yield from visit(node)


def test_no_import_cycles() -> None:
    cycles = list(_cycles(_module_graph()))
    assert not cycles, f"modules that import each other, directly or not: {cycles}"
