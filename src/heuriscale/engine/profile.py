"""Per-phase timing for `minimize(..., profile=True)`.

Algorithms mark phases with `heuriscale.algorithms.base.phase(name)` (a no-op normally);
the engine marks every fitness evaluation as `evaluation`. While profiling, each phase is
bracketed by device synchronisations, so the times are real, at the cost of some speed.
"""

from __future__ import annotations

import contextlib
import time
from collections import defaultdict

import torch

from ..algorithms import base
from .device import synchronize


class PhaseTimer:
    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.seconds: dict[str, float] = defaultdict(float)
        self._depth = 0

    @contextlib.contextmanager
    def __call__(self, name: str):
        if self._depth:  # nested phases count towards the outer one
            yield
            return
        self._depth += 1
        synchronize(self.device)
        start = time.perf_counter()
        try:
            yield
        finally:
            synchronize(self.device)
            self.seconds[name] += time.perf_counter() - start
            self._depth -= 1

    @contextlib.contextmanager
    def active(self):
        base.set_phase_hook(self)
        try:
            yield self
        finally:
            base.set_phase_hook(None)
