"""FEP's fast paths, one per device, both following `algorithms/fep.py` (the reference):

- `cuda.py`: four Triton kernels per generation (mutation, tournament, selection by
  counting, gather of the survivors; the CUDA engine's `fused` path);
- `cpu.py`: one Numba kernel for many generations, in the same four parts (the CPU engine's
  `native` path).

Both draw from the same Philox counters (per coordinate pair streams 0 and 1, per individual
stream 2, per union member and opponent k stream 3 + k) and convert the words the same way;
both keep the mu smallest keys (q - wins, f) with ties by union index and write the survivors
in union order into a second buffer. So with the same key they compute the same generations
up to rounding, which the tests check.
"""
