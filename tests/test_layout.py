"""The package's layout holds: one way data flows (no import circles, counting every import
wherever it is written, nothing in the engine importing the package's top level), short
modules, and no path of ours that users lack named in what the package says."""

import ast
import importlib
import importlib.util
import re
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
    """The package's modules that `name` imports, wherever the import is written: at the top,
    inside a function, inside a module-level `__getattr__`. A module that imports by a name
    computed at run time (`importlib.import_module`) counts as importing every module below
    its own package, since any of them may be the one."""
    base = name.split(".") if package else name.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            target = ".".join(base[:len(base) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else node.module
            if target and target.split(".")[0] == "heuriscale":
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    out.add(sub if sub in modules else target)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "heuriscale")
        elif isinstance(node, ast.Call) and ast.unparse(node.func) in ("importlib.import_module", "import_module"):
            below = ".".join(base) + "."
            out.update(m for m in modules if m.startswith(below))
    return out - {name}


MODULES = _modules()
GRAPH = {name: _imports(name, path, package, MODULES) for name, (path, package) in MODULES.items()}


def _reachable(start: str) -> set[str]:
    seen, todo = set(), list(GRAPH.get(start, ()))
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(GRAPH.get(node, ()))
    return seen


def test_no_module_imports_itself_back_through_others():
    circles = sorted(name for name in GRAPH if name in _reachable(name))
    assert not circles, "modules on an import circle (lazy imports counted):\n" + "\n".join(circles)


def test_the_circle_test_sees_imports_inside_functions_and_hooks():
    """The graph must hold what only a function or a hook imports: `with_kernels` imports the
    algorithms inside its body, the package's `__getattr__` imports the engine on first use."""
    assert "heuriscale.algorithms" in GRAPH["heuriscale.engine.kernels"]
    assert "heuriscale.engine.kernels.pso.cpu" in GRAPH["heuriscale.engine.kernels"]  # by a computed name
    assert "heuriscale.problems.compiled" in GRAPH["heuriscale.problems"]  # its `__getattr__`


def test_the_engine_never_imports_the_package_top_level():
    for name, imported in GRAPH.items():
        if name.startswith("heuriscale.engine"):
            assert "heuriscale" not in imported, f"{name} imports the package's top level"


def test_the_algorithms_and_problems_never_import_the_engine_studies_or_cli():
    for name, imported in GRAPH.items():
        if name.startswith(("heuriscale.algorithms", "heuriscale.problems")):
            up = [m for m in imported if m.startswith(("heuriscale.engine", "heuriscale.studies", "heuriscale.cli"))]
            assert not up, f"{name} imports {up}"


def test_modules_stay_short():
    long = [f"{path.relative_to(SRC)} ({n} lines)" for path, _ in MODULES.values()
            if (n := len(path.read_text().splitlines())) > 600]
    assert not long, f"split these by concern: {long}"


@pytest.mark.parametrize("module, names", [
    ("heuriscale.engine.kernels", ["why_not_fused", "why_not_native", "why_not_picked"]),
    ("heuriscale.engine.minimizer", ["minimize"]),
    ("heuriscale.engine.runner", ["Runner"]),
    ("heuriscale.engine.warmup", ["warm_up"]),
    ("heuriscale.engine.auto", ["choose", "decide", "check_engine"]),
    ("heuriscale.engine.checkpoint", ["save", "load"]),
    ("heuriscale.interrupt", ["Interrupted", "interruptible"]),
])
def test_names_the_docs_import_are_where_they_live(module, names):
    loaded = importlib.import_module(module)
    for name in names:
        assert getattr(loaded, name).__module__ == module, f"{module}.{name} is imported from elsewhere"


def test_a_name_has_one_module_path():
    """Only `heuriscale` and `heuriscale.engine` gather names from their modules; a module
    does not answer for a name that lives elsewhere (no hooks keeping old paths alive)."""
    assert not hasattr(importlib.import_module("heuriscale.engine.runner"), "minimize")
    assert not hasattr(importlib.import_module("heuriscale.engine.auto"), "warm_up")
    assert importlib.util.find_spec("heuriscale.engine.fused") is None
    hooks = sorted(str(path.relative_to(SRC)) for path, _ in MODULES.values()
                   if any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in ast.parse(path.read_text()).body))
    assert hooks == ["heuriscale/__init__.py", "heuriscale/problems/__init__.py"], \
        f"module-level __getattr__ only for imports deferred until first use: {hooks}"


def test_every_public_name_is_there():
    for name in hs.__all__:
        assert getattr(hs, name) is not None, name
    for name in heuriscale.engine.__all__:
        assert getattr(heuriscale.engine, name) is not None, name
    assert hs.__version__ == heuriscale.version.__version__


def test_no_string_names_a_path_of_ours_that_users_lack():
    """Reports, messages and docstrings cite papers and data by what a user can find (authors,
    title, venue, year), never by where our working copies live (shared/papers/004 ...)."""
    ours = re.compile(r"\bshared/|\bpapers/\d{3}")
    found = [f"{path.relative_to(SRC)}:{node.lineno}: ...{node.value[max(0, m.start() - 40):m.end() + 20]}..."
             for path, _ in MODULES.values() for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Constant) and isinstance(node.value, str) and (m := ours.search(node.value))]
    found += [str(path.relative_to(SRC)) for path in (SRC / "heuriscale").rglob("*.json") if ours.search(path.read_text())]
    assert not found, f"name what users can find instead: {found}"


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
