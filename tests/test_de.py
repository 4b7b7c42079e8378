"""Differential Evolution (DE/rand/1/bin): its equations, its choices, and scipy's DE as a
reference we did not write. The behaviour every algorithm shares is tested in
test_every_algorithm.py."""

import itertools

import numpy as np
import pytest
import torch
from scipy import stats
from scipy.optimize import differential_evolution

import heuriscale as hs
from heuriscale.algorithms.de import distinct_others, random_repair


def test_the_three_vectors_are_distinct_others_drawn_uniformly():
    torch.manual_seed(0)
    n, draws = 6, 30_000
    idx = distinct_others(draws, n, 3, "cpu")  # (draws, n, 3)
    own = torch.arange(n)[None, :, None]
    assert (idx != own).all() and (idx >= 0).all() and (idx < n).all()
    ordered = idx.sort(-1).values
    assert (ordered[..., 1:] != ordered[..., :-1]).all()
    # each of the 3 draws is uniform over the n - 1 others, and so is every ordered triple
    for slot in range(3):
        counts = torch.bincount(idx[:, 2, slot], minlength=n).numpy()
        assert counts[2] == 0 and stats.chisquare(np.delete(counts, 2)).pvalue > 1e-3
    triples = idx[:, 0].tolist()
    counts = np.array([sum(1 for t in triples if tuple(t) == p) for p in itertools.permutations(range(1, n), 3)])
    assert stats.chisquare(counts).pvalue > 1e-3


def _logged(fn, dim, lower, upper, log):
    def evaluate(x):
        log.append(x.detach().clone())
        return fn(x)

    return hs.TorchFunction(evaluate, dim, lower, upper, name="logged")


def test_a_trial_is_mutation_then_crossover_then_the_midpoint_repair():
    """With CR = 1 a trial is v_i = x_r1 + F (x_r2 - x_r3) for some three others (2), each
    coordinate outside the box set to the midpoint of x_ij and the bound (the repair)."""
    log = []
    problem = _logged(lambda x: x.sum(-1), 1, 0.0, 1.0, log)
    runner = hs.Runner(problem, hs.DE(pop_size=4, F=10.0, CR=1.0), runs=50, seed=3, device="cpu", dtype="float64")
    x = runner.state.x.clone()
    runner.step()
    trials, repaired = log[-1], 0
    for run in range(50):
        for i in range(4):
            others = [j for j in range(4) if j != i]
            xi = float(x[run, i, 0])
            expected = []
            for r1, r2, r3 in itertools.permutations(others):
                v = float(x[run, r1, 0] + 10.0 * (x[run, r2, 0] - x[run, r3, 0]))
                expected.append((0.0 + xi) / 2 if v < 0 else (1.0 + xi) / 2 if v > 1 else v)
            u = float(trials[run, i, 0])
            assert any(abs(u - e) < 1e-12 for e in expected), (run, i, u, expected)
            repaired += u in ((0.0 + xi) / 2, (1.0 + xi) / 2)
    assert repaired > 50  # the repair was exercised


def test_crossover_takes_one_coordinate_of_the_mutant_at_least():
    """CR = 0: exactly the coordinate jrand_i comes from v_i, the others from x_i (4)."""
    log = []
    problem = _logged(lambda x: (x * x).sum(-1), 6, -1e6, 1e6, log)  # a box no trial leaves
    runner = hs.Runner(problem, hs.DE(pop_size=8, CR=0.0), runs=20, seed=1, device="cpu", dtype="float64")
    x = runner.state.x.clone()
    runner.step()
    changed = (log[-1] != x).sum(-1)
    assert (changed == 1).all()


def test_selection_keeps_the_parent_unless_the_trial_is_strictly_better():
    flat = hs.TorchFunction(lambda x: torch.zeros(x.shape[:-1], dtype=x.dtype), 3, -1.0, 1.0, name="flat")
    runner = hs.Runner(flat, hs.DE(pop_size=10), runs=2, seed=0, device="cpu")
    x = runner.state.x.clone()
    runner.step(5)
    assert torch.equal(runner.state.x, x)


@pytest.mark.parametrize("bad, message", [
    (dict(F=0.0), "de: F must be > 0"), (dict(F=float("nan")), "de: F must be > 0"),
    (dict(CR=1.5), r"de: CR must lie in \[0, 1\]"), (dict(CR="x"), r"de: CR must lie in \[0, 1\]"),
    (dict(pop_size=3), "de needs a population of at least 4"),
    (dict(repair="clip"), "de: repair must be one of midpoint, random, got 'clip'"),
])
def test_bad_parameters_are_refused_clearly(bad, message):
    with pytest.raises(ValueError, match=message):
        hs.DE(**bad)


@pytest.mark.parametrize("function", ["sphere", "rastrigin"])
def test_runs_like_scipys_rand1bin_at_the_same_budget(function):
    """scipy.optimize.differential_evolution (strategy rand1bin, one generation at a time,
    no polishing) is a DE we did not write: at the same population, generations, F and CR
    our final values must come from the same distribution, with scipy's repair (a coordinate
    that leaves the box is drawn anew in it) and with ours (the midpoint: equal in
    distribution on these functions, whose optima lie in the middle of the box). A DE with
    a crossover rate far from scipy's must be told apart: the check has power."""
    dim, pop, gens, runs = 5, 30, 60, 30
    problem = hs.get_problem(function, dim=dim, bounds=(-5.12, 5.12))

    def ours(**settings):
        return hs.minimize(problem, hs.DE(pop_size=pop, F=0.5, **{"CR": 0.9, **settings}), iters=gens, runs=runs,
                           seed=0, device="cpu", dtype="float64").best_f.numpy()

    def f(x):  # scipy's vectorized call: x is (dim, S)
        return problem.evaluate(torch.from_numpy(np.ascontiguousarray(x.T))).numpy()

    theirs = np.array([
        differential_evolution(f, [(-5.12, 5.12)] * dim, strategy="rand1bin", maxiter=gens, popsize=pop // dim,
                               tol=0, mutation=0.5, recombination=0.9, rng=seed, polish=False, init="random",
                               updating="deferred", vectorized=True).fun
        for seed in range(runs)
    ])
    for repair in ("random", "midpoint"):
        mine = ours(repair=repair)
        assert stats.mannwhitneyu(mine, theirs).pvalue > 1e-3, (repair, np.median(mine), np.median(theirs))
        assert np.median(mine) < np.median(f(np.random.default_rng(0).uniform(-5.12, 5.12, (dim, pop))))  # it optimises
    assert stats.mannwhitneyu(ours(CR=0.1), theirs).pvalue < 1e-3  # a different DE is detected


