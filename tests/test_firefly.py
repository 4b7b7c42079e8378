import math

import pytest
import torch

import heuriscale as hs
from heuriscale.algorithms.firefly import Firefly

LB, UB = -2.0, 2.0


def _reference_synchronous(x, f, alpha, beta0, gamma, u):
    """Straightforward double loop: previous positions, one noise vector per firefly."""
    n, d = len(x), len(x[0])
    out = []
    for i in range(n):
        new = list(x[i])
        moved = False
        for j in range(n):
            if f[j] < f[i]:
                moved = True
                r2 = sum((x[i][k] - x[j][k]) ** 2 for k in range(d))
                b = beta0 * math.exp(-gamma * r2)
                for k in range(d):
                    new[k] += b * (x[j][k] - x[i][k])
        if moved:
            new = [v + alpha * u[i][k] for k, v in enumerate(new)]
        out.append([min(UB, max(LB, v)) for v in new])
    return out


def _reference_sequential(x, f, alpha, beta0, gamma, noise):
    """Paper 002's CPU listing: in place, pair by pair, clip after each move."""
    x = [list(row) for row in x]
    n, d = len(x), len(x[0])
    for i in range(n):
        for j in range(n):
            if f[j] < f[i]:
                r2 = sum((x[i][k] - x[j][k]) ** 2 for k in range(d))
                b = beta0 * math.exp(-gamma * r2)
                x[i] = [min(UB, max(LB, x[i][k] + b * (x[j][k] - x[i][k]) + alpha * noise[i][j][k])) for k in range(d)]
    return x


