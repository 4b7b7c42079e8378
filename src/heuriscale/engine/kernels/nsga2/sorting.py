"""NSGA-II's survival as Numba loops, one run at a time: the non-dominated sort, the crowding
distance and the order of survival, each giving what `algorithms/pareto.py` and
`algorithms/nsga2.py` give as tensors (the same ranks, the same distances bit for bit, the
same order).

The sort takes the points in lexicographic order of their objectives (as the efficient
non-dominated sort, ENS: X. Zhang, Y. Tian, R. Cheng and Y. Jin, IEEE Trans. Evol. Comput.
19(2), 2015), so that a point can only be dominated by points before it, and those before it
dominate it exactly when they are no worse in objectives 2..M (and not equal to it). A
point's front is then one past the highest front among its dominators (0 with none): the
longest chain of dominators, which is the front Deb's fast non-dominated sort gives. That is
O(M N^2) comparisons as Deb's sort, half of them, with no N x N matrix, and for two and three
objectives a branch-free loop over contiguous rows that the compiler vectorises (the list
scans of ENS proper chase pointers: measured 30 ms against this loop's few at 2,000 points). Constrained domination (Deb 2002,
Section V): the feasible points are sorted so, the infeasible ones come after them, one
front per distinct violation, the smallest first.
"""

from __future__ import annotations

import numpy as np

from ..cpu_common import stable_by
from ..cpu_jobs import inner


@inner
def survival_order(order, spare, n, rank, crowd, tie, vals):
    """order[:n]: the indices 0..n-1 by rank, then larger crowding, then the random key tie,
    then index (eager's three stable sorts; vals: scratch of n in crowd's dtype)."""
    for k in range(n):
        order[k] = k
        vals[k] = -crowd[k]
    stable_by(order, spare, n, tie)
    stable_by(order, spare, n, vals)
    stable_by(order, spare, n, rank)


@inner
def front_ranks(F, v, rank, order, spare, sorted_rank, S):
    """rank[i]: the front of point i of F (n, M) with violations v (n): 0 for the
    non-dominated points (see the module's docstring). order, spare, sorted_rank: int64
    scratch of n; S: F's dtype, (M, n). Returns the number of fronts."""
    n, M = F.shape
    feasible = 0
    for i in range(n):  # the feasible points first, in index order
        if v[i] <= 0:
            order[feasible] = i
            feasible += 1
    for m in range(M - 1, -1, -1):  # lexicographic: one stable pass per objective, the last first
        stable_by(order, spare, feasible, F[:, m])
    for t in range(feasible):  # the objectives in that order, each a contiguous row
        for m in range(M):
            S[m, t] = F[order[t], m]
    fronts, group = 0, 0
    for t in range(feasible):
        for m in range(M):  # equal points are neighbours: `group` is where t's equals begin
            if t > 0 and S[m, t] != S[m, t - 1]:
                group = t
                break
        # every point before `group` is lexicographically smaller: it dominates t iff it is no
        # worse in objectives 2..M. t's front: one past the highest front of those.
        r = -1
        if M == 1:
            r = sorted_rank[group - 1] if group > 0 else -1
        elif M == 2:
            b = S[1, t]
            for i in range(group):
                r = max(r, sorted_rank[i] if S[1, i] <= b else -1)
        elif M == 3:
            b, c = S[1, t], S[2, t]
            for i in range(group):
                r = max(r, sorted_rank[i] if (S[1, i] <= b) & (S[2, i] <= c) else -1)
        else:
            for i in range(group):
                if sorted_rank[i] > r:
                    no_worse = True
                    for m in range(1, M):
                        if S[m, i] > S[m, t]:
                            no_worse = False
                            break
                    if no_worse:
                        r = sorted_rank[i]
        sorted_rank[t] = r + 1
        rank[order[t]] = r + 1
        fronts = max(fronts, r + 2)
    infeasible = 0
    for i in range(n):  # then one front per distinct violation, the smallest first
        if not v[i] <= 0:
            order[infeasible] = i
            infeasible += 1
    stable_by(order, spare, infeasible, v)
    for t in range(infeasible):
        if t == 0 or v[order[t]] != v[order[t - 1]]:
            fronts += 1
        rank[order[t]] = fronts - 1
    return fronts


@inner
def crowding(F, rank, fronts, need, crowd, members, start, vals, order, spare):
    """crowd[i]: the crowding distance of point i within its front, pymoo's formula (see
    algorithms/pareto.py), for the points of the fronts that the best `need` points fill (0
    for the others). Returns the last of those fronts. members, order, spare: int64 scratch
    of n; start: of fronts + 2; vals: F's dtype, n."""
    n, M = F.shape
    T = F.dtype.type
    inf = T(np.inf)
    for k in range(fronts + 2):
        start[k] = 0
    for i in range(n):  # the points by front, each front in index order (a counting sort)
        start[rank[i] + 2] += 1
        crowd[i] = T(0.0)
    for k in range(2, fronts + 2):
        start[k] += start[k - 1]
    for i in range(n):
        members[start[rank[i] + 1]] = i
        start[rank[i] + 1] += 1
    last = 0
    while last < fronts - 1 and start[last + 1] < need:
        last += 1
    for k in range(last + 1):
        lo, size = start[k], start[k + 1] - start[k]
        for m in range(M):
            for t in range(size):
                vals[t] = F[members[lo + t], m]
                order[t] = t
            stable_by(order, spare, size, vals)
            span = vals[order[size - 1]] - vals[order[0]]
            for t in range(size):
                to_last = inf if t == 0 else vals[order[t]] - vals[order[t - 1]]
                to_next = inf if t == size - 1 else vals[order[t + 1]] - vals[order[t]]
                term = (to_last + to_next) / span if span > 0 else T(0.0)
                crowd[members[lo + order[t]]] += term
        for t in range(size):
            i = members[lo + t]
            crowd[i] = inf if size <= 2 else crowd[i] / T(M)
    return last
