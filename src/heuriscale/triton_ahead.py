"""Triton's one-time work in a process, started early in a thread, so that a first run waits less.

Before Triton compiles or loads any kernel it hashes its own 415 MB library (the key of its
cache, in every process: 0.24 s on the 2-core development machine), asks `ptxas --version`,
and sets up its CUDA driver module (built with the C compiler on a new machine: 0.36-0.48 s
on the device machine). Done when the first fused kernel is compiled, that is all on the
set-up's path (1.35 s of FEP's cold set-up there, docs/benchmarks.md); done here, from the
command line's first step (before torch is imported) or from a `Runner` on a CUDA device, it
overlaps the imports and the run set's making.

This module imports neither torch nor Triton: the command line calls `start()` first thing.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading

#: The engines that may compile Triton kernels (fused ones, or inductor's for the compiled step).
ENGINES = ("auto", "fused", "compiled")

_thread: threading.Thread | None = None


def interpreted() -> bool:
    """True when Triton kernels run in its CPU interpreter (TRITON_INTERPRET=1)."""
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def _gpu_driver_present() -> bool:
    """An NVIDIA driver is loaded (Linux), without importing torch: else nothing is started
    (a CPU machine with Triton installed, as CI's, would hash Triton's library for nothing)."""
    return os.path.exists("/proc/driver/nvidia/version") or os.path.exists("/dev/nvidiactl")


def start(engine: str) -> None:
    """Start the thread, once per process, for a run on a GPU with `engine`; not for other
    engines (nothing of Triton's is used), under TRITON_INTERPRET=1 (nothing is compiled),
    without Triton or without an NVIDIA driver."""
    global _thread
    if _thread is not None or engine not in ENGINES or interpreted() or not _gpu_driver_present():
        return
    if importlib.util.find_spec("triton") is None:
        return
    _thread = threading.Thread(target=_prepare, name="heuriscale-triton-ahead", daemon=True)
    _thread.start()


def _prepare() -> None:
    try:
        from triton.runtime.cache import triton_key

        triton_key()  # first: it needs no torch, so it overlaps torch's import
        from triton.compiler.compiler import make_backend
        from triton.runtime.driver import driver

        make_backend(driver.active.get_current_target()).hash()  # the driver module; ptxas --version
    except Exception as exc:  # noqa: BLE001 (the first compile does the same and raises there)
        logging.getLogger("heuriscale").debug("preparing Triton ahead failed (%s: %s)", type(exc).__name__, exc)


def wait() -> None:
    """Wait for the thread, if one was started (its work and the first compile's never run at
    once: Triton's driver is not made to be set up twice)."""
    if _thread is not None:
        _thread.join()
