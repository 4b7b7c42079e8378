"""Yao, Liu & Lin 1999's f1-f23: minima, hand-computed values, the paper's boxes, shapes,
dtypes, devices, f7's noise and the registry entries."""

import math

import pytest
import torch

import heuriscale as hs
from heuriscale.problems.yao import YAO, YaoProblem, quartic

ALL = sorted(YAO)

# The paper's Tables I-III: (n, lower, upper, f_min as printed)
PAPER = {
    1: (30, -100, 100, 0), 2: (30, -10, 10, 0), 3: (30, -100, 100, 0), 4: (30, -100, 100, 0),
    5: (30, -30, 30, 0), 6: (30, -100, 100, 0), 7: (30, -1.28, 1.28, 0), 8: (30, -500, 500, -12569.5),
    9: (30, -5.12, 5.12, 0), 10: (30, -32, 32, 0), 11: (30, -600, 600, 0), 12: (30, -50, 50, 0),
    13: (30, -50, 50, 0), 14: (2, -65.536, 65.536, 1), 15: (4, -5, 5, 0.0003075), 16: (2, -5, 5, -1.0316285),
    17: (2, (-5, 0), (10, 15), 0.398), 18: (2, -2, 2, 3), 19: (3, 0, 1, -3.86), 20: (6, 0, 1, -3.32),
    21: (4, 0, 10, -10.1532), 22: (4, 0, 10, -10.4029), 23: (4, 0, 10, -10.5364),
}


def _decimals(value: float) -> int:
    text = repr(float(value))
    return 0 if value == int(value) else len(text.split(".")[1])


@pytest.mark.parametrize("number", ALL)
def test_bounds_and_dimension_are_the_papers(number):
    n, lo, hi, _ = PAPER[number]
    p = YaoProblem(number)
    assert p.dim == n and p.name == f"yao-f{number}"
    torch.testing.assert_close(p.lower, torch.as_tensor(lo, dtype=torch.float64).expand(n))
    torch.testing.assert_close(p.upper, torch.as_tensor(hi, dtype=torch.float64).expand(n))


@pytest.mark.parametrize("number", ALL)
def test_minimum_at_the_minimiser(number, device):
    p = YaoProblem(number).to(device, torch.float64)
    f = p.evaluate(p.optimum_x).item()
    if number == 7:  # the noise-free minimum 0 plus a uniform [0, 1) draw
        assert p.optimum_f == 0.0 and 0.0 <= f < 1.0
        return
    assert f == pytest.approx(p.optimum_f, rel=1e-12, abs=1e-12)
    # and the minimum agrees with the paper's printed value to the digits it prints
    printed = PAPER[number][3]
    assert abs(p.optimum_f - printed) <= 0.5 * 10.0 ** -_decimals(printed) + 1e-12
    # the minimiser lies in the box and no nearby point in the box is lower
    assert bool(((p.optimum_x >= p.lower) & (p.optimum_x <= p.upper)).all())
    g = torch.Generator().manual_seed(number)
    near = p.optimum_x + 1e-4 * torch.randn(256, p.dim, generator=g, dtype=torch.float64).to(device)
    near = torch.minimum(torch.maximum(near, p.lower), p.upper)
    assert float(p.evaluate(near).min()) >= p.optimum_f - 1e-12 * max(1.0, abs(p.optimum_f))


@pytest.mark.parametrize("number", range(14, 24))
def test_low_dimensional_minimum_is_global_on_a_sample_of_the_box(number):
    p = YaoProblem(number)
    g = torch.Generator().manual_seed(number)
    x = p.lower + (p.upper - p.lower) * torch.rand(20_000, p.dim, generator=g, dtype=torch.float64)
    assert float(p.evaluate(x).min()) > p.optimum_f


def _shekel_by_hand(x, m):
    a = [[4, 4, 4, 4], [1, 1, 1, 1], [8, 8, 8, 8], [6, 6, 6, 6], [3, 7, 3, 7],
         [2, 9, 2, 9], [5, 5, 3, 3], [8, 1, 8, 1], [6, 2, 6, 2], [7, 3.6, 7, 3.6]]
    c = [0.1, 0.2, 0.2, 0.4, 0.4, 0.6, 0.3, 0.7, 0.5, 0.5]
    return -sum(1.0 / (sum((xj - aij) ** 2 for xj, aij in zip(x, a[i])) + c[i]) for i in range(m))


def _hartman3_by_hand(x):
    a = [[3, 10, 30], [0.1, 10, 35], [3, 10, 30], [0.1, 10, 35]]
    p = [[0.3689, 0.1170, 0.2673], [0.4699, 0.4387, 0.7470], [0.1091, 0.8732, 0.5547], [0.03815, 0.5743, 0.8828]]
    c = [1, 1.2, 3, 3.2]
    return -sum(c[i] * math.exp(-sum(a[i][j] * (x[j] - p[i][j]) ** 2 for j in range(3))) for i in range(4))


