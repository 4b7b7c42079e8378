"""The history of a run set: best-so-far of every run after sampled iterations, and the
milestones that benchmarking platforms (COCO, IOHprofiler) log exactly.

Samples. Best-so-far per run after iterations 0, s, 2s, ... for a stride s that doubles as a
run grows (`History`): enough for convergence curves, but a run of 10,000 iterations keeps
only every 8th.

Milestones (`Milestones`), recorded at every iteration, never sampled, for the exports of
`studies/exports/`:

- the value of each run's first evaluation (the first point of its initial population,
  taken as evaluation 1: both platforms' files start there);
- the last iteration at which each run's best-so-far improved (when its final best was found);
- when the problem has a known optimum f*: a ladder of targets f* + 10^(k/5), k = 40, 39, ...,
  -40 (precisions 1e8 down to 1e-8, COCO's five per decade and its final 1e-8), and per run
  and target the first iteration whose best-so-far is within it, with that best value. The
  targets of cocopp's figures and tables (1e2 down to 1e-8) are on it; crossings above 1e8,
  in the first evaluations of a badly scaled function, are read from the samples.

Cost and where it happens: the engine already hands History every step's best-so-far (the
eager step one row at a time; the CUDA-graph and native engines a chunk's rows at once, as
the rows of its history). Milestones read those rows on the device, in the runs' dtype (the
targets rounded down to it, which compares exactly as float64 would): a row is one
comparison with the ladder, a chunk one `searchsorted` per run (best-so-far never increases,
so the first row within a target is a sorted search). No host synchronisation; memory
(runs, 81) x 8 bytes in float32, and a chunk's rows transposed while they are read. The
iterations become evaluation counts when the result is collected (`algorithm.evals_after`):
a target reached during an iteration counts that iteration's evaluations whole, the
convention of the engine's `evals_to_target`.
"""

from __future__ import annotations

import torch

#: History keeps at most about this many samples per run (it thins itself as it grows).
HISTORY_SIZE = 1000

#: Milestones read a chunk's rows once this many are waiting (or when read): on CUDA each read
#: is a dozen small launches from the host, which at 64 rows a chunk cost about as much as the
#: fused steps themselves; read in blocks of this size they cost a sixteenth of that.
PENDING_ROWS = 1024

#: The target ladder: precisions 10^(k/5) above the optimum for these k (COCO's five per decade).
TARGET_EXPONENTS = tuple(range(40, -41, -1))

#: What `History.warm_up` has read in this process: (device, dtype, with a target ladder).
_WARMED: set[tuple] = set()


def target_precisions() -> torch.Tensor:
    """The ladder's precisions 10^(k/5), k in TARGET_EXPONENTS (float64)."""
    return 10.0 ** (torch.tensor(TARGET_EXPONENTS, dtype=torch.float64) / 5)


