"""A seeded random stream that borrows the device's default generator.

Algorithms draw with `torch.rand(...)` and friends, without a generator argument, because
that is what `torch.compile` and CUDA-graph capture support. `RngStream` gives each run set
its own seeded stream anyway: on entering, it saves the device generator's state and
installs the stream's; on leaving, it saves the stream's state and puts the caller's back.
The caller's own random numbers are therefore untouched, and a run's numbers depend only on
its seed, device and shapes.
"""

from __future__ import annotations

import torch


def _default_generator(device: torch.device) -> torch.Generator:
    if device.type == "cuda":
        torch.cuda.init()
        return torch.cuda.default_generators[device.index or 0]
    return torch.default_generator


#: torch's generators take 64-bit seeds.
MAX_SEED = 2**64 - 1


class RngStream:
    def __init__(self, device: torch.device, seed: int) -> None:
        if not 0 <= seed <= MAX_SEED:
            raise ValueError(f"seed must be an integer in 0..2**64 - 1 (a 64-bit seed), got {seed!r}")
        self.generator = _default_generator(device)
        outer = self.generator.get_state()
        self.generator.manual_seed(seed)
        self._state = self.generator.get_state()
        self.generator.set_state(outer)
        self._outer: torch.Tensor | None = None

    def get_state(self) -> torch.Tensor:
        """The stream's generator state (outside the `with` block)."""
        return self._state.clone()

    def set_state(self, state: torch.Tensor) -> None:
        self._state = state.clone()

    def __enter__(self) -> RngStream:
        self._outer = self.generator.get_state()
        self.generator.set_state(self._state)
        return self

    def __exit__(self, *exc) -> None:
        self._state = self.generator.get_state()
        self.generator.set_state(self._outer)
        self._outer = None
