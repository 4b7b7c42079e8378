"""Pareto dominance as tensors: dominance matrices, non-dominated ranks, crowding distances.

Batched over leading axes (runs first) and free of host synchronisation, so the steps that
use them (NSGA-II, MOEA/D) stay pure tensor code, and the engine reads each run's final
non-dominated set with the same functions. All objectives are minimised.

- `dominance(F, violation)`: D[..., i, j] True where point i dominates point j: no worse in
  every objective and better in one (Deb et al. 2002), or, with constraint violations,
  Deb's constrained domination: a feasible point dominates an infeasible one, of two
  infeasible points the one with the smaller violation dominates.
- `pareto_ranks(D)`: the front of each point, 0 for the non-dominated ones: Deb's fast
  non-dominated sort as repeated peeling, one matrix-vector product per front. The number
  of peels is fixed (the number of points, or `max_fronts`) because stopping when every
  point is ranked would ask the host; peels after the last front change nothing.
- `front_ranks(F, violation)`: both at once, by a sort where there is one objective.
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


def pareto_ranks(D: torch.Tensor, max_fronts: int | None = None) -> torch.Tensor:
    """Front index (..., n) int64 of each point, from a dominance matrix D (..., n, n): 0 for
    the non-dominated points, k for those dominated only by points of fronts < k. Points
    still unranked after `max_fronts` peels (default n: all of them) get rank `max_fronts`."""
    *lead, n, _ = D.shape
    peels = n if max_fronts is None else min(max_fronts, n)
    D3 = D.reshape(-1, n, n)
    # small sets: an elementwise product and sum (one thread); larger ones: a batched matrix product
    # (BLAS threads, which cost more than they bring on a few thousand entries)
    small = D3.numel() <= 1 << 20
    Dn = D3.to(torch.float32)  # counts of dominators stay exact in float32 (n < 2**24)
    count = Dn.sum(-2, keepdim=True)  # (B, 1, n) how many unranked points dominate each point
    rank = torch.full(count.shape, peels, dtype=torch.int64, device=D.device)
    for k in range(peels):  # one front's points leave the count of the points they dominate
        front = count == 0
        rank.masked_fill_(front, k)
        if small:
            count = count - (front.transpose(1, 2) * Dn).sum(-2, keepdim=True)
        else:
            count = torch.baddbmm(count, front.to(torch.float32), Dn, alpha=-1)
        count.masked_fill_(front, torch.inf)  # ranked: never a front again
    rank = rank.reshape(*lead, n)
    return rank


def front_ranks(F: torch.Tensor, violation: torch.Tensor | None = None, max_fronts: int | None = None) -> torch.Tensor:
    """`pareto_ranks(dominance(F, violation))`, with one objective computed by a sort: domination
    is then a total preorder, and a point's front is the number of distinct keys below its
    own (key: the value for feasible points, after them the violation for infeasible ones);
    `max_fronts` as for `pareto_ranks` (the sort ranks every point)."""
    if F.shape[-1] > 1:
        return pareto_ranks(dominance(F, violation), max_fronts)
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
    formula (see the module's docstring); F (..., n, M) finite where it matters."""
    *lead, n, M = F.shape
    F2 = F.reshape(-1, n, M)
    r2 = rank.reshape(-1, n)
    runs = F2.shape[0]
    dist = torch.zeros(runs, n, dtype=F.dtype, device=F.device)
    size = torch.zeros(runs, n + 1, dtype=torch.int64, device=F.device).scatter_add_(
        1, r2, torch.ones_like(r2))  # points per front (ranks go up to n)
    inf = torch.full((runs, 1), torch.inf, dtype=F.dtype, device=F.device)
    for m in range(M):
        order = F2[..., m].argsort(dim=-1, stable=True)  # by the objective, ties in index order...
        order = order.gather(1, r2.gather(1, order).argsort(dim=-1, stable=True))  # ... within each front
        f, r = F2[..., m].gather(1, order), r2.gather(1, order)
        same = r[:, 1:] == r[:, :-1]  # neighbours in the same front
        gap = torch.where(same, f[:, 1:] - f[:, :-1], torch.inf)
        to_last, to_next = torch.cat([inf, gap], 1), torch.cat([gap, inf], 1)
        low = torch.full((runs, n + 1), torch.inf, dtype=F.dtype, device=F.device).scatter_reduce(
            1, r, f, "amin")
        high = torch.full((runs, n + 1), -torch.inf, dtype=F.dtype, device=F.device).scatter_reduce(
            1, r, f, "amax")
        span = (high - low).gather(1, r)
        # pymoo: a range of 0 makes the objective's terms NaN, then 0 (ends included)
        term = torch.where(span > 0, (to_last + to_next) / torch.where(span > 0, span, 1), 0.0)
        dist.scatter_add_(1, order, term)
    dist = dist / M
    dist = torch.where(size.gather(1, r2) <= 2, torch.inf, dist)  # pymoo: fronts of <= 2 points
    return dist.reshape(*lead, n)


def non_dominated(F: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
    """Mask (..., n) of the points no other valid point dominates, among the `valid` ones
    (default: rows of finite values); a duplicate of a non-dominated point is kept too."""
    if valid is None:
        valid = torch.isfinite(F).all(-1)
    D = dominance(torch.where(valid[..., None], F, torch.inf)) & valid[..., :, None]
    return valid & ~D.any(-2)