class History:
    """Best-so-far per run after iterations 0, s, 2s, ... for a stride s that starts at 1 and
    doubles (dropping every other sample) whenever more than 2 x HISTORY_SIZE are kept, so
    a run of any length keeps between HISTORY_SIZE and twice as many samples; and the run
    set's `milestones` (every iteration)."""

    def __init__(self, optima: list[float] | None = None) -> None:
        self.rows: list[torch.Tensor] = []  # (k, runs) blocks of samples
        self.iterations: list[int] = []
        self.stride = 1
        self.milestones = Milestones(optima)

    def start(self, best_f: torch.Tensor, first_f: torch.Tensor) -> None:
        """Iteration 0: the initial population's best, and each run's first evaluated value."""
        self.milestones.start(best_f, first_f)
        self.record(0, best_f)

    def step(self, iteration: int, best_f: torch.Tensor) -> None:
        """One iteration's best-so-far: milestones always, a sample when on the stride."""
        self.milestones.row(iteration, best_f)
        if self.due(iteration):
            self.record(iteration, best_f)

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
        """A chunk's per-step best values (iterations first, first+1, ...): milestones from
        every row, samples from the rows on the stride (one copy)."""
        self.milestones.block(values, first)
        start = (-first) % self.stride
        if start < values.shape[0]:
            self.rows.append(values[start::self.stride].clone())
            self.iterations.extend(range(first + start, first + values.shape[0], self.stride))
            self._thin()

    def warm_up(self, rows: int) -> None:
        """Read two blocks of `rows` rows (a chunk's) into throwaway milestones, as the steps will.

        CUDA loads a kernel at its first launch, and loading may wait for the device's queue
        to drain: on an H200 the first run set of a process lost 49-59 ms of device time in
        its steps (FEP at paper 004's size: 45 ms for its 2,000 generations otherwise), the
        later ones under 1 ms; of the work inside its timed steps, only the first milestone
        read was new to the process. A graph engine calls this in its set-up, so that the
        steps load none of these kernels (once a process for each device, dtype and whether
        there is a target ladder: the kernels do not depend on the shapes). This history is
        not changed."""
        like = self.milestones._last
        kind = (like.device, like.dtype, self.milestones.optima is not None)
        if kind in _WARMED:
            return
        _WARMED.add(kind)
        scratch = Milestones(self.milestones.optima)
        scratch.start(like, like)
        block = like[None].expand(rows, -1).contiguous()
        scratch.block(block, 1)
        scratch.block(block, 1 + rows)
        scratch.flush()

    def values(self) -> torch.Tensor:
        """The samples as one (samples, runs) tensor."""
        return torch.cat(self.rows)

    def _thin(self) -> None:
        if len(self.iterations) > 2 * HISTORY_SIZE:  # keep every other sample
            rows = torch.cat(self.rows)
            keep = [i for i, it in enumerate(self.iterations) if it % (2 * self.stride) == 0]
            if keep and keep == list(range(keep[0], keep[-1] + 1, 2)):  # (samples on the stride: every other one)
                # a slice: indexing a CUDA tensor with a list copies the list to the device and
                # waits for it, a host synchronisation in the middle of graph-replayed chunks
                self.rows = [rows[keep[0]:keep[-1] + 1:2]]
            else:
                self.rows = [rows[keep]]
            self.iterations = [self.iterations[i] for i in keep]
            self.stride *= 2

    # -- checkpoints ----------------------------------------------------------------------
    def state_dict(self) -> dict:
        return {"history": self.values().detach().cpu().clone(), "history_iter": list(self.iterations),
                "history_stride": self.stride, "milestones": self.milestones.state_dict()}

    def load_state_dict(self, saved: dict, device: torch.device) -> None:
        self.rows = [saved["history"].to(device)]
        self.iterations = list(saved["history_iter"])
        self.stride = saved["history_stride"]
        self.milestones.load_state_dict(saved["milestones"], device)


