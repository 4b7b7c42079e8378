"""PSO's fast paths, one per device, both following `algorithms/pso.py` (the reference):

- `cuda.py`: two fused Triton kernels per iteration (the CUDA engine's `fused` path);
- `cpu.py`: one Numba kernel for many iterations (the CPU engine's `native` path).

Both draw r1, r2 from the same Philox counters (row's coordinate pair, iteration, stream 0),
so with the same key they compute the same iterations up to rounding.
"""
