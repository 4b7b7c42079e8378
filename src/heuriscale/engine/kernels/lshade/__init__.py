"""L-SHADE's and jSO's fast path on the CPU, following `algorithms/lshade.py` and
`algorithms/jso.py` (the reference):

- `cpu.py`: one Numba kernel for many generations of either (jSO's changes are flags of the
  same kernel), with DE's index draws, p-best places, crossover with repair and archive
  reservoir (`kernels/de/cpu.py`); the CPU engine's `native` path.

It has no CUDA twin: on CUDA the engine replays the compiled spec step.
"""
