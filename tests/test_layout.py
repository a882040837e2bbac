"""The tree is the diagram: no import cycles, imports only point down the layer order written
in docs/architecture.md, private names stay in their package, packages state their API.
Imports are read with `ast`, so imports inside functions and under TYPE_CHECKING count as
much as the ones at the top of a file."""

from __future__ import annotations

import ast
import functools
import itertools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("harness", "bench")


@functools.cache
def _modules() -> dict[str, Path]:
    """Dotted module name → file, for every module of the project's packages."""
    found: dict[str, Path] = {}
    for top in PACKAGES:
        for path in (REPO / top).rglob("*.py"):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if "child" in parts:  # copied into the sandbox as files, never imported
                continue
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _imported(module: str, path: Path) -> Iterator[tuple[str, int]]:
    """Every module name an import statement in `path` may load, with its line."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = module.split(".") if is_package else module.split(".")[:-1]
                here = here[: len(here) - (node.level - 1)]
                base = ".".join([*here, *([base] if base else [])])
            yield base, node.lineno
            for alias in node.names:
                yield f"{base}.{alias.name}", node.lineno


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The project module an imported name lands in (`a.b.c` may name a function in a.b)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _ancestors(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


@functools.cache
def import_graph() -> dict[str, dict[str, int]]:
    """module → {module it imports: line}. Importing a.b.c also runs a and a.b, so those are
    edges too, except a module's own enclosing packages (Python has them loaded already)."""
    modules = _modules()
    graph: dict[str, dict[str, int]] = {m: {} for m in modules}
    for module, path in modules.items():
        own = set(_ancestors(module))
        for name, line in _imported(module, path):
            target = _resolve(name, modules)
            if target is None:
                continue
            for dep in [*_ancestors(target), target]:
                if dep in modules and dep != module and dep not in own:
                    graph[module].setdefault(dep, line)
    return graph


def find_cycle(graph: dict[str, dict[str, int]]) -> list[str]:
    """One import cycle (first module repeated at the end), or [] when there is none."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                return [*path[path.index(dep) :], dep]
            if dep not in state and (cycle := visit(dep)):
                return cycle
        path.pop()
        state[node] = 2
        return []

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return []


def test_the_cycle_finder_finds_a_cycle_through_a_package_init() -> None:
    """A toy graph with a → b.x → b (init) → a is reported as a cycle."""
    graph = {"a": {"b.x": 1}, "b.x": {"b": 1}, "b": {"a": 1}, "c": {"a": 1}}

    assert find_cycle(graph) == ["a", "b.x", "b", "a"]


def test_the_cycle_finder_passes_an_acyclic_graph() -> None:
    """A diamond is not a cycle."""
    graph = {"a": {"b": 1, "c": 1}, "b": {"d": 1}, "c": {"d": 1}, "d": {}}

    assert find_cycle(graph) == []


def test_graph_sees_imports_inside_functions_and_type_checking(tmp_path: Path) -> None:
    """An import inside a function body or under TYPE_CHECKING is an edge like any other."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from harness.tracker import BestTracker\n"
        "def f():\n    import harness.pricing\n"
    )
    path = tmp_path / "mod.py"
    path.write_text(source)

    names = {name for name, _ in _imported("harness.mod", path)}

    assert {"harness.tracker.BestTracker", "harness.pricing"} <= names


def test_no_import_cycles() -> None:
    """harness/ and bench/ import each other's modules without a single cycle."""
    graph = import_graph()

    cycle = find_cycle(graph)

    assert cycle == [], " -> ".join(
        f"{m} (line {graph[m].get(n, '?')})" for m, n in itertools.pairwise(cycle)
    )


ARCHITECTURE = REPO / "docs" / "architecture.md"


def layer_order() -> dict[str, int]:
    """Top-level unit of harness/ (package or module) → its floor, read from the table under
    "## Layer order" in docs/architecture.md, so the doc and this test cannot disagree."""
    text = ARCHITECTURE.read_text().split("## Layer order", 1)[1].split("\n## ", 1)[0]
    floors: dict[str, int] = {}
    for row in text.splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].isdigit():
            for name in re.findall(r"`([\w/.]+)`", cells[1]):
                floors[name.rstrip("/").removesuffix(".py")] = int(cells[0])
    return floors


def _unit(module: str) -> str:
    """The top-level entry of harness/ a module belongs to (`harness.calls.retry` → calls)."""
    parts = module.split(".")
    return "bench" if parts[0] == "bench" else (parts[1] if len(parts) > 1 else "harness")


def _upward_imports(floors: dict[str, int]) -> Iterator[str]:
    graph = import_graph()
    paths = _modules()
    for module, deps in graph.items():
        here = _unit(module)
        if here in {"bench", "harness"}:
            continue
        for dep, line in deps.items():
            there = _unit(dep)
            if there in {here, "harness", "bench"} or floors[there] < floors[here]:
                continue
            yield (
                f"{paths[module].relative_to(REPO)}:{line} imports {dep}: floor "
                f"{floors[there]} ({there}) is not below floor {floors[here]} ({here})"
            )


