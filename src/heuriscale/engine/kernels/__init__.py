"""The engine's kernels, filed by algorithm: `<folder>/cuda.py` holds its fused Triton kernels
(the `fused` engine on NVIDIA GPUs), `<folder>/cpu.py` its Numba kernels (the `native` engine
on the CPU), beside the helpers they share (`cuda_common.py`; `cpu_common.py`,
`cpu_objectives.py`, `cpu_random.py`, `cpu_jobs.py`).

Which algorithm has which is not listed here: each algorithm declares its kernels on its
class (`kernels = Kernels(cuda=True, cpu=True)`, see `algorithms/base.py`), and this module
finds them by that declaration. A kernel module provides

    ITERATION            the host-side class, called as ITERATION(algorithm, problem, runs,
                         target, seed): a `FusedIteration` (cuda) or `NativeIteration` (cpu)
    MAX_DIM              (cuda) the widest row its kernels keep in registers
    unsupported(algo)    (optional) why this configuration of the algorithm has no kernel,
                         or None (e.g. Firefly's sequential update on CUDA)
    compiled_faster(algo, problem)
                         (optional, cuda) why the compiled step is the faster path for this
                         run (measured), or None: then `auto` takes the compiled step where it
                         would otherwise weigh these kernels against it; engine='fused' still
                         runs them

Each kernel is tested against the algorithm's eager step with the same random numbers.
Triton runs on NVIDIA GPUs; with `TRITON_INTERPRET=1` it also runs the same kernels on CPU
tensors (slowly), which is how the CPU test suite checks them. This module imports neither
Triton nor Numba: a kernel module is imported when a run set asks for it.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

import torch

from ...triton_ahead import interpreted


def native_in_process(algorithm, work: int) -> bool:
    """Whether this process has loaded `algorithm`'s native kernels already, in the build that a
    run set of `work` coordinates an iteration likely uses (parallel with more than one thread
    allowed and work at the parallel threshold, else serial; a kernel that weighs its work
    otherwise, as Firefly's pairs, only makes this guess less sure), for one dtype or objective
    at least: then another run of it loads in about 0.015 s. A kernel it has not
    loaded may be missing from the disk cache (a new machine, or an edited kernel) and then
    compiles for seconds, which `auto` cannot know without loading it."""
    found = _module(algorithm, "cpu")
    if found is None:
        return False
    from ..threads import thread_limit
    from .cpu_common import PARALLEL_MIN, loaded_key, native_loaded  # (imported with the kernel module just now)

    parallel = thread_limit() > 1 and work >= PARALLEL_MIN
    return loaded_key(found[1].ITERATION.__name__, parallel) in native_loaded


def declared(algorithm, device_type: str):
    """The algorithm whose kernels run for `device_type` ("cuda" or "cpu") and its folder, or
    None when it declares none there. On the CPU that is the algorithm whose steps run
    (`stepping()`: a Hybrid steps with its inner algorithm's kernels, then refines); on CUDA
    it is the algorithm itself (a Hybrid's steps there replay the compiled step)."""
    owner = algorithm.stepping() if device_type == "cpu" else algorithm
    kernels = type(owner).kernels
    if kernels is None or not kernels.has(device_type):
        return None
    return owner, kernels.folder or owner.name


def _module(algorithm, device_type: str) -> tuple[object, ModuleType] | None:
    found = declared(algorithm, device_type)
    if found is None:
        return None
    owner, folder = found
    return owner, importlib.import_module(f"{__name__}.{folder}.{device_type}")


def with_kernels(device_type: str) -> list[str]:
    """Registered algorithms with kernels for `device_type`, by name."""
    from ...algorithms import algorithm_class, algorithm_names

    return [n for n in algorithm_names() if (k := algorithm_class(n).kernels) is not None and k.has(device_type)]


def _none_for(algorithm, kind: str, device_type: str, instead: str) -> str:
    have = ", ".join(map(repr, with_kernels(device_type))) or "none"
    return f"no {kind} kernel for {algorithm.name!r} (algorithms with one: {have}); use {instead}"


# -- CUDA: fused Triton kernels ------------------------------------------------------------------
def why_not_fused(algorithm, problem, device: torch.device) -> str | None:
    """None when a fused iteration exists for this algorithm, problem and device; else why not."""
    if declared(algorithm, "cuda") is None:
        instead = "engine='compiled'" if device.type == "cuda" else cpu_engines(algorithm, problem)
        return _none_for(algorithm, "fused", "cuda", instead)
    if device.type != "cuda" and not interpreted():
        return f"fused kernels run on CUDA devices, not on {device}; use {cpu_engines(algorithm, problem)} there"
    if importlib.util.find_spec("triton") is None:
        return "fused kernels need Triton (installed with CUDA builds of torch); use engine='compiled'"
    if problem.stochastic:
        return f"problem {problem.name!r} draws its own noise, which a CUDA graph cannot capture; use engine='eager'"
    owner, module = _module(algorithm, "cuda")
    reason = getattr(module, "unsupported", lambda algo: None)(owner)
    if reason is not None:
        return f"{reason}; use engine='compiled'"
    if problem.dim > module.MAX_DIM:
        return f"fused {algorithm.name} keeps a row in registers, up to dim={module.MAX_DIM}; use engine='compiled'"
    return None


def why_not_picked(algorithm, problem, device: torch.device) -> str | None:
    """None when `auto` may pick the fused kernels over the compiled step: they exist
    (`why_not_fused`) and their module does not find the compiled step faster for this run
    (`compiled_faster`); else why not. (Against graph replay of the uncompiled step, the
    studies' other path, or eager steps, `why_not_fused` alone decides: no kernels were
    measured slower than those.)"""
    reason = why_not_fused(algorithm, problem, device)
    if reason is None:
        owner, module = _module(algorithm, "cuda")
        reason = getattr(module, "compiled_faster", lambda algo, problem: None)(owner, problem)
    return reason


def fused_iteration(algorithm, problem, runs: int, target: float | None, seed: int):
    """The fused iteration for `algorithm` on the engine's guarded `problem` (see why_not_fused)."""
    owner, module = _module(algorithm, "cuda")
    return module.ITERATION(owner, problem, runs, target, seed)


# -- CPU: native Numba kernels -------------------------------------------------------------------
def why_not_native(algorithm, problem, device: torch.device) -> str | None:
    """None when a native CPU iteration exists for this algorithm, problem and device; else why not."""
    if device.type != "cpu":
        return f"native kernels run on the CPU, not on {device}"
    if importlib.util.find_spec("numba") is None:
        return "native kernels need Numba (pip install numba); use engine='eager'"
    if declared(algorithm, "cpu") is None:
        return _none_for(algorithm, "native CPU", "cpu", "engine='eager'")
    owner, module = _module(algorithm, "cpu")
    return getattr(module, "unsupported", lambda algo: None)(owner)


def cpu_engines(algorithm, problem) -> str:
    """What to use on the CPU instead, best first (for error messages)."""
    if why_not_native(algorithm, problem, torch.device("cpu")) is None:
        return "engine='native' (its CPU kernels) or engine='eager'"
    return "engine='eager'"


def native_iteration(algorithm, problem, runs: int, target: float | None, seed: int):
    """The native CPU iteration for `algorithm` on the engine's guarded `problem` (see why_not_native)."""
    owner, module = _module(algorithm, "cpu")
    return module.ITERATION(owner, problem, runs, target, seed)
