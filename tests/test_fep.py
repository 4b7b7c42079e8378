import math

import pytest
import torch

import heuriscale as hs
from heuriscale.algorithms.fep import FEP, learning_rates, survivors, tournament_wins


def test_learning_rates():
    tau, tau_prime = learning_rates(30)
    assert tau == pytest.approx(1 / math.sqrt(2 * math.sqrt(30)))
    assert tau_prime == pytest.approx(1 / math.sqrt(60))
    assert learning_rates(32) == pytest.approx((0.2973017787506803, 0.125))


def test_wins_counted_with_less_or_equal():
    f = torch.tensor([[1.0, 1.0, 2.0, 0.5]])
    torch.manual_seed(0)
    wins = tournament_wins(f, q=2000)
    share = wins.float() / 2000
    # P(win) = P(opponent's f >= own f): 1 -> 3/4 (ties win), 2 -> 1/4, 0.5 -> 1
    torch.testing.assert_close(share, torch.tensor([[0.75, 0.75, 0.25, 1.0]]), atol=0.03, rtol=0)
    assert wins[0, 3] == 2000


def test_exactly_n_survivors_ranked_by_wins_then_fitness():
    wins = torch.tensor([[3, 5, 5, 1, 5, 0]])
    f = torch.tensor([[0.1, 0.9, 0.3, 0.0, 0.5, 2.0]])
    keep = survivors(wins, f, 3)
    assert keep.shape == (1, 3) and keep.unique().numel() == 3
    assert sorted(keep[0].tolist()) == [1, 2, 4]  # most wins; among 5 wins all three
    assert sorted(survivors(wins, f, 2)[0].tolist()) == [2, 4]  # ties by fitness: 0.3, 0.5 beat 0.9


def test_mutation_uses_the_old_step_size(device):
    """x' - x = eta_old * delta: with a Gaussian the standardised steps are N(0, 1)."""
    problem = hs.get_problem("sphere", dim=20, bounds=(-1e6, 1e6)).to(device, torch.float64)
    algo = FEP(pop_size=500, mutation="gaussian", eta0=3.0)
    torch.manual_seed(0)
    s0 = algo.init(problem, 2)
    s0.eta = s0.eta * torch.rand_like(s0.eta).add(0.5)  # distinct step sizes per coordinate
    torch.manual_seed(1)
    delta = torch.randn_like(s0.x)  # the step draws the mutation first
    x_child = s0.x + s0.eta * delta
    torch.manual_seed(1)
    s1 = algo.step(problem, s0)
    # every survivor is a parent or exactly the predicted child of one
    union = torch.cat([s0.x, x_child], 1)
    matches = (s1.x[:, :, None, :] == union[:, None, :, :]).all(-1).any(-1)
    assert bool(matches.all())
    z = (x_child - s0.x) / s0.eta
    assert abs(float(z.std()) - 1.0) < 0.02


def test_step_size_lower_bound(device):
    problem = hs.get_problem("sphere", dim=5)
    runner = hs.Runner(problem, FEP(pop_size=20, eta0=1e-2, eta_min=5e-3), runs=2, seed=0, device=device, dtype="float64")
    runner.step(200)
    assert float(runner.state.eta.min()) >= 5e-3


def test_population_keeps_its_size_and_best(device):
    runner = hs.Runner("rastrigin", FEP(pop_size=30), dim=4, runs=3, seed=0, device=device)
    best = runner.state.f.min(-1).values
    for _ in range(20):
        runner.step()
        assert runner.state.x.shape == (3, 30, 4) and runner.state.eta.shape == (3, 30, 4)
        now = runner.state.f.min(-1).values
        assert bool((now <= best).all())  # the best individual always wins all its duels
        best = now


def test_fep_sphere_quality():
    """Yao et al.: mean best 5.7e-4 on f1 (D = 30, N = 100, 1500 generations)."""
    r = hs.minimize("sphere", FEP(pop_size=100), dim=30, iters=1500, runs=10, seed=0, device="cpu")
    assert float(r.best_f.mean()) <= 1e-3, r.best_f


@pytest.mark.slow  # minutes under load on 2 cores: `pytest -m slow`
def test_cauchy_beats_gaussian_on_schwefel_226():
    kw = dict(dim=30, iters=1500, runs=10, seed=0, device="cpu")
    cauchy = hs.minimize("schwefel-2.26", FEP(pop_size=100), **kw).best_f
    gauss = hs.minimize("schwefel-2.26", FEP(pop_size=100, mutation="gaussian"), **kw).best_f
    assert float(cauchy.median()) < float(gauss.median())


def test_profile_reports_paper_004_phases():
    r = hs.minimize("fep-f5", FEP(pop_size=64), iters=20, device="cpu", profile=True)
    phases = r.extra["phases"]
    assert set(phases) == {"mutation", "evaluation", "selection"}
    assert all(v > 0 for v in phases.values()) and sum(phases.values()) <= r.wall_time


def test_bad_parameters():
    with pytest.raises(ValueError, match="mutation must be 'cauchy' or 'gaussian'"):
        FEP(mutation="levy")
    with pytest.raises(ValueError, match="q \\(tournament opponents\\) must be an integer >= 1"):
        FEP(q=0)
    with pytest.raises(ValueError, match="eta0 must be > 0"):
        FEP(eta0=0.0)
    assert hs.get_algorithm("fep", preset="paper004").q == 10