def test_layer_table_covers_every_entry_of_harness() -> None:
    """Every package and module under harness/ has a floor in docs/architecture.md."""
    entries = {
        p.name.removesuffix(".py")
        for p in (REPO / "harness").iterdir()
        if (p.suffix == ".py" or (p / "__init__.py").exists()) and p.name != "__init__.py"
    }

    assert sorted(entries - set(layer_order())) == []


def test_imports_only_point_down_the_layer_order() -> None:
    """A module imports only from its own package or from a lower floor, never sideways or up."""
    assert list(_upward_imports(layer_order())) == []


def test_the_layer_check_reports_an_import_that_runs_back_up() -> None:
    """With llm moved above calls, calls' imports of llm are reported as running back up."""
    floors = {**layer_order(), "llm": 99}

    found = list(_upward_imports(floors))

    assert any("harness/calls/" in f and "(llm)" in f for f in found), found


def _private_names_imported() -> Iterator[str]:
    modules = _modules()
    for module, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ImportFrom) or not node.module or node.level:
                continue
            target = _resolve(node.module, modules)
            if target is None or _unit(target) == _unit(module):
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    yield f"{path.relative_to(REPO)}:{node.lineno} imports {target}.{alias.name}"


def test_no_module_imports_another_packages_private_name() -> None:
    """A `_name` is private to its package: no other package imports it."""
    assert list(_private_names_imported()) == []


def test_module_files_have_plain_names() -> None:
    """No module file under harness/ or bench/ starts with an underscore: `_name` marks a
    private function, never a file (dunder files aside)."""
    private = [
        str(p.relative_to(REPO))
        for top in PACKAGES
        for p in (REPO / top).rglob("_*.py")
        if not p.name.startswith("__")
    ]

    assert private == []


def _api(package: str) -> set[str]:
    """The names a package's __init__ exports in __all__ (empty: no API, import by module)."""
    init = REPO / package.replace(".", "/") / "__init__.py"
    for node in ast.parse(init.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            getattr(t, "id", "") == "__all__" for t in node.targets
        ):
            return {e.value for e in getattr(node.value, "elts", [])}
    return set()


def _api_bypasses() -> Iterator[str]:
    modules = _modules()
    for module, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ImportFrom) or not node.module or node.level:
                continue
            parts = node.module.split(".")
            if parts[0] != "harness" or len(parts) < 3 or _unit(node.module) == _unit(module):
                continue
            package = ".".join(parts[:2])
            api = _api(package) if (REPO / "harness" / parts[1]).is_dir() else set()
            for alias in node.names:
                if alias.name in api:
                    where = f"{path.relative_to(REPO)}:{node.lineno}"
                    yield f"{where}: import {alias.name} from {package}"


def test_another_package_is_imported_through_its_api() -> None:
    """A name a package exports in its __init__ is imported from the package, never from the
    module behind it, so the API is the one way in."""
    assert list(_api_bypasses()) == []


def _packages() -> list[Path]:
    return sorted(p.parent for p in (REPO / "harness").rglob("__init__.py"))


@pytest.mark.parametrize("package", _packages(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_package_states_its_api(package: Path) -> None:
    """Each package's __init__.py has a docstring and, where it exports names, an __all__."""
    tree = ast.parse((package / "__init__.py").read_text())
    exports = any(isinstance(n, ast.ImportFrom) for n in tree.body)
    has_all = any(
        isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in n.targets)
        for n in tree.body
    )

    assert (ast.get_docstring(tree) is not None, has_all or not exports) == (True, True)


def test_the_task_pipeline_opens_with_run_task() -> None:
    """docs/architecture.md: pipeline/ reads top to bottom, run_task first."""
    tree = ast.parse((REPO / "harness" / "pipeline" / "task.py").read_text())
    functions = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]

    assert functions[:2] == ["run_task", "_run"]


def test_running_a_night_needs_nothing_from_morning() -> None:
    """morning/ only reads a night back: the runner, the pipeline and scale import none of it
    (git delivery, the console and finding a run live where the layer table puts them)."""
    night = ("harness.runner", "harness.pipeline", "harness.scale")
    found = sorted(
        f"{module} → {dep}"
        for module, deps in import_graph().items()
        if module.startswith(night)
        for dep in deps
        if dep == "harness.morning" or dep.startswith("harness.morning.")
    )

    assert found == []


def test_the_harness_parses_python_only_through_the_thread_safe_parser() -> None:
    """CPython 3.11 can fail parses made on two threads at once (python/cpython#106905), and
    the harness parses on threads (inputs are checked side by side): every parse of source in
    harness/ goes through harness.pyast.parse_module, which serialises them."""
    direct = []
    for module, path in _modules().items():
        if module == "harness.pyast.parse":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "parse"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "ast"
            ):
                direct.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert direct == []