def _foxholes_by_hand(x):
    grid = [-32, -16, 0, 16, 32]
    s = 1 / 500
    for j in range(25):
        s += 1 / (j + 1 + (x[0] - grid[j % 5]) ** 6 + (x[1] - grid[j // 5]) ** 6)
    return 1 / s


KOWALIK_A = [0.1957, 0.1947, 0.1735, 0.1600, 0.0844, 0.0627, 0.0456, 0.0342, 0.0323, 0.0235, 0.0246]

# (function, point, value computed by hand or by a plain loop over the paper's formula)
HAND_POINTS = [
    (1, [1.0, 2.0, 3.0], 14.0),
    (2, [1.0, -2.0, 3.0], 12.0),  # 6 + 6
    (3, [1.0, 2.0, 3.0], 46.0),  # 1 + 9 + 36
    (4, [1.0, -5.0, 3.0], 5.0),
    (5, [0.0, 0.0], 1.0),
    (6, [0.4, 0.6, -1.6], 5.0),  # 0 + 1 + 4
    (8, [math.pi**2 / 4.0], -math.pi**2 / 4.0),
    (9, [1.0, 2.0], 5.0),
    (10, [1.0, 1.0], 20.0 - 20.0 * math.exp(-0.2)),
    (11, [0.0, math.pi * math.sqrt(2.0)], 2.0 + math.pi**2 / 2000.0),
    (12, [3.0, -1.0], math.pi / 2),  # y = (2, 1): pi/2 * (1 * [1 + 10 sin^2 pi])
    (12, [11.0, -1.0], 4.5 * math.pi + 100.0),  # y = (4, 1): pi/2 * 9, u(11, 10, 100, 4) = 100
    (13, [1.0, 0.0], 0.1),  # 0.1 * (0 + 0 + (0 - 1)^2 * 1)
    (13, [1.0, -7.0], 6.4 + 1600.0),  # 0.1 * 64 * [1 + sin^2(-14 pi)], u(-7, 5, 100, 4) = 100 * 2^4
    (14, [0.0, 0.0], _foxholes_by_hand([0.0, 0.0])),
    (14, [10.0, -20.0], _foxholes_by_hand([10.0, -20.0])),
    (15, [0.0, 0.0, 0.0, 0.0], sum(a * a for a in KOWALIK_A)),
    (15, [1.0, 0.0, 0.0, 0.0], sum((a - 1.0) ** 2 for a in KOWALIK_A)),  # x1 b^2 / b^2 = 1
    (16, [1.0, 1.0], 97.0 / 30.0),  # 4 - 2.1 + 1/3 + 1 - 4 + 4
    (17, [0.0, 0.0], 56.0 - 1.25 / math.pi),  # 36 + 10 (1 - 1/(8 pi)) + 10
    (18, [0.0, 0.0], 600.0),  # (1 + 19) * 30
    (19, [0.5, 0.5, 0.5], _hartman3_by_hand([0.5, 0.5, 0.5])),
    (21, [4.0, 4.0, 4.0, 4.0], -(10 + 1 / 36.2 + 1 / 64.2 + 1 / 16.4 + 1 / 20.4)),
    (22, [1.0, 2.0, 3.0, 4.0], _shekel_by_hand([1.0, 2.0, 3.0, 4.0], 7)),
    (23, [1.0, 2.0, 3.0, 4.0], _shekel_by_hand([1.0, 2.0, 3.0, 4.0], 10)),
]


@pytest.mark.parametrize("number,point,expected", HAND_POINTS)
def test_hand_computed_values(number, point, expected, device):
    p = YaoProblem(number, len(point) if YAO[number].fixed_dim is None else None).to(device, torch.float64)
    f = p.evaluate(torch.tensor(point, dtype=torch.float64, device=device))
    assert f.shape == ()
    assert f.item() == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_hartman6_and_its_table():
    """f20 at p_3 (the row carrying 0.1415): its own term is -c_3 = -3, the others add."""
    p = YaoProblem(20)
    x = p.p[2]
    expected = -sum(float(p.c[i]) * math.exp(-float((p.a[i] * (x - p.p[i]) ** 2).sum())) for i in range(4))
    assert p.evaluate(x).item() == pytest.approx(expected, rel=1e-14)
    assert p.p[2, 1].item() == 0.1415


def test_noisy_quartic():
    x = torch.tensor([1.0, 1.0], dtype=torch.float64)
    assert quartic(x).item() == 3.0  # 1 * 1 + 2 * 1
    p = YaoProblem(7, 2, noise_seed=3)
    xs = x.expand(5000, 2)
    f = p.evaluate(xs)
    assert f.shape == (5000,)
    noise = f - 3.0
    assert bool((noise >= 0).all() and (noise < 1).all())
    assert 0.47 < noise.mean().item() < 0.53  # uniform on [0, 1)
    assert noise.unique().numel() == 5000  # a fresh draw per point


def test_noise_is_reproducible_from_its_seed_and_differs_across_seeds():
    x = torch.zeros(8, 30, dtype=torch.float64)
    a1, a2 = YaoProblem(7, noise_seed=1), YaoProblem(7, noise_seed=1)
    first, second = a1.evaluate(x), a1.evaluate(x)
    assert not torch.equal(first, second)  # the stream moves on
    torch.testing.assert_close(a2.evaluate(x), first, rtol=0, atol=0)
    torch.testing.assert_close(a2.evaluate(x), second, rtol=0, atol=0)
    assert not torch.equal(YaoProblem(7, noise_seed=2).evaluate(x), first)
    # a .to() copy starts its own stream at noise_seed
    torch.testing.assert_close(a1.to("cpu", torch.float64).evaluate(x), first, rtol=0, atol=0)
    assert YaoProblem(7, noise_seed=9).describe()["noise_seed"] == 9


def test_only_f7_is_stochastic():
    assert YaoProblem(7).stochastic is True
    assert all(YaoProblem(k).stochastic is False for k in ALL if k != 7)


@pytest.mark.parametrize("number", ALL)
def test_vectorised_over_leading_dimensions(number):
    p = YaoProblem(number, None if YAO[number].fixed_dim else 5)
    g = torch.Generator().manual_seed(number)
    x = p.lower + (p.upper - p.lower) * torch.rand(3, 4, p.dim, generator=g, dtype=torch.float64)
    f = p.evaluate(x)
    assert f.shape == (3, 4)
    one_by_one = torch.stack([p.evaluate(row) for row in x.reshape(-1, p.dim)]).reshape(3, 4)
    if number == 7:  # different noise, same noise-free part
        f, one_by_one = f - quartic(x), one_by_one - quartic(x)
        assert bool(((f >= 0) & (f < 1) & (one_by_one >= 0) & (one_by_one < 1)).all())
        return
    torch.testing.assert_close(f, one_by_one, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("number", ALL)
def test_float32_agrees_with_float64(number, device):
    p64 = YaoProblem(number, None if YAO[number].fixed_dim else 6).to(device, torch.float64)
    p32 = p64.to(device, torch.float32)
    g = torch.Generator().manual_seed(100 + number)
    x = p64.lower + (p64.upper - p64.lower) * torch.rand(64, p64.dim, generator=g, dtype=torch.float64).to(device)
    f32, f64 = p32.evaluate(x.float()), p64.evaluate(x)
    assert f32.dtype == torch.float32 and f64.dtype == torch.float64 and f32.device == x.device
    scale = max(1.0, float(f64.abs().max()))
    tol = 2.0 if number == 7 else 1e-4 * scale  # f7: two independent noise draws
    assert float((f32.double() - f64).abs().max()) <= tol
    if number != 7:
        at_min = p32.evaluate(p32.optimum_x).item()
        assert at_min == pytest.approx(p64.optimum_f, rel=1e-5, abs=1e-5)


def test_to_moves_and_casts_the_tables():
    p = YaoProblem(23)
    moved = p.to("meta", torch.float32)
    for key in ("a", "c", "lower", "upper", "optimum_x"):
        assert getattr(moved, key).device.type == "meta" and getattr(moved, key).dtype == torch.float32
    assert p.a.device.type == "cpu" and p.a.dtype == torch.float64  # the original stays
    assert moved.a.shape == (10, 4) and YaoProblem(21).a.shape == (5, 4)
    assert YaoProblem(15).to("cpu", torch.float32).b_inv.dtype == torch.float32


def test_registry():
    assert all(f"yao-f{k}" in hs.problem_names() for k in ALL)
    assert hs.get_problem("yao-f1").dim == 30
    assert hs.get_problem("yao-f9", dim=7).dim == 7
    assert hs.get_problem("yao-f20").dim == 6 and hs.get_problem("yao-f20", dim=6).dim == 6
    assert hs.get_problem("yao-f7", noise_seed=4).noise_seed == 4
    with pytest.raises(ValueError, match="has dimension 2"):
        hs.get_problem("yao-f14", dim=3)
    with pytest.raises(ValueError, match="no parameter 'noise_seed'"):
        hs.get_problem("yao-f1", noise_seed=1)


@pytest.mark.parametrize(
    "args,kwargs,match",
    [
        ((24,), {}, "functions 1-23"),
        ((0,), {}, "functions 1-23"),
        (("1",), {}, "functions 1-23"),
        ((14, 3), {}, "dim 2 only"),
        ((1, 0), {}, "positive integer"),
        ((7,), {"noise_seed": -1}, "noise_seed"),
        ((7,), {"noise_seed": 1.5}, "noise_seed"),
    ],
)
def test_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        YaoProblem(*args, **kwargs)