@pytest.mark.parametrize("update", ["synchronous", "sequential"])
def test_matches_double_loop_reference(update, device):
    problem = hs.get_problem("rastrigin", dim=3, bounds=(LB, UB)).to(device, torch.float64)
    algo = Firefly(pop_size=6, alpha=0.3, beta0=0.8, gamma=0.5, scale="absolute", update=update)
    torch.manual_seed(0)
    s0 = algo.init(problem, 1)
    torch.manual_seed(1)  # the step's random numbers, drawn the same way
    if update == "synchronous":
        u = (2.0 * torch.rand_like(s0.x) - 1.0)[0].tolist()
        expected = _reference_synchronous(s0.x[0].tolist(), s0.f[0].tolist(), 0.3, 0.8, 0.5, u)
    else:
        noise = (2.0 * torch.rand(1, 6, 6, 3, device=device, dtype=torch.float64) - 1.0)[0].tolist()
        expected = _reference_sequential(s0.x[0].tolist(), s0.f[0].tolist(), 0.3, 0.8, 0.5, noise)
    torch.manual_seed(1)
    s1 = algo.step(problem, s0)
    torch.testing.assert_close(s1.x[0].cpu(), torch.tensor(expected, dtype=torch.float64), rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(s1.f, problem.evaluate(s1.x))


def test_only_brighter_fireflies_attract_and_the_brightest_stays(device):
    problem = hs.get_problem("sphere", dim=2, bounds=(LB, UB)).to(device, torch.float64)
    algo = Firefly(pop_size=5, alpha=0.5, beta0=1.0, gamma=0.01)
    torch.manual_seed(0)
    s0 = algo.init(problem, 3)
    s1 = algo.step(problem, s0)
    best = s0.f.argmin(-1)
    for r in range(3):
        assert torch.equal(s1.x[r, best[r]], s0.x[r, best[r]])
    # with no noise, a firefly whose only brighter one is the best moves straight towards it
    s1 = Firefly(pop_size=5, alpha=0.0, beta0=1.0, gamma=0.01).step(problem, s0)
    order = s0.f.argsort(-1)
    for r in range(3):
        b, second = order[r, 0], order[r, 1]
        direction = s0.x[r, b] - s0.x[r, second]
        step = s1.x[r, second] - s0.x[r, second]
        cross = direction[0] * step[1] - direction[1] * step[0]
        assert abs(float(cross)) < 1e-12 and float((direction * step).sum()) > 0


def test_tiled_equals_untiled(device):
    problem = hs.get_problem("rastrigin", dim=5)
    kw = dict(iters=10, runs=2, seed=3, device=device, dtype="float64")
    whole = hs.minimize(problem, Firefly(pop_size=50, tile=50), **kw)
    tiled = hs.minimize(problem, Firefly(pop_size=50, tile=7), **kw)
    torch.testing.assert_close(tiled.best_f, whole.best_f, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(tiled.best_x, whole.best_x, rtol=1e-12, atol=1e-12)


def test_paper_002_setting_on_sphere():
    """Paper 002 (N = 40, D = 2, 100 iterations, alpha 0.5, beta0 0.2, gamma 1): near 0."""
    r = hs.minimize(hs.get_problem("sphere", dim=2, bounds=(-5.12, 5.12)), hs.get_algorithm("firefly", preset="paper002"),
                    iters=100, runs=30, seed=0, device="cpu")
    assert float(r.best_f.median()) < 1e-3 and float(r.best_f.max()) < 5e-3, r.summary()


def test_large_population_memory_is_tiled():
    # N = 4096 with a forced small tile: per tile the weights are (runs, N, 64), not N^2 D.
    r = hs.minimize("sphere", Firefly(pop_size=4096, tile=64), dim=8, iters=2, device="cpu")
    assert torch.isfinite(r.best_f).all()


def test_bad_parameters():
    with pytest.raises(ValueError, match="update must be 'synchronous' or 'sequential'"):
        Firefly(update="async")
    with pytest.raises(ValueError, match="alpha, beta0 and gamma must be >= 0"):
        Firefly(gamma=-1.0)
    with pytest.raises(ValueError, match="firefly needs a population of at least 2"):
        Firefly(pop_size=1)
    with pytest.raises(ValueError, match="scale must be 'box'"):
        Firefly(scale="relative")
    p = hs.get_algorithm("firefly", preset="paper002")
    assert (p.pop_size, p.alpha, p.beta0, p.gamma, p.scale) == (40, 0.5, 0.2, 1.0, "absolute")


def test_box_relative_coefficients():
    """scale="box": alpha in units of L and gamma in units of 1/L^2, L the mean side of the box;
    "absolute" (paper 002's preset): as given, whatever the box."""
    wide = hs.get_problem("sphere", dim=3, bounds=(-100, 100))
    uneven = hs.get_problem("sphere", dim=3, bounds=([-1.0, 0.0, -6.0], [1.0, 4.0, 6.0]))  # sides 2, 4, 12: L = 6
    alpha, beta0, gamma = Firefly(alpha=0.01, beta0=0.5, gamma=2.0).coefficients(wide)
    assert (float(alpha), beta0, float(gamma)) == pytest.approx((2.0, 0.5, 2.0 / 200**2))
    alpha, _, gamma = Firefly(alpha=0.01, gamma=2.0).coefficients(uneven)
    assert (float(alpha), float(gamma)) == pytest.approx((0.06, 2.0 / 36))
    paper = hs.get_algorithm("firefly", preset="paper002")
    assert paper.coefficients(wide) == paper.coefficients(uneven) == (0.5, 0.2, 1.0)


def test_box_relative_step_is_the_absolute_step_with_resolved_coefficients(device):
    """The eager step with scale="box" moves exactly as scale="absolute" with alpha L and gamma / L^2."""
    problem = hs.get_problem("rastrigin", dim=4, bounds=(-50, 30)).to(device, torch.float64)  # L = 80
    box = Firefly(pop_size=12, alpha=0.01, beta0=0.5, gamma=3.0)
    absolute = Firefly(pop_size=12, alpha=0.01 * 80, beta0=0.5, gamma=3.0 / 80**2, scale="absolute")
    torch.manual_seed(0)
    s0 = box.init(problem, 2)
    torch.manual_seed(1)
    a = box.step(problem, s0)
    torch.manual_seed(1)
    b = absolute.step(problem, s0)
    torch.testing.assert_close(a.x, b.x, rtol=1e-12, atol=1e-12)
    assert not torch.equal(a.x, s0.x)


@pytest.mark.parametrize("engine", [pytest.param("eager", marks=pytest.mark.slow), "native"])  # eager: a minute
def test_default_solves_a_wide_box(engine):
    """Issue 28: on CEC 2022 F1 (D = 10, box [-100, 100]^10) gamma = 1 in absolute units made
    every attraction e^(-gamma r^2) = 0 and the old defaults drifted at random (mean error
    ~3e4); the box-relative defaults converge. 50,000 evaluations, 5 runs, fixed seed."""
    problem = hs.get_problem("cec2022-f1", dim=10)
    kw = dict(evals=50_000, runs=5, seed=0, device="cpu", engine=engine)
    new = hs.minimize(problem, Firefly(), **kw).best_f - 300.0
    old = hs.minimize(problem, Firefly(alpha=0.2, beta0=1.0, gamma=1.0, scale="absolute"), **kw).best_f - 300.0
    assert float(old.mean()) > 1e3  # the old defaults, in absolute units: a random walk
    assert float(new.mean()) < 1.0 and float(new.max()) < 5.0, new


@pytest.mark.slow
def test_default_on_a_wide_box_at_the_campaign_budget():
    """The same at the CEC 2022 campaign's budget for D = 10 (200,000 evaluations), 10 runs."""
    r = hs.minimize("cec2022-f1", Firefly(), dim=10, evals=200_000, runs=10, seed=1, device="cpu", engine="native")
    err = r.best_f - 300.0
    assert float(err.mean()) < 0.2 and float(err.max()) < 1.0, err


@pytest.mark.gpu
def test_65536_fireflies_run_on_cuda():
    if not torch.cuda.is_available():
        pytest.fail("GPU tests were selected (-m gpu) but torch sees no CUDA device")
    torch.cuda.reset_peak_memory_stats()
    r = hs.minimize("sphere", Firefly(pop_size=65_536), dim=32, iters=2, device="cuda")
    assert torch.isfinite(r.best_f).all() and r.evals == 3 * 65_536
    # tiled: far below the N^2 D = 550 GB an untiled pair tensor would need
    assert torch.cuda.max_memory_allocated() < 4 * 2**30
