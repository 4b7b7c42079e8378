"""The history of a run set: best-so-far of every run after sampled iterations."""

from __future__ import annotations

import torch

#: History keeps at most about this many samples per run (it thins itself as it grows).
HISTORY_SIZE = 1000


class History:
    """Best-so-far per run after iterations 0, s, 2s, ... for a stride s that starts at 1 and
    doubles (dropping every other sample) whenever more than 2 x HISTORY_SIZE are kept, so
    a run of any length keeps between HISTORY_SIZE and twice as many samples."""

    def __init__(self) -> None:
        self.rows: list[torch.Tensor] = []  # (k, runs) blocks of samples
        self.iterations: list[int] = []
        self.stride = 1

    def due(self, iteration: int) -> bool:
        """True when iteration `iteration` falls on the stride (a step worth recording)."""
        return iteration % self.stride == 0

    def record(self, iteration: int, best_f: torch.Tensor) -> None:
        """Keep `best_f` as the sample of `iteration` (a copy: graph buffers are reused)."""
        if self.iterations and self.iterations[-1] == iteration:
            return
        self.rows.append(best_f.clone()[None])
        self.iterations.append(iteration)
        self._thin()

    def record_block(self, values: torch.Tensor, first: int) -> None:
        """Keep the rows of a chunk's per-step best values (iterations first, first+1, ...)
        that fall on the stride, with one copy."""
        start = (-first) % self.stride
        if start < values.shape[0]:
            self.rows.append(values[start::self.stride].clone())
            self.iterations.extend(range(first + start, first + values.shape[0], self.stride))
            self._thin()

    def values(self) -> torch.Tensor:
        """The samples as one (samples, runs) tensor."""
        return torch.cat(self.rows)

    def _thin(self) -> None:
        if len(self.iterations) > 2 * HISTORY_SIZE:  # keep every other sample
            rows = torch.cat(self.rows)
            keep = [i for i, it in enumerate(self.iterations) if it % (2 * self.stride) == 0]
            self.rows = [rows[keep]]
            self.iterations = [self.iterations[i] for i in keep]
            self.stride *= 2

    # -- checkpoints (the keys a checkpoint has always used) --------------------------------
    def state_dict(self) -> dict:
        return {"history": self.values().detach().cpu().clone(), "history_iter": list(self.iterations),
                "history_stride": self.stride}

    def load_state_dict(self, saved: dict, device: torch.device) -> None:
        self.rows = [saved["history"].to(device)]
        self.iterations = list(saved["history_iter"])
        self.stride = saved["history_stride"]
