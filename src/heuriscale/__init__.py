"""heuriscale: population-based metaheuristics on CPUs and NVIDIA GPUs from one PyTorch codebase.

>>> import heuriscale as hs
>>> result = hs.minimize("rastrigin", "pso", dim=10, iters=200, runs=4, seed=0, device="cpu")
>>> result.best_f.shape
torch.Size([4])

The names below are imported on first use (PEP 562), so that `import heuriscale` (and the
command line's help, `heuriscale list` and its argument errors) do not wait for torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .version import __version__

#: Public name -> the module that defines it (imported when the name is first used).
_WHERE = {
    **dict.fromkeys(("APO", "CMAES", "DE", "FEP", "JADE", "JSO", "LSHADE", "MOEAD", "NSGA2", "PRS", "PSO", "Firefly",
                     "Algorithm", "Kernels", "State", "algorithm_names", "get_algorithm", "register_algorithm"),
                    ".algorithms"),
    **dict.fromkeys(("AskTell", "Result", "Runner", "minimize", "set_cpu_threads"), ".engine"),
    **dict.fromkeys(("NumpyFunction", "Problem", "ScalarFunction", "TorchFunction", "Workers", "get_problem",
                     "problem_names", "register_problem"), ".problems"),
    "NumbaFunction": ".problems.compiled",  # imports Numba
    "TritonFunction": ".problems.triton_function",  # imports Triton
}

_SUBPACKAGES = ("algorithms", "engine", "problems", "local", "studies", "viz", "interrupt", "cli", "metrics")

__all__ = [
    "minimize",
    "AskTell",
    "set_cpu_threads",
    "Runner",
    "Result",
    "Problem",
    "TorchFunction",
    "NumpyFunction",
    "NumbaFunction",
    "TritonFunction",
    "ScalarFunction",
    "Workers",
    "get_problem",
    "problem_names",
    "register_problem",
    "Algorithm",
    "State",
    "PSO",
    "PRS",
    "APO",
    "FEP",
    "Firefly",
    "DE",
    "JADE",
    "LSHADE",
    "JSO",
    "NSGA2",
    "MOEAD",
    "CMAES",
    "Kernels",
    "get_algorithm",
    "algorithm_names",
    "register_algorithm",
    "__version__",
]

if TYPE_CHECKING:  # what editors and type checkers see; at run time __getattr__ imports on demand
    from .algorithms import APO, CMAES, DE, FEP, JADE, JSO, LSHADE, MOEAD, NSGA2, PRS, PSO, Firefly  # noqa: F401
    from .algorithms import Algorithm, Kernels, State  # noqa: F401
    from .algorithms import algorithm_names, get_algorithm, register_algorithm  # noqa: F401
    from .engine import AskTell, Result, Runner, minimize, set_cpu_threads  # noqa: F401
    from .problems import NumpyFunction, Problem, ScalarFunction, TorchFunction, Workers  # noqa: F401
    from .problems import get_problem, problem_names, register_problem  # noqa: F401
    from .problems.compiled import NumbaFunction  # noqa: F401
    from .problems.triton_function import TritonFunction  # noqa: F401


def __getattr__(name: str):
    if name in _SUBPACKAGES:  # `heuriscale.problems` after a bare `import heuriscale`
        return importlib.import_module(f".{name}", __name__)
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where, __name__), name)
    if where in (".algorithms", ".engine", ".problems"):
        globals()[name] = value  # next time without this hook
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
