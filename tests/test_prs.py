import math

import pytest
import torch

import heuriscale as hs
from heuriscale.algorithms.prs import PRS, to_box

# Paper 000, Tables 2-5: (function, D, MaxIter, PopSize, CUDA score); bounds as in issue 3.
BOUNDS = {"rastrigin": (-5.12, 5.12), "sphere": (-5.12, 5.12), "rosenbrock": (-5, 10), "griewank": (-600, 600)}
PAPER_CUDA_ROWS = [
    ("rastrigin", 1, 10, 1024, 0.000137), ("rastrigin", 2, 100, 2048, 0.059208),
    ("rastrigin", 3, 8000, 1024, 0.104553), ("rastrigin", 4, 12000, 1024, 0.249476),
    ("sphere", 1, 10, 2048, 0.000001), ("sphere", 2, 200, 2048, 0.081354),
    ("sphere", 3, 2000, 2048, 0.199241), ("sphere", 4, 15000, 1024, 0.023390),
    ("rosenbrock", 1, 10, 1024, 0.000000), ("rosenbrock", 2, 1000, 2048, 0.271784),
    ("rosenbrock", 3, 20000, 2048, 0.022650), ("rosenbrock", 4, 50000, 2048, 0.015784),
]


def _prs_score(function, dim, iters, pop, device, runs=20):
    problem = hs.get_problem(function, dim=dim, bounds=BOUNDS[function])
    r = hs.minimize(problem, PRS(pop_size=pop), iters=iters, runs=runs, seed=0, device=device)
    return float(r.best_f.mean())


def test_one_step_follows_equations_9_to_12(device):
    problem = hs.get_problem("rastrigin", dim=3).to(device, torch.float64)
    algo = PRS(pop_size=4, max_iters=10)
    torch.manual_seed(0)
    s0 = algo.init(problem, 2)
    torch.manual_seed(1)
    r = 2.0 * torch.rand_like(s0.theta) - 1.0  # the numbers the step will draw
    torch.manual_seed(1)
    s1 = algo.step(problem, s0)
    for run in range(2):
        A = float(s0.apex[run])
        mu = math.sin((A + float(s0.f[run].mean())) / 2) / math.sin(A / 2)  # (10), radians
        for k in range(4):
            for j in range(3):
                E = float(s0.f[run, k]) - float(s0.theta[run, k, j]) + A  # (9), degrees
                sE, cA, sA = math.sin(math.radians(E)), math.cos(math.radians(A)), math.sin(math.radians(A))
                arg = -sE * cA + float(r[run, k, j]) * sA * math.sqrt(max(mu * mu - sE * sE, 0.0))
                expected = math.degrees(math.asin(min(1.0, max(-1.0, arg))))  # (11)
                assert float(s1.theta[run, k, j]) == pytest.approx(expected, abs=1e-9)
    torch.testing.assert_close(s1.apex, s0.apex)  # (12) with t = 0: exp(0)
    torch.testing.assert_close(s1.x, to_box(s1.theta, problem.lower, problem.upper))
    torch.testing.assert_close(s1.f, problem.evaluate(s1.x))


def test_angles_stay_in_range_and_apex_decays_as_eq_12(device):
    T, alpha = 40, 0.5
    runner = hs.Runner("sphere", PRS(pop_size=64, alpha=alpha, max_iters=T), dim=4, runs=3, seed=0,
                       device=device, dtype="float64")
    a0 = runner.state.apex.clone()
    lb, ub = -100.0, 100.0
    assert bool(((a0 >= lb + (ub - lb) * 15) & (a0 <= lb + (ub - lb) * 90)).all())  # (8)
    for t in range(1, T + 1):
        runner.step()
        s = runner.state
        assert bool(((s.theta >= -90) & (s.theta <= 90)).all())
        assert bool(((s.x >= lb) & (s.x <= ub)).all())
        # A_t = A_0 exp(-alpha (0 + 1 + ... + (t-1)) / T)
        expected = a0 * math.exp(-alpha * (t - 1) * t / 2 / T)
        torch.testing.assert_close(s.apex, expected, rtol=1e-12, atol=0)


def test_initial_population_is_uniform_in_the_box():
    problem = hs.TorchFunction(lambda x: x.sum(-1), 2, [0.0, -10.0], [1.0, 30.0])
    runner = hs.Runner(problem, PRS(pop_size=20000, max_iters=1), seed=0, device="cpu", dtype="float64")
    x = runner.state.x[0]
    for c, (lo, hi) in enumerate([(0.0, 1.0), (-10.0, 30.0)]):
        u = (x[:, c] - lo) / (hi - lo)
        assert 0 <= float(u.min()) and float(u.max()) <= 1
        assert abs(float(u.mean()) - 0.5) < 0.01 and abs(float(u.var()) - 1 / 12) < 0.005


def test_single_solution_prs_runs():
    r = hs.minimize("sphere", PRS(pop_size=1), dim=2, iters=300, runs=10, seed=0, device="cpu")
    assert torch.isfinite(r.best_f).all() and r.evals == 301


@pytest.mark.parametrize("row", [r for r in PAPER_CUDA_ROWS if r[2] <= 1000], ids=lambda r: f"{r[0]}-{r[1]}d")
def test_no_worse_than_paper_000_cuda_small_budgets(row):
    function, dim, iters, pop, paper = row
    assert _prs_score(function, dim, iters, pop, "cpu") <= paper + 1e-6


def test_rastrigin_2d_bar():
    assert _prs_score("rastrigin", 2, 100, 2048, "cpu") <= 0.03


@pytest.mark.slow
@pytest.mark.gpu
@pytest.mark.parametrize("row", [r for r in PAPER_CUDA_ROWS if r[2] > 1000], ids=lambda r: f"{r[0]}-{r[1]}d")
def test_no_worse_than_paper_000_cuda_large_budgets(row):
    """The paper's largest budgets (up to 2048 x 50,000 x 20 runs): a GPU's job."""
    if not torch.cuda.is_available():
        pytest.fail("GPU tests were selected (-m gpu) but torch sees no CUDA device")
    function, dim, iters, pop, paper = row
    assert _prs_score(function, dim, iters, pop, "cuda") <= paper


def test_bad_parameters():
    with pytest.raises(ValueError, match="alpha must be > 0"):
        PRS(alpha=0.0)
    with pytest.raises(ValueError, match="prs needs a population of at least 1"):
        PRS(pop_size=0)
    assert hs.get_algorithm("prs", preset="paper000").pop_size == 1024
