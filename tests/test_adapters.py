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
    with pytest.raises(ValueError, match="workers must be >= 1"):
        hs.ScalarFunction(rastrigin_scalar, 2, 0, 1, workers=0)
