"""APO's fast paths, both following `algorithms/apo.py` (the reference):

- `cpu.py`: one Numba kernel for many iterations (the CPU engine's `native` path);
- on CUDA there is no kernel of its own: the compiled engine runs the torch step
  (`torch.compile` and CUDA graphs).

The CPU kernel draws its numbers from Philox, not from torch's stream, so its runs match
the eager step's in distribution (the tests check this statistically), not number for number.
"""
