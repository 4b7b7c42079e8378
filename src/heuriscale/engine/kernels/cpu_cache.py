"""Numba's disk cache of the native kernels, stamped with every kernel source.

Numba keys a cached function by the source of the file that defines it. A kernel compiles in
functions from other files (Philox from `cpu_random.py`, the objectives of `cpu_objectives.py`
and `cpu_cec_block.py`, `problems/compiled.py`'s call through a pointer, ...), so after one of
those changed, a cached kernel whose own file did not kept the old code: wrong numbers, or a
crash where a signature changed. That happens to a user who upgrades heuriscale in place (the
cache files are not the package's, and stay) as well as to a developer.

The locators here are Numba's own (a user's `NUMBA_CACHE_DIR`, the package's `__pycache__`,
the user-wide cache), but for the functions of these files only, their stamp is a digest of
all of them: a change to any kernel source rebuilds every kernel once. Every kernel module
that caches a Numba function imports this one first; other code's functions keep Numba's
rules. `problems/compiled.py` (which may not import the engine) is in the digest: the kernels
compile in its `call_row`, while its own cached function calls only what its file defines.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

from numba.core import caching

_KERNELS = Path(__file__).resolve().parent
_SOURCES = (_KERNELS, _KERNELS.parent.parent / "problems" / "compiled.py")


@functools.cache
def sources_digest() -> str:
    """sha256 over every kernel source file (name and content), read once a process."""
    files = sorted(p for root in _SOURCES for p in ([root] if root.is_file() else root.rglob("*.py")))
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(_KERNELS.parent.parent)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _is_kernel_source(py_file: str) -> bool:
    path = Path(os.path.abspath(py_file))
    return any(path == root or root in path.parents for root in _SOURCES)


def _stamped_by_every_source(base: type) -> type:
    class Locator(base):
        @classmethod
        def from_function(cls, py_func, py_file):
            return super().from_function(py_func, py_file) if _is_kernel_source(py_file) else None

        def get_source_stamp(self):
            return sources_digest()

    Locator.__name__ = Locator.__qualname__ = f"Kernel{base.__name__}"
    return Locator


def _numba(name: str):
    """Numba's class `name` (public in recent Numba, with a leading underscore in older ones)."""
    return getattr(caching, name, None) or getattr(caching, "_" + name)


#: Numba's default order (a user's NUMBA_CACHE_DIR first), for kernel sources only.
LOCATORS = tuple(_stamped_by_every_source(_numba(name)) for name in (
    "UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator"))

_numba("CacheImpl")._locator_classes[:0] = LOCATORS  # (consulted when a function is decorated)
