"""CEC 2022 F1-F12 computed inside the native CPU kernels (`cpu_cec.py`): the inline values
against `CEC2022.evaluate` and the official C code's, and native runs against runs whose
values torch computed between kernel calls."""

import json
from pathlib import Path

import numba
import pytest
import torch

import heuriscale as hs
from cec_inline import (
    KERNELS,
    assert_inline_run_equals_torch_run,
    assert_inline_values,
    assert_only_the_exact_class_is_inline,
)
from heuriscale.engine.kernels import cpu_common, cpu_objectives
from heuriscale.problems.cec2022 import BIAS, CEC2022, HYBRID

CASES = [(f, d) for f in range(1, 13) for d in (2, 10, 20) if not (d == 2 and f in HYBRID)]
REFERENCE = json.loads((Path(__file__).parent / "data" / "cec2022_reference.json").read_text())


def _points(problem, dtype, seed):
    """Random points of the box; every component's optimum (the INF weight) and points near
    them; for compositions, points far outside the box (every weight underflows to 0; other
    functions' far values are sines of large arguments, which round differently); a NaN row."""
    g = torch.Generator().manual_seed(seed)
    dim = problem.dim
    x = -100 + 200 * torch.rand(64, dim, generator=g, dtype=torch.float64)
    near = problem.shifts + 1e-3 * torch.randn(problem.shifts.shape, generator=g, dtype=torch.float64)
    far = 1e5 * torch.randn(4 if problem.function >= 9 else 0, dim, generator=g, dtype=torch.float64)
    nan = torch.full((1, dim), torch.nan, dtype=torch.float64)
    return torch.cat([x, problem.shifts, near, far, nan]).to(dtype)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_inline_values_equal_the_problem_for_every_function_and_dimension(dtype):
    """float64: torch's value up to its summation order. float32: the problem's float32 data
    computed in float64, so equal to that data evaluated in float64, and within float32's
    rounding of torch's float32 evaluation (measured: at most 4.4e-5 relative, F1 at D = 20)."""
    for seed, (function, dim) in enumerate(CASES):
        problem = CEC2022(function, dim).to("cpu", dtype)
        msg = f"F{function} D={dim}"
        assert_inline_values(problem, _points(problem, dtype, seed), cpu_objectives.CEC2022, msg)
        if dtype == torch.float64:
            optimum = torch.from_numpy(cpu_objectives.values(problem, problem.optimum_x[None].numpy()))
            assert abs(float(optimum) - BIAS[function]) <= 1e-8, msg


def test_inline_values_equal_the_official_c_code():
    for case in REFERENCE["cases"]:
        problem = CEC2022(case["function"], case["dim"])
        got = torch.from_numpy(cpu_objectives.values(problem, torch.tensor(case["x"], dtype=torch.float64).numpy()))
        torch.testing.assert_close(got, torch.tensor(case["f"], dtype=torch.float64), rtol=1e-9, atol=0,
                                   msg=f"F{case['function']} D={case['dim']}")


def test_only_the_exact_cec2022_class_is_inline():
    assert_only_the_exact_class_is_inline(CEC2022, "cec2022-f7", 20)
    assert cpu_objectives.inline_objective(hs.get_problem("cec2022-f7", dim=20))[0] == cpu_objectives.CEC2022


@pytest.mark.parametrize("function", [1, 7, 12])  # simple, hybrid (its Schaffer quirk), composition
@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_native_runs_compute_cec2022_inline_with_the_numbers_torch_gave(kernel, function, monkeypatch):
    assert_inline_run_equals_torch_run(f"cec2022-f{function}", kernel, cpu_objectives.CEC2022, monkeypatch)


@pytest.mark.parametrize("kernel", ["pso", "fep"])
def test_native_cec_runs_do_not_depend_on_the_number_of_threads(kernel, monkeypatch):
    """The values are computed a block of rows at a time, and the blocks are the same on any
    number of threads: 300 individuals (a whole block and a partial one) on one thread, on
    all of them and with the serial build give the same numbers."""
    make = {"pso": lambda: hs.PSO(pop_size=300), "fep": lambda: hs.FEP(pop_size=300)}[kernel]
    kw = dict(iters=12, runs=3, seed=4, device="cpu", dtype="float64", engine="native")
    results = []
    try:
        for threads, parallel_min in ((1, 0), (numba.config.NUMBA_NUM_THREADS, 0), (1, 10**12)):
            hs.set_cpu_threads(threads)
            monkeypatch.setattr(cpu_common, "PARALLEL_MIN", parallel_min)
            results.append(hs.minimize(hs.get_problem("cec2022-f12", dim=10), make(), **kw))
    finally:
        hs.set_cpu_threads(None)
    assert results[0].extra["engine"] == "native"
    for other in results[1:]:
        assert torch.equal(results[0].history_f, other.history_f) and torch.equal(results[0].best_x, other.best_x)
    assert (results[0].history_f[:, -1] < results[0].history_f[:, 0]).all()
