"""The package's layout holds: one way data flows (no import circles, nothing in the engine
importing the package's top level), short engine modules, and old import paths of public
names still working."""

import ast
import importlib
from pathlib import Path

import pytest

import heuriscale as hs
import heuriscale.engine

SRC = Path(__file__).parents[1] / "src"


def _modules() -> dict[str, tuple[Path, bool]]:
    found = {}
    for path in (SRC / "heuriscale").rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if package else parts)] = (path, package)
    return found


def _imports(name: str, path: Path, package: bool, modules: dict) -> set[str]:
    """The package's modules that `name` imports, anywhere in it (functions included), but in
    a module-level `__getattr__`: the hook that keeps an old import path of a name that moved."""
    base = name.split(".") if package else name.split(".")[:-1]
    out = set()

    def visit(node, in_hook: bool) -> None:
        for child in ast.iter_child_nodes(node):
            hook = in_hook or (isinstance(child, ast.FunctionDef) and child.name == "__getattr__")
            if isinstance(child, ast.ImportFrom) and not hook:
                target = ".".join(base[:len(base) - child.level + 1] + ([child.module] if child.module else [])) \
                    if child.level else child.module
                if target and target.split(".")[0] == "heuriscale":
                    for alias in child.names:
                        sub = f"{target}.{alias.name}"
                        out.add(sub if sub in modules else target)
            elif isinstance(child, ast.Import) and not hook:
                out.update(a.name for a in child.names if a.name.split(".")[0] == "heuriscale")
            visit(child, hook)

    visit(ast.parse(path.read_text()), False)
    return out


MODULES = _modules()
GRAPH = {name: _imports(name, path, package, MODULES) for name, (path, package) in MODULES.items()}


def test_no_module_imports_itself_back_through_others():
    state, path, circles = {}, [], []

    def walk(node):
        state[node] = "open"
        path.append(node)
        for nxt in sorted(GRAPH.get(node, ())):
            if state.get(nxt) == "open":
                circles.append(" -> ".join(path[path.index(nxt):] + [nxt]))
            elif nxt not in state:
                walk(nxt)
        path.pop()
        state[node] = "done"

    for node in sorted(GRAPH):
        if node not in state:
            walk(node)
    assert not circles, "import circles:\n" + "\n".join(circles)


def test_the_engine_never_imports_the_package_top_level():
    for name, imported in GRAPH.items():
        if name.startswith("heuriscale.engine"):
            assert "heuriscale" not in imported, f"{name} imports the package's top level"


def test_the_algorithms_and_problems_never_import_the_engine_studies_or_cli():
    for name, imported in GRAPH.items():
        if name.startswith(("heuriscale.algorithms", "heuriscale.problems")):
            up = [m for m in imported if m.startswith(("heuriscale.engine", "heuriscale.studies", "heuriscale.cli"))]
            assert not up, f"{name} imports {up}"


def test_engine_modules_stay_short():
    for name, (path, _) in MODULES.items():
        if name.startswith("heuriscale.engine"):
            lines = len(path.read_text().splitlines())
            assert lines <= 600, f"{path.relative_to(SRC)} has {lines} lines: split it by concern"


@pytest.mark.parametrize("module, names", [
    ("heuriscale.engine.fused", ["why_not_fused", "why_not_native"]),  # named in the README before the move
    ("heuriscale.engine.runner", ["Runner", "minimize"]),
    ("heuriscale.engine.auto", ["warm_up", "choose", "decide"]),
    ("heuriscale.engine.checkpoint", ["save", "load"]),
    ("heuriscale.interrupt", ["Interrupted", "interruptible"]),
])
def test_old_import_paths_of_public_names_still_work(module, names):
    loaded = importlib.import_module(module)
    for name in names:
        assert getattr(loaded, name) is not None
    assert importlib.import_module("heuriscale.engine.runner").minimize is hs.minimize
    assert importlib.import_module("heuriscale.engine.auto").warm_up is heuriscale.engine.warm_up


def test_every_public_name_is_there():
    for name in hs.__all__:
        assert getattr(hs, name) is not None, name
    for name in heuriscale.engine.__all__:
        assert getattr(heuriscale.engine, name) is not None, name
    assert hs.__version__ == heuriscale.version.__version__


def test_fused_kernels_are_launched_through_launch():
    """`kernel[grid](...)` in a fused iteration would be compiled at its first launch, alone,
    not with the others in `compiled_together` (cuda_common.launch, the one such call)."""
    kernels = SRC / "heuriscale" / "engine" / "kernels"
    direct = []
    for path in sorted(kernels.glob("*/cuda.py")) + [kernels / "cuda_common.py"]:
        tree = ast.parse(path.read_text())
        inside_launch = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == "launch"
                         for n in ast.walk(f)}
        direct += [f"{path.relative_to(SRC)}:{node.lineno}" for node in ast.walk(tree)
                   if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)
                   and isinstance(node.func.value, ast.Name) and id(node) not in inside_launch]
    assert direct == [], f"launch these through cuda_common.launch: {direct}"
