"""NSGA-II's survival on CUDA: the operator `heuriscale::nsga2_survivors` in two Triton launches.

`algorithms/nsga2.py` defines the operator and its torch specification (`survivors_torch`):
the crowding distance of every point of R_t within its front (`pareto.crowding_distance`,
pymoo's formula), then the best N by rank, larger crowding and the tie keys, each a stable
sort, then gathers: about 50 small launches a generation in torch. Here each point finds its
place by counting instead of sorting:

- `_crowding_kernel`: per objective, a point's neighbours in its front sorted by that
  objective (ties in index order, the stable sort's) are the largest value before it and the
  smallest after it in that order, and the front's range is its minimum and maximum: one pass
  over the 2N points per objective, O((2N)^2 M) comparisons;
- `_survivors_kernel`: a point's place in P_t+1 is the number of points before it by (rank,
  larger crowding with NaN last as a sort puts it, tie key, index), O((2N)^2); a point
  whose place is below N writes its row there.

The sorts' O(N log N) beats the counting's O(N^2) on large sets, so above `MAX_POINTS` points
a run takes the torch specification (launches cost little beside that work there).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from .offspring_cuda import exact_div

#: Largest union R_t (2N points) counted by the kernels; larger ones are sorted by torch.
MAX_POINTS = 4096
BLOCK_I, BLOCK_J = 16, 128


@triton.jit
def _crowding_kernel(F_ptr, rank_ptr, dist_ptr, m2, M, BLOCK_I: tl.constexpr, BLOCK_J: tl.constexpr):
    run = tl.program_id(1).to(tl.int64)
    F_ptr += run * m2 * M
    rank_ptr += run * m2
    i = tl.program_id(0) * BLOCK_I + tl.arange(0, BLOCK_I)
    inside = i < m2
    ri = tl.load(rank_ptr + i, mask=inside, other=-1)
    dist = tl.zeros([BLOCK_I], dtype=F_ptr.dtype.element_ty)
    size = tl.zeros([BLOCK_I], dtype=tl.int32)
    for m in range(0, M):
        fi = tl.load(F_ptr + i * M + m, mask=inside, other=0.0)
        before = tl.full([BLOCK_I], -float("inf"), fi.dtype)  # the neighbour's value before i, after i
        after = tl.full([BLOCK_I], float("inf"), fi.dtype)
        has_after = tl.zeros([BLOCK_I], dtype=tl.int1)
        low = tl.full([BLOCK_I], float("inf"), fi.dtype)
        high = tl.full([BLOCK_I], -float("inf"), fi.dtype)
        for j0 in range(0, m2, BLOCK_J):
            j = j0 + tl.arange(0, BLOCK_J)
            rj = tl.load(rank_ptr + j, mask=j < m2, other=-2)
            fj = tl.load(F_ptr + j * M + m, mask=j < m2, other=0.0)
            same = rj[None, :] == ri[:, None]
            fj2, fi2 = fj[None, :] + tl.zeros([BLOCK_I, BLOCK_J], fi.dtype), fi[:, None]
            j2, i2 = j[None, :], i[:, None]
            earlier = same & ((fj2 < fi2) | ((fj2 == fi2) & (j2 < i2)))
            later = same & ((fj2 > fi2) | ((fj2 == fi2) & (j2 > i2)))
            before = tl.maximum(before, tl.max(tl.where(earlier, fj2, -float("inf")), 1))
            after = tl.minimum(after, tl.min(tl.where(later, fj2, float("inf")), 1))
            has_after = has_after | (tl.sum(later.to(tl.int32), 1) > 0)
            low = tl.minimum(low, tl.min(tl.where(same, fj2, float("inf")), 1))
            high = tl.maximum(high, tl.max(tl.where(same, fj2, -float("inf")), 1))
            if m == 0:
                size += tl.sum(same.to(tl.int32), 1)
        to_last = fi - before  # inf at the front's first point (before = -inf)
        to_next = tl.where(has_after, after - fi, float("inf"))
        span = high - low
        dist += tl.where(span > 0, exact_div(to_last + to_next, tl.where(span > 0, span, 1.0)), 0.0)
    dist = exact_div(dist, tl.zeros_like(dist) + M)
    tl.store(dist_ptr + run * m2 + i, tl.where(size <= 2, float("inf"), dist), mask=inside)


@triton.jit
def _survivors_kernel(x_ptr, F_ptr, rank_ptr, crowd_ptr, v_ptr, tie_ptr,
                      x_out, F_out, rank_out, crowd_out, v_out, m2, n, dim, M,
                      BLOCK_I: tl.constexpr, BLOCK_J: tl.constexpr, BLOCK_D: tl.constexpr):
    run = tl.program_id(1).to(tl.int64)
    rank_ptr += run * m2
    crowd_ptr += run * m2
    tie_ptr += run * m2
    i = tl.program_id(0) * BLOCK_I + tl.arange(0, BLOCK_I)
    inside = i < m2
    ri = tl.load(rank_ptr + i, mask=inside, other=0)
    ci = tl.load(crowd_ptr + i, mask=inside, other=0.0)
    ti = tl.load(tie_ptr + i, mask=inside, other=0.0)
    place = tl.zeros([BLOCK_I], dtype=tl.int32)
    for j0 in range(0, m2, BLOCK_J):
        j = j0 + tl.arange(0, BLOCK_J)
        rj = tl.load(rank_ptr + j, mask=j < m2, other=0)[None, :]
        cj = tl.load(crowd_ptr + j, mask=j < m2, other=0.0)[None, :]
        tj = tl.load(tie_ptr + j, mask=j < m2, other=0.0)[None, :]
        r2, c2, t2, i2 = ri[:, None], ci[:, None], ti[:, None], i[:, None]
        nan_j, nan_i = cj != cj, c2 != c2
        larger = (cj > c2) | (nan_i & ~nan_j)  # -crowding sorted ascending: NaN last
        equal = (cj == c2) | (nan_i & nan_j)
        first = (rj < r2) | ((rj == r2) & (larger | (equal & ((tj < t2) | ((tj == t2) & (j[None, :] < i2))))))
        place += tl.sum((first & (j < m2)[None, :]).to(tl.int32), 1)
    kept = inside & (place < n)
    to = run * n + place.to(tl.int64)
    src = run * m2 + i.to(tl.int64)
    tl.store(rank_out + to, ri, mask=kept)
    tl.store(crowd_out + to, ci, mask=kept)
    tl.store(v_out + to, tl.load(v_ptr + src, mask=kept, other=0.0), mask=kept)
    for d0 in range(0, dim, BLOCK_D):
        d = d0 + tl.arange(0, BLOCK_D)
        both = kept[:, None] & (d < dim)[None, :]
        tl.store(x_out + to[:, None] * dim + d[None, :], tl.load(x_ptr + src[:, None] * dim + d[None, :], mask=both),
                 mask=both)
    for m0 in range(0, M, BLOCK_D):
        m = m0 + tl.arange(0, BLOCK_D)
        both = kept[:, None] & (m < M)[None, :]
        tl.store(F_out + to[:, None] * M + m[None, :], tl.load(F_ptr + src[:, None] * M + m[None, :], mask=both),
                 mask=both)


def survivors_cuda(x: torch.Tensor, F: torch.Tensor, rank: torch.Tensor, violation: torch.Tensor, tie: torch.Tensor,
                   n: int):
    """`heuriscale::nsga2_survivors` (see `algorithms/nsga2.py`): two launches up to `MAX_POINTS`
    points a run, the torch specification above."""
    from ....algorithms.nsga2 import survivors_torch

    runs, m2, dim = x.shape
    M = F.shape[2]
    if m2 > MAX_POINTS or runs == 0 or n == 0:
        return survivors_torch(x, F, rank, violation, tie, n)
    x, F, rank, violation, tie = (t.contiguous() for t in (x, F, rank, violation, tie))
    crowd = torch.empty_like(F[..., 0])
    grid = (triton.cdiv(m2, BLOCK_I), runs)
    _crowding_kernel[grid](F, rank, crowd, m2, M, BLOCK_I=BLOCK_I, BLOCK_J=BLOCK_J, num_warps=4)
    outs = (x.new_empty(runs, n, dim), F.new_empty(runs, n, M), rank.new_empty(runs, n), crowd.new_empty(runs, n),
            violation.new_empty(runs, n))
    _survivors_kernel[grid](x, F, rank, crowd, violation, tie, *outs, m2, n, dim, M, BLOCK_I=BLOCK_I,
                            BLOCK_J=BLOCK_J, BLOCK_D=min(64, triton.next_power_of_2(max(dim, M))), num_warps=4)
    return outs

