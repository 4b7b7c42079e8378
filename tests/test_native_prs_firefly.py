"""The native CPU kernels of PRS and of both Firefly updates against their eager steps.

One iteration with the eager step's own random numbers fed in equals the eager step, and
PRS's polynomials equal libm. test_native.py checks every kernel alike for the rest (the
fused twins' numbers, threads, convergence, NaN, chunks of steps and checkpoints).
"""

import math

import pytest
import torch

import heuriscale as hs
from heuriscale.algorithms.prs import to_box

PROBLEMS = {  # computed inside the kernels, but for bbob-f10 (by the problem between kernel calls)
    "sphere": lambda: hs.get_problem("sphere", dim=5),
    "rastrigin": lambda: hs.get_problem("rastrigin", dim=5),
    "rastrigin-1d": lambda: hs.get_problem("rastrigin", dim=1),
    "rosenbrock": lambda: hs.get_problem("rosenbrock", dim=5),
    "ackley": lambda: hs.get_problem("ackley", dim=7),
    "griewank": lambda: hs.get_problem("griewank", dim=6),
    "spring": lambda: hs.get_problem("spring"),
    "cec2022-f1": lambda: hs.get_problem("cec2022-f1", dim=10),
    "bbob-f10": lambda: hs.get_problem("bbob-f10", dim=10),
}
ALGORITHMS = {
    # 300 rays: more than one block of rows (256), and not a multiple of one
    "prs": lambda: hs.PRS(pop_size=300, max_iters=20),
    # Firefly's attraction sums N terms, so eager's rounding grows with N: 37 as in test_fused
    "firefly": lambda: hs.Firefly(pop_size=37, alpha=0.5, beta0=1.0, gamma=0.01),
    "firefly-sequential": lambda: hs.Firefly(pop_size=12, alpha=0.5, beta0=1.0, gamma=0.01, update="sequential"),
}
STEP_CASES = [(a, p) for a in ALGORITHMS for p in PROBLEMS
              if a == "prs" or p not in ("ackley", "griewank", "rastrigin-1d")]  # PRS: every coordinate path


def _eager_numbers(algorithm, x):
    """The U[0, 1) numbers the eager step draws first, in its order (manual_seed set)."""
    if getattr(algorithm, "update", None) == "sequential":  # one number per pair (i, j)
        runs, n, dim = x.shape
        return torch.rand(runs, n, n, dim, dtype=x.dtype)[None]
    return torch.rand_like(x)[None]


# (PRS on CEC 2022 in float32: 15 s of kernel build on the 2-core machine, under -m slow; float64 stays)
@pytest.mark.parametrize("algorithm,name,dtype", [
    pytest.param(a, p, t, marks=pytest.mark.slow) if (a, p, t) == ("prs", "cec2022-f1", "float32") else (a, p, t)
    for t in ("float64", "float32") for a, p in STEP_CASES])
