"""`NumbaFunction`: a user's objective compiled with Numba, called inside the native CPU kernels
through a function pointer. Every kernel runs it as it runs a built-in function; the eager
step and CUDA evaluate it on the host."""

import math

import numba
import numpy as np
import pytest
import torch

import heuriscale as hs
from heuriscale.engine.kernels.cpu_objectives import USER, inline_objective


@numba.njit
def sphere(x):
    s = 0.0
    for v in x:
        s += np.float64(v) * v
    return s


@numba.njit
def half_nan(x):
    return math.nan if x[0] > 0 else np.float64(x[0]) * x[0] + np.float64(x[1]) * x[1]


@numba.njit
def returns_a_tuple(x):
    return x[0], x[1]


def test_it_evaluates_like_the_function_in_float32_and_float64():
    problem = hs.NumbaFunction(sphere, 3, -5, 5)
    for dtype in (torch.float32, torch.float64):
        x = torch.rand(4, 7, 3, dtype=dtype) * 10 - 5
        want = (x.double() ** 2).sum(-1)
        got = problem.evaluate(x)
        assert got.shape == (4, 7) and got.dtype == dtype
        torch.testing.assert_close(got.double(), want, rtol=1e-6 if dtype == torch.float32 else 1e-14, atol=0)
    assert problem.host_bound and problem.name == "sphere"


KERNELS = {  # every native kernel, Firefly in both updates
    "pso": lambda: hs.PSO(pop_size=20), "prs": lambda: hs.PRS(pop_size=20, max_iters=30),
    "fep": lambda: hs.FEP(pop_size=20), "apo": lambda: hs.APO(pop_size=20, max_iters=30),
    "firefly": lambda: hs.Firefly(pop_size=12, alpha=0.05),
    "firefly-sequential": lambda: hs.Firefly(pop_size=6, alpha=0.05, update="sequential"),
}


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_every_kernel_calls_it_inside_and_computes_the_built_in_numbers(kernel):
    """Sphere in D = 2 and float64: the user's function and the built-in one are the same
    numbers to the bit (one addition per point), so the runs must be identical."""
    kw = dict(iters=30, runs=2, seed=1, device="cpu", dtype="float64", engine="native")
    mine = hs.minimize(hs.NumbaFunction(sphere, 2, -100, 100), KERNELS[kernel](), **kw)
    built = hs.minimize(hs.get_problem("sphere", dim=2), KERNELS[kernel](), **kw)
    assert mine.extra["engine"] == "native"
    assert torch.equal(mine.best_f, built.best_f) and torch.equal(mine.best_x, built.best_x)
    assert torch.equal(mine.history_f, built.history_f)


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_its_nan_values_are_counted_in_the_kernel_and_never_best(kernel):
    runner = hs.Runner(hs.NumbaFunction(half_nan, 2, -1, 1), KERNELS[kernel](), runs=2, seed=0, device="cpu",
                       engine="native")
    runner.step(10)
    r = runner.result()
    assert (r.nan_evals > 0).all() and torch.isfinite(r.best_f).all() and (r.best_x[:, 0] <= 0).all()


def test_the_kernels_call_it_inline_not_between_calls():
    problem = hs.NumbaFunction(sphere, 2, -1, 1).to("cpu", torch.float32)
    fid, data = inline_objective(problem)
    assert fid == USER and data[0] == problem.address(torch.float32) and data[0] < 2**53


def test_eager_and_native_runs_agree_in_distribution():
    from scipy import stats

    problem = hs.NumbaFunction(sphere, 4, -5, 5)
    kw = dict(iters=60, runs=30, device="cpu")
    eager = hs.minimize(problem, hs.PSO(pop_size=16), engine="eager", seed=0, **kw)
    native = hs.minimize(problem, hs.PSO(pop_size=16), engine="native", seed=1, **kw)
    assert stats.mannwhitneyu(eager.best_f.numpy(), native.best_f.numpy()).pvalue > 1e-3


@pytest.mark.parametrize("make, message", [
    (lambda: hs.NumbaFunction(lambda x: x.sum(), 2, -1, 1), "takes a numba.njit function of one point"),
    (lambda: hs.NumbaFunction(sphere, 0, -1, 1), "dim"),
    (lambda: hs.NumbaFunction(sphere, 2, 1, -1), "lower"),
    (lambda: hs.NumbaFunction(returns_a_tuple, 2, -1, 1).evaluate(torch.zeros(3, 2)),
     "objective 'returns_a_tuple' does not compile for a point of float32 values"),
])
def test_bad_input_is_one_clear_line(make, message):
    with pytest.raises(ValueError, match=message) as info:
        make()
    assert "\n" not in str(info.value)
