"""Each algorithm's fast paths, one folder per algorithm beside each other: `cuda.py`, fused
Triton kernels (the engine's `fused` path on NVIDIA GPUs), and `cpu.py`, Numba kernels (the
engine's `native` path on the CPU, see `native.py`).

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
        from .pso import cuda

        return cuda, cuda.FusedPSO
    if type(algorithm) is PRS:
        from .prs import cuda

        return cuda, cuda.FusedPRS
    if type(algorithm) is FEP:
        from .fep import cuda

        return cuda, cuda.FusedFEP
    if type(algorithm) is Firefly and algorithm.update == "synchronous":
        from .firefly import cuda

        return cuda, cuda.FusedFirefly
    return None


def fused_advance(algorithm, problem, runs: int, target: float | None, seed: int):
    """The fused iteration for `algorithm` on the engine's guarded `problem` (see why_not_fused)."""
    _, cls = _kernels(algorithm)
    return cls(algorithm, problem, runs, target, seed)


#: Algorithms with a native CPU iteration (Hybrid wrappers step with theirs).
NATIVE = ("pso", "prs", "fep", "firefly", "apo")
#: Names of the native iterations whose kernels this process has compiled or loaded already.
native_loaded: set[str] = set()


def _native_kernels(algorithm):
    """The class of the native CPU iteration for this algorithm, or None."""
    from ...algorithms import APO, FEP, PRS, PSO, Firefly

    inner = algorithm.stepping()
    if type(inner) is PSO:
        from .pso.cpu import NativePSO

        return NativePSO
    if type(inner) is PRS:
        from .prs.cpu import NativePRS

        return NativePRS
    if type(inner) is FEP:
        from .fep.cpu import NativeFEP

        return NativeFEP
    if type(inner) is Firefly:  # both update modes
        from .firefly.cpu import NativeFirefly

        return NativeFirefly
    if type(inner) is APO:
        from .apo.cpu import NativeAPO

        return NativeAPO
    return None


def why_not_native(algorithm, problem, device: torch.device) -> str | None:
    """None when a native CPU iteration exists for this algorithm, problem and device; else why not."""
    if device.type != "cpu":
        return f"native kernels run on the CPU, not on {device}"
    if importlib.util.find_spec("numba") is None:
        return "native kernels need Numba (pip install numba); use engine='eager'"
    if _native_kernels(algorithm) is None:
        return f"no native CPU kernel for {algorithm.name!r} (only {', '.join(map(repr, NATIVE))})"
    return None


def native_advance(algorithm, problem, runs: int, target: float | None, seed: int):
    """The native CPU iteration for `algorithm` on the engine's guarded `problem` (see why_not_native)."""
    return _native_kernels(algorithm)(algorithm.stepping(), problem, runs, target, seed)
