"""CMA-ES's fast path on the CPU, following `algorithms/cmaes.py` (the reference):

- `cpu.py`: one Numba kernel for many generations (each run's eigendecomposition through
  LAPACK, as Numba's np.linalg.eigh calls it), the restarts included; the CPU engine's
  `native` path.

It has no CUDA twin: on CUDA the engine runs the eager step (torch.linalg.eigh synchronises
with the host).
"""
