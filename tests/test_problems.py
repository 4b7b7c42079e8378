import math

import pytest
import torch

import heuriscale as hs
from heuriscale.problems.classic import CLASSIC, FEP_FUNCTIONS

# (function, point, value computed by hand)
HAND_POINTS = [
    ("sphere", [1.0, 2.0, 3.0], 14.0),
    ("euclidean", [3.0, 4.0], 5.0),
    ("rastrigin", [1.0, 2.0], 5.0),  # 20 + (1 - 10) + (4 - 10)
    ("rosenbrock", [0.0, 0.0], 1.0),
    ("rosenbrock", [1.0, 2.0], 100.0),
    ("griewank", [0.0, math.pi * math.sqrt(2.0)], 2.0 + math.pi**2 / 2000.0),  # cos(pi) = -1
    ("ackley", [1.0, 1.0], 20.0 - 20.0 * math.exp(-0.2)),
    ("schwefel-1.2", [1.0, 2.0, 3.0], 46.0),  # 1 + 9 + 36
    ("schwefel-2.21", [1.0, -5.0, 3.0], 5.0),
    ("schwefel-2.22", [1.0, -2.0, 3.0], 12.0),  # 6 + 6
    ("schwefel-2.26", [math.pi**2 / 4.0], -math.pi**2 / 4.0),  # sin(sqrt(pi^2/4)) = 1
    ("step", [0.4, 0.6, -1.6], 5.0),  # 0 + 1 + 4
    ("zakharov", [1.0, 1.0], 9.3125),  # 2 + 1.5^2 + 1.5^4
    ("levy", [-3.0, 1.0], 1.0 + 10.0 * math.sin(1.0) ** 2),
    ("bent-cigar", [1.0, 2.0, 3.0], 13_000_001.0),
    ("elliptic", [1.0, 1.0, 1.0], 1_001_001.0),
    ("hgbat", [0.0, 0.0], 0.5),
    ("hgbat", [1.0, 1.0], 2.0),
]


@pytest.mark.parametrize("name,point,expected", HAND_POINTS)
def test_hand_computed_values(name, point, expected, device):
    p = hs.get_problem(name, dim=len(point)).to(device, torch.float64)
    f = p.evaluate(torch.tensor(point, dtype=torch.float64, device=device))
    assert f.shape == ()
    assert f.item() == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("name", sorted(CLASSIC))
@pytest.mark.parametrize("dim", [1, 2, 7])
def test_value_at_known_optimum(name, dim, device):
    p = hs.get_problem(name, dim=dim).to(device, torch.float64)
    assert p.optimum_x is not None and p.optimum_f is not None
    f = p.evaluate(p.optimum_x)
    assert f.item() == pytest.approx(p.optimum_f, abs=1e-9 * max(1.0, abs(p.optimum_f)))
    # and it is a minimum: nearby points are no better
    near = p.optimum_x + 1e-3 * torch.randn(64, dim, dtype=torch.float64, device=device)
    assert bool((p.evaluate(near) >= p.optimum_f - 1e-9 * max(1.0, abs(p.optimum_f))).all())


@pytest.mark.parametrize("name", sorted(CLASSIC))
def test_vectorised_over_leading_dimensions(name, device):
    p = hs.get_problem(name, dim=5).to(device, torch.float64)
    g = torch.Generator().manual_seed(3)
    x = (p.lower + (p.upper - p.lower) * torch.rand(2, 3, 4, 5, generator=g, dtype=torch.float64).to(device))
    f = p.evaluate(x)
    assert f.shape == (2, 3, 4)
    one_by_one = torch.stack([p.evaluate(row) for row in x.reshape(-1, 5)]).reshape(2, 3, 4)
    torch.testing.assert_close(f, one_by_one, rtol=1e-12, atol=1e-12)


def test_float32_follows_input_dtype(device):
    p = hs.get_problem("rastrigin", dim=3).to(device, torch.float32)
    f = p.evaluate(torch.ones(4, 3, device=device))
    assert f.dtype == torch.float32 and f.device.type == device


def test_paper_004_functions_have_paper_bounds():
    for name, (function, lo, hi) in FEP_FUNCTIONS.items():
        p = hs.get_problem(name)
        assert p.dim == 32 and p.name == name
        assert p.describe()["bounds"] == [lo, hi]
        x = torch.rand(10, 32, dtype=torch.float64)
        torch.testing.assert_close(p.evaluate(x), CLASSIC[function].fn(x))


