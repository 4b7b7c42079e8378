"""Non-dominated sorting on CUDA: the operators `heuriscale::peel_fronts` in one Triton launch,
and `heuriscale::sort_fronts` in two (the dominance matrix and its column counts, then the peel).

`algorithms/pareto.py` defines the operator and its torch specification: peel the fronts of
a dominance matrix D (B, n, n) until `cover` points are ranked, the points left ranked
after them. The torch form peels a fixed number of times (it cannot ask the host when the
fronts are done), which on a GPU is thousands of launches for NSGA-II at N = 1,000. This
kernel peels inside a single launch and stops on the device when the fronts are done, so a
generation has a fixed, small number of launches and a CUDA graph can capture it.

Each peel: (A) the front is every point of count 0 (count: how many unranked points
dominate it; ranked points hold -1), gathered into a list of row indices; (B) for each
column j, count_j -= the number of front rows i with D[i, j], read row by row from the
list, so that over a whole sort each point's row of D is read once, when it is peeled (Deb's
fast non-dominated sort's work, O(n^2) bytes), and a sort that stops after the first front
(a converged NSGA-II population, where that front holds N of the 2N points) reads only the
counts. A run's columns are split among P programs that all build the same front list
(identical writes) and wait for each other after every peel at a barrier in global memory
(an atomic counter): P is at most the number of SMs, so every program of the grid is
resident and the barrier cannot deadlock. The counts are double-buffered (peel k reads one
buffer, writes the other), and read past the L1 cache (`.cg`), which is not coherent
between SMs. With one program per run (P = 1: many runs, small sets, or Triton's CPU
interpreter, which runs programs one after another) there is no barrier.

`heuriscale::sort_fronts` starts from the objectives: one launch writes D and counts each
point's dominators (a program takes a tile of columns and a chunk of rows, and adds its
counts atomically), in place of a dozen elementwise (2N)^2 tensors and a column sum; the
peel follows.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ...triton_ahead import interpreted

#: Columns a program updates at once, and front rows read per step of that update.
COLUMNS, ROWS, SCAN = 256, 32, 1024
#: At most this many programs per run (None: one per SM over all runs); 1 never uses the barrier.
MAX_PROGRAMS: int | None = None


@triton.jit
def _grid_barrier(barrier_ptr, target):
    """Wait until the counter at `barrier_ptr` reaches `target` after adding this program's 1."""
    tl.debug_barrier()  # every thread's stores of this peel are done before the release
    tl.atomic_add(barrier_ptr, 1, sem="release")
    seen = tl.atomic_add(barrier_ptr, 0, sem="acquire")
    while seen < target:
        seen = tl.atomic_add(barrier_ptr, 0, sem="acquire")
    tl.debug_barrier()


@triton.jit
def _peel_kernel(D_ptr, count_ptr, rank_ptr, front_ptr, barrier_ptr, n, cover, tiles,
                 PROGRAMS: tl.constexpr, COLUMNS: tl.constexpr, ROWS: tl.constexpr, SCAN: tl.constexpr):
    p = tl.program_id(0)
    run = tl.program_id(1).to(tl.int64)
    D_ptr += run * n * n
    count_ptr += run * 2 * n  # two buffers of n counts per run
    rank_ptr += run * n
    front_ptr += run * n
    barrier_ptr += run
    scan = tl.arange(0, SCAN)
    columns = tl.arange(0, COLUMNS)
    lanes = tl.arange(0, ROWS)
    k = tl.full([], 0, tl.int32)
    covered = tl.full([], 0, tl.int32)
    size = tl.full([], 1, tl.int32)
    while (size > 0) & (covered < cover):
        current = count_ptr + (k % 2) * n
        following = count_ptr + ((k + 1) % 2) * n
        # (A) the front, as a list of row indices (every program builds the same list)
        size = tl.zeros([], tl.int32)
        for j0 in range(0, n, SCAN):
            j = j0 + scan
            c = tl.load(current + j, mask=j < n, other=-1, cache_modifier=".cg")
            f = (c == 0).to(tl.int32)
            tl.store(front_ptr + size + tl.cumsum(f, 0) - 1, j, mask=f > 0)
            size += tl.sum(f, 0)
        covered += size
        more = (size > 0) & (covered < cover)
        tl.debug_barrier()  # the list is written before this program's threads read it
        # (B) this program's columns: rank the front; the rest lose the front's domination
        for t in range(p, tiles, PROGRAMS):
            j = t * COLUMNS + columns
            inside = j < n
            c = tl.load(current + j, mask=inside, other=-1, cache_modifier=".cg")
            tl.store(rank_ptr + j, k.to(tl.int64), mask=inside & (c == 0))
            if more:
                lost = tl.zeros([COLUMNS], dtype=tl.int32)
                for i0 in range(0, size, ROWS):
                    r = i0 + lanes
                    rows = tl.load(front_ptr + r, mask=r < size, other=0).to(tl.int64)
                    d = tl.load(D_ptr + rows[:, None] * n + j[None, :], mask=(r < size)[:, None] & inside[None, :],
                                other=0)
                    lost += tl.sum(d.to(tl.int32), 0)
                tl.store(following + j, tl.where(c > 0, c - lost, -1), mask=inside)
        k += 1
        if PROGRAMS > 1:
            _grid_barrier(barrier_ptr, k * PROGRAMS)
        else:
            tl.debug_barrier()
    fronts = k - (size == 0).to(tl.int32)  # a last peel that found nothing is no front
    for t in range(p, tiles, PROGRAMS):  # the points left share the rank after the fronts
        j = t * COLUMNS + columns
        r = tl.load(rank_ptr + j, mask=j < n, other=0)
        tl.store(rank_ptr + j, tl.where(r < 0, fronts.to(tl.int64), r), mask=j < n)


