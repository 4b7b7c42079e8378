"""One run set over the ranks of a torchrun job: each rank an island of the same algorithm.

Each of a run set's runs has its population split over the ranks (rank r holds
pop // world individuals, one more for the first pop % world ranks), each island seeded
with its own stream. Every `migrate_every` iterations (a chunk boundary, so fused kernels
and CUDA graphs keep running in between) the islands exchange each run's `migrants` best
individuals with `all_gather`, and every island takes in the others' in place of its
worst (`Algorithm.immigrate`: PSO's newcomers bring their personal bests, so each island
also adopts the global best). Stop decisions and the final result are agreed with
collectives: every rank returns the same best points, history and counts.

With one rank there are no islands at all: the run set is exactly the single-device one.
"""

from __future__ import annotations

import json

import numpy as np
import torch
import torch.distributed as dist

from ..algorithms import Algorithm, State
from . import distributed
from .arguments import check_count
from .distributed import Group, lost
from .rng import MAX_SEED


#: What a rank says when another is lost mid-run: an island run keeps no partial result.
LOST = "an island run keeps no partial result: rerun the command"

#: torch >= 2.12 names it all_gather_single; older releases all_gather_into_tensor.
_all_gather_single = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor


def share(total: int, world: int, rank: int) -> int:
    """Individuals of `total` on island `rank`."""
    return total // world + (1 if rank < total % world else 0)


def island_seed(seed: int, rank: int) -> int:
    """An independent 64-bit seed for island `rank` of a run set seeded with `seed` (numpy's
    SeedSequence: statistically independent streams from one seed)."""
    return int(np.random.SeedSequence([seed % MAX_SEED, rank]).generate_state(1, np.uint64)[0])


def join_islands(runner, islands: bool | None, migrate_every: int | None, migrants: int) -> Islands | None:
    """Under torchrun with several ranks (unless islands=False): this rank's island of the
    runner's run set, whose population becomes the island's share (the runner's seed and
    algorithm are the agreed ones afterwards); else None (one device)."""
    if islands is not None and not isinstance(islands, bool):
        raise ValueError(f"islands must be True, False or None (automatic under torchrun), got {islands!r}")
    every = check_count("migrate_every", migrate_every)
    migrants = check_count("migrants", migrants, required=True)
    if islands is False or not distributed.launched():
        return None
    owner = runner.algorithm.stepping()
    if not type(owner).islands_offered:  # on every rank alike, before the ranks meet
        raise ValueError(f"{owner.name} offers no islands (its population is one whole over the run): "
                         "under torchrun use islands=False (--no-islands), each rank running its own run set")
    device = runner.device
    if device.type == "cuda" and device.index != distributed.local_rank():
        raise ValueError(f"under torchrun each rank steps its islands on its own GPU, cuda:LOCAL_RANK; "
                         f"device={str(device)!r} names another: use device='cuda' or 'auto'")
    group = distributed.join(device)
    runner.seed = group.broadcast(runner.seed, "agreeing on the seed")  # seed=None draws on each rank
    group.agree("the run set (problem, algorithm, runs, dtype, seed, engine, migration)",
                json.dumps([runner.config(), every, migrants], sort_keys=True, default=str))
    found = Islands(group, runner.algorithm, runner.seed, every or runner.chunk, migrants)
    runner.algorithm = found.algorithm
    return found


