"""NSGA-II's fast path on the CPU, following `algorithms/nsga2.py` (the reference):

- `cpu.py`: one Numba kernel for many generations (tournament, SBX, polynomial mutation,
  the ZDT and DTLZ objectives inline, survival), the CPU engine's `native` path;
- `sorting.py`: the survival's non-dominated sort (ENS-SS), crowding and order.

It has no CUDA twin here: on CUDA the engine steps the torch step.
"""
