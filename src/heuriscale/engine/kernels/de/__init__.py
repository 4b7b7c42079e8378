"""Differential Evolution's fast path on the CPU, following `algorithms/de.py` (the reference):

- `cpu.py`: one Numba kernel for many generations of either strategy (rand/1/bin, JADE's
  current-to-pbest/1 with its archive), with either repair (the CPU engine's `native` path).

It has no CUDA twin: on CUDA the engine replays the compiled spec step. The index draws
(`draw_quads`), the p-best places, crossover with repair and the archive's reservoir serve
L-SHADE and jSO as well (their own trial builds on them).
"""
