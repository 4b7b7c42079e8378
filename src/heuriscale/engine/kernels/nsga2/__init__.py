"""NSGA-II's fast paths, following `algorithms/nsga2.py` (the reference):

- `cpu.py`: one Numba kernel for many generations (tournament, SBX, polynomial mutation,
  the ZDT and DTLZ objectives inline, survival), the CPU engine's `native` path;
- `sorting.py`: the survival's non-dominated sort (ENS-SS), crowding and order;
- `offspring_cuda.py`, `survival_cuda.py`: Triton kernels for the operators the torch step
  calls (`heuriscale::nsga2_offspring`, `heuriscale::nsga2_survivors`), registered as their
  CUDA implementations by `install_cuda_ops`; with the sorting kernel (`pareto_cuda.py`) a
  generation on CUDA is then a few dozen launches, which the engine replays from a CUDA graph.
"""


def install_cuda_ops() -> None:
    """Register the Triton kernels as the CUDA implementations of NSGA-II's operators (once per
    process; imports Triton)."""
    from . import offspring_cuda, survival_cuda

    offspring_cuda.install()
    survival_cuda.install()
