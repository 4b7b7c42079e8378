"""NSGA-II's fast paths, following `algorithms/nsga2.py` (the reference):

- `cpu.py`: one Numba kernel for many generations (tournament, SBX, polynomial mutation,
  the ZDT and DTLZ objectives inline, survival), the CPU engine's `native` path;
- `sorting.py`: the survival's non-dominated sort (ENS-SS), crowding and order;
- `offspring_cuda.py`, `survival_cuda.py`: Triton kernels for the operators the torch step
  calls (`heuriscale::nsga2_offspring`, `heuriscale::nsga2_survivors`), registered as their
  CUDA implementations by `install_cuda_ops`; with the sorting kernel (`pareto_cuda.py`) a
  generation on CUDA is then a few dozen launches, which the engine replays from a CUDA graph.
"""


_installed = False


def install_cuda_ops() -> None:
    """Register the Triton kernels as the CUDA implementations of NSGA-II's operators (once per
    process; imports Triton)."""
    global _installed
    if not _installed:
        from ....algorithms.nsga2 import offspring, survivors
        from .offspring_cuda import offspring_cuda
        from .survival_cuda import survivors_cuda

        offspring.register_kernel("cuda")(offspring_cuda)
        survivors.register_kernel("cuda")(survivors_cuda)
        _installed = True
