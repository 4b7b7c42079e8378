"""Fused Triton kernels behind the algorithm interface: the engine's `fused` fast path.

An algorithm whose compiled step is still far from the hardware's limit can get a fused
iteration here: same state, same math, fewer passes over memory. Each one is tested against
the algorithm's eager step with the same random numbers. Everything else (other algorithms,
problems evaluated on the host, very wide problems) keeps the compiled path.

Triton runs on NVIDIA GPUs; with `TRITON_INTERPRET=1` it also runs the same kernels on CPU
tensors (slowly), which is how the CPU test suite checks them.
"""

from __future__ import annotations

import importlib.util
import os

import torch


def interpreted() -> bool:
    """True when Triton kernels run in its CPU interpreter (TRITON_INTERPRET=1)."""
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


#: Algorithms with a fused iteration (Firefly: its synchronous update only).
FUSED = ("pso", "prs", "fep", "firefly")


def why_not_fused(algorithm, problem, device: torch.device) -> str | None:
    """None when a fused iteration exists for this algorithm, problem and device; else why not."""
    kernels = _kernels(algorithm)
    if kernels is None:
        return f"no fused kernel for {algorithm.name!r} yet (only 'pso', 'prs', 'fep' and synchronous 'firefly'); use engine='compiled'"
    if device.type != "cuda" and not interpreted():
        return f"fused kernels run on CUDA devices, not on {device}; use engine='eager' there"
    if importlib.util.find_spec("triton") is None:
        return "fused kernels need Triton (installed with CUDA builds of torch); use engine='compiled'"
    if problem.host_bound:
        return f"problem {problem.name!r} is evaluated on the host; use engine='eager'"
    if problem.stochastic:
        return f"problem {problem.name!r} draws its own noise, which a CUDA graph cannot capture; use engine='eager'"
    module, _ = kernels
    if problem.dim > module.MAX_DIM:
        return f"fused {algorithm.name} keeps a row in registers, up to dim={module.MAX_DIM}; use engine='compiled'"
    return None


def _kernels(algorithm):
    """(module, class) of the fused iteration for this algorithm, or None."""
    from ...algorithms import FEP, PRS, PSO, Firefly

    if type(algorithm) is PSO:
        from . import pso

        return pso, pso.FusedPSO
    if type(algorithm) is PRS:
        from . import prs

        return prs, prs.FusedPRS
    if type(algorithm) is FEP:
        from . import fep

        return fep, fep.FusedFEP
    if type(algorithm) is Firefly and algorithm.update == "synchronous":
        from . import firefly

        return firefly, firefly.FusedFirefly
    return None


def fused_advance(algorithm, problem, runs: int, target: float | None, seed: int):
    """The fused iteration for `algorithm` on the engine's guarded `problem` (see why_not_fused)."""
    _, cls = _kernels(algorithm)
    return cls(algorithm, problem, runs, target, seed)
