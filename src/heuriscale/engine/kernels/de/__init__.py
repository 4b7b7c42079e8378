"""Differential Evolution's fast path on the CPU, following `algorithms/de.py` (the reference):

- `cpu.py`: one Numba kernel for many generations of either strategy (rand/1/bin, JADE's
  current-to-pbest/1 with its archive), with either repair (the CPU engine's `native` path).

It has no CUDA twin: on CUDA the engine replays the compiled spec step. The index draws,
the current-to-pbest/1 trial and the archive's reservoir are written to serve L-SHADE and
jSO as well (their population is sorted, with a p-best that may avoid the target).
"""