def test_bounds_override_and_optimum_outside_box():
    p = hs.get_problem("rosenbrock", dim=4, bounds=(-5, 10))
    assert p.describe()["bounds"] == [-5.0, 10.0]
    assert p.optimum_f == 0.0
    shifted = hs.get_problem("sphere", dim=2, bounds=(1, 3))
    assert shifted.optimum_f is None and shifted.optimum_x is None  # 0 is not in [1, 3]


def test_problem_moves_with_to():
    p = hs.get_problem("sphere", dim=3)
    q = p.to("cpu", torch.float32)
    assert q.lower.dtype == torch.float32 and p.lower.dtype == torch.float64


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(dim=2, lower=[0, 5], upper=[1, 1]), "lower bound > upper bound at coordinate 1"),
        (dict(dim=2, lower=[0, 0, 0], upper=1), "lower bound has 3 entries"),
        (dict(dim=3, lower=0, upper=[1, 2]), "upper bound has 2 entries"),
        (dict(dim=0, lower=0, upper=1), "dimension must be a positive integer"),
        (dict(dim=2.5, lower=0, upper=1), "dimension must be a positive integer"),
        (dict(dim=2, lower=float("-inf"), upper=1), "bounds must be finite"),
    ],
)
def test_bad_problem_definitions(kwargs, message):
    with pytest.raises(ValueError, match=message):
        hs.TorchFunction(lambda x: x.sum(-1), **kwargs)


def test_registry_errors():
    with pytest.raises(ValueError, match=r"unknown problem 'sphre' \(did you mean 'sphere'\?\); known problems: .*rastrigin"):
        hs.get_problem("sphre", dim=2)
    with pytest.raises(ValueError, match="has no parameter 'bound'; its parameters are: bounds"):
        hs.get_problem("sphere", dim=2, bound=(0, 1))
    with pytest.raises(ValueError, match="needs a dimension"):
        hs.get_problem("sphere")


# -- bad problem parameters say what was wrong (issue 13, found by tests/test_fuzz.py) -------
@pytest.mark.parametrize(
    "bounds,message",
    [
        ("abc", r"bounds must be a pair \(lower, upper\)"),
        (5, r"bounds must be a pair \(lower, upper\)"),
        ((1, 2, 3), r"bounds must be a pair \(lower, upper\)"),
        (("a", "b"), "lower bound must be a number or 2 numbers, got 'a'"),
        ((None, 1), "lower bound must be a number or 2 numbers, got None"),
        ((0, 1j), "upper bound must be a number or 2 numbers"),
        ((math.nan, 1), "bounds must be finite"),
        ((-1.7e308, 1.7e308), "the box is too wide: upper - lower overflows float64"),
    ],
)
def test_bad_bounds_are_clear_errors(bounds, message):
    with pytest.raises(ValueError, match=message):
        hs.get_problem("sphere", dim=2, bounds=bounds)


def test_box_must_fit_the_run_dtype():
    problem = hs.get_problem("sphere", dim=2, bounds=(-1e300, 1e300))
    with pytest.raises(ValueError, match=r"the box \[-1e\+300, 1e\+300\] does not fit in float32 .*use dtype float64"):
        hs.minimize(problem, "pso", iters=2, device="cpu", dtype="float32")
    with pytest.raises(ValueError, match="does not fit in float32"):  # each bound fits, their difference not
        hs.get_problem("sphere", dim=2, bounds=(-3e38, 3e38)).to("cpu", torch.float32)
    r = hs.minimize(problem, "pso", iters=2, device="cpu", dtype="float64", seed=0)
    assert (r.best_x.abs() <= 1e300).all()


@pytest.mark.parametrize("dim,message", [(2**70, "too large"), (10**15, "too large for this machine"), (2.0, "positive integer")])
def test_impossible_dimensions_are_clear_errors(dim, message):
    with pytest.raises(ValueError, match=message):
        hs.get_problem("sphere", dim=dim)


def test_cec_dimension_is_checked_before_reading_data():
    with pytest.raises(ValueError, match="dimension must be a positive integer, got 10.0"):
        hs.get_problem("cec2022-f1", dim=10.0)  # used to look for the data file M_1_D10.0.txt