def programs_per_run(runs: int, tiles: int, device: torch.device) -> int:
    """Programs that share a run's columns: at most one per SM over all runs (see the module)."""
    if interpreted() or device.type != "cuda":
        return 1
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    return max(1, min(tiles, sms // runs, MAX_PROGRAMS or sms))


@triton.jit
def _dominance_kernel(F_ptr, v_ptr, D_ptr, count_ptr, n, M, chunk, HAS_VIOLATION: tl.constexpr,
                      BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """D[i, j] = point i (constrained-)dominates point j (`pareto.dominance`) for this program's
    columns and chunk of rows, and count[j] += the dominators of j among those rows."""
    run = tl.program_id(2).to(tl.int64)
    F_ptr += run * n * M
    v_ptr += run * n
    D_ptr += run * n * n
    count_ptr += run * 2 * n  # (the first of the peel's two count buffers)
    j = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    inside = j < n
    first = tl.program_id(1) * chunk
    dominators = tl.zeros([BLOCK_C], dtype=tl.int32)
    for i0 in range(first, tl.minimum(first + chunk, n), BLOCK_R):
        i = i0 + tl.arange(0, BLOCK_R)
        mask = (i < tl.minimum(first + chunk, n))[:, None] & inside[None, :]
        no_worse = tl.full([BLOCK_R, BLOCK_C], 1, tl.int1)
        better = tl.zeros([BLOCK_R, BLOCK_C], dtype=tl.int1)
        for m in range(0, M):
            a = tl.load(F_ptr + i * M + m, mask=i < n, other=0.0)[:, None]
            b = tl.load(F_ptr + j * M + m, mask=inside, other=0.0)[None, :]
            no_worse = no_worse & (a <= b)
            better = better | (a < b)
        d = no_worse & better
        if HAS_VIOLATION:
            vi = tl.load(v_ptr + i, mask=i < n, other=0.0)[:, None]
            vj = tl.load(v_ptr + j, mask=inside, other=0.0)[None, :]
            d = tl.where((vi <= 0) & (vj <= 0), d, vi < vj)
        d = d & mask
        tl.store(D_ptr + i.to(tl.int64)[:, None] * n + j[None, :], d.to(tl.uint8), mask=mask)
        dominators += tl.sum(d.to(tl.int32), 0)
    tl.atomic_add(count_ptr + j, dominators, mask=inside)


def sort_fronts_cuda(F: torch.Tensor, violation: torch.Tensor | None, cover: int) -> torch.Tensor:
    """`heuriscale::sort_fronts` (see `algorithms/pareto.py`): the dominance matrix and the
    dominator counts in one launch (rows split among programs that add their counts), then the
    peel: ranks (B, n) int64."""
    B, n, M = F.shape
    F = F.contiguous()
    D = torch.empty(B, n, n, dtype=torch.uint8, device=F.device)
    count = torch.zeros(B, 2, n, dtype=torch.int32, device=F.device)
    if n:
        rows, columns = 32, 128
        tiles = triton.cdiv(n, columns)
        sms = 4 if interpreted() or F.device.type != "cuda" else torch.cuda.get_device_properties(
            F.device).multi_processor_count
        chunks = max(1, min(triton.cdiv(n, rows), 2 * sms // max(1, tiles * B)))  # about two programs an SM
        chunk = rows * triton.cdiv(triton.cdiv(n, chunks), rows)
        v = F if violation is None else violation.contiguous()  # (unread without violations)
        _dominance_kernel[(tiles, triton.cdiv(n, chunk), B)](F, v, D, count, n, M, chunk,
                                                             HAS_VIOLATION=violation is not None, BLOCK_R=rows,
                                                             BLOCK_C=columns, num_warps=4)
    return _peel(D, count, cover)


def peel_fronts_cuda(D: torch.Tensor, cover: int) -> torch.Tensor:
    """`heuriscale::peel_fronts` (see `algorithms/pareto.py`) in one launch: ranks (B, n) int64."""
    B, n, _ = D.shape
    D = D.contiguous().view(torch.uint8)
    count = torch.empty(B, 2, n, dtype=torch.int32, device=D.device)
    count[:, 0] = D.sum(-2, dtype=torch.int32)
    return _peel(D, count, cover)


def _peel(D: torch.Tensor, count: torch.Tensor, cover: int) -> torch.Tensor:
    """Ranks (B, n) of the uint8 dominance matrices D, given each column's dominators in count[:, 0]."""
    B, n, _ = D.shape
    rank = torch.full((B, n), -1, dtype=torch.int64, device=D.device)
    front = torch.empty(B, n, dtype=torch.int32, device=D.device)
    barrier = torch.zeros(B, dtype=torch.int32, device=D.device)
    tiles = triton.cdiv(n, COLUMNS)
    programs = programs_per_run(B, tiles, D.device)
    if n:
        _peel_kernel[(programs, B)](D, count, rank, front, barrier, n, min(cover, n), tiles, PROGRAMS=programs,
                                    COLUMNS=COLUMNS, ROWS=ROWS, SCAN=SCAN, num_warps=4)
    return rank


_installed = False


def install() -> None:
    """Make these kernels the CUDA implementations of `heuriscale::peel_fronts` and
    `heuriscale::sort_fronts` (once per process)."""
    global _installed
    if not _installed:
        from ...algorithms.pareto import peel_fronts, sort_fronts

        peel_fronts.register_kernel("cuda")(peel_fronts_cuda)
        sort_fronts.register_kernel("cuda")(sort_fronts_cuda)
        _installed = True
