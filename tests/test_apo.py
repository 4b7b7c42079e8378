import math

import pytest
import torch
from scipy import stats

import heuriscale as hs
from heuriscale.algorithms.apo import (
    APO,
    AUTOTROPH,
    DORMANCY,
    HETEROTROPH,
    REPRODUCTION,
    autotroph_pairs,
    exact_ones,
    heterotroph_pairs,
)
from heuriscale.engine.rng import RngStream


def test_exact_ones_counts_and_uniform_coordinates(device):
    torch.manual_seed(0)
    count = torch.randint(0, 11, (4000,), device=device)
    mask = exact_ones(count, 10)
    assert torch.equal(mask.sum(-1), count)
    # with 5 ones out of 10, every coordinate is chosen about half the time
    freq = exact_ones(torch.full((20000,), 5, device=device), 10).float().mean(0)
    assert bool(((freq - 0.5).abs() < 0.02).all()), freq


def test_autotroph_pairs_follow_rank_rules(device):
    torch.manual_seed(1)
    n = 6
    k_minus, k_plus = autotroph_pairs(500, n, 3, device)
    assert k_minus.shape == (500, n, 3)
    assert (k_minus[:, 0] == 0).all() and (k_plus[:, 0] >= 1).all()  # rank 1: k- = 1, k+ in 2..N
    assert (k_plus[:, -1] == n - 1).all() and (k_minus[:, -1] <= n - 2).all()  # rank N
    r = torch.arange(1, n - 1, device=device)[None, :, None]
    assert (k_minus[:, 1:-1] < r).all() and (k_plus[:, 1:-1] > r).all()  # k- < i < k+
    # every allowed index is drawn (uniform over its range)
    assert set(k_plus[:, 0].flatten().tolist()) == set(range(1, n))
    assert set(k_minus[:, -1].flatten().tolist()) == set(range(0, n - 1))
    assert set(k_minus[:, 3].flatten().tolist()) == {0, 1, 2}


def test_autotroph_pairs_stay_in_range_for_large_populations():
    k_minus, k_plus = autotroph_pairs(2, 100_000, 1, "cpu")
    r = torch.arange(100_000)[None, :, None]
    assert ((k_minus < r) | (r == 0)).all() and ((k_plus > r) | (r == 99_999)).all()
    assert k_plus.max() <= 99_999


def test_heterotroph_neighbours_are_clamped():
    minus, plus = heterotroph_pairs(5, 2, "cpu")
    assert minus.tolist() == [[0, 0], [0, 0], [1, 0], [2, 1], [3, 2]]
    assert plus.tolist() == [[1, 2], [2, 3], [3, 4], [4, 4], [4, 4]]


def _candidates(algo, problem, runs, seed=0, steps=0):
    problem = problem.to("cpu", torch.float64)
    with RngStream(torch.device("cpu"), seed):
        s = algo.init(problem, runs)
        for _ in range(steps):
            s = algo.step(problem, s)
        return s, algo.candidates(problem, s)


def test_dormancy_points_are_uniform_in_the_bounds():
    # Population crowded in one corner: dormancy still samples the whole box uniformly.
    problem = hs.TorchFunction(lambda x: (x * x).sum(-1), 3, [-1.0, 0.0, 10.0], [1.0, 5.0, 30.0])
    algo = APO(pop_size=400, pf_max=1.0, max_iters=10)
    s, _ = _candidates(algo, problem, 20)
    s.x = problem.lower.double() + 1e-3 * (s.x - problem.lower.double())
    with RngStream(torch.device("cpu"), 1):
        _, _, x_new, kind = algo.candidates(problem.to("cpu", torch.float64), s)
    points = x_new[kind == DORMANCY]
    assert points.shape[0] > 500
    for c in range(3):
        lo, hi = float(problem.lower[c]), float(problem.upper[c])
        assert bool(((points[:, c] >= lo) & (points[:, c] <= hi)).all())
        assert stats.kstest(points[:, c].numpy(), "uniform", args=(lo, hi - lo)).pvalue > 1e-3


