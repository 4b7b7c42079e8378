"""`TritonFunction`: a user's objective as a `@triton.jit` function of a block of points,
called inside the fused kernels (here in Triton's interpreter on the CPU; compiled under
`-m gpu` on CUDA), and by a kernel of its own on the other engines."""

import pytest
import torch

import heuriscale as hs

triton = pytest.importorskip("triton")
import triton.language as tl  # noqa: E402


@triton.jit
def sphere(x, mask):
    return tl.sum(x * x, 1)


@triton.jit
def griewank_like(x, mask):  # a product: the padding must be masked out
    cosines = tl.where(mask, tl.cos(x), 1.0)
    return tl.sum(x * x, 1) / 4000.0 - tl.reduce(cosines, 1, _product) + 1.0


@triton.jit
def _product(a, b):
    return a * b


@triton.jit
def half_nan(x, mask):
    first = tl.sum(tl.where(tl.arange(0, x.shape[1])[None, :] == 0, x, 0.0), 1)
    return tl.where(first > 0, float("nan"), tl.sum(x * x, 1))


def test_it_evaluates_a_block_of_points(fused_device):
    problem = hs.TritonFunction(griewank_like, 3, -5, 5).to(fused_device, torch.float64)
    x = torch.rand(4, 9, 3, dtype=torch.float64, device=fused_device) * 10 - 5
    want = (x * x).sum(-1) / 4000.0 - torch.cos(x).prod(-1) + 1.0
    torch.testing.assert_close(problem.evaluate(x), want, rtol=1e-12, atol=1e-12)


# FEP and APO interpreted on the CPU take half a minute each: under -m slow there (on CUDA: -m gpu)
@pytest.mark.parametrize("algorithm", ["pso", "prs", "firefly"] + [pytest.param(a, marks=pytest.mark.slow) for a in ("fep", "apo")])
def test_the_fused_kernels_call_it_inside_and_compute_the_built_in_numbers(algorithm, fused_device):
    make = {"pso": lambda: hs.PSO(pop_size=16), "prs": lambda: hs.PRS(pop_size=16, max_iters=10),
            "fep": lambda: hs.FEP(pop_size=16), "firefly": lambda: hs.Firefly(pop_size=16, alpha=0.05),
            "apo": lambda: hs.APO(pop_size=16)}[algorithm]
    # PRS feeds every value back through (10)'s mean, and APO weighs its pairs by their values
    # ((7), (10)), so a last-bit difference grows at once (the initial population is evaluated
    # outside the kernels: by torch, or by the function's own kernel; on the H100, APO's 130
    # iterations ended equal to 5 digits, not to the bit): they are compared over their first
    # two iterations, closely.
    values_move = algorithm == "prs" or (algorithm == "apo" and fused_device == "cuda")  # (APO on the CPU: equal)
    iters = 2 if values_move else 10 if fused_device == "cpu" else 130
    kw = dict(iters=iters, runs=2, seed=2, device=fused_device, dtype="float64", engine="fused")
    mine = hs.minimize(hs.TritonFunction(sphere, 3, -100, 100), make(), **kw)
    built = hs.minimize(hs.get_problem("sphere", dim=3), make(), **kw)
    assert mine.extra["engine"] == built.extra["engine"]
    if values_move:
        torch.testing.assert_close(mine.history_f, built.history_f, rtol=1e-9, atol=0)
    else:
        assert torch.equal(mine.best_f, built.best_f) and torch.equal(mine.history_f, built.history_f)


def test_its_nan_values_are_counted_inside_and_never_best(fused_device):
    r = hs.minimize(hs.TritonFunction(half_nan, 2, -1, 1), hs.PSO(pop_size=16), iters=10, runs=2, seed=0,
                    device=fused_device, engine="fused")
    assert (r.nan_evals > 0).all() and torch.isfinite(r.best_f).all() and (r.best_x[:, 0] <= 0).all()


@triton.jit
def all_nan(x, mask):
    return tl.sum(x, 1) * float("nan")


@pytest.mark.parametrize("algorithm", ["pso", "prs", "firefly"] + [pytest.param(a, marks=pytest.mark.slow) for a in ("fep", "apo")])
def test_every_nan_value_is_counted_once_and_the_padding_rows_never(algorithm, fused_device):
    # 20 individuals in blocks of more rows: the padding rows give NaN too, and must not count
    make = {"pso": lambda: hs.PSO(pop_size=20), "prs": lambda: hs.PRS(pop_size=20, max_iters=6),
            "fep": lambda: hs.FEP(pop_size=20), "firefly": lambda: hs.Firefly(pop_size=20),
            "apo": lambda: hs.APO(pop_size=20)}[algorithm]
    r = hs.minimize(hs.TritonFunction(all_nan, 2, -1, 1), make(), iters=6, runs=2, seed=0, device=fused_device,
                    engine="fused")
    assert r.extra["engine"].startswith("fused")
    assert r.nan_evals.tolist() == [r.evals, r.evals] and r.evals >= 20 * 7 and torch.isinf(r.best_f).all()


def test_other_engines_evaluate_it_with_a_kernel_of_its_own(fused_device):
    r = hs.minimize(hs.TritonFunction(sphere, 3, -5, 5), hs.APO(pop_size=10), iters=5, device=fused_device,
                    engine="eager", seed=0)
    assert torch.isfinite(r.best_f).all() and r.evals == 60


def test_bad_input_is_one_clear_line(monkeypatch):
    with pytest.raises(ValueError, match="takes a @triton.jit function"):
        hs.TritonFunction(lambda x, m: x.sum(1), 2, -1, 1)
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    with pytest.raises(ValueError, match="is a Triton function: it runs on CUDA devices"):
        hs.TritonFunction(sphere, 2, -1, 1).evaluate(torch.zeros(3, 2))