class Islands:
    """The engine's side of islands: the island's algorithm and seed, migration, agreement."""

    def __init__(self, group: Group, algorithm: Algorithm, seed: int, every: int, migrants: int) -> None:
        self.group, self.every, self.migrants = group, every, migrants
        self.whole = algorithm  # what the run set is, as results report it
        total = algorithm.pop_size
        self.pop = share(total, group.world, group.rank)
        smallest, need = total // group.world, max(algorithm.min_pop, 2 * migrants)
        if smallest < need:  # the smallest share, so that every rank raises alike
            raise ValueError(f"{algorithm.name}: pop_size={total} split over {group.world} islands leaves {smallest} "
                             f"individuals on the smallest; each island needs at least {need} (min population, and "
                             f"twice the migrants): use pop_size >= {group.world * need} or fewer ranks")
        self.algorithm = algorithm.with_population(self.pop)
        self.seed = island_seed(seed, group.rank)
        self.bytes_per_migration = 0
        self._pending = None  # the stop flags being reduced while a chunk runs

    def describe(self) -> dict:
        return {"world": self.group.world, "rank": self.group.rank, "island_pop": self.pop,
                "migrate_every": self.every, "migrants": self.migrants,
                "bytes_per_migration": self.bytes_per_migration}

    # -- migration --------------------------------------------------------------------------
    def migrate(self, state: State) -> State:
        """Exchange every run's best individuals between islands and take the others' in
        (one all_gather: the migrants' fields side by side in one buffer)."""
        algo = self.algorithm
        out = algo.emigrants(state, self.migrants)  # (runs, k)
        fields = algo.individual_fields(state)
        rows = []
        for name in fields:
            value = getattr(state, name)
            index = out.reshape(out.shape + (1,) * (value.ndim - 2)).expand(*out.shape, *value.shape[2:])
            rows.append(value.gather(1, index).reshape(*out.shape, -1).to(state.f.dtype))
        mine = torch.cat(rows, -1).contiguous()  # (runs, k, width)
        everyone = self._all_gather(mine)  # (world, runs, k, width)
        self.bytes_per_migration = everyone.numel() * everyone.element_size()  # what each rank holds afterwards
        others = torch.cat([everyone[r] for r in range(self.group.world) if r != self.group.rank], 1)
        taken, start = {}, 0
        for name, row in zip(fields, rows):
            value = getattr(state, name)
            width = row.shape[-1]
            taken[name] = others[..., start:start + width].reshape(*others.shape[:2], *value.shape[2:]).to(value.dtype)
            start += width
        return algo.immigrate(state, taken)

    def _all_gather(self, tensor: torch.Tensor) -> torch.Tensor:
        tensor = tensor.reshape(1, -1) if tensor.ndim == 0 else tensor
        out = torch.empty((self.group.world * tensor.shape[0], *tensor.shape[1:]), dtype=tensor.dtype,
                          device=tensor.device)
        try:
            _all_gather_single(out, tensor)
        except RuntimeError as exc:
            raise lost(self.group, "exchanging migrants", exc, LOST) from None
        return out.view(self.group.world, *tensor.shape)

    def _all_reduce(self, tensor: torch.Tensor, op) -> torch.Tensor:
        try:
            dist.all_reduce(tensor, op=op)
        except RuntimeError as exc:
            raise lost(self.group, "agreeing on the run set's progress", exc, LOST) from None
        return tensor

    # -- agreement ----------------------------------------------------------------------------
    def agree_stop(self, interrupted: bool, elapsed: float, reached: torch.Tensor | None) -> tuple[bool, float, bool]:
        """(any rank interrupted, the longest elapsed time, every run reached the target on some
        island), agreed one chunk late: this chunk's flags are reduced and copied to the host
        while the next chunk runs, and the previous chunk's answer is read, so agreeing never
        stalls the device. Every rank reads the same answer at the same chunk, so all stop
        together (at most one chunk after the criterion was met)."""
        device = reached.device if reached is not None else self.group.device
        flags = torch.tensor([float(interrupted), elapsed], dtype=torch.float64).to(device, non_blocking=True)
        if reached is not None:
            flags = torch.cat([flags, reached.to(torch.float64)])
        try:
            dist.all_reduce(flags, op=dist.ReduceOp.MAX)  # on CUDA: queued, the host does not wait
        except RuntimeError as exc:
            raise lost(self.group, "agreeing on the run set's progress", exc, LOST) from None
        previous, self._pending = self._pending, _HostCopy(flags)
        if previous is None:
            return False, 0.0, False
        answer = previous.value()
        return bool(answer[0]), float(answer[1]), reached is not None and bool((answer[2:] > 0).all())

    def settle(self) -> None:
        """Finish the last agreement in flight (before the result's own collectives)."""
        if self._pending is not None:
            self._pending.value()
            self._pending = None

    def agree_max(self, value: float) -> float:
        tensor = torch.tensor([value], dtype=torch.float64, device=self.group.device)
        return float(self._all_reduce(tensor, dist.ReduceOp.MAX).cpu()[0])

    def agree_best(self, best_x: torch.Tensor, best_f: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Each run's best point over all islands (ties: the lowest rank's)."""
        fs, xs = self._all_gather(best_f.contiguous()), self._all_gather(best_x.contiguous())
        at = fs.argmin(0)  # first minimum: the lowest rank
        return xs.gather(0, at[None, :, None].expand(1, *best_x.shape))[0], fs.gather(0, at[None])[0]

    def agree_min(self, tensor: torch.Tensor) -> torch.Tensor:
        return self._all_reduce(tensor.clone(), dist.ReduceOp.MIN)

    def agree_sum(self, tensor: torch.Tensor) -> torch.Tensor:
        return self._all_reduce(tensor.clone(), dist.ReduceOp.SUM)

    def agree_lead(self, tensor: torch.Tensor) -> torch.Tensor:
        """Rank 0's `tensor`, on every rank."""
        return self._all_gather(tensor.contiguous())[0]

    def agree_first_hit(self, hit: torch.Tensor) -> torch.Tensor:
        """The first iteration any island reached the target, per run (-1: none did)."""
        never = torch.iinfo(hit.dtype).max
        first = self.agree_min(torch.where(hit < 0, never, hit))
        return torch.where(first == never, -1, first)


class _HostCopy:
    """A device tensor's copy to pinned host memory, queued now and read later: reading it
    waits for the work queued before the copy only, not for what was queued after it."""

    def __init__(self, tensor: torch.Tensor) -> None:
        if tensor.device.type != "cuda":
            self.host, self.event = tensor, None
            return
        self.host = torch.empty(tensor.shape, dtype=tensor.dtype, pin_memory=True)
        self.host.copy_(tensor, non_blocking=True)
        self.event = torch.cuda.Event()
        self.event.record()

    def value(self) -> torch.Tensor:
        if self.event is not None:
            self.event.synchronize()
        return self.host
