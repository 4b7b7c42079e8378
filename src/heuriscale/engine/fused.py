"""The old import path of `why_not_fused` and `why_not_native` (kept working; the kernels now
live in `engine/kernels/`, filed by algorithm)."""

from .kernels import why_not_fused, why_not_native

__all__ = ["why_not_fused", "why_not_native"]
