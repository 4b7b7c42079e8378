"""heuriscale: population-based metaheuristics on CPUs and NVIDIA GPUs from one PyTorch codebase.

>>> import heuriscale as hs
>>> result = hs.minimize("rastrigin", "pso", dim=10, iters=200, runs=4, seed=0, device="cpu")
>>> result.best_f.shape
torch.Size([4])
"""

from .algorithms import APO, DE, FEP, PRS, PSO, Firefly, Algorithm, Kernels, State, algorithm_names, get_algorithm, register_algorithm
from .engine import AskTell, Result, Runner, minimize, set_cpu_threads
from .problems import (
    NumpyFunction,
    Problem,
    ScalarFunction,
    TorchFunction,
    Workers,
    get_problem,
    problem_names,
    register_problem,
)
from .version import __version__

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
    "Kernels",
    "get_algorithm",
    "algorithm_names",
    "register_algorithm",
]


def __getattr__(name: str):
    """`hs.NumbaFunction` and `hs.TritonFunction` on first use (they import Numba and Triton, which
    `import heuriscale` does not need)."""
    if name == "NumbaFunction":
        from .problems.compiled import NumbaFunction

        return NumbaFunction
    if name == "TritonFunction":
        from .problems.triton_function import TritonFunction

        return TritonFunction
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
