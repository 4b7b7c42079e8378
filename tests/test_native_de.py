"""DE's native CPU kernel (`engine="native"`, engine/kernels/de/cpu.py) against the eager step.

With eager's own random numbers fed in (the kernel takes eager's index arithmetic from the
same uniforms), one native generation must give the eager one, for both strategies and both
repairs; the archive, which the two fill in different orders, must hold the same rows as a
set where it did not overflow, else only rows it may hold. With its Philox stream, runs must
converge like eager runs (test_native.py checks every kernel alike for the rest: threads,
problems inline or between kernel calls, NaN, chunks of steps and checkpoints).
"""

import numba
import numpy as np
import pytest
import torch
from scipy import stats

import heuriscale as hs
from heuriscale.algorithms import de
from heuriscale.engine.kernels.de import cpu

PROBLEMS = {  # inline, and evaluated by the problem between kernel calls
    "rastrigin": lambda: hs.get_problem("rastrigin", dim=5),
    "sphere-shifted": lambda: hs.get_problem("sphere", dim=7, shift=1),
}
VARIANTS = {
    "rand/1, midpoint": dict(strategy="rand/1"),
    "rand/1, random": dict(strategy="rand/1", repair="random", F=0.9),
    "pbest, midpoint": dict(strategy="current-to-pbest/1", p=0.1),
    "pbest, random": dict(strategy="current-to-pbest/1", repair="random", F=0.9),
}


def _eager_numbers(algo, state, dim, seed):
    """The numbers eager DE.ask draws after torch.manual_seed(seed), in its order, as the
    kernel's hooks take them: the indices' uniforms and jrand, the crossover's and the
    random repair's uniforms."""
    runs, n, _ = state.x.shape
    torch.manual_seed(seed)
    if algo.strategy == "rand/1":  # distinct_others: one float64 draw per pick
        u = [torch.rand(runs, n, 1, dtype=torch.float64)[..., 0] for _ in range(3)]
    else:  # current_to_pbest: below() for the p-best, r1, r2
        u = [torch.rand((runs, n), dtype=torch.float64) for _ in range(3)]
    cross = torch.rand_like(state.x)
    jrand = torch.randint(0, dim, (runs, n, 1))[..., 0]
    fresh = torch.rand_like(state.x) if algo.repair == "random" else None
    return torch.stack([*u, jrand.double()], -1).contiguous(), cross, fresh


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_one_native_generation_equals_the_eager_one_with_the_same_random_numbers(name, variant, dtype):
    algo = hs.DE(pop_size=300, **VARIANTS[variant])  # more than one block of rows, not a multiple of one
    problem = PROBLEMS[name]()
    runner = hs.Runner(problem, algo, runs=2, seed=5, device="cpu", dtype=dtype, engine="native")
    native = runner._kernels
    assert runner._engine_used() == "native" and bool(native.fitness) == (name == "rastrigin")
    eps = torch.finfo(getattr(torch, dtype)).eps
    scale = float(torch.maximum(runner.problem.lower.abs(), runner.problem.upper.abs()).max())
    for k in range(4):
        before = native.prepare(runner.state)  # a copy
        best_before = runner.best_f.clone()
        native.given_index, native.given_cross, native.given_fresh = _eager_numbers(algo, before, problem.dim, 100 + k)
        runner.step(1)
        torch.manual_seed(100 + k)
        expected = algo.step(runner._guarded, before)
        f_scale = float(expected.f.abs().max())
        torch.testing.assert_close(runner.state.x, expected.x, rtol=64 * eps, atol=64 * eps * scale)
        torch.testing.assert_close(runner.state.f, expected.f, rtol=64 * eps, atol=64 * eps * f_scale)
        torch.testing.assert_close(runner.best_f, torch.minimum(best_before, expected.f.amin(-1)),
                                   rtol=64 * eps, atol=64 * eps * f_scale)
        got_n, want_n = runner.state.archive_n, expected.archive_n
        assert torch.equal(got_n, want_n)
        for run in range(2):  # the archive's rows: eager's as a set, or (overflowed) rows it could hold
            got = runner.state.archive[run, :int(got_n[run])]
            joined = before.x[run][expected.f[run] < before.f[run]]
            candidates = torch.cat([before.archive[run, :int(before.archive_n[run])], joined])
            want = expected.archive[run, :int(want_n[run])]
            if candidates.shape[0] <= before.archive.shape[1]:
                assert torch.equal(_sorted_rows(got), _sorted_rows(want))
            else:
                assert all((candidates == row).all(-1).any() for row in got)
                assert len({tuple(row.tolist()) for row in got}) == got.shape[0]  # none kept twice
    assert runner.iteration == 4 and int(runner._it) == 4
    if algo.strategy != "rand/1":
        assert (runner.state.archive_n > 0).all()


def _sorted_rows(rows):
    return rows[np.lexsort(rows.numpy().T[::-1])] if rows.shape[0] else rows