def test_random_repair_draws_outside_coordinates_anew_in_the_box():
    problem = hs.get_problem("sphere", dim=3, bounds=(-1, 1))
    u = torch.tensor([[[0.5, -3.0, 7.0]]]).expand(2000, 1, 3)
    fixed = random_repair(problem, u)
    assert torch.equal(fixed[..., 0], u[..., 0])  # inside: untouched
    moved = fixed[..., 1:].flatten()
    assert ((moved >= -1) & (moved <= 1)).all()
    assert stats.kstest(moved.numpy(), stats.uniform(-1, 2).cdf).pvalue > 1e-3  # uniform in the box, not clipped


# -- JADE's current-to-pbest/1 with archive (strategy="current-to-pbest/1") ---------------------
def test_current_to_pbest_draws_what_jade_says():
    from heuriscale.algorithms.de import current_to_pbest

    torch.manual_seed(0)
    runs, n, a = 400, 10, 6
    x = torch.arange(n, dtype=torch.float64)[None, :, None].expand(runs, n, 1).clone()  # x_i = i
    archive = (100 + torch.arange(a, dtype=torch.float64))[None, :, None].expand(runs, a, 1).clone()
    f = torch.rand(runs, n, dtype=torch.float64)
    order, count = f.argsort(-1), torch.full((runs,), n)
    archive_n = torch.randint(0, a + 1, (runs,))
    best = torch.full((runs,), 3)
    ones, zeros = torch.ones(runs, n, dtype=torch.float64), torch.zeros(runs, n, dtype=torch.float64)
    # Fw = 1, F = 0: v = x_pbest, one of the 3 best
    pbest = current_to_pbest(x, order, count, best, archive, archive_n, zeros, ones)[..., 0].long()
    assert (f.gather(1, pbest) <= f.sort(-1).values[:, 2:3]).all()
    # Fw = 0, F = 1: v - x_i = x_r1 - x_r2 with r1 in P \ {i}, r2 in P ∪ A \ {i, r1}; A's first archive_n only
    diff = current_to_pbest(x, order, count, best, archive, archive_n, ones, zeros)[..., 0] - x[..., 0]
    # recover r1, r2: r1 = diff + r2; r2 either a population index 0..9 or an archive value 100..105
    seen_archive = 0
    for r in range(runs):
        for i in range(n):
            d = float(diff[r, i])
            pairs = [(r1, r2) for r1 in range(n) for r2 in list(range(n)) + [100 + k for k in range(int(archive_n[r]))]
                     if r1 - r2 == d and r1 != i and r2 != i and r2 != r1]
            assert pairs, (r, i, d)
            seen_archive += d < -50
    assert seen_archive > 0  # the archive is drawn from


def test_the_archive_keeps_replaced_parents_up_to_its_size():
    from heuriscale.algorithms.de import archive_keep

    archive, count = torch.zeros(2, 4, 1), torch.tensor([3, 0])
    parents = torch.arange(1, 6, dtype=torch.float32)[None, :, None].expand(2, 5, 1)
    joined = torch.tensor([[True, True, False, False, False], [True, False, True, False, False]])
    kept, n = archive_keep(archive, count, parents, joined, torch.tensor([4, 4]))
    assert n.tolist() == [4, 2]
    assert set(kept[1, :2, 0].tolist()) == {1.0, 3.0}  # run 1: both newcomers, first
    run0 = kept[0, :4, 0].tolist()  # run 0: 4 of its 3 members (0) and 2 newcomers (1, 2)
    assert set(run0) <= {0.0, 1.0, 2.0} and 2 <= run0.count(0.0) <= 3


def test_jade_strategy_runs_keeps_an_archive_and_converges_faster_than_rand_1():
    problem = hs.get_problem("rosenbrock", dim=10, shift=1)
    kw = dict(evals=30_000, runs=8, seed=3, device="cpu", dtype="float64")
    jade = hs.minimize(problem, hs.DE(pop_size=50, strategy="current-to-pbest/1"), **kw)
    rand = hs.minimize(problem, hs.DE(pop_size=50), **kw)
    opt = problem.optimum_f
    assert float((jade.best_f - opt).median()) < 0.1 * float((rand.best_f - opt).median())
    runner = hs.Runner("sphere", hs.DE(pop_size=20, strategy="current-to-pbest/1"), dim=4, runs=2, seed=0, device="cpu")
    runner.step(30)
    assert runner.state.archive.shape == (2, 20, 4) and (runner.state.archive_n > 0).all()


@pytest.mark.parametrize("bad, says", [(dict(strategy="best/2"), "strategy must be one of rand/1, current-to-pbest/1"),
                                       (dict(p=0.0), r"de: p must lie in \(0, 1\]")])
def test_bad_strategy_settings_are_refused(bad, says):
    with pytest.raises(ValueError, match=says):
        hs.DE(**bad)
