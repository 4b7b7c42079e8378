"""The Firefly Algorithm's fast paths, one per device, following `algorithms/firefly.py`
(the reference):

- `cuda.py`: two fused Triton kernels per iteration of the synchronous update (the CUDA
  engine's `fused` path);
- `cpu.py`: Numba kernels for many iterations of either update (the CPU engine's `native`
  path).

For the synchronous update both compute r_ij^2 and the attraction the same way and draw
the noise from the same Philox counters (the firefly's coordinate pair, iteration, stream 0),
so with the same key they compute the same iterations up to rounding. The sequential update
(Gauss-Seidel, paper 002's CPU listing) has only the CPU kernel.
"""