@pytest.mark.parametrize("n, archive_n, avoid", [(4, 0, False), (7, 3, False), (9, 5, True), (300, 600, True)])
def test_the_index_arithmetic_is_eagers(n, archive_n, avoid):
    """distinct_three and pbest_places against eager's distinct_others and current_to_pbest
    on the same uniforms, each member, including draws of 0 and just below 1."""
    rng = np.random.default_rng(n)
    u = rng.random((n, 3))
    u[0], u[-1] = 0.0, 1 - 2**-33
    torch.manual_seed(0)
    # eager: distinct_others with torch.rand patched to give these numbers
    draws = iter([torch.from_numpy(u[:, m].copy()).reshape(1, n, 1) for m in range(3)])
    real = torch.rand
    try:
        torch.rand = lambda *a, **k: next(draws)
        want = de.distinct_others(1, n, 3, "cpu")[0]
    finally:
        torch.rand = real
    for i in range(n):
        assert list(cpu.distinct_three(i, n, *u[i])) == want[i].tolist()
    best = max(2, n // 5)
    for i in range(n):  # eager's formulas, member at place i of the order
        k = min(int(np.floor(u[i, 0] * (best - (avoid and i < best)))), best - (avoid and i < best) - 1)
        k += (avoid and i < best) and k >= i
        r1 = min(int(np.floor(u[i, 1] * (n - 1))), n - 2)
        r1 += r1 >= i
        r2 = min(int(np.floor(u[i, 2] * (n + archive_n - 2))), n + archive_n - 3)
        r2 += r2 >= min(i, r1)
        r2 += r2 >= max(i, r1)
        got = cpu.pbest_places(i, n, best, archive_n, avoid, *u[i])
        assert list(got) == [k, r1, r2]
        assert got[1] != i and got[2] not in (i, got[1]) and (not (avoid and i < best) or got[0] != i)


@numba.njit
def _reservoir(*args):  # (cpu.reservoir has no Python entry point: only kernels call it)
    return cpu.reservoir(*args)


def test_the_archive_keeps_a_uniform_random_subset():
    """The reservoir over members and newcomers: every candidate equally likely to stay."""
    runs, capacity, members, dim = 4000, 5, 4, 1
    archive = np.zeros((runs, capacity, dim))
    archive[:, :members, 0] = np.arange(members)
    parents = np.arange(members, members + 6, dtype=np.float64)  # 6 newcomers (one row each)
    joined = np.ones(6, np.bool_)
    kept = np.zeros(members + 6)
    for run in range(runs):
        size = _reservoir(archive, members, run, capacity, parents, joined, 7, 3)
        assert size == capacity
        values = archive[run, :, 0].astype(int)
        assert len(set(values)) == capacity
        kept[values] += 1
    share = kept / runs  # each of the 10 candidates stays with chance 5 / 10
    assert np.abs(share - 0.5).max() < 0.04
    shrink = np.zeros((1, 6, 1))
    shrink[0, :, 0] = np.arange(6)
    assert _reservoir(shrink, 6, 0, 3, parents, np.zeros(6, np.bool_), 7, 3) == 3  # a smaller capacity
    assert len(set(shrink[0, :3, 0])) == 3


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_native_runs_converge_like_eager_runs(variant):
    kw = dict(dim=10, iters=150, runs=30, device="cpu")
    algo = hs.DE(pop_size=40, **VARIANTS[variant])
    eager = hs.minimize("rastrigin", algo, engine="eager", seed=0, **kw)
    native = hs.minimize("rastrigin", algo, engine="native", seed=1, **kw)
    assert native.extra["engine"] == "native"
    assert stats.mannwhitneyu(eager.best_f.numpy(), native.best_f.numpy()).pvalue > 1e-3
    assert native.best_f.median() < 0.5 * native.history_f[:, 0].median()


def test_a_broken_archive_or_mutation_would_be_seen():
    """On the sphere, JADE's mutation with its archive converges far faster than rand/1 at
    the same F, CR and budget; a kernel that ignored the strategy would not."""
    kw = dict(dim=20, iters=200, runs=10, device="cpu", engine="native", seed=2)
    rand1 = hs.minimize("sphere", hs.DE(pop_size=50), **kw)
    pbest = hs.minimize("sphere", hs.DE(pop_size=50, strategy="current-to-pbest/1"), **kw)
    assert float(pbest.best_f.max()) < 1e-3 * float(rand1.best_f.min())


def test_trials_stay_in_the_box_with_either_repair():
    for repair in de.REPAIRS:
        problem = hs.get_problem("sphere", dim=4, bounds=(-1, 1), shift=0)  # (F = 1.5: many trials leave the box)
        runner = hs.Runner(problem, hs.DE(pop_size=30, F=1.5, repair=repair), runs=3, seed=0, device="cpu",
                           engine="native")
        for _ in range(20):
            runner.step(1)
            trial = runner._kernels.trial
            assert ((trial >= -1) & (trial <= 1)).all() and ((runner.state.x >= -1) & (runner.state.x <= 1)).all()


@pytest.mark.parametrize("base", [hs.DE, hs.CMAES])
def test_a_renamed_subclass_runs_eagerly_and_says_why(base):
    """The kernels compute the algorithm as written: a subclass (renamed or not) that may change
    its step is refused by them with a reason, not run by them, nor looked up in a missing folder."""
    import dataclasses

    from heuriscale.engine.kernels import why_not_native

    sub = dataclasses.dataclass(kw_only=True)(type(f"My{base.__name__}", (base,), {"name": f"my{base.name}"}))
    problem = hs.get_problem("sphere", dim=3)
    reason = why_not_native(sub(pop_size=10), problem, torch.device("cpu"))
    assert reason is not None and f"My{base.__name__} changes it" in reason
    assert why_not_native(base(pop_size=10), problem, torch.device("cpu")) is None
    r = hs.minimize(problem, sub(pop_size=10), iters=5, device="cpu", engine="auto", seed=0)
    assert r.extra["engine"] == "eager"
