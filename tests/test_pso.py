import pytest
import torch

import heuriscale as hs
from heuriscale.algorithms.pso import PSO


def test_converges_on_sphere(device):
    r = hs.minimize("sphere", "pso", dim=10, iters=300, runs=5, seed=1, device=device)
    assert (r.best_f < 1e-6).all(), r.best_f


def test_converges_on_rosenbrock(device):
    r = hs.minimize("rosenbrock", PSO(pop_size=40), dim=2, iters=400, runs=10, seed=0, device=device, dtype="float64")
    assert (r.best_f < 1e-6).all(), r.best_f
    torch.testing.assert_close(r.best_x, torch.ones(10, 2, dtype=torch.float64), atol=1e-2, rtol=0)
    r10 = hs.minimize("rosenbrock", PSO(pop_size=100), dim=10, iters=2000, runs=5, seed=1, device=device)
    assert float(r10.best_f.median()) < 1.0, r10.best_f


def test_far_better_than_random_search():
    """With the same evaluations, PSO beats uniform sampling by orders of magnitude."""
    r = hs.minimize("rastrigin", PSO(pop_size=50), dim=10, iters=200, runs=5, seed=0, device="cpu")
    p = hs.get_problem("rastrigin", dim=10)
    g = torch.Generator().manual_seed(0)
    samples = p.lower + (p.upper - p.lower) * torch.rand(5, r.evals, 10, generator=g, dtype=torch.float64)
    random_best = p.evaluate(samples).min(1).values
    assert float(r.best_f.max()) < 0.25 * float(random_best.min())


@pytest.mark.parametrize("preset", [None, "paper001"])
def test_never_leaves_the_bounds(preset, device):
    # The optimum sits on the boundary of [1, 3]^4 and paper 001's w = 1, c = 2 swings wide.
    problem = hs.get_problem("sphere", dim=4, bounds=(1, 3))
    algo = hs.get_algorithm("pso", preset=preset, pop_size=32)
    runner = hs.Runner(problem, algo, runs=3, seed=0, device=device)
    lo, hi = runner.state.x.new_tensor(1.0), runner.state.x.new_tensor(3.0)
    for _ in range(100):
        runner.step()
        assert bool(((runner.state.x >= lo) & (runner.state.x <= hi)).all())
        assert bool((runner.state.v.abs() <= 2.0 + 1e-6).all())  # vmax = ub - lb
    assert float(runner.best_f.max()) == pytest.approx(4.0, abs=1e-3)


def test_personal_and_global_bests_are_consistent(device):
    runner = hs.Runner("rastrigin", PSO(pop_size=20), dim=3, runs=2, seed=4, device=device)
    previous = runner.state.pbest_f.clone()
    for _ in range(30):
        runner.step()
        s = runner.state
        assert bool((s.pbest_f <= previous).all())  # never worse
        improved = s.pbest_f < previous
        assert torch.equal(s.pbest_f[improved], s.f[improved])  # replaced only by the new value
        assert torch.equal(s.gbest_f, s.pbest_f.min(1).values)
        assert torch.equal(s.gbest_x, s.pbest_x[torch.arange(2), s.pbest_f.argmin(1)])
        previous = s.pbest_f.clone()


def test_defaults_and_paper_preset():
    assert (PSO().w, PSO().c1, PSO().c2) == (0.7298, 1.49618, 1.49618)
    paper = hs.get_algorithm("pso", preset="paper001")
    assert (paper.w, paper.c1, paper.c2) == (1.0, 2.0, 2.0)
    # Paper 001's w = 1, c1 = c2 = 2 does not contract the swarm (velocities stay near vmax),
    # while the constriction defaults converge: the preset really changes the dynamics.
    kw = dict(dim=2, runs=3, seed=0, device="cpu")
    paper_run = hs.Runner("euclidean", hs.get_algorithm("pso", preset="paper001", pop_size=50), **kw)
    default_run = hs.Runner("euclidean", PSO(pop_size=50), **kw)
    paper_run.step(200)
    default_run.step(200)
    assert float(paper_run.state.v.abs().mean()) > 10.0  # of vmax = 200
    assert float(default_run.state.v.abs().mean()) < 1e-3
    assert float(default_run.best_f.max()) < 1e-4 < float(paper_run.best_f.min())


def test_bad_parameters():
    with pytest.raises(ValueError, match="pso needs a population of at least 2, got pop_size=1"):
        PSO(pop_size=1)
    with pytest.raises(ValueError, match="vmax must be > 0"):
        PSO(vmax=0.0)
    with pytest.raises(ValueError, match="has no preset 'paper999'; its presets: paper001"):
        hs.get_algorithm("pso", preset="paper999")
    with pytest.raises(ValueError, match="has no parameter 'inertia'"):
        hs.get_algorithm("pso", inertia=0.5)
