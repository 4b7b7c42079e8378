"""Gradient-based refiners (batched BFGS / L-BFGS) and the hybrid wrapper."""

from ..names import unknown_name
from .bfgs import BFGS, LBFGS, Refined
from .hybrid import Hybrid

REFINERS = {"bfgs": BFGS, "lbfgs": LBFGS}


def get_refiner(name: str, **params) -> BFGS:
    """`bfgs` or `lbfgs` with its parameters (max_iter, gtol, line_search, ...)."""
    if name not in REFINERS:
        raise ValueError(unknown_name("refiner", name, REFINERS))
    return REFINERS[name](**params)


__all__ = ["BFGS", "LBFGS", "Hybrid", "Refined", "get_refiner", "REFINERS"]
