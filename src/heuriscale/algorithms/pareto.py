"""Pareto dominance as tensors: dominance matrices, non-dominated ranks, crowding distances.

Batched over leading axes (runs first) and free of host synchronisation, so the steps that
use them (NSGA-II, MOEA/D) stay pure tensor code, and the engine reads each run's final
non-dominated set with the same functions. All objectives are minimised.

- `dominance(F, violation)`: D[..., i, j] True where point i dominates point j: no worse in
  every objective and better in one (Deb et al. 2002), or, with constraint violations,
  Deb's constrained domination: a feasible point dominates an infeasible one, of two
  infeasible points the one with the smaller violation dominates.
- `pareto_ranks(D, cover)`: the front of each point, 0 for the non-dominated ones: Deb's fast
  non-dominated sort as repeated peeling, one matrix-vector product per front. With `cover`
  it peels only until `cover` points are ranked (what NSGA-II's survival needs: the best N
  of 2N) and gives every point left the next rank ("beyond"), which changes no survivor and
  no survivor's rank (a point's front depends only on the points that dominate it, all in
  earlier fronts). The sort is the operator `heuriscale::peel_fronts` (`peel_fronts`): its
  torch implementation here peels a fixed number of times (`cover`, or every point), since
  stopping when the fronts are done would ask the host; the engine registers a CUDA kernel
  for it (`engine/kernels/pareto_cuda.py`) that peels inside one launch and stops there, so
  a whole generation has a fixed, small number of launches and a CUDA graph captures it.
- `front_ranks(F, violation)`: both at once (the operator `heuriscale::sort_fronts`, whose CUDA
  kernel builds the matrix and counts each point's dominators in one launch), by a sort where
  there is one objective.
- `crowding_distance(F, rank)`: NSGA-II's crowding distance within each front, computed as
  pymoo 0.6.2 computes it (`calc_crowding_distance`): per objective, the gap between a
  point's neighbours in the front sorted by that objective (stable sort, ties in index
  order), divided by the front's range in it, summed and divided by the number of
  objectives; the two ends of a front get infinity; an objective in which the whole front
  is equal adds 0 (even at the ends); fronts of one or two points get infinity.
"""

from __future__ import annotations

import torch


def finite_rows(F: torch.Tensor) -> torch.Tensor:
    """F (..., n, M) with every row that holds a non-finite value (NaN, inf, -inf) set to +inf
    in all objectives: such a point is dominated by every finite one and never fronts a run
    (a point (0, inf) would otherwise stay non-dominated forever)."""
    ok = torch.isfinite(F).all(-1, keepdim=True)
    return torch.where(ok, F, torch.inf)


def dominance(F: torch.Tensor, violation: torch.Tensor | None = None) -> torch.Tensor:
    """D (..., n, n), D[..., i, j] True where point i (constrained-)dominates point j, for
    objective values F (..., n, M) and optional total constraint violations (..., n)."""
    no_worse = better = None
    for m in range(F.shape[-1]):  # one (n, n) comparison per objective: no (n, n, M) temporary
        a, b = F[..., :, None, m], F[..., None, :, m]
        no_worse = (a <= b) if no_worse is None else no_worse & (a <= b)
        better = (a < b) if better is None else better | (a < b)
    D = no_worse & better
    if violation is not None:
        vi, vj = violation[..., :, None], violation[..., None, :]
        both_feasible = (vi <= 0) & (vj <= 0)
        D = torch.where(both_feasible, D, vi < vj)  # feasible (v = 0) beats infeasible; else smaller violation
    return D


def pareto_ranks(D: torch.Tensor, cover: int | None = None) -> torch.Tensor:
    """Front index (..., n) int64 of each point, from a dominance matrix D (..., n, n): 0 for
    the non-dominated points, k for those dominated only by points of fronts < k. With
    `cover`, only the first fronts that together hold at least `cover` points are ranked; the
    points left share the rank after them."""
    *lead, n, _ = D.shape
    cover = n if cover is None else max(0, min(int(cover), n))
    return peel_fronts(D.reshape(-1, n, n), cover).reshape(*lead, n)


@torch.library.custom_op("heuriscale::peel_fronts", mutates_args=())
def peel_fronts(D: torch.Tensor, cover: int) -> torch.Tensor:
    """Ranks (B, n) int64 of the points of each of B dominance matrices D (B, n, n) bool, fronts
    peeled until `cover` (<= n) points of a matrix are ranked, the rest ranked after them; by
    default `peel_fronts_torch`, on CUDA the engine's kernel once it is registered."""
    return peel_fronts_torch(D, cover)


def peel_fronts_torch(D: torch.Tensor, cover: int) -> torch.Tensor:
    """`peel_fronts` in torch, the specification: `cover` peels (each ranks at least one point
    while any is left), a peel after the last needed front ranking nothing."""
    B, n, _ = D.shape
    # small sets: an elementwise product and sum (one thread); larger ones: a batched matrix product
    # (BLAS threads, which cost more than they bring on a few thousand entries)
    small = D.numel() <= 1 << 20
    Dn = D.to(torch.float32)  # counts of dominators stay exact in float32 (n < 2**24)
    count = Dn.sum(-2, keepdim=True)  # (B, 1, n) how many unranked points dominate each point
    rank = torch.full(count.shape, n, dtype=torch.int64, device=D.device)  # n: not ranked yet
    covered = torch.zeros(B, 1, 1, dtype=torch.int64, device=D.device)
    for k in range(cover):  # one front's points leave the count of the points they dominate
        front = (count == 0) & (covered < cover)
        rank.masked_fill_(front, k)
        covered = covered + front.sum(-1, keepdim=True)
        if small:
            count = count - (front.transpose(1, 2) * Dn).sum(-2, keepdim=True)
        else:
            count = torch.baddbmm(count, front.to(torch.float32), Dn, alpha=-1)
        count.masked_fill_(front, torch.inf)  # ranked: never a front again
    fronts = torch.where(rank < n, rank, -1).amax(-1, keepdim=True) + 1
    return torch.where(rank < n, rank, fronts).reshape(B, n)


