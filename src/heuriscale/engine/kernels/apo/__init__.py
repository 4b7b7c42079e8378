"""APO's fast paths, one per device, both following `algorithms/apo.py` (the reference):

- `cuda.py`: three Triton kernels per iteration around one sort of the values (the renewal
  draw, the move with selection, the bookkeeping; the CUDA engine's `fused` path);
- `cpu.py`: one Numba kernel for many iterations (the CPU engine's `native` path).

Each draws its numbers from Philox, not from torch's stream, with a layout of its own (the
CPU kernel builds masks by a partial Fisher-Yates, the CUDA one by ranking random keys, as
eager does). The CUDA kernels are tested number for number against the eager step, given
its random numbers; the CPU kernel, and both kernels' own draws, in distribution.
"""
