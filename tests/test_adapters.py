import math

import numpy as np
import pytest
import torch

import heuriscale as hs


def rastrigin_numpy(X: np.ndarray) -> np.ndarray:
    return 10 * X.shape[1] + (X**2 - 10 * np.cos(2 * np.pi * X)).sum(1)


def rastrigin_scalar(x) -> float:  # module level: picklable for worker processes
    return 10 * len(x) + sum(v * v - 10 * math.cos(2 * math.pi * v) for v in x)


def rastrigin_torch(x: torch.Tensor) -> torch.Tensor:
    return 10 * x.shape[-1] + (x * x - 10 * torch.cos(2 * math.pi * x)).sum(-1)


ADAPTERS = {
    "torch": lambda: hs.TorchFunction(rastrigin_torch, 4, -5.12, 5.12),
    "numpy": lambda: hs.NumpyFunction(rastrigin_numpy, 4, -5.12, 5.12),
    "scalar": lambda: hs.ScalarFunction(rastrigin_scalar, 4, -5.12, 5.12),
    "scalar-workers": lambda: hs.ScalarFunction(rastrigin_scalar, 4, -5.12, 5.12, workers=2),
}


@pytest.mark.parametrize("kind", sorted(ADAPTERS))
def test_adapters_match_builtin(kind, device):
    reference = hs.get_problem("rastrigin", dim=4).to(device, torch.float64)
    problem = ADAPTERS[kind]().to(device, torch.float64)
    x = (torch.rand(3, 5, 4, dtype=torch.float64, device=device) - 0.5) * 10
    f = problem.evaluate(x)
    assert f.shape == (3, 5) and f.device.type == device and f.dtype == torch.float64
    torch.testing.assert_close(f, reference.evaluate(x), rtol=1e-12, atol=1e-10)
    if hasattr(problem, "close"):
        problem.close()


def test_host_bound_flags():
    assert not ADAPTERS["torch"]().host_bound
    assert ADAPTERS["numpy"]().host_bound and ADAPTERS["scalar"]().host_bound


def test_numpy_objective_inside_minimize_matches_torch():
    # Same seed, same arithmetic -> the same run, whether the fitness is computed on the host.
    kwargs = dict(iters=60, runs=3, seed=5, device="cpu", dtype="float64")
    np_sphere = hs.NumpyFunction(lambda X: (X**2).sum(1), 6, -100, 100)
    a = hs.minimize(np_sphere, hs.PSO(pop_size=20), **kwargs)
    b = hs.minimize(hs.get_problem("sphere", dim=6), hs.PSO(pop_size=20), **kwargs)
    torch.testing.assert_close(a.best_f, b.best_f, rtol=1e-9, atol=0)


@pytest.mark.parametrize(
    "problem",
    [
        hs.TorchFunction(lambda x: x.sum(-1, keepdim=True), 3, 0, 1, name="keepdim"),
        hs.NumpyFunction(lambda X: X.sum(1)[:, None], 3, 0, 1, name="column"),
        hs.ScalarFunction(lambda x: [1.0, 2.0], 3, 0, 1, name="pair"),
    ],
)
def test_wrong_output_shape_is_a_clear_error(problem):
    with pytest.raises((ValueError, TypeError), match="returned|must be a real number|float"):
        problem.evaluate(torch.rand(4, 3, dtype=torch.float64))
    with pytest.raises((ValueError, TypeError)):
        hs.minimize(problem, "pso", iters=2, device="cpu")


def test_torch_function_shape_message():
    p = hs.TorchFunction(lambda x: x.sum(-1, keepdim=True), 3, 0, 1, name="keepdim")
    with pytest.raises(ValueError, match=r"objective 'keepdim' returned shape \(4, 1\) for points of shape \(4, 3\)"):
        p.evaluate(torch.rand(4, 3))


def test_scalar_workers_must_be_positive():
    with pytest.raises(ValueError, match="workers must be an integer >= 1, got 0"):
        hs.ScalarFunction(rastrigin_scalar, 2, 0, 1, workers=0)
    with pytest.raises(ValueError, match="workers must be an integer >= 1, got 2.5"):
        hs.Workers(2.5)


