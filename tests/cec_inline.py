"""The checks test_native_cec2022.py and test_native_cec2017.py share: a CEC function computed
inside the native CPU kernels against the problem's own `evaluate`, and a native run against
the run it makes when torch evaluates the function between two kernel calls."""

from __future__ import annotations

import torch

import heuriscale as hs
from heuriscale.engine.kernels import cpu_common, cpu_objectives

KERNELS = {"pso": lambda: hs.PSO(pop_size=30), "fep": lambda: hs.FEP(pop_size=20), "de": lambda: hs.DE(pop_size=20)}


def assert_inline_values(problem, x, fid, msg, may_overflow=None):
    """The inline values at the rows of x (the last one NaN, the others finite): in float64
    torch's value up to its summation order (rtol 1e-12); for a float32 problem, its float32
    data computed in float64, so equal to that data evaluated in float64, and within 1e-4 of
    torch's float32 evaluation, but where torch's float32 overflows to inf at rows that
    `may_overflow` (bool, per row) allows; and a point's value the same, bit for bit, in a
    block of any size (one point a call, as `value_of`, blocks of 5, all points in one
    block). Returns the values."""
    assert cpu_objectives.inline_objective(problem)[0] == fid, msg
    got = torch.from_numpy(cpu_objectives.values(problem, x.numpy()))
    for block in (0, 5):
        torch.testing.assert_close(torch.from_numpy(cpu_objectives.values(problem, x.numpy(), block)), got, rtol=0,
                                   atol=0, equal_nan=True, msg=msg)
    assert got[-1].isnan() and torch.isfinite(got[:-1]).all(), msg
    wide = problem.to("cpu", torch.float64)  # the same (rounded) data in float64
    torch.testing.assert_close(got, wide.evaluate(x.double()), rtol=1e-12, atol=0, equal_nan=True, msg=msg)
    if x.dtype == torch.float32:
        by_torch = problem.evaluate(x).double()
        overflow = by_torch.isinf()
        allowed = torch.zeros_like(overflow) if may_overflow is None else may_overflow
        assert (overflow <= allowed).all(), msg
        by_torch[overflow] = got[overflow]  # checked against float64 above
        torch.testing.assert_close(got, by_torch, rtol=1e-4, atol=0, equal_nan=True, msg=msg)
    return got


def assert_inline_run_equals_torch_run(name, kernel, fid, monkeypatch):
    """The kernel computes problem `name` (D = 10) itself; the runs are those it made when
    torch evaluated between two kernel calls, up to the last bits (torch's matrix product and
    sums add in an order of their own: measured at most 4e-14 relative over 200 iterations
    on CEC 2022)."""
    kw = dict(runs=2, seed=3, device="cpu", dtype="float64", engine="native")
    runner = hs.Runner(hs.get_problem(name, dim=10), KERNELS[kernel](), **kw)
    runner.step(40)
    inline = runner.result()
    assert runner._kernels.fitness == fid and inline.extra["engine"] == "native"
    monkeypatch.setattr(cpu_common, "inline_objective", lambda p: (0, cpu_objectives.NO_DATA))
    by_torch = hs.minimize(hs.get_problem(name, dim=10), KERNELS[kernel](), iters=40, **kw)
    torch.testing.assert_close(inline.history_f, by_torch.history_f, rtol=1e-12, atol=0)
    torch.testing.assert_close(inline.best_x, by_torch.best_x, rtol=1e-9, atol=1e-9)
    assert (inline.history_f[:, -1] < inline.history_f[:, 0]).all()


def assert_only_the_exact_class_is_inline(suite: type, name: str, dim: int) -> None:
    """A subclass of the suite's class may change the objective, so the engine evaluates it;
    the suite's own problems (`name` at `dim`) are computed inline."""
    class Halved(suite):
        def evaluate(self, x):
            return super().evaluate(x) / 2

    assert cpu_objectives.inline_objective(Halved(1, 10))[0] == 0
    assert cpu_objectives.inline_objective(hs.get_problem(name, dim=dim))[0] != 0