@peel_fronts.register_fake
def _peel_fronts_shape(D: torch.Tensor, cover: int) -> torch.Tensor:
    return D.new_empty(D.shape[:-1], dtype=torch.int64)


@torch.library.custom_op("heuriscale::sort_fronts", mutates_args=())
def sort_fronts(F: torch.Tensor, violation: torch.Tensor | None, cover: int) -> torch.Tensor:
    """Ranks (B, n) int64 of the points F (B, n, M) with optional violations (B, n), fronts peeled
    until `cover` (<= n) points are ranked: `pareto_ranks(dominance(F, violation), cover)`; on
    CUDA the engine's kernels, once registered, build the dominance matrix and count each
    point's dominators in one launch, then peel."""
    return pareto_ranks(dominance(F, violation), cover)


@sort_fronts.register_fake
def _sort_fronts_shape(F: torch.Tensor, violation: torch.Tensor | None, cover: int) -> torch.Tensor:
    return F.new_empty(F.shape[:-1], dtype=torch.int64)


def front_ranks(F: torch.Tensor, violation: torch.Tensor | None = None, cover: int | None = None) -> torch.Tensor:
    """`pareto_ranks(dominance(F, violation), cover)`, with one objective computed by a sort:
    domination is then a total preorder, and a point's front is the number of distinct keys
    below its own (key: the value for feasible points, after them the violation for
    infeasible ones); the sort ranks every point, whatever `cover`."""
    if F.shape[-1] > 1:
        *lead, n, M = F.shape
        cover = n if cover is None else max(0, min(int(cover), n))
        v = None if violation is None else violation.expand(F.shape[:-1]).reshape(-1, n)
        return sort_fronts(F.reshape(-1, n, M), v, cover).reshape(*lead, n)
    key, group = F[..., 0], torch.zeros_like(F[..., 0])
    if violation is not None:
        infeasible = violation > 0
        key, group = torch.where(infeasible, violation, key), infeasible.to(F.dtype)
    order = key.argsort(dim=-1, stable=True)
    order = order.gather(-1, group.gather(-1, order).argsort(dim=-1, stable=True))
    k, g = key.gather(-1, order), group.gather(-1, order)
    new = (k[..., 1:] != k[..., :-1]) | (g[..., 1:] != g[..., :-1])
    dense = torch.cat([torch.zeros_like(new[..., :1]), new], -1).long().cumsum(-1)
    return torch.empty_like(dense).scatter_(-1, order, dense)


def crowding_distance(F: torch.Tensor, rank: torch.Tensor) -> torch.Tensor:
    """NSGA-II's crowding distance (..., n) of each point within its front (`rank`), pymoo's
    formula (see the module's docstring); F (..., n, M) finite where it matters. The M
    objectives are sorted and measured side by side (one batch of sorts, not M)."""
    *lead, n, M = F.shape
    Fm = F.reshape(-1, n, M).transpose(1, 2)  # (runs, M, n)
    r2 = rank.reshape(-1, n)
    runs = Fm.shape[0]
    R = r2[:, None, :].expand(runs, M, n)
    order = Fm.argsort(dim=-1, stable=True)  # by each objective, ties in index order...
    order = order.gather(-1, R.gather(-1, order).argsort(dim=-1, stable=True))  # ... within each front
    f, r = Fm.gather(-1, order), R.gather(-1, order)
    same = r[..., 1:] == r[..., :-1]  # neighbours in the same front
    gap = torch.where(same, f[..., 1:] - f[..., :-1], torch.inf)
    inf = torch.full((runs, M, 1), torch.inf, dtype=F.dtype, device=F.device)
    to_last, to_next = torch.cat([inf, gap], -1), torch.cat([gap, inf], -1)
    low = torch.full((runs, M, n + 1), torch.inf, dtype=F.dtype, device=F.device).scatter_reduce(-1, r, f, "amin")
    high = torch.full((runs, M, n + 1), -torch.inf, dtype=F.dtype, device=F.device).scatter_reduce(-1, r, f, "amax")
    span = (high - low).gather(-1, r)
    # pymoo: a range of 0 makes the objective's terms NaN, then 0 (ends included)
    term = torch.where(span > 0, (to_last + to_next) / torch.where(span > 0, span, 1), 0.0)
    term = torch.empty_like(term).scatter_(-1, order, term)  # back in the points' order
    dist = term[:, 0]
    for m in range(1, M):  # summed objective by objective, in pymoo's order
        dist = dist + term[:, m]
    dist = dist / M
    size = torch.zeros(runs, n + 1, dtype=torch.int64, device=F.device).scatter_add_(
        1, r2, torch.ones_like(r2))  # points per front (ranks go up to n)
    dist = torch.where(size.gather(1, r2) <= 2, torch.inf, dist)  # pymoo: fronts of <= 2 points
    return dist.reshape(*lead, n)


def non_dominated(F: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
    """Mask (..., n) of the points no other valid point dominates, among the `valid` ones
    (default: rows of finite values); a duplicate of a non-dominated point is kept too."""
    if valid is None:
        valid = torch.isfinite(F).all(-1)
    D = dominance(torch.where(valid[..., None], F, torch.inf)) & valid[..., :, None]
    return valid & ~D.any(-2)
