"""CEC 2017 F1-F30 computed inside the native CPU kernels (`cpu_cec2017.py`): the inline
values against `CEC2017.evaluate` (itself checked against the official C code in
test_cec2017.py), and native runs against runs whose values torch computed between kernel
calls."""

import pytest
import torch

import heuriscale as hs
from cec_inline import (
    assert_inline_run_equals_torch_run,
    assert_inline_values,
    assert_only_the_exact_class_is_inline,
)
from heuriscale.engine.kernels import cpu_objectives
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
        x, msg = _points(problem, dtype, seed), f"F{function} D={dim}"
        # torch's float32 overflows to inf in F2's powers from D = 20, and on the points far
        # outside the box in a component (Rosenbrock's fourth powers) whose weight is tiny
        may_overflow = (x.double().abs() > 100).any(-1) | (function == 2)
        assert_inline_values(problem, x, cpu_objectives.CEC2017, msg, may_overflow)
        if dtype == torch.float64:
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
    assert_only_the_exact_class_is_inline(CEC2017, "cec2017-f29", 30)
    assert cpu_objectives.inline_objective(hs.get_problem("cec2017-f29", dim=30))[0] == cpu_objectives.CEC2017


# simple (Lunacek's mirrored, partly rotated vector), hybrid (Lunacek by the shift's first
# entries), composition of hybrids
KINDS = [7, 13, 29]


@pytest.mark.parametrize("function", KINDS)
def test_native_pso_computes_cec2017_inline_with_the_numbers_torch_gave(function, monkeypatch):
    assert_inline_run_equals_torch_run(f"cec2017-f{function}", "pso", cpu_objectives.CEC2017, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("function", KINDS)
@pytest.mark.parametrize("kernel", ["fep", "de"])
def test_native_fep_and_de_compute_cec2017_inline_with_the_numbers_torch_gave(kernel, function, monkeypatch):
    assert_inline_run_equals_torch_run(f"cec2017-f{function}", kernel, cpu_objectives.CEC2017, monkeypatch)
