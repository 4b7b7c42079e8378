"""PRS's fast paths, one per device, both following `algorithms/prs.py` (the reference):

- `cuda.py`: two fused Triton kernels per iteration (the CUDA engine's `fused` path);
- `cpu.py`: one Numba kernel for many iterations (the CPU engine's `native` path).

Both draw r's uniforms from the same Philox counters (the ray's coordinate pair, iteration,
stream 0) and carry the mean deviation of (10) between iterations in a buffer of their own,
so with the same key they compute the same iterations up to rounding.
"""