class Milestones:
    """Per run: its first evaluated value, the last iteration its best improved, and (known
    optimum only) the first iteration within each target of the ladder, with the best then.
    Iterations are -1 where not (yet) reached; all tensors stay on the runs' device, and the
    per-target ones take (runs, 81) x 8 bytes in float32."""

    def __init__(self, optima: list[float] | None) -> None:
        self.optima = optima  # each run's f* (`Problem.run_optima`), or None
        self.first_f: torch.Tensor | None = None  # (runs,)
        self.improved_iter: torch.Tensor | None = None  # (runs,) int64
        self.hit_iter: torch.Tensor | None = None  # (runs, K) int32
        self.hit_f: torch.Tensor | None = None  # (runs, K), the runs' dtype
        self._last: torch.Tensor | None = None  # (runs,) best-so-far of the latest row seen
        self._targets: torch.Tensor | None = None  # (runs, K) f* + precisions in the runs' dtype, rounded down
        self._pending: list[tuple[torch.Tensor, int]] = []  # chunks' rows not read yet, with their first iteration

    @property
    def tracks_targets(self) -> bool:
        return self.optima is not None

    def start(self, best_f: torch.Tensor, first_f: torch.Tensor) -> None:
        runs, device = best_f.shape[0], best_f.device
        self.first_f = first_f.clone()
        self._pending = []
        self.improved_iter = torch.zeros(runs, dtype=torch.int64, device=device)
        self._last = best_f.clone()
        if self.tracks_targets:
            self._targets = self._ladder(best_f.dtype, device)
            self.hit_iter = torch.full((runs, len(TARGET_EXPONENTS)), -1, dtype=torch.int32, device=device)
            self.hit_f = torch.full((runs, len(TARGET_EXPONENTS)), torch.inf, dtype=best_f.dtype, device=device)
        self.row(0, best_f)

    def _ladder(self, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
        """The targets f* + 10^(k/5) in `dtype`, each rounded down to the nearest value of it:
        a value v of that dtype is <= the exact (float64) target exactly when v <= this one,
        so the runs' values are compared as they are, without a float64 copy."""
        exact = torch.tensor(self.optima, dtype=torch.float64)[:, None] + target_precisions()
        near = exact.to(dtype)
        below = torch.nextafter(near, torch.tensor(-torch.inf, dtype=dtype))
        return torch.where(near.double() > exact, below, near).to(device)

    def row(self, iteration: int, best_f: torch.Tensor) -> None:
        """The best-so-far after `iteration` (a refinement after the last step passes the
        iteration after it: its evaluations are the run's last)."""
        self.flush()
        self.improved_iter = torch.where(best_f < self._last, iteration, self.improved_iter)
        self._last = best_f.clone()  # a copy: the engine may reuse the buffer
        if self.tracks_targets:
            new = (best_f[:, None] <= self._targets) & (self.hit_iter < 0)
            self.hit_iter = torch.where(new, iteration, self.hit_iter)
            self.hit_f = torch.where(new, best_f[:, None], self.hit_f)

    def block(self, values: torch.Tensor, first: int) -> None:
        """Rows `values` (n, runs) of iterations first, ..., first + n - 1 (a copy is kept: the
        engine reuses its buffer); they are read with the next ones once PENDING_ROWS wait,
        or when the milestones are read (`flush`)."""
        if self._pending and self._pending[-1][1] + len(self._pending[-1][0]) != first:
            self.flush()  # (not the next rows: read what waits first)
        self._pending.append((values.clone(), first))
        if sum(len(rows) for rows, _ in self._pending) >= PENDING_ROWS:
            self.flush()

    def flush(self) -> None:
        """Read the rows that wait (the engine calls this before it reads the milestones)."""
        if not self._pending:
            return
        values, first = torch.cat([rows for rows, _ in self._pending]), self._pending[0][1]
        self._pending = []
        n = values.shape[0]
        improving = values < torch.cat([self._last[None], values[:-1]])  # (n, runs)
        last = n - 1 - improving.flip(0).to(torch.uint8).argmax(0)  # the last improving row
        self.improved_iter = torch.where(improving.any(0), first + last, self.improved_iter)
        self._last = values[-1].clone()
        if self.tracks_targets:
            rising = (-values.T).contiguous()  # (runs, n): -best-so-far ascends, as searchsorted wants
            at = torch.searchsorted(rising, -self._targets)
            new = (at < n) & (self.hit_iter < 0)  # at: the first row within each target, n for none
            self.hit_iter = torch.where(new, first + at.int(), self.hit_iter)
            self.hit_f = torch.where(new, values.T.gather(1, at.clamp(max=n - 1)), self.hit_f)

    def state_dict(self) -> dict:
        self.flush()
        cpu = lambda t: None if t is None else t.detach().cpu().clone()  # noqa: E731
        return {"first_f": cpu(self.first_f), "improved_iter": cpu(self.improved_iter), "hit_iter": cpu(self.hit_iter),
                "hit_f": cpu(self.hit_f), "last": cpu(self._last)}

    def load_state_dict(self, saved: dict, device: torch.device) -> None:
        on = lambda t: None if t is None else t.to(device)  # noqa: E731
        self._pending = []
        self.first_f, self.improved_iter = on(saved["first_f"]), on(saved["improved_iter"])
        self.hit_iter, self.hit_f, self._last = on(saved["hit_iter"]), on(saved["hit_f"]), on(saved["last"])
        if self.tracks_targets:
            self._targets = self._ladder(self._last.dtype, device)