def test_operator_shares_and_mapping_vector_sizes():
    problem = hs.get_problem("sphere", dim=12)
    algo = APO(pop_size=60, pf_max=0.1, max_iters=100)
    s, (x, f_sorted, x_new, kind) = _candidates(algo, problem, 200, steps=3)
    assert (f_sorted[:, 1:] >= f_sorted[:, :-1]).all()  # sorted, rank 1 first
    n_dr = ((kind == DORMANCY) | (kind == REPRODUCTION)).sum(1).float()
    # ceil(N * pf_max * U) ranks: between 0 and ceil(N pf_max), about 3.5 on average for N = 60
    assert n_dr.max() <= math.ceil(60 * 0.1) and 2.8 < float(n_dr.mean()) < 4.2
    # at t = 4 of 100, pah = (1 + cos(0.04 pi)) / 2 = 0.996: nearly all foragers are autotrophs
    foragers = (kind == AUTOTROPH) | (kind == HETEROTROPH)
    assert float((kind == AUTOTROPH).sum() / foragers.sum()) > 0.98
    # foragers move exactly ceil(D i / N) coordinates, i their rank
    changed = (x_new != x).sum(-1)
    ranks = torch.arange(1, 61).expand(200, 60)
    assert torch.equal(changed[foragers], ((12 * ranks + 59) // 60)[foragers])
    # reproduction moves between 1 and D coordinates
    moved = changed[kind == REPRODUCTION]
    assert moved.numel() > 20 and moved.min() >= 1 and moved.max() <= 12


def test_greedy_step_never_makes_an_individual_worse(device):
    algo = APO(pop_size=30, max_iters=50)
    runner = hs.Runner("rastrigin", algo, dim=5, runs=4, seed=0, device=device)
    for _ in range(50):
        before = runner.state.f.sort(-1).values  # the step works on the sorted population
        runner.step()
        assert bool((runner.state.f <= before).all())


@pytest.mark.slow  # 40 s of eager steps; the default run keeps the spring design's quality check
def test_apo_sphere_quality():
    r = hs.minimize("sphere", APO(pop_size=100), dim=30, iters=1000, runs=5, seed=0, device="cpu")
    assert float(r.best_f.median()) < 1e-12, r.best_f


def _spring_constraints(x):
    d, D, N = x[..., 0], x[..., 1], x[..., 2]
    return torch.stack([
        1 - D**3 * N / (71785 * d**4),
        (4 * D**2 - d * D) / (12566 * (D * d**3 - d**4)) + 1 / (5108 * d**2) - 1,
        1 - 140.45 * d / (D**2 * N),
        (d + D) / 1.5 - 1,
    ], -1)


def _spring_weight(x):
    d, D, N = x[..., 0], x[..., 1], x[..., 2]
    return (N + 2) * D * d**2


def test_apo_spring_design_with_static_penalty():
    penalised = hs.TorchFunction(
        lambda x: _spring_weight(x) + 1e4 * _spring_constraints(x).clamp(min=0).sum(-1),
        3, [0.05, 0.25, 2.0], [2.0, 1.3, 15.0], name="spring-penalised",
    )
    r = hs.minimize(penalised, APO(pop_size=50), iters=1000, runs=5, seed=0, device="cpu", dtype="float64")
    assert (_spring_constraints(r.best_x).max(-1).values < 1e-6).all()
    assert (_spring_weight(r.best_x) <= 0.01270).all(), _spring_weight(r.best_x)  # best known 0.0126652


def test_schedule_comes_from_the_budget():
    r = hs.minimize("sphere", "apo", dim=3, iters=20, device="cpu")
    assert r.algorithm["max_iters"] == 20
    r = hs.minimize("sphere", APO(pop_size=10), dim=3, evals=110, device="cpu")
    assert r.algorithm["max_iters"] == 10
    with pytest.raises(ValueError, match="apo schedules its steps over max_iters"):
        hs.minimize("sphere", "apo", dim=3, time_limit=0.1, device="cpu")
    r = hs.minimize("sphere", APO(max_iters=50, pop_size=10), dim=3, time_limit=0.05, device="cpu")
    assert r.algorithm["max_iters"] == 50
    with pytest.raises(ValueError, match="needs max_iters"):
        hs.Runner("sphere", "apo", dim=3)


def test_bad_parameters():
    with pytest.raises(ValueError, match="apo needs a population of at least 3"):
        APO(pop_size=2)
    with pytest.raises(ValueError, match=r"pf_max must lie in \[0, 1\]"):
        APO(pf_max=1.5)
    with pytest.raises(ValueError, match="np \\(neighbour pairs\\) must be an integer >= 1"):
        APO(np=0)
    with pytest.raises(ValueError, match="apo: max_iters must be > 0"):
        APO(max_iters=0)
    with pytest.raises(ValueError, match="prs: max_iters must be > 0"):
        hs.PRS(max_iters=-5)
    assert hs.get_algorithm("apo", preset="paper003").pf_max == 0.1