def test_one_native_step_equals_the_eager_step_with_the_same_random_numbers(algorithm, name, dtype):
    algo = ALGORITHMS[algorithm]()
    runner = hs.Runner(PROBLEMS[name](), algo, runs=2, seed=5, device="cpu", dtype=dtype, engine="native")
    native = runner._kernels
    assert runner._engine_used() == "native"
    eps = torch.finfo(getattr(torch, dtype)).eps
    lower, upper = runner._guarded.lower, runner._guarded.upper
    scale = float(torch.maximum(lower.abs(), upper.abs()).max())
    # In float32, PRS's arcsine (11) is ill-conditioned near +-90 degrees, where an ulp of its
    # argument moves the angle by many ulps: there the kernel's float32 polynomials and eager's
    # float32 libm legitimately differ. So float32 angles are compared by their sines (the
    # arcsine's argument), positions as the box image of the kernel's own angles, and values
    # as the problem's at the kernel's own positions.
    by_sines = algorithm == "prs" and dtype == "float32"
    for k in range(3):
        before = native.prepare(runner.state)  # a copy
        best_before = runner.best_f.clone()
        torch.manual_seed(100 + k)
        native.given_r = _eager_numbers(algo, before.x)
        runner.step(1)
        torch.manual_seed(100 + k)  # the eager step draws the same numbers
        expected = algo.step(runner._guarded, before)
        got = vars(runner.state)
        f_scale = float(expected.f.abs().max())
        for field, want in vars(expected).items():
            atol = 64 * eps * (f_scale if field == "f" else scale)
            if by_sines and field == "theta":
                got_field, want, atol = torch.sin(torch.deg2rad(got[field])), torch.sin(torch.deg2rad(want)), 64 * eps
            elif by_sines and field == "x":
                got_field, want = got["x"], to_box(got["theta"], lower, upper)
            elif by_sines and field == "f":
                got_field, want = got["f"], runner._guarded.evaluate(got["x"])
            else:
                got_field = got[field]
            torch.testing.assert_close(got_field, want, rtol=64 * eps, atol=atol, msg=field)
        best = torch.minimum(best_before, got["f"].amin(-1) if by_sines else expected.f.amin(-1))
        torch.testing.assert_close(runner.best_f, best, rtol=64 * eps, atol=64 * eps * f_scale)
    assert runner.iteration == 3 and int(runner._it) == 3


def test_prs_polynomials_equal_libm():
    """The kernels' sin (up to the angles they reduce exactly), cos(2 pi v) and arcsine, in
    each dtype, against libm in float64."""
    from heuriscale.engine.kernels.prs import cpu

    generator = torch.Generator().manual_seed(0)
    for name in ("float64", "float32"):
        pi, limit, sin_c, asin_c = cpu._MATH[name]
        dtype = getattr(torch, name)
        eps = torch.finfo(dtype).eps
        near = torch.linspace(-1e4, 1e4, 4001, dtype=torch.float64)
        far = (torch.rand(2000, dtype=torch.float64, generator=generator) * 2 - 1) * limit
        multiples = torch.round(far[:500] / math.pi) * math.pi  # where x - k pi cancels most
        x = torch.cat([near, far, multiples]).to(dtype).numpy()
        errors = [abs(float(cpu._sin(v, pi, sin_c)) - math.sin(float(v))) for v in x]
        assert max(errors) < 4 * eps
        turns = x[:4001:7] / 1000  # libm's reference rounds 2 pi v first: an error of 2 pi |v| eps
        cosines = [float(cpu._cos_turns(v, sin_c)) for v in turns]
        assert all(abs(c - math.cos(2 * math.pi * float(v))) < 4 * eps * (1 + 2 * math.pi * abs(float(v)))
                   for c, v in zip(cosines, turns))
        a = torch.linspace(-1, 1, 2001, dtype=dtype).numpy()
        errors = [abs(float(cpu._asin(v, asin_c)) - math.asin(float(v))) / max(abs(math.asin(float(v))), 1e-300)
                  for v in a]
        assert max(errors) < 4 * eps


def test_infinite_deviations_refract_alike_in_the_kernel_and_the_eager_step():
    """A ray whose value is +inf (a NaN objective value) makes (10) and (9) NaN: both paths
    clamp the radicand to 0 and the arcsine's argument to -1, so no ray becomes NaN."""
    runner = hs.Runner("sphere", hs.PRS(pop_size=12, max_iters=10), dim=3, runs=2, seed=1, device="cpu",
                       dtype="float64", engine="native")
    runner.state.f[0, :4] = math.inf
    native = runner._kernels
    before = native.prepare(runner.state)  # a copy, with the mean deviation of (10) taken afresh
    torch.manual_seed(3)
    native.given_r = _eager_numbers(runner.algorithm, before.x)
    runner.step(1)
    torch.manual_seed(3)
    expected = runner.algorithm.step(runner._guarded, before)
    assert not expected.theta.isnan().any() and not runner.state.theta.isnan().any()
    torch.testing.assert_close(runner.state.theta, expected.theta, rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(runner.state.x, expected.x, rtol=1e-9, atol=1e-9)
