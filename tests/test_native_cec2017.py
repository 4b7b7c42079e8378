"""CEC 2017 F1-F30 computed inside the native CPU kernels (`cpu_cec2017.py`): the inline
values against `CEC2017.evaluate` (itself checked against the official C code in
test_cec2017.py), and native runs against runs whose values torch computed between kernel
calls."""

import pytest
import torch

import heuriscale as hs
from heuriscale.engine.kernels import cpu_common, cpu_objectives
from heuriscale.problems.cec2017 import COMPOSITION, CEC2017, dims

FUNCTIONS = range(1, 31)
DEFAULT_CASES = [(f, 10) for f in FUNCTIONS]  # every function, the smallest competition dimension
OTHER_CASES = [(f, d) for f in FUNCTIONS for d in dims(f) if d != 10]  # D = 2, 20, 30, 50, 100


def _points(problem, dtype, seed):
    """Random points of the box; every component's optimum (the INF weight), points near
    them and the function's optimum (F9's is not its shift); for compositions, points far
    outside the box (every weight underflows to 0); a NaN row."""
    g = torch.Generator().manual_seed(seed)
    dim, shifts = problem.dim, problem.shifts.double()
    x = -100 + 200 * torch.rand(32, dim, generator=g, dtype=torch.float64)
    near = shifts + 1e-3 * torch.randn(shifts.shape, generator=g, dtype=torch.float64)
    far = 1e5 * torch.randn(4 if problem.function in COMPOSITION else 0, dim, generator=g, dtype=torch.float64)
    nan = torch.full((1, dim), torch.nan, dtype=torch.float64)
    return torch.cat([x, shifts, near, problem.optimum_x.double()[None], far, nan]).to(dtype)


def _check(cases, dtype):
    """float64: torch's value up to its summation order (measured: at most 1.9e-13 relative,
    F3 at D = 50). float32: the problem's float32 data computed in float64, so equal to that
    data evaluated in float64, and within float32's rounding of torch's float32 evaluation
    (measured: at most 3.0e-5 relative, F3 at D = 50) where that does not overflow."""
    for seed, (function, dim) in enumerate(cases):
        problem = CEC2017(function, dim).to("cpu", dtype)
        assert cpu_objectives.inline_objective(problem)[0] == cpu_objectives.CEC2017
        x = _points(problem, dtype, seed)
        got = torch.from_numpy(cpu_objectives.values(problem, x.numpy()))
        msg = f"F{function} D={dim}"
        assert got[-1].isnan() and torch.isfinite(got[:-1]).all(), msg
        wide = problem.to("cpu", torch.float64)  # the same (rounded) data in float64
        torch.testing.assert_close(got, wide.evaluate(x.double()), rtol=1e-12, atol=0, equal_nan=True, msg=msg)
        if dtype == torch.float32:
            by_torch = problem.evaluate(x).double()
            # torch's float32 overflows to inf in F2's powers from D = 20, and on the points far
            # outside the box in a component (Rosenbrock's fourth powers) whose weight is tiny;
            # those values are checked above, against float64
            overflow = by_torch.isinf()
            outside = (x.double().abs() > 100).any(-1)
            assert (overflow <= (outside | (function == 2))).all(), msg
            by_torch[overflow] = got[overflow]
            torch.testing.assert_close(got, by_torch, rtol=1e-4, atol=0, equal_nan=True, msg=msg)
        else:
            optimum = cpu_objectives.values(problem, problem.optimum_x[None].numpy())[0]
            assert abs(optimum - 100 * function) <= 1e-8, msg


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_inline_values_equal_the_problem_for_every_function(dtype):
    _check(DEFAULT_CASES, dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_inline_values_equal_the_problem_in_every_other_dimension(dtype):
    _check(OTHER_CASES, dtype)


def test_only_the_exact_cec2017_class_is_inline():
    class Halved(CEC2017):  # a subclass may change the objective: evaluated by the problem
        def evaluate(self, x):
            return super().evaluate(x) / 2

    assert cpu_objectives.inline_objective(Halved(1, 10))[0] == 0
    assert cpu_objectives.inline_objective(hs.get_problem("cec2017-f29", dim=30))[0] == cpu_objectives.CEC2017


KERNELS = {"pso": lambda: hs.PSO(pop_size=30), "fep": lambda: hs.FEP(pop_size=20), "de": lambda: hs.DE(pop_size=20)}


def _inline_run_equals_the_torch_run(kernel, function, monkeypatch):
    """The kernel computes the function itself; the runs are those it made when torch
    evaluated between two kernel calls, up to the last bits (torch's matrix product and sums
    add in an order of their own)."""
    kw = dict(runs=2, seed=3, device="cpu", dtype="float64", engine="native")
    runner = hs.Runner(hs.get_problem(f"cec2017-f{function}", dim=10), KERNELS[kernel](), **kw)
    runner.step(40)
    inline = runner.result()
    assert runner._kernels.fitness == cpu_objectives.CEC2017 and inline.extra["engine"] == "native"
    monkeypatch.setattr(cpu_common, "inline_objective", lambda p: (0, cpu_objectives.NO_DATA))
    by_torch = hs.minimize(hs.get_problem(f"cec2017-f{function}", dim=10), KERNELS[kernel](), iters=40, **kw)
    torch.testing.assert_close(inline.history_f, by_torch.history_f, rtol=1e-12, atol=0)
    torch.testing.assert_close(inline.best_x, by_torch.best_x, rtol=1e-9, atol=1e-9)
    assert (inline.history_f[:, -1] < inline.history_f[:, 0]).all()


# simple (Lunacek's mirrored, partly rotated vector), hybrid (Lunacek by the shift's first
# entries), composition of hybrids
KINDS = [7, 13, 29]


@pytest.mark.parametrize("function", KINDS)
def test_native_pso_computes_cec2017_inline_with_the_numbers_torch_gave(function, monkeypatch):
    _inline_run_equals_the_torch_run("pso", function, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("function", KINDS)
@pytest.mark.parametrize("kernel", ["fep", "de"])
def test_native_fep_and_de_compute_cec2017_inline_with_the_numbers_torch_gave(kernel, function, monkeypatch):
    _inline_run_equals_the_torch_run(kernel, function, monkeypatch)