# -- objectives that raise or return the wrong thing (issue 13) --------------------------------
KINDS = {"torch": hs.TorchFunction, "numpy": hs.NumpyFunction, "scalar": hs.ScalarFunction}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_objective_that_raises_is_wrapped_naming_it(kind):
    def broken(x):
        raise KeyError("missing table")

    problem = KINDS[kind](broken, 3, 0, 1, name="myfn")
    with pytest.raises(ValueError, match=r"objective 'myfn' raised KeyError on points of shape \(10, 3\) "
                                         r"\(10 points of dim 3\): 'missing table'") as info:
        problem.evaluate(torch.rand(10, 3, dtype=torch.float64))
    assert isinstance(info.value.__cause__, KeyError)
    # the shape the function was given: the engine's (runs, pop, dim), or rows (n, dim) on the host
    with pytest.raises(ValueError, match=r"objective 'myfn' raised KeyError on points of shape \((1, )?8, 3\)"):
        hs.minimize(problem, hs.PSO(pop_size=8), iters=2, device="cpu")


@pytest.mark.parametrize(
    "kind,fn,returned",
    [
        ("torch", lambda x: x.sum(-1, keepdim=True), r"shape \(10, 1\)"),
        ("torch", lambda x: torch.zeros(11, dtype=x.dtype), r"shape \(11,\)"),
        ("torch", lambda x: x.sum(-1).to(torch.complex64), "complex64 values"),
        ("torch", lambda x: x.sum(-1) > 1, "bool values"),
        ("torch", lambda x: x.sum(-1).tolist(), "a value of type list"),
        ("torch", lambda x: None, "None"),
        ("torch", lambda x: torch.zeros(x.shape[:-1], device="meta"), "values on meta"),
        ("numpy", lambda X: X.sum(1)[:, None], r"shape \(10, 1\)"),
        ("numpy", lambda X: np.zeros(len(X) + 1), r"shape \(11,\)"),
        ("numpy", lambda X: X.sum(1) * 1j, "complex128 values"),
        ("numpy", lambda X: ["1.0"] * len(X), "<U3 values"),
        ("numpy", lambda X: None, r"shape \(\)"),
        ("scalar", lambda x: [1.0, 2.0], r"\[1.0, 2.0\] \(a list\) as one point's value"),
        ("scalar", lambda x: 1j, r"1j \(a complex\) as one point's value"),
        ("scalar", lambda x: None, "None as one point's value"),
    ],
)
def test_wrong_output_names_the_objective_and_what_it_returned(kind, fn, returned):
    problem = KINDS[kind](fn, 3, 0, 1, name="myfn")
    with pytest.raises(ValueError, match=rf"objective 'myfn' returned {returned} for points of shape \(10, 3\) "
                                         r"\(10 points of dim 3\): return "):
        problem.evaluate(torch.rand(10, 3, dtype=torch.float64))


@pytest.mark.parametrize(
    "problem",
    [
        hs.TorchFunction(lambda x: (10 * x).sum(-1).long(), 3, 0, 1),
        hs.NumpyFunction(lambda X: (10 * X).sum(1).astype(np.int64), 3, 0, 1),
        hs.NumpyFunction(lambda X: list(X.sum(1)), 3, 0, 1),  # a list of numbers is an array to NumPy
        hs.ScalarFunction(lambda x: int(10 * x.sum()), 3, 0, 1),
        hs.ScalarFunction(lambda x: np.float32(x.sum()), 3, 0, 1),
        hs.ScalarFunction(lambda x: torch.tensor(x.sum()), 3, 0, 1),
    ],
)
def test_integer_and_numpy_scalar_values_are_accepted(problem):
    r = hs.minimize(problem, hs.PSO(pop_size=8), iters=3, device="cpu", dtype="float64", seed=0)
    assert torch.isfinite(r.best_f).all() and r.best_f.dtype == torch.float64
